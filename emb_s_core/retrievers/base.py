"""The one small protocol every retriever follows, and the top-K-per-rung helper they share.

A retriever is *prepared* once over the largest pool it will search (the union of the rungs being evaluated; the
ladder is nested, so that is the largest rung), then ``rank`` returns, for a batch of queries and several pools (rung
memberships, each a subset of the prepared documents), the top-K document ids and scores per pool. Retrievers whose
scores do not depend on the pool (dense) score once and mask per pool; BM25 overrides ``rank`` because its statistics
belong to the pool (DESIGN.md §3).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from emb_s_core.errors import EmbSError
from emb_s_core.store import Workspace


#: what fills the unused tail of a short row in a stacked ranking (``lengths`` is what says where a row ends: a bank
#: may use any int64 as a doc id, so the filler is never read as one)
PAD_ID = np.iinfo(np.int64).min


@dataclass
class Ranking:
    """Top-K per query for one pool: ``ids[i]`` and ``scores[i]`` are query i's ranked list (length ≤ K).

    Rows of a ranking stacked from per-query pools (the benign twin) may be shorter than the width: a query whose own
    pool holds fewer documents than the depth asked has its whole pool as its list. ``lengths`` then gives each
    row's length (the tail is :data:`PAD_ID` / NaN); read rows through :meth:`row` / :meth:`rows`, never
    ``ids[i]``."""

    ids: np.ndarray  # (n_queries, k) int64
    scores: np.ndarray  # (n_queries, k) float
    lengths: np.ndarray | None = None  # (n_queries,) when some row is shorter than k; None: every row is full

    def row(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        """Query i's ranked ids and scores, without padding."""
        n = self.ids.shape[1] if self.lengths is None else int(self.lengths[i])
        return self.ids[i, :n], self.scores[i, :n]

    def rows(self):
        """(ids, scores) of each query in order, without padding."""
        return (self.row(i) for i in range(self.ids.shape[0]))


@dataclass
class QueryPools:
    """One rung's pool per query of a batch (the benign twin): query i searches ``base`` (sorted ids) minus
    ``removed[i]`` plus ``added[i]`` (both sorted), a small delta of the shared membership."""

    base: np.ndarray
    removed: list[np.ndarray]
    added: list[np.ndarray]

    def pool(self, i: int) -> np.ndarray:
        """Query i's pool, sorted."""
        removed, added = self.removed[i], self.added[i]
        keep = self.base
        if len(removed):  # a few ids out of many: binary search, not a sort of the pool
            at = np.minimum(np.searchsorted(removed, keep), len(removed) - 1)
            keep = keep[removed[at] != keep]
        return np.union1d(keep, added) if len(added) else keep

    def all_ids(self) -> np.ndarray:
        """Every document some query of the batch may search."""
        return np.unique(np.concatenate([self.base, *self.added]))


def stacked(parts: list[Ranking]) -> Ranking:
    """One Ranking from per-query (or per-pass) rankings, in order.

    Lists of different lengths are the normal case for per-query pools: K is clamped to each pool, and a fusion or a
    reranker asks its parts for a depth (100) beyond small pools, so one query's pool gives 54 documents and the
    next 49. They are padded to the longest here, once for every retriever, with ``lengths`` saying where each row
    ends."""
    if not parts:
        return Ranking(np.empty((0, 0), np.int64), np.empty((0, 0)))
    lengths = np.concatenate([_lengths(p) for p in parts])
    width = max(p.ids.shape[1] for p in parts)
    if (lengths == width).all():
        return Ranking(np.vstack([p.ids for p in parts]), np.vstack([p.scores for p in parts]))
    ids = np.full((len(lengths), width), PAD_ID, np.int64)
    scores = np.full((len(lengths), width), np.nan, np.result_type(*[p.scores.dtype for p in parts], np.float32))
    at = 0
    for p in parts:
        n, w = p.ids.shape
        ids[at: at + n, :w], scores[at: at + n, :w] = p.ids, p.scores
        at += n
    ids[np.arange(width)[None, :] >= lengths[:, None]] = PAD_ID  # a part's own padding stays padding
    return Ranking(ids, scores, lengths)


def _lengths(r: Ranking) -> np.ndarray:
    return (np.full(r.ids.shape[0], r.ids.shape[1], np.int64) if r.lengths is None
            else np.asarray(r.lengths, np.int64))


