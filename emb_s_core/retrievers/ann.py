"""Approximate dense search (opt-in per run): a LanceDB IVF-PQ or IVF-HNSW-SQ index on the embedding cache, searched
once per query over the whole cache with a large candidate depth, then masked per rung; rungs of at most
``exact_below`` documents are scored exactly instead.

Why this shape (DESIGN.md §3): an ANN search with a rung prefilter lost most of the true top-10 on small rungs, and a
mask over one search's candidates can only find a small rung's documents if the candidate list is deep enough to
reach them. Small rungs are cheap to scan exactly, so they are; large rungs take the candidates. A query whose
candidates hold fewer than K documents of a rung is scored exactly on it. A run made this way is never silently
approximate: its recall@10 against exact scoring on a seeded sample of queries per rung is measured and stored with
the run (``runs.save_measurement``), and shown where the run is listed.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from emb_s_core.errors import EmbSError
from emb_s_core.store import Workspace

INDEX_TYPES = {"ivf_pq": "IVF_PQ", "ivf_hnsw_sq": "IVF_HNSW_SQ"}
RECALL_K = 10


@dataclass(frozen=True)
class AnnOptions:
    """What makes an ANN run what it is (all of it is part of the run's identity)."""

    index: str = "ivf_pq"
    depth: int = 1000  # candidate chunks per query from the one search
    nprobes: int = 20
    refine_factor: int = 10  # re-score depth × refine_factor candidates with exact vectors
    exact_below: int = 20_000  # rungs with at most this many documents are scored exactly
    recall_sample: int = 100  # queries per rung whose exact top-10 the ANN top-10 is checked against
    seed: int = 0

    def __post_init__(self) -> None:
        if self.index not in INDEX_TYPES:
            raise EmbSError(f"unknown ANN index {self.index!r}", fix=f"use one of {', '.join(INDEX_TYPES)}.")
        for name in ("depth", "nprobes", "refine_factor", "recall_sample"):
            if int(getattr(self, name)) < 1:
                raise EmbSError(f"ANN {name} must be at least 1 (got {getattr(self, name)})",
                                fix=f"pass a positive --ann-{name.replace('_', '-')}.")
        if int(self.exact_below) < 0:
            raise EmbSError(f"ANN exact_below must be 0 or more (got {self.exact_below})",
                            fix="pass --ann-exact-below 0 to search every rung approximately.")

    def config(self) -> dict[str, Any]:
        return asdict(self)


def ensure_index(ws: Workspace, table: str, options: AnnOptions) -> None:
    """Build the vector index on ``table`` unless one of this type exists (one committed transaction)."""
    tbl = ws.table(table)
    wanted = INDEX_TYPES[options.index].replace("_", "").lower()
    for idx in tbl.list_indices():
        if "vector" in idx.columns and str(idx.index_type).replace("_", "").lower() == wanted:
            return
    rows = tbl.count_rows()
    dim = tbl.schema.field("vector").type.list_size
    if rows < 256:
        raise EmbSError(f"an ANN index needs at least 256 vectors; the cache has {rows}",
                        fix="score this bank exactly (leave out --ann): it is small enough.")
    partitions = int(max(1, min(4096, round(np.sqrt(rows)), rows // 256)))
    sub_vectors = next(s for s in (dim // 8, dim // 4, dim // 2, dim) if s and dim % s == 0)
    kwargs: dict[str, Any] = {"metric": "dot", "num_partitions": partitions, "index_type": INDEX_TYPES[options.index],
                              "replace": True}
    if options.index == "ivf_pq":
        kwargs["num_sub_vectors"] = sub_vectors
    import warnings

    with ws.transaction(), warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        ws.create_vector_index(table, **kwargs)


def search(ws: Workspace, table: str, q: np.ndarray, unique: pa.Array, options: AnnOptions
           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(query row, hash slot, best chunk score) of each candidate document of each query: one index search per
    query batch, chunk candidates folded to their document by max (MaxP), hashes outside ``unique`` dropped."""
    tbl = ws.table(table)
    if not len(q):
        return np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.float32)
    result = (tbl.search(q if len(q) > 1 else q[0]).distance_type("dot").limit(options.depth)
              .nprobes(options.nprobes).refine_factor(options.refine_factor)
              .select(["content_hash", "_distance"]).to_arrow())
    query_row = result["query_index"].to_numpy() if "query_index" in result.column_names \
        else np.zeros(result.num_rows, np.int64)
    slot = pc.index_in(result["content_hash"], value_set=unique).fill_null(-1).to_numpy()
    score = (1.0 - result["_distance"].to_numpy()).astype(np.float32)  # LanceDB's dot distance is 1 − ⟨q, e⟩
    keep = slot >= 0
    query_row, slot, score = query_row[keep].astype(np.int64), slot[keep].astype(np.int64), score[keep]
    order = np.lexsort((-score, slot, query_row))  # best chunk first within each (query, document)
    query_row, slot, score = query_row[order], slot[order], score[order]
    first = np.r_[True, (query_row[1:] != query_row[:-1]) | (slot[1:] != slot[:-1])] if len(slot) \
        else slot.astype(bool)
    return query_row[first], slot[first], score[first]


def top_k_in_pool(rows: np.ndarray, doc: np.ndarray, score: np.ndarray, doc_ids: np.ndarray, member: np.ndarray,
                  n_queries: int, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each query's top-``k`` among its candidates (query row, document position, score) that are members of the
    pool (``member[position]``), ties to the smaller doc id as in ``topk``. Returns (ids, scores, the query rows
    with fewer than ``k`` candidates in the pool: their rows are left unfilled for the caller to score exactly)."""
    keep = member[doc]
    r, d, s = rows[keep], doc_ids[doc[keep]], score[keep]
    order = np.lexsort((d, -np.round(s, 6), r))
    r, d, s = r[order], d[order], s[order]
    start = np.searchsorted(r, np.arange(n_queries))
    n_cand = np.searchsorted(r, np.arange(n_queries), side="right") - start
    ids = np.empty((n_queries, k), np.int64)
    scores = np.empty((n_queries, k), np.float32)
    full = np.flatnonzero(n_cand >= k)
    take = start[full, None] + np.arange(k)
    ids[full], scores[full] = d[take], s[take]
    return ids, scores, np.flatnonzero(n_cand < k)


def recall_at_k(exact: np.ndarray, approx: np.ndarray, k: int = RECALL_K) -> float:
    """Mean over queries of |approx top-k ∩ exact top-k| / k (the lists are doc ids, best first)."""
    if not len(exact):
        return float("nan")
    k = min(k, exact.shape[1])
    return float(np.mean([len(set(a[:k]) & set(e[:k])) / k for a, e in zip(approx, exact)]))


def sample(qids: list[str], n: int, seed: int) -> list[str]:
    """A seeded sample of up to ``n`` of ``qids`` (sorted first, so it does not depend on their order)."""
    qids = sorted(qids)
    if len(qids) <= n:
        return qids
    rng = np.random.default_rng(seed)
    return [qids[i] for i in sorted(rng.choice(len(qids), n, replace=False))]
