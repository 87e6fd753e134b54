"""Native format: a folder with ``documents.jsonl`` (or ``.parquet``) and ``queries.jsonl`` (or ``.parquet``).

documents: ``doc_id`` (int), ``text``, optional ``title``, ``domain``, ``source``.
queries:   ``qid``, ``text``, ``answer``, ``ref_ids`` (list of int), optional ``hard_negative_ids``, ``domain``,
           ``task_type``, ``answer_aliases``.
The ids are the user's own and are kept as they are (no renumbering). The documents file is read twice, one row at
a time: first to check every row, then to stream the documents into the workspace (see :class:`DocumentStream`).
"""
from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Iterator

import numpy as np

from emb_s_core.errors import EmbSError, at
from emb_s_core.schema import Bank, Document, DocumentStream, Query
from emb_s_core.sources import validate
from emb_s_core.sources._io import batched, iter_records


def _find(folder: Path, stem: str) -> Path:
    present = [folder / f"{stem}{s}" for s in (".jsonl", ".parquet")
               if (folder / f"{stem}{s}").exists() or (folder / f"{stem}{s}").is_symlink()]
    if len(present) > 1:
        raise EmbSError(f"both {stem}.jsonl and {stem}.parquet are in {folder}: which one is the bank is ambiguous",
                        fix=f"keep one of the two {stem} files (move the other out of the folder).")
    for suffix in (".jsonl", ".parquet"):
        candidate = folder / f"{stem}{suffix}"
        if candidate.exists() or candidate.is_symlink():
            return validate.input_file(candidate, f"native {stem} file")  # a folder or FIFO there: its own words
    raise EmbSError(
        f"{stem}.jsonl (or {stem}.parquet) not found in {folder}",
        fix="the native format is a folder holding documents.jsonl and queries.jsonl (see README, Data formats).",
    )


class _Lines:
    """doc_id -> ``file line N`` for error messages, from the line numbers the first pass kept (no string per row)."""

    def __init__(self, name: str, lines: dict[int, int]) -> None:
        self.name, self.lines = name, lines

    def get(self, doc_id: int, default: str | None = None) -> str | None:
        line = self.lines.get(doc_id)
        return default if line is None else at(self.name, line)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self.lines

    def __getitem__(self, doc_id: int) -> str:
        return at(self.name, self.lines[doc_id])


def _document(obj: dict, where: str, source: str) -> Document:
    """One documents row, checked field by field (both passes read rows through here)."""
    return Document(
        doc_id=validate.int_field(obj, "doc_id", where),
        text=validate.text_field(obj, "text", where, blank=False),
        title=validate.text_field(obj, "title", where, required=False),
        domain=validate.text_field(obj, "domain", where, required=False),
        source=validate.text_field(obj, "source", where, required=False) or source,
    )


def _scan_documents(doc_path: Path, source: str) -> tuple[list[int], list[str | None], dict[int, int]]:
    """First pass: every row checked; ids, domains and line numbers kept, texts dropped (a 326M-token bank is 1.7 GB
    of text, which the second pass streams into the workspace)."""
    ids: list[int] = []
    domains: list[str | None] = []
    lines: dict[int, int] = {}
    for line, obj in iter_records(doc_path):
        where = at(doc_path.name, line)
        doc = _document(obj, where, source)
        if doc.doc_id in lines:
            raise EmbSError(f"duplicate doc_id {doc.doc_id} (first at {at(doc_path.name, lines[doc.doc_id])})",
                            where=where, fix="give every document a unique integer doc_id.")
        lines[doc.doc_id] = line
        ids.append(doc.doc_id)
        domains.append(doc.domain)
    return ids, domains, lines


def _read_documents(doc_path: Path, source: str, size: int) -> Iterator[list[Document]]:
    """Second pass: the same rows as Documents, ``size`` at a time."""
    return batched((_document(obj, at(doc_path.name, line), source) for line, obj in iter_records(doc_path)), size)


def read(path: Path, source: str = "native") -> Bank:
    path = validate.input_path(path, "native bank folder")
    folder = path if path.is_dir() else path.parent
    doc_path, query_path = _find(folder, "documents"), _find(folder, "queries")
    bank = Bank(source=source, documents=[], queries=[], renumber=False)
    ids, domains, lines = _scan_documents(doc_path, source)
    bank.documents = DocumentStream(len(ids), partial(_read_documents, doc_path, source), domains,
                                    ids=np.asarray(ids, np.int64))
    bank.doc_locations = _Lines(doc_path.name, lines)  # type: ignore[assignment]
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
