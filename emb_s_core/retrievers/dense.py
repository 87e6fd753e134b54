"""Dense retrieval: exact inner product over cached, normalized chunk vectors with MaxP.

Embeddings are computed once per (model, chunk size) per document *content* and cached in the workspace, one LanceDB
table per model key (``content_hash, chunk, vector``): a second evaluation, a new rung or a rebuilt ladder embeds
nothing new. Scoring streams that table in blocks under a memory cap (:mod:`~emb_s_core.retrievers.blocks`): per
block one matrix product ``Q · Eᵀ``, a document scores as its best chunk (MaxP: ``s(q, d) = max_c ⟨q, e_c⟩``), then
each rung's top-K is taken by membership mask (DESIGN.md §3). Vectors may be stored as float16 (half the disk and
I/O; scores are computed in float32), a separate cache table filled from the float32 one when that exists.
"""
from __future__ import annotations

import hashlib
import re
import threading
from typing import Any, Callable, Iterator, Mapping

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from emb_s_core.errors import EmbSError
from emb_s_core.progress import counted
from emb_s_core.retrievers import ann as ann_mod
from emb_s_core.retrievers.base import (EMBEDDINGS, MEASURED, QueryPools, Ranking, Retriever, pool_key, stacked,
                                        topk)
from emb_s_core.retrievers.blocks import BlockScorer, parse_cap
from emb_s_core.retrievers.embedders import Embedder
from emb_s_core.store import Workspace

WRITE_EVERY = 1024  # documents embedded per committed cache batch (an interrupted prepare keeps these)
VECTOR_DTYPES = {"float32": pa.float32(), "float16": pa.float16()}


def cache_table(key: str, chunk_size: int, dtype: str = "float32") -> str:
    slug = re.sub(r"[^a-z0-9]+", "_", key.lower()).strip("_")[-40:]
    digest = hashlib.sha1(f"{key}|{chunk_size}".encode()).hexdigest()[:8]
    return f"emb_{slug}_c{chunk_size}_{digest}" + ("" if dtype == "float32" else "_f16")


def _schema(dim: int, dtype: str = "float32") -> pa.Schema:
    return pa.schema([pa.field("content_hash", pa.string()), pa.field("chunk", pa.int32()),
                      pa.field("vector", pa.list_(VECTOR_DTYPES[dtype], dim))])