# Optional abilities a retriever declares in ``capabilities`` (part of the protocol; callers ask ``can``, they never
# probe with hasattr or isinstance).
EMBEDDINGS = "embeddings"  # ``score`` is the cosine similarity of cached document embeddings to the query's: usable
#                            for collision candidates and domain labels (nearest documents by meaning)
MEASURED = "measured"  # a run must carry ``measurements()`` (an approximate search's recall against exact scoring)


class Retriever:
    """Base class: subclasses set ``spec`` and implement ``prepare`` and ``score`` (or override ``rank``)."""

    spec: str = ""
    doc_ids: np.ndarray = np.empty(0, np.int64)  # sorted ids of the prepared documents
    capabilities: frozenset[str] = frozenset()

    def can(self, capability: str) -> bool:
        """Whether this retriever declares ``capability`` (e.g. :data:`EMBEDDINGS`)."""
        return capability in self.capabilities

    def check(self) -> None:
        """Load what the retriever needs (models, files) now, so a missing one fails before anything is written.

        Every caller calls it before ``prepare``; retrievers with nothing to load keep this default."""
        return None

    def uncached(self, ws: Workspace, doc_ids: np.ndarray | None = None) -> int:
        """How many of the documents ``prepare`` would have to compute expensively (embed) rather than read from the
        workspace's caches; 0 for retrievers whose preparation is cheap (BM25 indexes in seconds). A live query
        refuses to prepare when this is not 0, instead of embedding a bank inside a page request."""
        return 0

    def config(self) -> dict[str, Any]:
        """The retriever's identity: part of the run's configuration (a change means a new run)."""
        return {"spec": self.spec}

    def prepare(self, ws: Workspace, doc_ids: np.ndarray, progress=None) -> None:
        raise NotImplementedError

    def score(self, queries: list[str]) -> np.ndarray:
        """Scores (n_queries, n_prepared) over ``self.doc_ids``; pool-independent retrievers implement this."""
        raise NotImplementedError

    def rank(self, queries: list[str], pools: Mapping[str, np.ndarray], k: int) -> dict[str, Ranking]:
        """Score once over the prepared documents, then take each pool's top-K by membership mask."""
        scores = self.score(queries)
        return {name: topk(scores[:, self.positions(ids)], ids, k) for name, ids in pools.items()}

    def rank_each(self, queries: list[str], pools: Mapping[str, QueryPools], k: int) -> dict[str, Ranking]:
        """Top-K of each query in its OWN pool of each rung; a query whose pool holds fewer than ``k`` documents gets
        its whole pool, a shorter row (see :class:`Ranking`). Default: one ``rank`` call per query on its pool, exact
        for any retriever; dense masks per query, BM25 applies each query's pool statistics, instead of repeating
        the work."""
        return {name: stacked([self.rank([q], {name: qp.pool(i)}, k)[name] for i, q in enumerate(queries)])
                for name, qp in pools.items()}

    def positions(self, pool_ids: np.ndarray) -> np.ndarray:
        """Column positions of ``pool_ids`` among the prepared documents (a pool must be a subset of them)."""
        pool_ids = np.asarray(pool_ids, dtype=np.int64)
        pos = np.searchsorted(self.doc_ids, pool_ids)
        pos = np.minimum(pos, max(len(self.doc_ids) - 1, 0))
        if len(pool_ids) and (len(self.doc_ids) == 0 or not np.array_equal(self.doc_ids[pos], pool_ids)):
            raise EmbSError(f"retriever {self.spec!r} was asked to search documents it did not index",
                            fix="prepare it over the union of the rungs you evaluate (evaluate() does this).")
        return pos

    def measurements(self, pools: Mapping[str, np.ndarray], queries: Mapping[str, Mapping[str, str]]
                     ) -> dict[str, Any]:
        """What a run must carry besides its rankings, measured on ``queries[pool]`` (qid → text) per pool after
        ``prepare``: an approximate search's recall@10 against exact scoring. Exact retrievers have none."""
        return {}


