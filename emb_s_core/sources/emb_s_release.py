"""The official EMB-S release (EverMind-AI/EverMemBench-Static), read as published.

Layout of the release root (a single scale folder is accepted too)::

    <root>/data/<scale>/unique_reference.pkl   list of document texts: that scale's whole searchable corpus
    <root>/data/<scale>/data.pkl               list of QAR records for that scale
    <root>/qar/<split>.jsonl                   one QAR record per line (test, train_sft, ...)

- The bank is the union of every scale's corpus, deduplicated by whitespace-normalized text; doc ids are the order
  of first appearance walking the scales from smallest to largest (stable across re-imports and machines), and each
  scale's membership is recorded (``Bank.doc_sets``) so ``emb-s ladder build --official`` can store the scales as
  published.
- Queries come from ``qar/<split>.jsonl`` (``split``: ``test`` by default, ``train_sft``, ``all``) or, without
  ``qar/``, from the scales' ``data.pkl`` (a query repeated in a larger scale is read once). Both go through one
  record reader: ``query``, ``answer``, ``reference_list`` are required; ``id``/``qid``, ``domain``/``category``,
  ``type``/``task_type``, ``answer_aliases`` are read; every other key is kept in the query's ``extra``.
- A reference is the document text (matched after whitespace normalization) or an index into the record's scale
  list. A reference that matches nothing is counted and named (qid, first 80 characters); a query left with no
  reference is skipped and counted.

Why it streams: at 326M tokens the texts are about 1.7 GB, and the scales together hold 2.5 GB. The corpus files are
read twice, one text at a time (:func:`plain_pickle.iter_text_list`; other pickle shapes are loaded whole): the first
pass checks every text and keys it by a 16-byte digest of its normalized form (no copy of the text is kept), the
queries are resolved against those keys, and the second pass hands the new documents of each scale, in id order, to
the workspace writer as a :class:`DocumentStream`. Peak memory is the keys, not the texts.

Pickles are read as plain data only (:mod:`plain_pickle`): nothing in a file is ever executed.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from emb_s_core.errors import EmbSError, at
from emb_s_core.schema import Bank, Document, DocumentStream, Query
from emb_s_core.sources._io import batched, iter_jsonl, require_file
from emb_s_core.sources.plain_pickle import NotATextList, iter_text_list, load_plain_pickle
from emb_s_core.sources.validate import check_limit, check_text, check_value, id_field, list_field, text_field, text_list

REFERENCES, RECORDS = "unique_reference.pkl", "data.pkl"
SPLITS = ("test", "train_sft")
ALL_SPLITS = "all"
DEFAULT_SPLIT = "test"
#: keys the record reader understands; any other key goes to the query's ``extra``
KNOWN_KEYS = ("query", "answer", "reference_list", "id", "qid", "domain", "category", "type", "task_type",
              "answer_aliases", "scale")
SNIPPET = 80
#: repeated objects tolerated in a scale's corpus list (a real one has none: each text is its own object)
MAX_REPEATS = 1000
#: unmatched references named in the notes and the stored summary (all are counted)
MAX_NAMED = 50
_SCALE = re.compile(r"^\d+(?:\.\d+)?[KkMmGg]$")
#: the largest scale label accepted: 64G tokens (the paper's largest scale is 326M); a larger or zero label is a
#: damaged or hostile folder name, refused before it reaches the ladder
MAX_SCALE_TOKENS = 64 << 30


def _check_distinct(refs: list | tuple, path: Path) -> None:
    """A scale's corpus lists distinct texts, so its pickle holds distinct objects; one object referenced over and
    over (a memo bomb of short strings, which passes the character limit) is refused before any text is hashed."""
    repeats = len(refs) - len(set(map(id, refs)))
    if repeats > MAX_REPEATS and repeats * 2 > len(refs):
        raise EmbSError(f"the pickle repeats one object {repeats:,} times in {len(refs):,} references (limit "
                        f"{MAX_REPEATS:,}): a memo bomb or a damaged file", where=str(path),
                        fix="get the file from the official release; a corpus lists each document once.")


# ------------------------------------------------------------------------------------------ layout
@dataclass
class Layout:
    """What is where: scale folders (smallest first) and qar split files."""

    root: Path
    scales: list[tuple[str, Path]]
    qar: dict[str, Path] = field(default_factory=dict)
    single_scale: bool = False


def is_scale_label(name: str) -> bool:
    return bool(_SCALE.match(name))


def scale_tokens(label: str) -> int:
    from emb_s_core import tokens

    return tokens.parse_size(label)


def find_layout(path: Path) -> Layout:
    """The release root, one scale folder, or one of its pickles; anything else is an error saying what is expected."""
    if path.is_file():
        path = path.parent
    if (path / REFERENCES).exists() or (path / RECORDS).exists():
        for name in (REFERENCES, RECORDS):
            require_file(path / name, "EMB-S release file")
        label = path.name if is_scale_label(path.name) else "all"
        if label != "all":
            check_scale_label(label, str(path))
        return Layout(path, [(label, path)], single_scale=True)
    data, qar = path / "data", path / "qar"
    if not data.is_dir():
        found = "a qar/ folder but no data/ folder" if qar.is_dir() else "no data/ or qar/ folder"
        raise EmbSError(f"not an EMB-S release: {path} has {found}",
                        fix="point at the release root (holding data/<scale>/unique_reference.pkl + data.pkl and "
                            "qar/<split>.jsonl) or at one scale folder; run `git lfs pull` if the clone is partial.")
    scales: list[tuple[str, Path]] = []
    for sub in sorted(p for p in data.iterdir() if p.is_dir() and not p.name.startswith(".")):
        if not is_scale_label(sub.name):
            raise EmbSError(f"data/{sub.name} is not a scale folder name", where=str(sub),
                            fix="scale folders are named by their size label (64K, 128K, 512K, 1M, 30M, 326M); "
                                "move or rename the folder.")
        check_scale_label(sub.name, str(sub))
        for name in (REFERENCES, RECORDS):
            if not (sub / name).is_file():
                raise EmbSError(f"scale folder data/{sub.name} has no {name}", where=str(sub),
                                fix=f"every scale folder holds {REFERENCES} and {RECORDS}; download the missing file "
                                    "(`git lfs pull`).")
            _inside(path, sub / name)
        scales.append((sub.name, sub))
    if not scales:
        raise EmbSError(f"{data} holds no scale folder", fix="expected data/<scale>/ folders such as data/64K/.")
    scales.sort(key=lambda s: scale_tokens(s[0]))
    splits = {p.stem: p for p in sorted(qar.glob("*.jsonl"))} if qar.is_dir() else {}
    for file in splits.values():
        _inside(path, file)
    return Layout(path, scales, splits)


def check_scale_label(label: str, where: str) -> int:
    """The tokens of a scale label, refused when zero or past :data:`MAX_SCALE_TOKENS` (``0K`` would build an empty
    rung, ``99999999999999999999G`` overflows every count)."""
    size = scale_tokens(label)
    if not 0 < size <= MAX_SCALE_TOKENS:
        raise EmbSError(f"scale label {label[:30]!r} is {'zero' if size <= 0 else 'larger than 64G tokens'}",
                        where=where, fix="scale folders are named by their real size (64K ... 326M); rename the "
                                         "folder or drop it.")
    return size


def _inside(root: Path, file: Path) -> None:
    """Refuse a file of the release that a symbolic link takes outside the release folder: an import reads what
    the release holds, never a file elsewhere on the machine."""
    real, home = file.resolve(), root.resolve()
    if real != home and home not in real.parents:
        raise EmbSError(f"{file.relative_to(root)} is a link to a file outside the release folder", where=str(file),
                        fix="copy the file into the release folder (or import from where it really is).")


# ------------------------------------------------------------------------------------------ reading
def normalized(text: str) -> str:
    return " ".join(text.split())


def text_key(text: str) -> bytes:
    """The dedup key of a text: a digest of its whitespace-normalized form (no second copy of the corpus)."""
    return hashlib.blake2b(normalized(text).encode("utf-8"), digest_size=16).digest()


@dataclass
class _Scale:
    """One scale's corpus file as the first pass saw it: which of its entries were first seen there (new documents,
    in id order) and whether it streams or must be loaded whole."""

    label: str
    path: Path
    new: np.ndarray
    whole: bool


@dataclass
class _Reader:
    """State of one import: document keys so far, each scale's list as doc ids, counters for the summary."""

    bank: Bank
    by_key: dict[bytes, int] = field(default_factory=dict)
    domains: list[str | None] = field(default_factory=list)
    scales: list[_Scale] = field(default_factory=list)
    scale_ids: dict[str, np.ndarray] = field(default_factory=dict)
    matched: int = 0
    unmatched: int = 0
    unmatched_named: list[dict] = field(default_factory=list)
    keys: dict[str, int] = field(default_factory=dict)
    seen_queries: dict[str, tuple[tuple[str, str], str]] = field(default_factory=dict)  # id -> (content, where)
    duplicate_queries: int = 0
    has_domain: bool = False

    def add_scale(self, label: str, path: Path) -> None:
        """First pass over a scale: check and key every text; documents are numbered by first appearance."""
        ref_path = path / REFERENCES
        try:
            keys, whole = [self._key(i, text, ref_path) for i, text in enumerate(iter_text_list(ref_path))], False
        except NotATextList:  # another shape (tuples, memo references, non-texts): loaded whole, checked the same
            refs = load_plain_pickle(ref_path)
            if not isinstance(refs, (list, tuple)):
                raise EmbSError(f"expected a list, got {type(refs).__name__}", where=str(ref_path),
                                fix=f"{REFERENCES} is a list of document texts.") from None
            _check_distinct(refs, ref_path)
            keys, whole = [self._key(i, text, ref_path) for i, text in enumerate(refs)], True
            del refs
        ids = np.empty(len(keys), dtype=np.int64)
        new = np.zeros(len(keys), dtype=bool)
        for i, key in enumerate(keys):
            doc_id = self.by_key.get(key)
            if doc_id is None:
                doc_id = self.by_key[key] = len(self.domains)
                self.domains.append(None)
                new[i] = True
            ids[i] = doc_id
        self.scale_ids[label] = ids
        self.scales.append(_Scale(label, ref_path, new, whole))

    def _key(self, i: int, text: Any, ref_path: Path) -> bytes:
        if not isinstance(text, str) or not text.strip():
            raise EmbSError(f"reference {i} is {'empty' if isinstance(text, str) else type(text).__name__}, "
                            "not a document text", where=at(_rel(ref_path, self.bank), record=i),
                            fix="every entry must be a non-empty string.")
        check_text(text, at(_rel(ref_path, self.bank), record=i), "reference")
        return text_key(text)

    def read_batches(self, size: int) -> Iterator[list[Document]]:
        """Second pass: each scale's new documents, in id order, ``size`` at a time."""
        return batched(self._new_documents(), size)

    def _new_documents(self) -> Iterator[Document]:
        next_id = 0
        for scale in self.scales:
            n = 0
            try:
                texts = load_plain_pickle(scale.path) if scale.whole else iter_text_list(scale.path)
                for n, text in enumerate(texts, 1):
                    if n <= len(scale.new) and scale.new[n - 1]:
                        yield Document(doc_id=next_id, text=text, source=self.bank.source)
                        next_id += 1
            except NotATextList:
                n = -1
            if n != len(scale.new):
                raise EmbSError(f"{_rel(scale.path, self.bank)} changed during the import",
                                where=str(scale.path), fix="import again once the release's files are complete.")

    def resolve(self, ref: Any, scale: str | None) -> int | None:
        if isinstance(ref, int) and not isinstance(ref, bool):
            ids = self.scale_ids.get(scale) if scale else None
            return int(ids[ref]) if ids is not None and 0 <= ref < len(ids) else None
        if isinstance(ref, str):
            return self.by_key.get(text_key(ref))
        return None

    def add_record(self, rec: Any, where: str, default_qid: str, scale: str | None, split: str | None) -> None:
        present = list(rec) if isinstance(rec, dict) else []  # the file's keys, not the ones validation fills in
        rec = validated_record(rec, where)
        for key in present:
            self.keys[key] = self.keys.get(key, 0) + 1
        qid = str(rec.get("qid", rec.get("id", default_qid)))
        dedup = qid if ("qid" in rec or "id" in rec) else normalized(rec["query"])
        content = (normalized(rec["query"]), normalized(str(rec["answer"])))
        if dedup in self.seen_queries:  # the same query in a larger scale's data.pkl: read once
            first, first_where = self.seen_queries[dedup]
            if first != content:  # two different questions under one id: which one is meant is unknowable
                raise EmbSError(f"query id {qid!r} names two different questions ({first_where}: "
                                f"{first[0][:60]!r}; here: {content[0][:60]!r})", where=where,
                                fix="give every question its own id; the same question may repeat under its id.")
            self.duplicate_queries += 1
            return
        self.seen_queries[dedup] = (content, where)
        record_scale = rec["scale"] if isinstance(rec.get("scale"), str) else scale
        gold: list[int] = []
        for ref in rec["reference_list"]:
            doc = self.resolve(ref, record_scale)
            if doc is None:
                self._unmatched(qid, where, ref, record_scale)
            else:
                self.matched += 1
                gold.append(doc)
        if not gold:
            self.bank.skip("query without a matching reference")
            return
        gold = list(dict.fromkeys(gold))
        domain = next((rec[k].strip() for k in ("domain", "category")
                       if isinstance(rec.get(k), str) and rec[k].strip()), None)
        if domain:
            self.has_domain = True
            for d in gold:
                self.domains[d] = self.domains[d] or domain
        extra = {k: _plain(v) for k, v in rec.items() if k not in KNOWN_KEYS}
        if split:
            extra.setdefault("split", split)
        if scale and not split:
            extra.setdefault("scale", scale)
        task = rec.get("task_type") or rec.get("type")
        self.bank.query_locations.setdefault(qid, where)
        self.bank.queries.append(Query(qid=qid, text=rec["query"], answer=str(rec["answer"]), ref_ids=gold,
                                       domain=domain, task_type=str(task) if task else None, source=self.bank.source,
                                       answer_aliases=rec["answer_aliases"],
                                       extra=extra))

    def _unmatched(self, qid: str, where: str, ref: Any, scale: str | None) -> None:
        self.unmatched += 1
        self.bank.skip("reference matching no document")
        if len(self.unmatched_named) >= MAX_NAMED:
            return
        if isinstance(ref, int) and not isinstance(ref, bool):
            why = (f"index {ref} outside scale {scale}'s {len(self.scale_ids[scale])} references"
                   if scale in self.scale_ids else f"index {ref} with no scale to resolve it")
            snippet = str(ref)
        else:
            snippet = normalized(ref)[:SNIPPET] if isinstance(ref, str) else f"{type(ref).__name__} {ref!r:.60}"
            why = "no document has this text" if isinstance(ref, str) else "not a text or an index"
        self.unmatched_named.append({"qid": qid, "where": where, "reference": snippet, "why": why})
        self.bank.notes.append(f"{where} ({qid}): reference matches no document ({why}): {snippet!r}")