def document_hashes(ws: Workspace, doc_ids: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """(sorted doc ids, their content hashes) of ``doc_ids`` (all documents when None), without reading texts."""
    docs = ws.read("documents", ["doc_id", "content_hash"])
    ids = docs["doc_id"].to_numpy()
    order = np.argsort(ids, kind="stable")
    ids = ids[order]
    hashes = docs["content_hash"].to_numpy(zero_copy_only=False)[order]
    if doc_ids is not None:
        wanted = np.unique(np.asarray(doc_ids, dtype=np.int64))
        keep = np.isin(ids, wanted)
        if keep.sum() != len(wanted):
            missing = np.setdiff1d(wanted, ids)[:5].tolist()
            raise EmbSError(f"document id(s) {missing} are not in the workspace's bank",
                            fix="rebuild the ladder (`emb-s ladder build`) after changing the bank.")
        ids, hashes = ids[keep], hashes[keep]
    return ids.astype(np.int64), hashes


def cached_hashes(ws: Workspace, table: str) -> pa.Array:
    """Content hashes that have vectors in cache table ``table`` (one entry per chunk)."""
    if not ws.has_table(table):
        return pa.array([], pa.string())
    return ws.read(table, ["content_hash"])["content_hash"].combine_chunks()


def missing_count(ws: Workspace, table: str, hashes: np.ndarray) -> int:
    """Distinct document contents among ``hashes`` without vectors in ``table``."""
    unique = pa.array(np.unique(np.asarray(hashes, dtype=object).astype(str)), pa.string())
    if not len(unique) or not ws.has_table(table):
        return len(unique)
    have = pc.sum(pc.is_in(unique, value_set=cached_hashes(ws, table))).as_py() or 0
    return len(unique) - int(have)


def missing_documents(ws: Workspace, table: str, doc_ids: np.ndarray | None,
                      batch: int = WRITE_EVERY) -> Iterator[list[tuple[str, str]]]:
    """(content hash, rendered text) of the documents of ``doc_ids`` with no vectors in ``table``, each content once,
    in lists of ``batch``; streamed from the documents table, so no copy of every text is held. The local embedder
    and the Ray engine both read their work from here."""
    from emb_s_core.schema import render_document

    cached = cached_hashes(ws, table)
    wanted = None if doc_ids is None else np.unique(np.asarray(doc_ids, dtype=np.int64))
    seen: set[str] = set()
    todo: list[tuple[str, str]] = []
    for part in ws.dataset("documents").to_batches(columns=["doc_id", "title", "text", "content_hash"],
                                                   batch_size=4096):
        keep = ~pc.is_in(part.column("content_hash"), value_set=cached).to_numpy(zero_copy_only=False)
        if wanted is not None:
            keep &= np.isin(part.column("doc_id").to_numpy(), wanted)
        if not keep.any():
            continue
        rows = part.filter(pa.array(keep))
        for h, title, text in zip(rows.column("content_hash").to_pylist(), rows.column("title").to_pylist(),
                                  rows.column("text").to_pylist()):
            if h in seen:
                continue
            seen.add(h)
            todo.append((h, render_document(title, text)))
            if len(todo) == batch:
                yield todo
                todo = []
    if todo:
        yield todo


def write_vectors(ws: Workspace, table: str, hashes: list[str], chunks: list[int], vectors: np.ndarray,
                  dtype: str = "float32") -> None:
    """Append chunk vectors to cache table ``table`` in one transaction."""
    dim = int(vectors.shape[1])
    batch = pa.table(
        {"content_hash": hashes, "chunk": pa.array(chunks, pa.int32()),
         "vector": pa.FixedSizeListArray.from_arrays(
             pa.array(np.ascontiguousarray(vectors, dtype=np.dtype(dtype)).reshape(-1), VECTOR_DTYPES[dtype]), dim)},
        schema=_schema(dim, dtype),
    )
    with ws.transaction():
        ws.write(table, batch, schema=_schema(dim, dtype))


def embed_chunks(embedder: Embedder, chunk_size: int, part: list[tuple[str, str]],
                 step: Callable[[float], None] | None = None) -> tuple[list[str], list[int], np.ndarray]:
    """(hash per chunk, chunk index, vectors) of one list of (content hash, text): MaxP chunking then encode.

    Chunks are encoded in steps of ``embedder.encode_step`` (128 chunks locally; one request for an endpoint),
    sorted by length first (each step pads as little as one big call would), and ``step(fraction of this part)`` is
    called after each, so a progress bar moves from the first second. When a step fails, the documents whose chunks
    were all encoded before it come with the error (:class:`PartlyEmbedded`), so the caller can keep them. Chunks
    are embedded as documents (the model's document prompt), each leaving room for that prompt within the chunk
    size."""
    pieces = embedder.chunks([t for _, t in part], max(chunk_size - embedder.prompt_tokens(), 8))
    flat = [c for cs in pieces for c in cs]
    owner = np.repeat(np.arange(len(part)), [len(cs) for cs in pieces])
    by_length = np.argsort([len(c) for c in flat], kind="stable")
    size = max(1, int(embedder.encode_step))
    encoded: list[np.ndarray] = []
    for at in range(0, len(flat), size):
        try:
            encoded.append(embedder.encode_documents([flat[i] for i in by_length[at: at + size]]))
        except EmbSError as exc:
            raise PartlyEmbedded(exc, _finished(part, pieces, owner, by_length[:at], encoded)) from None
        if step:
            step(min(1.0, (at + size) / len(flat)))
    if not encoded:
        return [], [], embedder.encode_documents(flat)
    return _finished(part, pieces, owner, by_length, encoded)


class PartlyEmbedded(EmbSError):
    """An encode step failed: ``error`` says why, ``done`` holds (hashes, chunk index, vectors) of the documents
    finished before it."""

    def __init__(self, error: EmbSError, done: tuple[list[str], list[int], np.ndarray]) -> None:
        super().__init__(error.what, where=error.where, fix=error.fix)
        self.error, self.done = error, done


def _finished(part: list[tuple[str, str]], pieces: list[list[str]], owner: np.ndarray, order: np.ndarray,
              encoded: list[np.ndarray]) -> tuple[list[str], list[int], np.ndarray]:
    """(hash per chunk, chunk index, vectors) of the documents all of whose chunks are among ``order[:n]``, the
    chunks ``encoded`` holds (in that order)."""
    n = sum(len(e) for e in encoded)
    dim = encoded[0].shape[1] if encoded else 0
    vectors = np.zeros((len(owner), dim), np.float32)
    have = np.zeros(len(owner), bool)
    if n:
        vectors[order[:n]] = np.concatenate(encoded)
        have[order[:n]] = True
    complete = np.ones(len(part), bool)
    np.logical_and.at(complete, owner, have)
    keep = complete[owner]
    hashes = [h for (h, _), cs, ok in zip(part, pieces, complete) if ok for _ in cs]
    index = [i for cs, ok in zip(pieces, complete) if ok for i in range(len(cs))]
    return hashes, index, vectors[keep]


def embed_missing(ws: Workspace, embedder: Embedder, chunk_size: int, doc_ids: np.ndarray | None,
                  hashes: np.ndarray, progress: Callable[[str, float], None] | None = None,
                  dtype: str = "float32") -> int:
    """Embed the documents of ``doc_ids`` that have no cached vectors; returns the number of chunks embedded.

    Each batch is committed on its own, so an interrupted run keeps what it finished. A float16 table is filled
    from the float32 cache where that has the document (a conversion, not a second embedding)."""
    table = cache_table(embedder.key, chunk_size, dtype)
    total = missing_count(ws, table, hashes)
    if not total:
        return 0
    if dtype != "float32":
        _convert_cached(ws, cache_table(embedder.key, chunk_size), table, dtype)
        total = missing_count(ws, table, hashes)
    stage = counted("embedding", total, f"documents on {embedder.device}", embedder.key)  # the device: in the bar
    if progress:
        progress(stage, 0.0)
    embedded = done = 0
    for part in missing_documents(ws, table, doc_ids):
        step = None if progress is None else \
            (lambda f, done=done, n=len(part): progress(stage, min(1.0, (done + n * f) / total)))
        try:
            chunk_hashes, chunk_index, vectors = embed_chunks(embedder, chunk_size, part, step)
        except PartlyEmbedded as partial:
            kept = done + len(set(partial.done[0]))
            if partial.done[0]:
                write_vectors(ws, table, *partial.done, dtype)
            raise EmbSError(f"{partial.error.what} ({kept:,} of {total:,} documents embedded and kept)",
                            where=partial.error.where, fix=partial.error.fix) from None
        write_vectors(ws, table, chunk_hashes, chunk_index, vectors, dtype)
        embedded += len(chunk_hashes)
        done += len(part)
        if progress:
            progress(stage, min(1.0, done / total))
    return embedded


def _convert_cached(ws: Workspace, source: str, target: str, dtype: str) -> None:
    """Copy vectors the ``source`` (float32) table has and ``target`` lacks into ``target``, converted to ``dtype``."""
    if not ws.has_table(source):
        return
    have = cached_hashes(ws, target)
    for part in ws.dataset(source).to_batches(columns=["content_hash", "chunk", "vector"], batch_size=65536):
        keep = ~pc.is_in(part.column("content_hash"), value_set=have).to_numpy(zero_copy_only=False)
        if not keep.any():
            continue
        part = part.filter(pa.array(keep))
        dim = part.column("vector").type.list_size
        write_vectors(ws, target, part.column("content_hash").to_pylist(), part.column("chunk").to_pylist(),
                      part.column("vector").flatten().to_numpy().reshape(len(part), dim), dtype)


def load_vectors(ws: Workspace, table: str, hashes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """All chunk vectors of ``hashes`` in memory, ordered by (document, chunk), and each vector's document index:
    for small banks, inspection and tests (scoring streams instead)."""
    if not len(hashes):
        return np.empty((0, 1), np.float32), np.empty(0, np.int64)
    data = ws.read(table)
    keys = data["content_hash"].to_numpy(zero_copy_only=False)
    chunk = data["chunk"].to_numpy()
    vectors = data["vector"].combine_chunks()
    vectors = vectors.flatten().to_numpy().reshape(len(data), vectors.type.list_size)
    order = np.lexsort((chunk, keys))
    keys_sorted = keys[order]
    wanted = np.asarray(hashes, dtype=object)
    lo = np.searchsorted(keys_sorted, wanted, side="left")
    hi = np.searchsorted(keys_sorted, wanted, side="right")
    counts = hi - lo
    if (counts == 0).any():  # only if the cache table was edited by hand
        raise EmbSError(f"embedding cache {table} lacks {int((counts == 0).sum())} documents",
                        fix=f"delete the table {table} from the workspace's lance folder and rerun.")
    rows = np.concatenate([np.arange(a, b) for a, b in zip(lo, hi)])
    owner = np.repeat(np.arange(len(hashes)), counts)
    return vectors[order[rows]].astype(np.float32), owner


_ONE_QUERY: dict[tuple, np.ndarray] = {}  # (embedder key, query prompt, text) -> vector, the last few questions
_ONE_QUERY_KEEP = 16
_ONE_QUERY_LOCK = threading.Lock()


def encode_queries(embedder: Embedder, queries: list[str]) -> np.ndarray:
    """``embedder.encode_queries(queries)`` (the model's query prompt applied); a single question is remembered (a
    few, per model key and query prompt), so a live what-if that asks a dense retriever and the fusions containing it
    embeds the typed text once per model, not once per retriever. Batches (evaluation) are encoded as they come."""
    key = getattr(embedder, "key", None)
    if len(queries) != 1 or not key:
        return embedder.encode_queries(queries)
    prompts = embedder.prompts
    memo = (key, prompts.query, prompts.query_input_type, queries[0])
    with _ONE_QUERY_LOCK:
        hit = _ONE_QUERY.get(memo)
    if hit is None:
        hit = embedder.encode_queries(queries)
        with _ONE_QUERY_LOCK:
            if len(_ONE_QUERY) >= _ONE_QUERY_KEEP:
                _ONE_QUERY.pop(next(iter(_ONE_QUERY)))
            _ONE_QUERY[memo] = hit
    return hit.copy()


class Dense(Retriever):
    """Exact dense retrieval with an :class:`Embedder`; chunk size (tokens of the model's tokenizer) is identity.

    ``memory_cap`` (bytes or a size like ``256M``; default a share of RAM, :mod:`~emb_s_core.retrievers.blocks`)
    bounds scoring memory and does not change results; ``vector_dtype="float16"`` stores vectors in half precision,
    which can change scores in the 4th decimal, so it is part of the run's identity."""

    def __init__(self, spec: str, embedder_factory: Callable[[], Embedder], model_id: dict[str, Any],
                 chunk_size: int | None = None, memory_cap: int | str | None = None,
                 vector_dtype: str | None = None, ann: ann_mod.AnnOptions | None = None) -> None:
        self.spec = spec
        self._factory = embedder_factory
        self._embedder: Embedder | None = None
        self.model_id = model_id
        self._chunk_size = chunk_size
        self.memory_cap = parse_cap(memory_cap)
        self.vector_dtype = vector_dtype or "float32"
        if self.vector_dtype not in VECTOR_DTYPES:
            raise EmbSError(f"unknown vector dtype {vector_dtype!r}", fix="use float32 (default) or float16.")
        self.embedded = 0  # chunks embedded by the last prepare (0 when everything was cached)
        self.ann = ann
        # an approximate run carries its recall against exact scoring (measurements)
        self.capabilities = frozenset({EMBEDDINGS, MEASURED} if ann is not None else {EMBEDDINGS})
        self.exact_fallbacks = 0  # (query, rung) pairs the ANN candidates could not fill, scored exactly

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = self._factory()
        return self._embedder

    @property
    def chunk_size(self) -> int:
        return int(self._chunk_size or self.embedder.max_tokens)

    @property
    def table(self) -> str:
        return cache_table(self.embedder.key, self.chunk_size, self.vector_dtype)

    def check(self) -> None:
        """Load the model now, so a missing one fails before anything is written."""
        if self._chunk_size is not None and self._chunk_size < 8:
            raise EmbSError(f"chunk size {self._chunk_size} is too small", fix="use a chunk size of at least 8 tokens.")
        _ = self.embedder

    def config(self) -> dict[str, Any]:
        extra: dict[str, Any] = {} if self.vector_dtype == "float32" else {"vector_dtype": self.vector_dtype}
        if self.ann is not None:
            extra["ann"] = self.ann.config()
        extra.update(self.embedder.prompts.config())  # none: nothing, so runs made before prompts keep their identity
        if self.embedder.precision != "float32":  # a GPU's half precision; float32 runs keep their identity
            extra["precision"] = self.embedder.precision
        return {"spec": self.spec, **self.model_id, "chunk_size": self.chunk_size, "pooling": "MaxP",
                "similarity": "cosine", **extra}

    def uncached(self, ws: Workspace, doc_ids: np.ndarray | None = None) -> int:
        """Documents without vectors in the workspace's embedding cache for this model, chunk size and dtype."""
        _, hashes = document_hashes(ws, doc_ids)
        return missing_count(ws, self.table, hashes)

    def prepare(self, ws: Workspace, doc_ids: np.ndarray, progress=None) -> None:
        self._ws = ws
        self.doc_ids, self.hashes = document_hashes(ws, doc_ids)
        if progress is not None and missing_count(ws, self.table, self.hashes):
            self.embedder.warm(progress)
        self.embedded = embed_missing(ws, self.embedder, self.chunk_size, doc_ids, self.hashes, progress,
                                      self.vector_dtype)
        if self.ann is not None and len(self.hashes):
            ann_mod.ensure_index(ws, self.table, self.ann)
        ws.refresh()
        self.scorer = BlockScorer(ws, self.table, self.hashes, self.memory_cap)
        self._small: dict[str, tuple[np.ndarray, BlockScorer]] = {}

    @property
    def multi_chunk(self) -> bool:
        """Whether some prepared document has more than one chunk vector."""
        cached = cached_hashes(self._ws, self.table)
        unique = pa.array(np.unique(self.hashes.astype(str)), pa.string())
        return int(pc.sum(pc.is_in(cached, value_set=unique)).as_py() or 0) > len(unique)

    @property
    def vectors(self) -> np.ndarray:
        """Every chunk vector of the prepared documents, in memory (document order): for small banks and tests."""
        return load_vectors(self._ws, self.table, self.hashes)[0]

    def score(self, queries: list[str]) -> np.ndarray:
        return self.scorer.score_all(encode_queries(self.embedder, list(queries)))

    def rank(self, queries: list[str], pools: Mapping[str, np.ndarray], k: int) -> dict[str, Ranking]:
        """Exact: each pass of the block scorer covers a sub-batch of queries; each rung's top-K per pass. With ANN:
        rungs of at most ``exact_below`` documents exactly, the others from one index search (:mod:`.ann`)."""
        pools = {name: np.asarray(ids, dtype=np.int64) for name, ids in pools.items()}
        q = encode_queries(self.embedder, list(queries))
        if self.ann is None:
            return _rank_exact(self.scorer, {n: self.positions(ids) for n, ids in pools.items()}, q, pools, k)
        return self._rank_ann(q, pools, k)

    def rank_each(self, queries: list[str], pools: Mapping[str, QueryPools], k: int) -> dict[str, Ranking]:
        """Exact: the batch is scored once per pass of the block scorer, each query's row masked to its own pool."""
        if self.ann is not None:  # an index search per query and pool: the protocol's per-query default
            return super().rank_each(queries, pools, k)
        q = encode_queries(self.embedder, list(queries))
        parts: dict[str, list[Ranking]] = {name: [] for name in pools}
        for rows, s in self.scorer.scores(q):
            for name, qp in pools.items():
                for j, i in enumerate(range(rows.start, rows.stop)):
                    ids = qp.pool(i)
                    parts[name].append(topk(s[j: j + 1, self.positions(ids)], ids, k))
        return {name: stacked(ps) for name, ps in parts.items()}

    def measurements(self, pools: Mapping[str, np.ndarray], queries: Mapping[str, Mapping[str, str]]
                     ) -> dict[str, Any]:
        """ANN runs: recall@10 against exact scoring per rung, on a seeded sample of each rung's queries."""
        if self.ann is None:
            return {}
        recall, n, how, fallback = {}, {}, {}, {}
        for name, ids in pools.items():
            qids = ann_mod.sample(list(queries[name]), self.ann.recall_sample, self.ann.seed)
            ids = np.asarray(ids, dtype=np.int64)
            q = encode_queries(self.embedder, [queries[name][qid] for qid in qids])
            exact = _rank_exact(self.scorer, {name: self.positions(ids)}, q, {name: ids}, ann_mod.RECALL_K)[name]
            before = self.exact_fallbacks
            approx = self._rank_ann(q, {name: ids}, ann_mod.RECALL_K)[name]
            recall[name] = round(ann_mod.recall_at_k(exact.ids, approx.ids), 4)
            n[name] = len(qids)
            how[name] = "exact" if len(ids) <= self.ann.exact_below else "ann"
            # queries whose candidates held fewer than 10 of the rung's documents were scored exactly instead
            fallback[name] = round((self.exact_fallbacks - before) / max(len(qids), 1), 4)
        return {"ann_recall@10": recall, "ann_recall_queries": n, "ann_scoring": how,
                "ann_exact_fallback_share": fallback}

    def _rank_ann(self, q: np.ndarray, pools: dict[str, np.ndarray], k: int) -> dict[str, Ranking]:
        small = {n: ids for n, ids in pools.items() if len(ids) <= self.ann.exact_below}
        out = {}
        if small:
            union = np.unique(np.concatenate(list(small.values())))
            key = pool_key(union)
            if key not in self._small:
                self._small = {key: (union, BlockScorer(self._ws, self.table, self.hashes[self.positions(union)],
                                                        self.memory_cap))}
            out.update(_rank_exact(self._small[key][1], {n: np.searchsorted(union, ids) for n, ids in small.items()},
                                   q, small, k))
        large = {n: ids for n, ids in pools.items() if n not in small}
        if large:
            out.update(self._rank_candidates(q, large, k))
        return {name: out[name] for name in pools}

    def _rank_candidates(self, q: np.ndarray, pools: dict[str, np.ndarray], k: int) -> dict[str, Ranking]:
        """Top-K per rung from the index's candidates; a query with fewer than K candidates in a rung is scored
        exactly there."""
        rows, slot, score = ann_mod.search(self._ws, self.table, q, self.scorer.unique, self.ann)
        # a content hash may be several documents (duplicates): expand each candidate to its documents
        by_slot = np.argsort(self.scorer.column_of_doc, kind="stable")
        first = np.searchsorted(self.scorer.column_of_doc[by_slot], slot, side="left")
        count = np.searchsorted(self.scorer.column_of_doc[by_slot], slot, side="right") - first
        rows, score = np.repeat(rows, count), np.repeat(score, count)
        doc = by_slot[np.repeat(first - np.r_[0, np.cumsum(count)[:-1]], count) + np.arange(int(count.sum()))] \
            if len(count) else np.empty(0, np.int64)
        out = {}
        for name, ids in pools.items():
            member = np.zeros(len(self.doc_ids), bool)
            member[self.positions(ids)] = True
            out_ids, out_scores, short = ann_mod.top_k_in_pool(rows, doc, score, self.doc_ids, member, len(q),
                                                               min(k, len(ids)))
            kk = out_ids.shape[1]
            if len(short):
                self.exact_fallbacks += len(short)
                exact = _rank_exact(self.scorer, {name: self.positions(ids)}, q[short], {name: ids}, kk)[name]
                out_ids[short], out_scores[short] = exact.ids, exact.scores
            out[name] = Ranking(out_ids, out_scores)
        return out


def _rank_exact(scorer: BlockScorer, positions: Mapping[str, np.ndarray], q: np.ndarray,
                pools: Mapping[str, np.ndarray], k: int) -> dict[str, Ranking]:
    """Exact top-K per pool from a block scorer; ``positions[pool]`` are the pool's columns among its documents."""
    if not len(q):
        return {name: topk(np.empty((0, len(ids))), ids, k) for name, ids in pools.items()}
    parts: dict[str, list[Ranking]] = {name: [] for name in pools}
    for _, s in scorer.scores(q):
        for name, ids in pools.items():
            parts[name].append(topk(s[:, positions[name]], ids, k))
    return {name: stacked(ps) for name, ps in parts.items()}
