"""2WikiMultihopQA: ``_id``, ``type``, ``question``, ``answer``, ``context`` = [[title, [sentences]]],
``supporting_facts`` = [[title, sentence index]] (JSON Lines or one JSON array).

Gold = the distinct titles in ``supporting_facts``, each resolved to that row's context paragraph, text =
" ".join(sentences); hard negatives = the row's other paragraphs (2Wiki's distractors, retrieved like HotpotQA's).
Rows without ``context`` (some redistributions replace it with generated text) are skipped and counted. A title that
appears twice inside one context (a known 2Wiki quirk) is one document when the text matches (dedupe by
(title, text)); a gold title whose paragraphs differ keeps all of them as gold.
"""
from __future__ import annotations

from pathlib import Path

from emb_s_core.schema import Bank
from emb_s_core.sources import validate
from emb_s_core.sources._io import iter_data_records, require_field
from emb_s_core.sources._passages import PassageBankBuilder, sentence_counts, supporting_titles, titled_paragraphs


def read(path: Path, source: str = "2wiki") -> Bank:
    b = PassageBankBuilder(source)
    for where, obj in iter_data_records(path, "2WikiMultihopQA file"):
        qid = validate.id_field(obj, "_id", where)
        if obj.get("context") is None:
            b.bank.skip("row without context")
            continue
        paragraphs = titled_paragraphs(obj, where)
        gold_titles = supporting_titles(obj, where, sentence_counts(paragraphs))
        by_title: dict[str, list[int]] = {}
        others = []
        for title, sentences in paragraphs:
            doc = b.paragraph(title, " ".join(sentences), where)
            if doc is not None:
                by_title.setdefault(title, []).append(doc)
                others.append(doc)
        missing = [t for t in gold_titles if t not in by_title]
        if missing:
            b.bank.skip("supporting title not in the row's context")
            b.bank.notes.append(f"{where}: supporting title(s) {missing[:3]} not in context; question skipped")
            continue
        gold = [d for t in gold_titles for d in by_title[t]]
        b.question(qid=qid, text=require_field(obj, "question", where, str),
                   answer=validate.text_field(obj, "answer", where, numbers=True), gold=gold,
                   others=others, where=where, task_type=validate.text_field(obj, "type", where, required=False))
    return b.bank
