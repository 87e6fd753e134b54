"""BEIR: a folder with ``corpus.jsonl`` (``_id``, ``title``, ``text``), ``queries.jsonl`` (``_id``, ``text``) and
``qrels/<split>.tsv`` (header ``query-id<TAB>corpus-id<TAB>score``).

PATH is the folder (split ``test``, or the only split there is) or one qrels tsv file inside ``<folder>/qrels/``.
Gold = corpus ids with score > 0. BEIR has no answers (answer is "") and no verified hard negatives. Queries with no
gold in the split are skipped and counted; qrels rows naming an unknown query or document are skipped and counted
(BEIR's own files have a few); documents with neither title nor text are skipped and counted. The corpus is read
twice, one line at a time: to check it and number its entries, then to stream them into the workspace.
"""
from __future__ import annotations

import csv
from pathlib import Path
from typing import Iterator

from emb_s_core.errors import EmbSError, at
from emb_s_core.schema import Bank, Document, DocumentStream, Query
from emb_s_core.sources import validate
from emb_s_core.sources._io import DocumentKeys, batched, iter_jsonl, require_field, require_file

DEFAULT_SPLIT = "test"


def qrels_file(path: Path) -> tuple[Path, Path]:
    """(dataset folder, qrels tsv) for PATH = the folder or one qrels file."""
    if validate.input_path(path, "BEIR folder").is_file():
        if path.suffix != ".tsv":
            raise EmbSError(f"{path.name} is not a qrels .tsv file", where=str(path),
                            fix="pass the BEIR folder, or one file qrels/<split>.tsv inside it.")
        folder = path.parent.parent if path.parent.name == "qrels" else path.parent
        return folder, path
    splits = sorted((path / "qrels").glob("*.tsv")) if (path / "qrels").is_dir() else []
    if not splits:
        raise EmbSError(f"no qrels/<split>.tsv in {path}",
                        fix="a BEIR folder holds corpus.jsonl, queries.jsonl and qrels/test.tsv.")
    chosen = [p for p in splits if p.stem == DEFAULT_SPLIT] or (splits if len(splits) == 1 else [])
    if not chosen:
        raise EmbSError(f"{path} has several qrels splits ({', '.join(p.stem for p in splits)}) and no "
                        f"{DEFAULT_SPLIT!r}", fix=f"pass the split's file, e.g. {splits[0]}.")
    return path, chosen[0]


def _corpus_entry(obj: dict, where: str, source: str) -> tuple[str, Document | None]:
    """(corpus id, its document, or None for an entry with neither title nor text); both passes read through here."""
    cid = validate.id_field(obj, "_id", where)
    title = (validate.text_field(obj, "title", where, required=False) or "").strip() or None
    text = (validate.text_field(obj, "text", where, required=False) or "").strip()
    if not text and title:  # a few BEIR corpora hold title-only entries: the title is the content
        text, title = title, None
    return cid, (Document(doc_id=-1, text=text, title=title, source=source) if text else None)


def _read_corpus(corpus: Path, source: str) -> Iterator[Document]:
    """Second pass: the kept entries as Documents numbered in file order, one at a time (a corpus such as MS
    MARCO's 8.8M passages is never held whole)."""
    kept = (doc for line, obj in iter_jsonl(corpus) if (doc := _corpus_entry(obj, at(corpus.name, line), source)[1]))
    for doc_id, doc in enumerate(kept):
        doc.doc_id = doc_id
        yield doc


def read(path: Path, source: str = "beir") -> Bank:
    folder, qrels_path = qrels_file(path)
    corpus = require_file(folder / "corpus.jsonl", "BEIR corpus.jsonl")
    queries_path = require_file(folder / "queries.jsonl", "BEIR queries.jsonl")
    bank = Bank(source=source, documents=[], queries=[], renumber=True)
    bank.notes.append(f"qrels split: {qrels_path.stem}")

    keys = DocumentKeys()
    lines: list[int] = []  # doc id -> line, for the duplicate error
    for line, obj in iter_jsonl(corpus):  # first pass: every entry checked, ids kept, texts dropped
        cid, doc = _corpus_entry(obj, at(corpus.name, line), source)
        if doc is None:
            bank.skip("empty document")
            continue
        doc_id, new = keys.get(cid)
        if not new:
            raise EmbSError(f"duplicate corpus _id {cid!r} (first at {at(corpus.name, lines[doc_id])})",
                            where=at(corpus.name, line), fix="every corpus entry needs a unique _id.")
        lines.append(line)
    bank.documents = DocumentStream(len(lines), lambda size: batched(_read_corpus(corpus, source), size))

    gold: dict[str, list[int]] = {}
    for line, text_line in validate.read_lines(require_file(qrels_path, "BEIR qrels file")):
        for row in csv.reader([text_line], delimiter="\t"):
            where = at(qrels_path.name, line)
            if not row or not "".join(row).strip():
                continue
            if line == 1 and row[0].strip().lower() in ("query-id", "query_id", "qid"):
                continue
            if len(row) != 3:
                raise EmbSError(f"expected 3 tab-separated columns (query-id, corpus-id, score), got {len(row)}",
                                where=where, fix="fix or remove that line.")
            try:
                score = float(row[2])
            except ValueError:
                raise EmbSError(f"score {row[2]!r} is not a number", where=where,
                                fix="the third column is the relevance grade, e.g. 1.") from None
            if score <= 0:
                continue
            if row[1] not in keys.ids:
                bank.skip("qrels row naming a corpus id not in corpus.jsonl")
                continue
            gold.setdefault(row[0], []).append(keys.ids[row[1]])

    seen: set[str] = set()
    for line, obj in iter_jsonl(queries_path):
        where = at(queries_path.name, line)
        qid = validate.id_field(obj, "_id", where)
        if qid in seen:
            raise EmbSError(f"duplicate query _id {qid!r}", where=where, fix="every query needs a unique _id.")
        seen.add(qid)
        text = require_field(obj, "text", where, str)
        if qid not in gold:
            bank.skip(f"query without gold in qrels/{qrels_path.stem}")
            continue
        bank.query_locations[qid] = where
        bank.queries.append(Query(qid=qid, text=text, answer="", ref_ids=list(dict.fromkeys(gold[qid])),
                                  source=source))
    unknown = sum(1 for q in gold if q not in seen)
    if unknown:
        bank.skip("qrels query id not in queries.jsonl", unknown)
    return bank
