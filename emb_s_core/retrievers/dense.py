"""Dense retrieval: exact inner product over cached, normalized chunk vectors with MaxP.

Embeddings are computed once per (model, chunk size) per document *content* and cached in the workspace, one LanceDB
table per model key (``content_hash, chunk, vector``): a second evaluation, a new rung or a rebuilt ladder embeds
nothing new. Scoring is one batched matrix product ``Q · Eᵀ`` (queries × chunks); a document scores as its best chunk
(MaxP: ``s(q, d) = max_c ⟨q, e_c⟩``), then each rung's top-K is taken by membership mask (DESIGN.md §3).
"""
from __future__ import annotations

import hashlib
import re
from typing import Any, Callable

import numpy as np
import pyarrow as pa

from emb_s_core.errors import EmbSError
from emb_s_core.progress import counted
from emb_s_core.retrievers.base import EMBEDDINGS, Retriever, documents
from emb_s_core.retrievers.embedders import Embedder
from emb_s_core.store import Workspace

WRITE_EVERY = 1024  # documents embedded per committed cache batch (an interrupted prepare keeps these)
ENCODE_STEP = 128  # chunks encoded per call between two progress reports (a 2-core CPU does ~20-60 per second)


def cache_table(key: str, chunk_size: int) -> str:
    slug = re.sub(r"[^a-z0-9]+", "_", key.lower()).strip("_")[-40:]
    digest = hashlib.sha1(f"{key}|{chunk_size}".encode()).hexdigest()[:8]
    return f"emb_{slug}_c{chunk_size}_{digest}"


def _schema(dim: int) -> pa.Schema:
    return pa.schema([pa.field("content_hash", pa.string()), pa.field("chunk", pa.int32()),
                      pa.field("vector", pa.list_(pa.float32(), dim))])


def embed_documents(ws: Workspace, embedder: Embedder, chunk_size: int, hashes: list[str], texts: list[str],
                    progress: Callable[[str, float], None] | None = None) -> tuple[np.ndarray, np.ndarray, int]:
    """Chunk vectors of the given documents (computing only the uncached ones) and, per vector, the index of its
    document in ``hashes``. Returns (vectors sorted by document then chunk, owner index, number of chunks embedded)."""
    table = cache_table(embedder.key, chunk_size)
    cached = set(ws.read(table, ["content_hash"])["content_hash"].to_pylist()) if ws.has_table(table) else set()
    todo: dict[str, str] = {}
    for h, t in zip(hashes, texts):
        if h not in cached and h not in todo:
            todo[h] = t
    items = list(todo.items())
    embedded = 0
    stage = counted("embedding", len(items), "documents", embedder.key)
    if items and progress:
        progress(stage, 0.0)
    for start in range(0, len(items), WRITE_EVERY):
        part = items[start: start + WRITE_EVERY]
        pieces = embedder.chunks([t for _, t in part], chunk_size)
        flat = [c for cs in pieces for c in cs]
        # encode in steps so the bar moves from the first second; chunks sorted by length first, so each step pads
        # as little as one big call would
        by_length = np.argsort([len(c) for c in flat], kind="stable")
        encoded = []
        for at in range(0, len(flat), ENCODE_STEP):
            encoded.append(embedder.encode([flat[i] for i in by_length[at: at + ENCODE_STEP]]))
            if progress:
                done = start + len(part) * min(1.0, (at + ENCODE_STEP) / len(flat))
                progress(stage, min(1.0, done / len(items)))
        vecs = np.empty((len(flat), encoded[0].shape[1]), np.float32) if encoded else embedder.encode(flat)
        if encoded:
            vecs[by_length] = np.concatenate(encoded)
        embedded += len(flat)
        dim = vecs.shape[1]
        batch = pa.table(
            {"content_hash": [h for (h, _), cs in zip(part, pieces) for _ in cs],
             "chunk": [i for cs in pieces for i in range(len(cs))],
             "vector": pa.FixedSizeListArray.from_arrays(pa.array(vecs.reshape(-1), pa.float32()), dim)},
            schema=_schema(dim),
        )
        with ws.transaction():
            ws.write(table, batch, schema=_schema(dim))
        if progress:
            progress(stage, min(1.0, (start + len(part)) / len(items)))
    if not hashes:
        return np.empty((0, getattr(embedder, "dim", 1) or 1), np.float32), np.empty(0, np.int64), embedded
    data = ws.read(table)
    keys = data["content_hash"].to_numpy(zero_copy_only=False)
    chunk = data["chunk"].to_numpy()
    vectors = data["vector"].combine_chunks()
    vectors = vectors.flatten().to_numpy().reshape(len(data), vectors.type.list_size)
    # rows of the cache for each wanted document, ordered by (document, chunk)
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
    return vectors[order[rows]].astype(np.float32, copy=False), owner, embedded


class Dense(Retriever):
    """Exact dense retrieval with an :class:`Embedder`; chunk size (tokens of the model's tokenizer) is identity."""

    capabilities = frozenset({EMBEDDINGS})

    def __init__(self, spec: str, embedder_factory: Callable[[], Embedder], model_id: dict[str, Any],
                 chunk_size: int | None = None) -> None:
        self.spec = spec
        self._factory = embedder_factory
        self._embedder: Embedder | None = None
        self.model_id = model_id
        self._chunk_size = chunk_size
        self.embedded = 0  # chunks embedded by the last prepare (0 when everything was cached)

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = self._factory()
        return self._embedder

    @property
    def chunk_size(self) -> int:
        return int(self._chunk_size or self.embedder.max_tokens)

    def check(self) -> None:
        """Load the model now, so a missing one fails before anything is written."""
        if self._chunk_size is not None and self._chunk_size < 8:
            raise EmbSError(f"chunk size {self._chunk_size} is too small", fix="use a chunk size of at least 8 tokens.")
        _ = self.embedder

    def config(self) -> dict[str, Any]:
        return {"spec": self.spec, **self.model_id, "chunk_size": self.chunk_size, "pooling": "MaxP",
                "similarity": "cosine"}

    def uncached(self, ws: Workspace, doc_ids: np.ndarray | None = None) -> int:
        """Documents without vectors in the workspace's embedding cache for this model and chunk size."""
        _, _, hashes = documents(ws, doc_ids)
        table = cache_table(self.embedder.key, self.chunk_size)
        cached = set(ws.read(table, ["content_hash"])["content_hash"].to_pylist()) if ws.has_table(table) else set()
        return len(set(hashes) - cached)

    def prepare(self, ws: Workspace, doc_ids: np.ndarray, progress=None) -> None:
        self.doc_ids, texts, hashes = documents(ws, doc_ids)
        self.vectors, owner, self.embedded = embed_documents(ws, self.embedder, self.chunk_size, hashes, texts,
                                                             progress)
        self.multi_chunk = len(owner) != len(self.doc_ids)
        self.starts = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]]) if len(owner) else owner

    def score(self, queries: list[str]) -> np.ndarray:
        q = self.embedder.encode(list(queries))
        s = q @ self.vectors.T
        if self.multi_chunk:
            s = np.maximum.reduceat(s, self.starts, axis=1)
        return s