def validated_record(rec: Any, where: str) -> dict:
    """The one check of a QAR record (data.pkl row or qar line) before it is read, through the shared validation
    layer (:mod:`emb_s_core.sources.validate`); raises naming the record and the field.

    Returns the record with its known fields normalized: query/answer as text, reference_list and answer_aliases as
    lists, qid/id as text, domain/category/type/task_type as text or absent.
    """
    if not isinstance(rec, dict):
        check_value(rec, "an object with query, answer and reference_list", where, "record")
    out = dict(rec)
    out["query"] = text_field(rec, "query", where)
    if not out["query"].strip():
        check_value(rec["query"], "a non-empty string", where, "query")
    out["answer"] = text_field(rec, "answer", where, numbers=True)
    out["reference_list"] = list_field(rec, "reference_list", where)
    check_limit("references_per_query", len(out["reference_list"]), f"{where} field 'reference_list'")
    out["answer_aliases"] = text_list(rec, "answer_aliases", where, numbers=True)
    for key in ("qid", "id"):
        if rec.get(key) is not None:
            out[key] = id_field(rec, key, where)
    for key in ("domain", "category", "type", "task_type", "scale"):
        if rec.get(key) is not None:
            out[key] = text_field(rec, key, where)
    return out


def _plain(value: Any) -> Any:
    """JSON-ready copy of an extra value (pickles may hold sets, tuples and bytes)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (set, frozenset)):
        return sorted((_plain(v) for v in value), key=repr)
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value


def _rel(path: Path, bank: Bank) -> str:
    root = Path(bank.details.get("root", path.parent))
    try:
        return str(path.relative_to(root))
    except ValueError:
        return path.name


def _split_files(layout: Layout, split: str) -> list[tuple[str, Path]]:
    if split == ALL_SPLITS:
        return list(layout.qar.items())
    if split not in layout.qar:
        raise EmbSError(f"no qar/{split}.jsonl in {layout.root}",
                        fix=f"choose --split from: {', '.join([*layout.qar, ALL_SPLITS])}.")
    return [(split, layout.qar[split])]


def read(path: Path, source: str = "emb-s", split: str | None = None) -> Bank:
    layout = find_layout(path)
    split = split or DEFAULT_SPLIT
    bank = Bank(source=source, documents=[], queries=[], renumber=True)
    bank.details = {"format": "emb-s-release", "root": str(layout.root)}
    reader = _Reader(bank)
    from_qar = bool(layout.qar) and not layout.single_scale
    files = _split_files(layout, split) if from_qar else []
    for label, folder in layout.scales:
        reader.add_scale(label, folder)
        if not from_qar:
            rec_path = folder / RECORDS
            records = load_plain_pickle(rec_path)
            if not isinstance(records, (list, tuple)):
                raise EmbSError(f"expected a list, got {type(records).__name__}", where=str(rec_path),
                                fix=f"{RECORDS} is a list of records.")
            for i, rec in enumerate(records):
                default = f"emb-s-{i}" if layout.single_scale else f"emb-s-{label}-{i}"
                reader.add_record(rec, at(_rel(rec_path, bank), record=i), default, label, None)
            del records
    for name, file in files:
        for line, rec in iter_jsonl(file):
            reader.add_record(rec, at(_rel(file, bank), line), f"{name}-{line}", None, name)
    bank.documents = DocumentStream(len(reader.domains), reader.read_batches, reader.domains)
    bank.doc_sets = {label: reader.scale_ids[label] for label, _ in layout.scales}
    bank.details.update(
        scales=[{"scale": label, "references": int(len(reader.scale_ids[label])),
                 "documents": int(len(np.unique(reader.scale_ids[label])))} for label, _ in layout.scales],
        splits_found=sorted(layout.qar), queries_from=(f"qar ({', '.join(n for n, _ in files)})" if from_qar
                                                       else "data.pkl"),
        matched_references=reader.matched, unmatched_references=reader.unmatched,
        unmatched_named=reader.unmatched_named, duplicate_queries=reader.duplicate_queries,
        keys_found=dict(sorted(reader.keys.items())), has_domains=reader.has_domain,
    )
    if reader.duplicate_queries:
        bank.notes.append(f"{reader.duplicate_queries} queries repeated in a larger scale's {RECORDS} were read once")
    if not reader.has_domain:
        bank.notes.append("the records carry no domain/category: documents and queries get the default domain; "
                          "the built ladder's 64K/128K/256K domain rungs need `emb-s domains label` first (the "
                          "official ladder does not)")
    return bank
