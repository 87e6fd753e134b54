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
from emb_s_core.sources._io import iter_records, require_field


def _find(folder: Path, stem: str) -> Path:
    for suffix in (".jsonl", ".parquet"):
        if (folder / f"{stem}{suffix}").is_file():
            return folder / f"{stem}{suffix}"
    raise EmbSError(
        f"{stem}.jsonl (or {stem}.parquet) not found in {folder}",
        fix="the native format is a folder holding documents.jsonl and queries.jsonl (see README, Data formats).",
    )


def _int_list(obj: dict, key: str, where: str, required: bool) -> list[int]:
    if not required and obj.get(key) is None:
        return []
    value = require_field(obj, key, where, list)
    if any(not isinstance(v, int) or isinstance(v, bool) for v in value):
        raise EmbSError(f"field {key!r} must be a list of integer doc ids, got {value!r:.60}", where=where,
                        fix="write document ids as integers, e.g. [12, 40].")
    return list(value)


def read(path: Path, source: str = "native") -> Bank:
    if not path.exists():
        raise EmbSError(f"path not found: {path}", fix="point at the folder holding documents.jsonl and queries.jsonl.")
    folder = path if path.is_dir() else path.parent
    doc_path, query_path = _find(folder, "documents"), _find(folder, "queries")
    bank = Bank(source=source, documents=[], queries=[], renumber=False)
    for line, obj in iter_records(doc_path):
        where = at(doc_path.name, line)
        doc_id = require_field(obj, "doc_id", where, int)
        if doc_id in bank.doc_locations:
            raise EmbSError(f"duplicate doc_id {doc_id} (first at {bank.doc_locations[doc_id]})", where=where,
                            fix="give every document a unique integer doc_id.")
        bank.doc_locations[doc_id] = where
        bank.documents.append(
            Document(
                doc_id=doc_id,
                text=require_field(obj, "text", where, str),
                title=obj.get("title"),
                domain=obj.get("domain"),
                source=obj.get("source") or source,
            )
        )
    for line, obj in iter_records(query_path):
        where = at(query_path.name, line)
        qid = str(require_field(obj, "qid", where, (str, int)))
        bank.query_locations.setdefault(qid, where)
        aliases = obj.get("answer_aliases") or []
        bank.queries.append(
            Query(
                qid=qid,
                text=require_field(obj, "text", where, str),
                answer=str(require_field(obj, "answer", where, (str, int, float))),
                ref_ids=_int_list(obj, "ref_ids", where, required=True),
                hard_negative_ids=_int_list(obj, "hard_negative_ids", where, required=False),
                domain=obj.get("domain"),
                task_type=obj.get("task_type"),
                source=source,
                answer_aliases=[str(a) for a in aliases],
            )
        )
    return bank
