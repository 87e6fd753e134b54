"""Records of a MemoryBank (documents, queries) and their Arrow schemas (DESIGN.md §1).

Importers build a :class:`Bank`; :func:`Bank.validate` enforces the benchmark's invariants before anything is
written, so a bad file never reaches the workspace.
"""
from __future__ import annotations

import hashlib
import unicodedata
from dataclasses import dataclass, field
from typing import Callable, Iterator

import numpy as np
import pyarrow as pa

from emb_s_core.errors import EmbSError

DOCUMENT_SCHEMA = pa.schema(
    [
        pa.field("doc_id", pa.int64(), nullable=False),
        pa.field("text", pa.string(), nullable=False),
        pa.field("title", pa.string()),
        pa.field("domain", pa.string()),
        pa.field("source", pa.string()),
        pa.field("n_tokens", pa.int32()),
        pa.field("content_hash", pa.string()),
    ]
)

QUERY_SCHEMA = pa.schema(
    [
        pa.field("qid", pa.string(), nullable=False),
        pa.field("text", pa.string(), nullable=False),
        pa.field("answer", pa.string()),
        pa.field("answer_aliases", pa.list_(pa.string())),
        pa.field("ref_ids", pa.list_(pa.int64())),
        pa.field("hard_negative_ids", pa.list_(pa.int64())),
        pa.field("domain", pa.string()),
        pa.field("task_type", pa.string()),
        pa.field("source", pa.string()),
    ]
)

UNKNOWN_DOMAIN = "general"
#: where a hard negative comes from: a dataset's distractor (not verified as a near-miss), a collision-test verdict,
#: or a generator that wrote it as one (the demo bank)
DATASET, COLLISION, SYNTHETIC = "dataset", "collision", "synthetic"
HN_PROVENANCES = (DATASET, COLLISION, SYNTHETIC)


def normal_domain(value: str | None) -> str | None:
    """A domain as stored (the one rule for every format, applied by ``sources.validate``): NFC, blanks trimmed and collapsed, lower case, so ``Law``, ``law`` and ``law `` are one
    domain (None stays None; an empty one is None)."""
    if value is None:
        return None
    text = " ".join(unicodedata.normalize("NFC", str(value)).split()).lower()
    return text or None


@dataclass
class Document:
    doc_id: int
    text: str
    title: str | None = None
    domain: str | None = None
    source: str | None = None
    n_tokens: int | None = None

    def rendered(self) -> str:
        """The text that is tokenized, embedded and shown to models: title line, then body."""
        return render_document(self.title, self.text)


@dataclass
class Query:
    qid: str
    text: str
    answer: str
    ref_ids: list[int]
    hard_negative_ids: list[int] = field(default_factory=list)
    domain: str | None = None
    task_type: str | None = None
    source: str | None = None
    answer_aliases: list[str] = field(default_factory=list)
    extra: dict = field(default_factory=dict)  # source keys the importer does not know, kept as JSON

    @property
    def multi_source(self) -> bool:
        return len(self.ref_ids) > 1


class DocumentStream:
    """A bank's documents read again from their files batch by batch, for a source too large to hold (an EMB-S release
    at 326M tokens is 1.7 GB of text): the importer has read and checked every text once and assigned the ids
    0..n-1 in order; the workspace writes them as they come.

    ``read_batches(size)`` yields lists of at most ``size`` :class:`Document` whose ids are ``ids`` in order (0..n-1
    when not given); ``domains`` holds each document's domain (None: unset; no list: none set), applied as the
    documents are produced.
    """

    def __init__(self, n: int, read_batches: Callable[[int], Iterator[list[Document]]], domains: list | None = None,
                 ids: np.ndarray | None = None) -> None:
        self.n = n
        self.read_batches = read_batches
        self.domains = [None] * n if domains is None else domains
        self.ids = np.arange(n, dtype=np.int64) if ids is None else np.asarray(ids, np.int64)
        self.default_domain: str | None = None

    def __len__(self) -> int:
        return self.n

    def batches(self, size: int) -> Iterator[list[Document]]:
        k = 0
        for batch in self.read_batches(size):
            for doc in batch:
                if k >= self.n or doc.doc_id != self.ids[k]:  # a file changed between the two reads
                    raise EmbSError(f"document {k} read differently the second time",
                                    fix="a file of the source changed during the import; import again.")
                doc.domain = normal_domain(doc.domain) or self.domains[k] or self.default_domain
                k += 1
            yield batch
        if k != self.n:
            raise EmbSError(f"{k:,} documents read the second time, {self.n:,} the first",
                            fix="a file of the source changed during the import; import again.")

    def __iter__(self) -> Iterator[Document]:
        for batch in self.batches(4096):
            yield from batch


def render_document(title: str | None, text: str) -> str:
    """Title line, then body; a missing title (None, or NaN from a pandas frame) adds nothing."""
    return f"{title}\n{text}" if isinstance(title, str) and title else text


#: the header line before each document a model is shown (paper §A.3), and what separates two documents
DOC_HEADER = "[DocID={doc_id}]"
DOC_SEPARATOR = "\n\n"


def serialized_document(doc_id: int, title: str | None, text: str) -> str:
    """One document as localization and GLOBAL QA show it: the ``[DocID=<id>]`` line, then title and body."""
    return f"{DOC_HEADER.format(doc_id=int(doc_id))}\n{render_document(title, text)}"


