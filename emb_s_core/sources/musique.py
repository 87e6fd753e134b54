"""MuSiQue (v1.0 record format, -Ans or -Full): ``id``, ``question``, ``answer``, ``answer_aliases``,
``answerable``, ``paragraphs`` = [{idx, title, paragraph_text, is_supporting}].

Gold = paragraphs with ``is_supporting``; hard negatives = the question's other paragraphs (MuSiQue's distractors
are retrieved to be close to the question). Titles are not unique (several paragraphs of one article), so documents
are deduplicated by (title, text). task_type = the hop prefix of the id ("2hop", "3hop1", ... from "3hop1__...").
Unanswerable records (``answerable: false``, MuSiQue-Full) have no valid evidence: skipped and counted.
"""
from __future__ import annotations

from pathlib import Path

from emb_s_core.schema import Bank
from emb_s_core.sources import validate
from emb_s_core.sources._io import iter_data_records, require_field
from emb_s_core.sources._passages import PassageBankBuilder, flagged_paragraphs


def read(path: Path, source: str = "musique") -> Bank:
    b = PassageBankBuilder(source)
    for where, obj in iter_data_records(path, "MuSiQue file"):
        qid = validate.id_field(obj, "id", where)
        if validate.bool_field(obj, "answerable", where, default=True) is False:
            b.bank.skip("unanswerable question (answerable: false)")
            continue
        gold, others = flagged_paragraphs(b, obj, "paragraphs", where)
        aliases = validate.text_list(obj, "answer_aliases", where, numbers=True)
        b.question(qid=qid, text=require_field(obj, "question", where, str),
                   answer=validate.text_field(obj, "answer", where, numbers=True), aliases=aliases, gold=gold, others=others, where=where,
                   task_type=qid.split("__", 1)[0] if "__" in qid else None)
    return b.bank