def topk(scores: np.ndarray, ids: np.ndarray, k: int, decimals: int = 6) -> Ranking:
    """Top-``k`` of each row of ``scores`` (columns are documents ``ids``), best first.

    Ties (scores equal after rounding to ``decimals``) go to the smaller doc id, so two implementations of the same
    formula whose floating-point sums differ in the last bits still give the same list.
    """
    scores = np.asarray(scores)
    n_q, n = scores.shape
    k = min(k, n)
    out_ids = np.empty((n_q, k), np.int64)
    out_scores = np.empty((n_q, k), scores.dtype if scores.dtype.kind == "f" else np.float64)
    if k == 0:
        return Ranking(out_ids, out_scores)
    if k < n:
        kth = -np.partition(-scores, k - 1, axis=1)[:, k - 1]
    else:
        kth = scores.min(axis=1)
    tol = 10.0 ** -decimals
    for i in range(n_q):
        row = scores[i]
        cand = np.flatnonzero(row >= kth[i] - tol)  # everything that could tie with the k-th after rounding
        order = np.lexsort((ids[cand], -np.round(row[cand], decimals)))[:k]
        out_ids[i] = ids[cand[order]]
        out_scores[i] = row[cand[order]]
    return Ranking(out_ids, out_scores)


def topk_sparse(scores, ids: np.ndarray, k: int, decimals: int = 6) -> Ranking:
    """:func:`topk` for a sparse CSR score matrix of non-negative scores (absent entries are 0), without
    densifying: cost follows the non-zeros. Zero-score documents fill the list by smallest doc id, as in ``topk``.

    Order: score rounded to ``decimals`` descending, then smaller doc id. The k-th largest of a long row is found
    by one partition of that row; then every row's candidates (scores within the rounding step of its k-th) are
    ordered in one sort for the whole matrix, so short rows (a top-n product's) cost no Python per row."""
    n_q, n = scores.shape
    k = min(k, n)
    out_ids = np.empty((n_q, k), np.int64)
    out_scores = np.zeros((n_q, k), np.float64)
    indptr, data, cols = scores.indptr, scores.data, scores.indices
    if len(data) and data.min() <= 0:  # stored zeros score nothing: drop them
        live = data > 0
        row = np.repeat(np.arange(n_q), np.diff(indptr))[live]
        data, cols = data[live], cols[live]
        indptr = np.zeros(n_q + 1, np.int64)
        np.cumsum(np.bincount(row, minlength=n_q), out=indptr[1:])
    counts = np.diff(indptr)
    tol = 10.0 ** -decimals
    kth = np.zeros(n_q)  # rows with few entries keep them all
    for i in np.flatnonzero(counts > max(4 * k, 64)):
        kth[i] = -np.partition(-data[indptr[i]:indptr[i + 1]], k - 1)[k - 1]
    row = np.repeat(np.arange(n_q), counts)
    cand = np.flatnonzero(data >= kth[row] - tol)
    r, v, c = row[cand], data[cand], cols[cand]
    order = np.lexsort((ids[c], -np.round(v, decimals), r))
    r, v, c = r[order], v[order], c[order]
    place = np.arange(len(r)) - np.searchsorted(r, np.arange(n_q))[r]
    first = place < k
    out_ids[r[first], place[first]] = ids[c[first]]
    out_scores[r[first], place[first]] = v[first]
    for i in np.flatnonzero(counts < k):  # pad with zero-score documents, smallest ids first
        m = int(counts[i])
        taken = np.zeros(n, bool)
        taken[cols[indptr[i]:indptr[i + 1]]] = True
        out_ids[i, m:] = ids[np.flatnonzero(~taken)[: k - m]]
    return Ranking(out_ids, out_scores)


def documents(ws: Workspace, doc_ids: np.ndarray | None = None) -> tuple[np.ndarray, list[str], list[str]]:
    """(sorted doc ids, rendered texts, content hashes) of ``doc_ids`` (all documents when None)."""
    from emb_s_core import bank
    from emb_s_core.schema import render_document

    docs = bank.documents(ws, ["doc_id", "title", "text", "content_hash"]).sort_values("doc_id")
    if doc_ids is not None:
        wanted = np.unique(np.asarray(doc_ids, dtype=np.int64))
        docs = docs[docs["doc_id"].isin(wanted)]
        if len(docs) != len(wanted):
            missing = np.setdiff1d(wanted, docs["doc_id"].to_numpy())[:5].tolist()
            raise EmbSError(f"document id(s) {missing} are not in the workspace's bank",
                            fix="rebuild the ladder (`emb-s ladder build`) after changing the bank.")
    texts = [render_document(t if isinstance(t, str) else None, x) for t, x in zip(docs["title"], docs["text"])]
    return docs["doc_id"].to_numpy(np.int64), texts, docs["content_hash"].tolist()


def pool_key(ids: np.ndarray) -> str:
    """A cheap identity of a pool (for per-pool caches)."""
    import hashlib

    return hashlib.sha1(np.asarray(ids, dtype="<i8").tobytes()).hexdigest()