def content_hash(title: str | None, text: str) -> str:
    """Key of every per-document cache (tokens, embeddings): changes iff the rendered text changes."""
    return hashlib.sha256(render_document(title, text).encode("utf-8")).hexdigest()[:32]


@dataclass
class Bank:
    """What one importer read from one source: documents, queries and what it skipped.

    ``locations`` maps a document id or qid to where it was read (``file line N``) for error messages.
    ``renumber`` is True when the ids are local (0..n-1 in file order) and the workspace assigns the final ones.
    ``doc_sets`` names document sets the source itself defines (an EMB-S release's scales: name -> local doc ids),
    stored in the table ``doc_sets``; ``details`` is the importer's summary, stored in the setting ``source:<name>``.
    ``encoding`` names the tokenizer of the documents' ``n_tokens`` when the importer already counted them (the demo
    generator must, to hit its size), so the workspace does not count them again.
    """

    source: str
    documents: list[Document] | DocumentStream
    queries: list[Query]
    renumber: bool = True
    skipped: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    doc_locations: dict[int, str] = field(default_factory=dict)
    query_locations: dict[str, str] = field(default_factory=dict)
    encoding: str | None = None
    doc_sets: dict = field(default_factory=dict)  # name -> local doc ids in order (a release's scales)
    hard_negative_provenance: str = "dataset"  # where this source's hard negatives come from (HN_PROVENANCES)
    details: dict = field(default_factory=dict)  # what the importer found (scales, splits, keys), for `emb-s info`

    def skip(self, reason: str, n: int = 1) -> None:
        """Count ``n`` rows left out for ``reason``; the counts are stored with the import and printed by the CLI."""
        self.skipped[reason] = self.skipped.get(reason, 0) + n

    def validate(self) -> None:
        """Raise EmbSError on the first broken invariant, naming the record and where it was read."""
        seen: dict[int, str] | range = {}
        if isinstance(self.documents, DocumentStream):  # ids unique and every text checked as it was read
            seen = set(self.documents.ids.tolist())
        for doc in () if isinstance(self.documents, DocumentStream) else self.documents:
            where = self.doc_locations.get(doc.doc_id, f"{self.source} document {doc.doc_id}")
            if doc.doc_id in seen:
                raise EmbSError(
                    f"duplicate doc_id {doc.doc_id} (first seen at {seen[doc.doc_id]})",
                    where=where,
                    fix="give every document a unique integer doc_id.",
                )
            seen[doc.doc_id] = where
            if not isinstance(doc.text, str) or not doc.text.strip():
                raise EmbSError(f"document {doc.doc_id} has empty text", where=where, fix="drop it or fill it.")
        qids: set[str] = set()
        for q in self.queries:
            where = self.query_locations.get(q.qid, f"{self.source} query {q.qid}")
            if q.qid in qids:
                raise EmbSError(f"duplicate qid {q.qid!r}", where=where, fix="give every query a unique qid.")
            qids.add(q.qid)
            if not q.ref_ids:
                raise EmbSError(
                    f"query {q.qid!r} has an empty RefList (ref_ids)",
                    where=where,
                    fix="every query needs at least one gold document id; drop the query or add its evidence.",
                )
            for kind, ids in (("gold (ref_ids)", q.ref_ids), ("hard-negative", q.hard_negative_ids)):
                missing = [i for i in ids if i not in seen]
                if missing:
                    raise EmbSError(
                        f"query {q.qid!r} names {kind} document id(s) {missing[:5]} that are not in the bank",
                        where=where,
                        fix="import the documents first in the same file set, or correct the ids.",
                    )
            both = sorted(set(q.ref_ids) & set(q.hard_negative_ids))
            if both:
                raise EmbSError(
                    f"query {q.qid!r} lists document id(s) {both} both as gold and as hard negative",
                    where=where,
                    fix="a hard negative must not support the answer; remove it from one of the two lists.",
                )


# ------------------------------------------------------------------------------------------------ status vocabulary
# Defined once; runs, llm, metrics, collide, judge, analysis, figures and pages use these names (DESIGN.md §2).
# Status of one stored result row, answer, judgment or verdict:
OK = "ok"  # a ranking / reply exists
DOES_NOT_FIT = "does_not_fit"  # the input exceeds the model's window: never sent, never scored as zero
ERROR = "error"  # the call failed after its retries; a rerun tries it again
UNPARSEABLE = "unparseable"  # a reply came back but no label / score could be read from it
STATUSES = (OK, DOES_NOT_FIT, ERROR)

# State of one (run, rung) cell as the dashboard and the figures show it:
CELL_OK = OK  # at least one query of the cell has a ranking
CELL_DOES_NOT_FIT = "does not fit"  # every query of the cell was too long for the model
CELL_ERROR = ERROR  # every query of the cell failed (or a mix of failures)
CELL_NOT_RUN = "not run"  # the run stored nothing there

# State of a whole run against the ladder it was made for (Home, Overview, Compare):
RUN_COMPLETE = "complete"  # a result for every (rung, query) cell of the ladder
RUN_PARTIAL = "partial"  # some cells: interrupted, still running, or evaluated on some rungs only
RUN_EMPTY = "empty"  # registered, no result stored yet
