"""HotpotQA (distractor setting), in either of its two common layouts, detected per record.

- official: ``_id``, ``question``, ``answer``, ``context`` = [[title, [sentences]]], ``supporting_facts`` =
  [[title, sentence index]], ``type``, ``level`` (a JSON array file, or JSON Lines).
- IRCoT-processed: ``question_id``, ``question_text``, ``answers_objects`` [{spans: [...]}], ``contexts`` =
  [{title, paragraph_text, is_supporting}] (JSON Lines).
Gold = the supporting paragraphs; hard negatives = the question's other paragraphs, which HotpotQA retrieved by
bigram TF-IDF with the question (near misses by construction). Documents are deduplicated by (title, text).
"""
from __future__ import annotations

from pathlib import Path

from emb_s_core.errors import EmbSError
from emb_s_core.schema import Bank
from emb_s_core.sources import validate
from emb_s_core.sources._io import iter_data_records, require_field
from emb_s_core.sources._passages import (PassageBankBuilder, flagged_paragraphs, sentence_counts,
                                           supporting_titles, titled_paragraphs)


def read(path: Path, source: str = "hotpotqa") -> Bank:
    builder = PassageBankBuilder(source)
    for where, obj in iter_data_records(path, "HotpotQA file"):
        if "contexts" in obj or "question_text" in obj:
            _ircot(builder, obj, where)
        elif "context" in obj or "supporting_facts" in obj:
            _official(builder, obj, where)
        else:
            raise EmbSError(
                "record is neither official HotpotQA (context, supporting_facts) nor IRCoT-processed (contexts)",
                where=where, fix="check the --format; see README, Data formats, HotpotQA.")
    return builder.bank


def _official(b: PassageBankBuilder, obj: dict, where: str) -> None:
    qid = validate.id_field(obj, "_id", where)
    paragraphs = titled_paragraphs(obj, where)
    gold_titles = set(supporting_titles(obj, where, sentence_counts(paragraphs)))
    gold, others = [], []
    for title, sentences in paragraphs:
        doc = b.paragraph(title, "".join(sentences), where)
        if doc is not None:
            (gold if title in gold_titles else others).append(doc)
    b.question(qid=qid, text=require_field(obj, "question", where, str),
               answer=validate.text_field(obj, "answer", where, numbers=True), gold=gold, others=others,
               where=where, task_type=validate.text_field(obj, "type", where, required=False))


def _ircot(b: PassageBankBuilder, obj: dict, where: str) -> None:
    qid = validate.id_field(obj, "question_id", where)
    answers = validate.list_field(obj, "answers_objects", where)
    for i, a in enumerate(answers):
        if not isinstance(a, dict):
            validate.check_value(a, "a list of objects {spans: [...]}", where, f"answers_objects[{i}]")
    spans = [s for i, a in enumerate(answers)
             for s in validate.text_list(a, "spans", f"{where} answers_objects[{i}]", numbers=True)]
    spans += [validate.text_field(a, "number", where, numbers=True) for a in answers
              if not a.get("spans") and str(a.get("number") or "").strip()]
    if not spans:
        raise EmbSError("answers_objects holds no answer span", where=where,
                        fix="every question needs answers_objects: [{\"spans\": [answer]}].")
    gold, others = flagged_paragraphs(b, obj, "contexts", where)
    b.question(qid=qid, text=require_field(obj, "question_text", where, str), answer=spans[0],
               aliases=spans[1:], gold=gold, others=others, where=where,
               task_type=validate.text_field(obj, "type", where, required=False))
