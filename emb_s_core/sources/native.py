"""Native format: a folder with ``documents.jsonl`` (or ``.parquet``) and ``queries.jsonl`` (or ``.parquet``).

documents: ``doc_id`` (int), ``text``, optional ``title``, ``domain``, ``source``.
queries:   ``qid``, ``text``, ``answer``, ``ref_ids`` (list of int), optional ``hard_negative_ids``, ``domain``,
           ``task_type``, ``answer_aliases``.
The ids are the user's own and are kept as they are (no renumbering).
"""
from __future__ import annotations

from pathlib import Path

from emb_s_core.errors import EmbSError, at
from emb_s_core.schema import Bank, Document, Query
from emb_s_core.sources import validate
from emb_s_core.sources._io import iter_records


def _find(folder: Path, stem: str) -> Path:
    for suffix in (".jsonl", ".parquet"):
        candidate = folder / f"{stem}{suffix}"
        if candidate.exists() or candidate.is_symlink():
            return validate.input_file(candidate, f"native {stem} file")  # a folder or FIFO there: its own words
    raise EmbSError(
        f"{stem}.jsonl (or {stem}.parquet) not found in {folder}",
        fix="the native format is a folder holding documents.jsonl and queries.jsonl (see README, Data formats).",
    )


def read(path: Path, source: str = "native") -> Bank:
    path = validate.input_path(path, "native bank folder")
    folder = path if path.is_dir() else path.parent
    doc_path, query_path = _find(folder, "documents"), _find(folder, "queries")
    bank = Bank(source=source, documents=[], queries=[], renumber=False)
    for line, obj in iter_records(doc_path):
        where = at(doc_path.name, line)
        doc_id = validate.int_field(obj, "doc_id", where)
        if doc_id in bank.doc_locations:
            raise EmbSError(f"duplicate doc_id {doc_id} (first at {bank.doc_locations[doc_id]})", where=where,
                            fix="give every document a unique integer doc_id.")
        bank.doc_locations[doc_id] = where
        bank.documents.append(
            Document(
                doc_id=doc_id,
                text=validate.text_field(obj, "text", where),
                title=validate.text_field(obj, "title", where, required=False),
                domain=validate.text_field(obj, "domain", where, required=False),
                source=validate.text_field(obj, "source", where, required=False) or source,
            )
        )
    for line, obj in iter_records(query_path):
        where = at(query_path.name, line)
        qid = validate.id_field(obj, "qid", where)
        bank.query_locations.setdefault(qid, where)
        bank.queries.append(
            Query(
                qid=qid,
                text=validate.text_field(obj, "text", where),
                answer=validate.text_field(obj, "answer", where, numbers=True),
                ref_ids=validate.int_list(obj, "ref_ids", where),
                hard_negative_ids=validate.int_list(obj, "hard_negative_ids", where, required=False),
                domain=validate.text_field(obj, "domain", where, required=False),
                task_type=validate.text_field(obj, "task_type", where, required=False),
                source=source,
                answer_aliases=validate.text_list(obj, "answer_aliases", where, numbers=True),
            )
        )
    return bank
