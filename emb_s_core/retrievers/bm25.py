"""Sparse BM25 with per-rung statistics (DESIGN.md §3), in bounded memory.

One term-frequency matrix ``TF`` (documents × vocabulary) is built once over the prepared documents, streamed from
the documents table in batches (no list of every text), and kept in compact dtypes: column-major (the postings of a
term are one slice), int32 document indices, uint16 term frequencies (saturated at 65,535, far past where BM25's
``tf/(tf + norm)`` stops moving). For a pool P (a rung), with ``N = |P|``, ``df_t`` = documents of P containing t,
``avgdl`` = mean length of P's documents:

    idf_t   = max(0, ln((N − df_t + 0.5) / (df_t + 0.5)))
    w(d, t) = idf_t · tf(d,t)·(k1 + 1) / (tf(d,t) + k1·(1 − b + b·|d| / avgdl))
    score(q, d) = Σ_{t ∈ q} count(t, q) · w(d, t)

Weights are computed when a rung is scored and only for the postings of the query terms (``df_t`` of those terms is
counted from the same postings), so no rung's whole weight matrix is ever built: memory is the TF matrix plus, per
rung, one int32 column map and the weights of the terms queried so far (:class:`PoolWeights`: a term's weights in a
pool are computed once, not once per batch of 64 as ``eval`` ranks, which was a third of a query's time at 1M tokens;
all pools' caches together hold at most :data:`WEIGHT_CACHE` weights, a pool that would pass it starts over). A
batch of queries is then a few compiled calls (its words looked up, the missing weights filled, then per rung the
accumulation, selection and ordering in one), and cost follows the postings of the query terms, not a Python loop
over documents. The idf floor at 0 is what rank-bm25's ``BM25Okapi(epsilon=0)`` does
to negative idf (terms in more than half the pool), which is the reference this module is checked against
(``bm25-reference``).
"""
from __future__ import annotations

import copy
import threading
from typing import Any, Mapping

import numpy as np

from emb_s_core.errors import EmbSError
from emb_s_core.progress import counted
from emb_s_core.retrievers.base import QueryPools, Ranking, Retriever, pool_key, stacked, topk, topk_sparse
from emb_s_core.retrievers.text import ascii_word_bytes, tokenize, words
from emb_s_core.store import Workspace

K1 = 1.5
B = 0.75
READ_BATCH = 8192  # documents tokenized per batch while building the TF matrix
TF_MAX = np.iinfo(np.uint16).max


#: the most weights (postings of queried terms over a pool) the pools' caches hold together: 16M = 192 MB
WEIGHT_CACHE = 16_000_000

#: held while a pool's state (its column map, its weight cache) is looked up or filled: a dashboard's sessions rank
#: on one live retriever from several threads, and the kernels that fill a cache release the GIL
_POOL_LOCK = threading.Lock()


class PoolWeights:
    """The BM25 weights of one pool for the terms queried so far: term j's are ``cols/vals[starts[j]:ends[j]]``
    (starts[j] = -1: not computed yet), each computed by :func:`pool_weights` (so the same bits) when a batch first
    asks for it. Why: eval ranks in batches of 64 and every batch shares most of its terms with the ones before."""

    def __init__(self, n_terms: int, reserve: int = 0) -> None:
        self.starts = np.full(n_terms, -1, np.int64)
        self.ends = np.full(n_terms, -1, np.int64)
        self.cols = np.empty(0, np.int32)
        self.vals = np.empty(0, np.float64)
        self.used = 0
        #: the buffer's first size: no pool holds more weights than the matrix has postings, nor than the cap. Only
        #: the pages written are memory (np.empty of a large size is not touched), and growing by copies cost more
        #: than the weights themselves at 10M tokens
        self.reserve = reserve

    def missing(self, terms: np.ndarray, term_starts: np.ndarray, rows: np.ndarray, column: np.ndarray, n: int
                ) -> tuple[np.ndarray, np.ndarray, int]:
        """(the ``terms`` not held yet, their idf over the pool, how many weights they add): df from their postings
        (``rows[term_starts[t]:term_starts[t + 1]]``, pool ``column`` ≥ 0) in one compiled pass, then
        idf = max(0, ln((N − df + 0.5) / (df + 0.5))) in NumPy; a term of idf 0 adds none."""
        from emb_s_core.retrievers.bm25_kernel import missing_df

        terms = np.asarray(terms, np.int32)
        missing, df = np.empty(len(terms), np.int32), np.empty(len(terms), np.int64)
        count = missing_df(terms, self.starts, term_starts, rows, column, missing, df)
        missing, df = missing[:count], df[:count]
        idf = np.maximum(0.0, np.log(n - df + 0.5) - np.log(df + 0.5))
        return missing, idf, int(df[idf > 0].sum())

    def fill(self, missing: np.ndarray, idf: np.ndarray, more: int, bm: "BM25", column: np.ndarray,
             avgdl: float) -> None:
        """Compute and keep the weights of ``missing`` (from :meth:`missing`), growing the buffer (at least to
        ``reserve``) so the ``more`` of them fit."""
        from emb_s_core.retrievers.bm25_kernel import fill_cache

        need = self.used + more
        if need > len(self.cols):
            size = max(need, 2 * len(self.cols), self.reserve)
            grown_cols, grown_vals = np.empty(size, np.int32), np.empty(size, np.float64)
            grown_cols[:self.used], grown_vals[:self.used] = self.cols[:self.used], self.vals[:self.used]
            self.cols, self.vals = grown_cols, grown_vals
        self.used = fill_cache(missing, idf, bm.term_starts, bm.postings.indices, bm.postings.data, bm.lengths,
                               column, float(bm.k1), float(bm.b), float(avgdl or 1.0), self.starts, self.ends,
                               self.cols, self.vals, self.used)

    def rows(self, terms: np.ndarray, n: int):
        """The weights of ``terms`` as a CSR (terms × n pool columns): for the rare queries scored in full."""
        from scipy import sparse

        starts, counts = self.starts[terms], self.ends[terms] - self.starts[terms]
        indptr = np.zeros(len(terms) + 1, np.int64)
        np.cumsum(counts, out=indptr[1:])
        take = np.repeat(starts - indptr[:-1], counts) + np.arange(int(indptr[-1]))
        out = sparse.csr_matrix((self.vals[take], self.cols[take], indptr), shape=(len(terms), n))
        out.has_sorted_indices = True
        return out


class Lexicon:
    """The vocabulary's ASCII words as a compiled hash table (``bm25_kernel.lexicon_table``), so a batch of ASCII
    queries is split into words and looked up in one compiled pass (``bm25_kernel.ascii_query_terms``). Why: from
    text, the Python pass (a string per word, then a dict probe each) was about 2 µs of a query's ~12 at 1M tokens.
    A word with other characters can never equal an ASCII query word, so it is left out."""

    def __init__(self, vocab: Mapping[str, int]) -> None:
        from emb_s_core.retrievers.bm25_kernel import lexicon_table

        keys = list(vocab) if "".join(vocab).isascii() else [w for w in vocab if w.isascii()]
        self.blob = np.frombuffer("".join(keys).encode("ascii"), np.uint8)
        self.offsets = np.zeros(len(keys) + 1, np.int64)
        np.cumsum(np.fromiter(map(len, keys), np.int64, len(keys)), out=self.offsets[1:])
        self.term_ids = np.fromiter(map(vocab.__getitem__, keys), np.int64, len(keys))
        self.table = np.full(1 << max(1, (2 * len(keys) - 1).bit_length()), -1, np.int64)
        lexicon_table(self.blob, self.offsets, self.table)


SPARSE_READ = 0.5  # prepared documents below this share of the bank are read by row position, not by a full scan


def _document_batches(table, wanted: np.ndarray | None):
    """Batches of (doc_id, title, text) of the bank, or of ``wanted``: when those are a small part of the bank (``eval
    --rungs`` on a few rungs), only their rows are read (by position, from the doc_id column), since scanning every
    text of a 100M-token bank for its 1M rung took 13-17 s against about 2 s for the rung alone."""
    columns = ["doc_id", "title", "text"]
    if wanted is not None:
        all_ids = table.to_table(columns=["doc_id"]).column("doc_id").to_numpy()
        rows = np.flatnonzero(np.isin(all_ids, wanted))
        if len(rows) < SPARSE_READ * len(all_ids):
            for start in range(0, len(rows), READ_BATCH):
                yield from table.take(rows[start:start + READ_BATCH], columns=columns).to_batches()
            return
    # no read-ahead: tokenizing is the slow part, and queued batches of text held ~275 MB at 326M tokens
    yield from table.to_batches(columns=columns, batch_size=READ_BATCH, batch_readahead=1, fragment_readahead=1)


class BM25(Retriever):
    def __init__(self, spec: str = "bm25", k1: float = K1, b: float = B) -> None:
        self.spec = spec
        self.k1 = k1
        self.b = b
        self._pools: dict[str, tuple[np.ndarray, int, float, PoolWeights]] = {}
        self._pool_objects: dict[int, tuple[np.ndarray, tuple[np.ndarray, int, float, PoolWeights]]] = {}
        self.rows_read = 0  # documents read from the bank by the last prepare

    def config(self) -> dict[str, Any]:
        return {"spec": self.spec, "k1": self.k1, "b": self.b, "tokenizer": "lower-\\w+-stopwords-v1",
                "idf": "max(0, ln((N-df+0.5)/(df+0.5))) per rung"}

    def prepare(self, ws: Workspace, doc_ids: np.ndarray, progress=None) -> None:
        wanted = None if doc_ids is None else np.unique(np.asarray(doc_ids, dtype=np.int64))
        vocab: dict[str, int] = {}
        ids, lengths, nnz, indices, data = [], [], [], [], []
        table = ws.dataset("documents")
        n_docs = len(wanted) if wanted is not None else table.count_rows()
        stage = counted("indexing", n_docs, "documents", "BM25 term frequencies")
        if progress:
            progress(stage, 0.0)
        seen = 0
        self.rows_read = 0
        for batch in _document_batches(table, wanted):
            self.rows_read += batch.num_rows
            batch_ids = batch.column("doc_id").to_numpy().copy()  # a view would keep the batch (its texts) alive
            if wanted is not None:
                keep = np.isin(batch_ids, wanted)
                batch, batch_ids = batch.filter(keep), batch_ids[keep]
            if not len(batch_ids):
                continue
            row_nnz, row_len, cols, tfs = _term_counts(batch.column("title").to_pylist(),
                                                       batch.column("text").to_pylist(), vocab)
            ids.append(batch_ids)
            seen += len(batch_ids)
            if progress:
                progress(stage, min(1.0, seen / max(n_docs, 1)))
            lengths.append(row_len)
            nnz.append(row_nnz)
            indices.append(cols)
            data.append(tfs)
        doc_order = np.concatenate(ids) if ids else np.empty(0, np.int64)
        if wanted is not None and len(doc_order) != len(wanted):
            missing = np.setdiff1d(wanted, doc_order)[:5].tolist()
            raise EmbSError(f"document id(s) {missing} are not in the workspace's bank",
                            fix="rebuild the ladder (`emb-s ladder build`) after changing the bank.")
        postings = _columns(indices, data, nnz, max(len(vocab), 1))  # consumes the batches' arrays
        order = np.argsort(doc_order, kind="stable")
        if not np.array_equal(order, np.arange(len(order))):  # documents table not in id order: sort the rows
            postings = postings[order]
        self.doc_ids = doc_order[order].astype(np.int64)
        self.lengths = np.concatenate(lengths)[order] if lengths else np.empty(0, np.int32)
        self.postings = postings  # documents × vocabulary, column-major: a term's postings are one slice
        self.postings.indices = self.postings.indices.astype(np.int32, copy=False)
        self.term_starts = self.postings.indptr.astype(np.int64)  # the kernels' one index dtype, whatever SciPy keeps
        self.vocab = vocab
        self._pools, self._pool_objects, self._lexicon = {}, {}, None

    @property
    def tf(self):
        """The term-frequency matrix (documents × vocabulary, CSC, uint16 counts)."""
        return self.postings

    def _pool_of(self, ids: np.ndarray) -> tuple[np.ndarray, int, float, PoolWeights]:
        """:meth:`_pool` of a pool given by its ids; the same array object (evaluate passes each rung's membership
        array to every batch) is recognised without re-hashing it, which at a million documents per rung is what
        a batch would otherwise spend its time on."""
        hit = self._pool_objects.get(id(ids))
        if hit is not None and hit[0] is ids:
            return hit[1]
        stats = self._pool(self.positions(ids))
        self._pool_objects[id(ids)] = (ids, stats)
        return stats

    def _pool(self, positions: np.ndarray) -> tuple[np.ndarray, int, float, PoolWeights]:
        """(column of each prepared document in the pool or -1, N, avgdl, the weights of the terms queried so far):
        the only per-rung state kept."""
        key = pool_key(positions)
        if key not in self._pools:
            column = np.full(len(self.doc_ids), -1, np.int32)
            column[positions] = np.arange(len(positions), dtype=np.int32)
            n = len(positions)
            dl = self.lengths[positions].astype(np.float64)
            self._pools[key] = (column, n, dl.sum() / n if n else 1.0, self._new_weights())
        return self._pools[key]

    def _new_weights(self) -> PoolWeights:
        return PoolWeights(self.postings.shape[1], min(int(self.postings.nnz), WEIGHT_CACHE))

    def _weights(self, pool: tuple[np.ndarray, int, float, PoolWeights], terms: np.ndarray) -> PoolWeights:
        """The pool's weight cache, holding ``terms`` (unique): the missing ones computed now. A pool whose cache
        would take the pools past :data:`WEIGHT_CACHE` starts over with this batch's terms."""
        column, n, avgdl, cache = pool
        missing, idf, more = cache.missing(terms, self.term_starts, self.postings.indices, column, n)
        if len(missing):
            held = sum(p[3].used for p in self._pools.values())
            if held + more > WEIGHT_CACHE and cache.used:
                cache.__init__(self.postings.shape[1], cache.reserve)
                return self._weights(pool, terms)
            cache.fill(missing, idf, more, self, column, avgdl)
        return cache

    def query_matrix(self, queries: list[str]):
        """Query term counts (n_queries × vocabulary); words outside the vocabulary score nothing."""
        return self._matrix(self.query_arrays(queries))

    def term_matrix(self, token_lists: list[list[str]]):
        """Term counts (n_lists × vocabulary) of already tokenized queries; tokens outside the vocabulary score
        nothing (stopwords are never in it: it is built from :func:`tokenize`, so no stopword pass is needed)."""
        return self._matrix(self.term_arrays(token_lists))

    def _matrix(self, arrays: tuple[np.ndarray, np.ndarray, np.ndarray]):
        from scipy import sparse

        indptr, indices, data = arrays
        out = sparse.csr_matrix((data, indices, indptr), shape=(len(indptr) - 1, self.postings.shape[1]))
        out.has_sorted_indices = True
        out.has_canonical_format = True
        return out

    def query_arrays(self, queries: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`term_arrays` of the queries' :func:`words`: a batch that is all ASCII (the usual one) is split and
        looked up in one compiled pass over its bytes (:class:`Lexicon`), any other through ``words``."""
        from emb_s_core.retrievers.bm25_kernel import ascii_query_terms

        joined = "".join(queries)
        if not joined.isascii():
            return self.term_arrays([words(q) for q in queries])
        if self._lexicon is None:
            self._lexicon = Lexicon(self.vocab)
        lex = self._lexicon
        text = np.frombuffer(ascii_word_bytes(joined.lower()), np.uint8)
        spans = np.fromiter(map(len, queries), np.int64, len(queries))
        indptr = np.empty(len(queries) + 1, np.int64)
        terms, counts = np.empty(len(text) // 2 + 1, np.int32), np.empty(len(text) // 2 + 1)
        nnz = ascii_query_terms(text, spans, lex.blob, lex.offsets, lex.term_ids, lex.table, indptr, terms, counts)
        return indptr, terms[:nnz], counts[:nnz]

    def term_arrays(self, token_lists: list[list[str]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`term_matrix` as its CSR arrays (indptr, term ids ascending per query, counts): what ranking
        needs, without building a SciPy matrix per batch."""
        from itertools import chain, repeat

        from emb_s_core.retrievers.bm25_kernel import query_terms

        n_q = len(token_lists)
        lengths = np.fromiter(map(len, token_lists), np.int64, n_q)
        # one C-level pass over every token (-1: not in the vocabulary), then the canonical CSR in one compiled
        # pass: each query's distinct terms ascending with their counts, as the COO → CSR conversion summed them
        flat = np.fromiter(map(self.vocab.get, chain.from_iterable(token_lists), repeat(-1)), np.int64,
                           int(lengths.sum()))
        indptr = np.empty(n_q + 1, np.int64)
        terms, counts = np.empty(len(flat), np.int32), np.empty(len(flat))
        nnz = query_terms(flat, lengths, indptr, terms, counts)
        return indptr, terms[:nnz], counts[:nnz]

    def rank(self, queries: list[str], pools: Mapping[str, np.ndarray], k: int) -> dict[str, Ranking]:
        return self._rank_arrays(self.query_arrays(queries), pools, k)

    def rank_matrix(self, qm, pools: Mapping[str, np.ndarray], k: int) -> dict[str, Ranking]:
        """:meth:`rank` from the queries' term counts (:meth:`query_matrix`), e.g. tokenized once for many calls."""
        return self._rank_arrays((qm.indptr, qm.indices, qm.data), pools, k)

    def _rank_arrays(self, q: tuple[np.ndarray, np.ndarray, np.ndarray], pools: Mapping[str, np.ndarray],
                     k: int) -> dict[str, Ranking]:
        """Every pool's top-k of the queries ``q`` (the CSR arrays of :meth:`term_arrays`) from its weight cache."""
        q = (np.asarray(q[0], np.int64), np.asarray(q[1], np.int32), np.asarray(q[2], np.float64))
        terms = np.unique(q[1])
        out = {}
        for name, ids in pools.items():
            ids = np.asarray(ids, dtype=np.int64)
            with _POOL_LOCK:
                pool = self._pool_of(ids)
                # this batch's view of the cache: rows already written never move, and a fill or a restart by
                # another thread after the lock is released binds new arrays, leaving these whole
                cache = copy.copy(self._weights(pool, terms))
            out[name] = _top_in_cache(q, cache, pool[1], ids, k)
        return out

    def rank_each(self, queries: list[str], pools: Mapping[str, QueryPools], k: int) -> dict[str, Ranking]:
        """Each query in its own pool (the benign twin), exactly as if that pool were searched alone: see
        :func:`query_pool_ranking`."""
        return query_pool_ranking(self, queries, pools, k)


# ------------------------------------------------------------------------------ per-query pools (benign twin)
def query_postings(postings, terms: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every posting of ``terms`` in the shared term-frequency matrix (CSC, documents × vocabulary): (term index
    into ``terms``, document position, tf as float64). A batch's terms for :meth:`BM25.rank_matrix`; one query's
    for the per-query pools (gathered once, then masked per pool)."""
    starts, ends = postings.indptr[terms], postings.indptr[terms + 1]
    counts = (ends - starts).astype(np.int64)
    total = int(counts.sum())
    if not total:
        return np.empty(0, np.int64), np.empty(0, np.int32), np.empty(0, np.float64)
    take = np.repeat(starts - np.concatenate([[0], np.cumsum(counts)[:-1]]), counts) + np.arange(total)
    return np.repeat(np.arange(len(terms)), counts), postings.indices[take], postings.data[take].astype(np.float64)


def query_pool_statistics(term_of: np.ndarray, rows: np.ndarray, n_terms: int, in_pool: np.ndarray, n_pool: int,
                          pool_length: float) -> tuple[np.ndarray, np.ndarray, float]:
    """The statistics of one query's pool that its BM25 scores need, for its terms only: which of its postings
    (:func:`query_postings`) lie in the pool, each term's document frequency over the pool, and the pool's average
    length. ``in_pool`` is a boolean mask over the matrix's documents; ``n_pool`` and ``pool_length`` the pool's size
    and total length (kept by the caller from the rung's and the delta's, so no pass over the pool is needed)."""
    keep = in_pool[rows]
    return keep, np.bincount(term_of[keep], minlength=n_terms), pool_length / n_pool if n_pool else 1.0


def query_pool_ranking(bm: BM25, queries: list[str], pools: Mapping[str, QueryPools], k: int) -> dict[str, Ranking]:
    """Top-K of each query in its own pool of each rung: the query's postings are gathered once; per rung, the
    rung's membership mask is edited by the query's delta (removed documents off, added on) and restored after, N and
    total length follow the delta, df and avgdl come from :func:`query_pool_statistics`; the same formula as
    :meth:`BM25.rank`, so a pool scores as if searched alone."""
    qm = bm.query_matrix(queries).tocsr()
    masks = {}
    for name, qp in pools.items():  # one membership mask per rung, shared by the batch's queries
        base_pos = bm.positions(np.asarray(qp.base, np.int64))
        in_pool = np.zeros(len(bm.doc_ids), bool)
        in_pool[base_pos] = True
        masks[name] = (in_pool, len(base_pos), float(bm.lengths[base_pos].sum()))
    parts: dict[str, list[Ranking]] = {name: [] for name in pools}
    for i in range(len(queries)):
        lo, hi = qm.indptr[i], qm.indptr[i + 1]
        terms = qm.indices[lo:hi]
        term_all, rows_all, tf_all = query_postings(bm.postings, terms)
        dl_all = bm.lengths[rows_all].astype(np.float64)
        for name, qp in pools.items():
            in_pool, n_base, base_length = masks[name]
            gone, new = bm.positions(qp.removed[i]), bm.positions(qp.added[i])
            was = in_pool[new].copy()  # restored after: the rung's mask serves every query of the batch
            in_pool[gone], in_pool[new] = False, True
            fresh = new[~was]
            n = n_base - len(gone) + len(fresh)
            total = base_length - float(bm.lengths[gone].sum()) + float(bm.lengths[fresh].sum())
            keep, df, avgdl = query_pool_statistics(term_all, rows_all, len(terms), in_pool, n, total)
            in_pool[new], in_pool[gone] = was, True
            idf = np.maximum(0.0, np.log(n - df + 0.5) - np.log(df + 0.5)) * qm.data[lo:hi]
            rows, tf = rows_all[keep], tf_all[keep]
            norm = bm.k1 * (1 - bm.b + bm.b * dl_all[keep] / (avgdl or 1.0))
            scores = np.bincount(rows, weights=idf[term_all[keep]] * tf * (bm.k1 + 1) / (tf + norm),
                                 minlength=len(bm.doc_ids))  # one pass over the documents: cheaper than sorting
            positive = np.flatnonzero(scores > 0)
            parts[name].append(_top_in_pool(bm.doc_ids[positive], scores[positive], qp, i, k))
    return {name: stacked(ps) for name, ps in parts.items()}


def _top_in_pool(ids: np.ndarray, scores: np.ndarray, qp: QueryPools, i: int, k: int) -> Ranking:
    """:func:`topk` of query i's pool from its scored documents alone: the rest score 0 and fill the list by
    smallest id, as :func:`topk` over the whole pool would, found among the first ids of the pool only."""
    top = topk(scores[None, :], ids, k)
    short = k - top.ids.shape[1]
    if short <= 0:
        return top
    removed, added = qp.removed[i], qp.added[i]
    head = qp.base[: k + len(removed) + len(ids)]  # the pool's smallest ids lie here or among the added ones
    head = np.union1d(head[~np.isin(head, removed)], added[:k])
    pad = head[~np.isin(head, ids)][:short]
    return Ranking(np.concatenate([top.ids, pad[None, :]], axis=1),
                   np.concatenate([top.scores, np.zeros((1, len(pad)))], axis=1))


#: extra candidates the kernel keeps beyond K, so ties at the K-th place can be ordered by doc id without scoring the
#: query again (a query with more ties than this at the cut is scored in full: exact either way). Small because the
#: kernel's heap work grows with its size: 4 instead of 16 was 23% less time a query at 1M tokens, and no query of
#: the demo banks at 1M/30M needed the full scoring (bench/RESULTS.md).
TIE_SLACK = 4


def top_scores(q_terms, weights, ids: np.ndarray, k: int, decimals: int = 6) -> Ranking:
    """The top-``k`` documents of ``q_terms @ weights`` (CSR queries × terms, CSR terms × pool) per query, ordered as
    ``base.topk_sparse`` orders them (score rounded to ``decimals`` descending, then smaller doc id): see
    :func:`_top`."""
    indptr = weights.indptr.astype(np.int64)
    return _top(q_terms.indptr, q_terms.indices, q_terms.data, indptr[:-1], indptr[1:], weights.indices,
                weights.data, weights.shape[1], ids, k, lambda rows: q_terms[rows] @ weights, decimals)


def _top_in_cache(q: tuple[np.ndarray, np.ndarray, np.ndarray], cache: PoolWeights, n: int, ids: np.ndarray,
                  k: int) -> Ranking:
    """:func:`top_scores` of the queries ``q`` (CSR arrays: indptr, term ids, counts) over a pool's weight cache,
    which holds every term of ``q``; the queries' own term ids index it, so no per-batch remapping or weight matrix
    is built."""
    indptr, indices, data = q

    def full(rows: np.ndarray):
        from scipy import sparse

        counts = indptr[rows + 1] - indptr[rows]
        sub_ptr = np.zeros(len(rows) + 1, np.int64)
        np.cumsum(counts, out=sub_ptr[1:])
        take = np.repeat(indptr[rows] - sub_ptr[:-1], counts) + np.arange(int(sub_ptr[-1]))
        terms, inverse = np.unique(indices[take], return_inverse=True)
        local = sparse.csr_matrix((data[take], inverse.astype(np.int32), sub_ptr), shape=(len(rows), len(terms)))
        return local @ cache.rows(terms, n)

    return _top(indptr, indices, data, cache.starts, cache.ends, cache.cols, cache.vals, n, ids, k, full)


def _top(q_indptr, q_indices, q_data, w_starts, w_ends, w_cols, w_vals, n: int, ids: np.ndarray, k: int,
         full_scores, decimals: int = 6) -> Ranking:
    """The product, the selection and the ordering are one call of the compiled kernel (``bm25_kernel.top_k``: a
    dense accumulator per query, only the best ``k + TIE_SLACK`` kept, then ordered by score rounded as
    ``np.round`` rounds, as ``topk_sparse`` does), so no query's full score row is materialized. The kernel's choice
    among equal scores is arbitrary, so a query is exact only if the last candidate scores clearly below the k-th
    (by more than the rounding step); the few queries where it does not (ties straddling the cut) are scored in full
    (``full_scores(rows)``: their sparse score rows)."""
    from emb_s_core.retrievers.bm25_kernel import top_k

    n_q = len(q_indptr) - 1
    k = min(k, n)
    if n_q == 0 or k == 0:
        return Ranking(np.empty((n_q, k), np.int64), np.zeros((n_q, k)))
    m = min(k + TIE_SLACK, n)
    out, unsure = Ranking(np.empty((n_q, k), np.int64), np.zeros((n_q, k))), np.empty(n_q, bool)
    # the dtypes of bm25_kernel.warm(), so the one cached compilation serves every call
    top_k(np.asarray(q_indptr, np.int64), np.asarray(q_indices, np.int32), np.asarray(q_data, np.float64),
          np.asarray(w_starts, np.int64), np.asarray(w_ends, np.int64), np.asarray(w_cols, np.int32),
          np.asarray(w_vals, np.float64), n, m, np.ascontiguousarray(ids, np.int64), k, float(10.0 ** decimals),
          float(10.0 ** -decimals), out.ids, out.scores, unsure)
    if unsure.any():
        rows = np.flatnonzero(unsure)
        rescored = topk_sparse(full_scores(rows), ids, k, decimals)
        out.ids[rows], out.scores[rows] = rescored.ids, rescored.scores
    return out


def pool_weights(bm: BM25, terms: np.ndarray, column: np.ndarray, n: int, avgdl: float):
    """The BM25 weights w(d, t) of one pool as a CSR matrix (``terms``, unique, × pool columns), ``column`` = each
    prepared document's column in the pool or -1: what the pool's cache holds for those terms, the same bits. Rows
    are sorted by column (postings are in document order and the column map keeps it); zero weights (idf floored at
    0) are left out, so every stored score of a product with it is positive."""
    from scipy import sparse

    cache = PoolWeights(bm.postings.shape[1])
    cache.fill(*cache.missing(terms, bm.term_starts, bm.postings.indices, column, n), bm, column, avgdl)
    indptr = np.concatenate([[0], cache.ends[terms]]).astype(np.int64)
    out = sparse.csr_matrix((cache.vals[:cache.used], cache.cols[:cache.used], indptr), shape=(len(terms), n))
    out.has_sorted_indices = True
    return out


def _columns(cols: list[np.ndarray], tfs: list[np.ndarray], row_nnz: list[np.ndarray], n_terms: int):
    """The CSC term-frequency matrix, filled straight from the batches' (term ids, tf) rows.

    Why not CSR then ``tocsc()``: that keeps the batches, their concatenation, the CSR and the CSC alive in turn —
    four copies of every posting at the peak (3.5 GiB of a 326M-token bank). Counting each term's postings first sizes
    the CSC once; each batch is then scattered into its columns (rows ascending, as batches come in row order) and
    dropped, so the peak is the CSC plus one batch.
    """
    from scipy import sparse

    df = np.zeros(n_terms, np.int64)
    for c in cols:
        df += np.bincount(c, minlength=n_terms)
    indptr = np.zeros(n_terms + 1, np.int64)
    np.cumsum(df, out=indptr[1:])
    rows_out = np.empty(int(indptr[-1]), np.int32)
    tf_out = np.empty(int(indptr[-1]), np.uint16)
    fill = indptr[:-1].copy()
    row0 = 0
    for k in range(len(cols)):
        c, tf, per_row = cols[k], tfs[k], row_nnz[k]
        cols[k] = tfs[k] = None  # dropped once scattered
        rows = np.repeat(np.arange(row0, row0 + len(per_row), dtype=np.int32), per_row)
        order = np.argsort(c, kind="stable")
        c = c[order]
        terms, first, counts = np.unique(c, return_index=True, return_counts=True)
        pos = np.repeat(fill[terms] - first, counts) + np.arange(len(c))
        rows_out[pos] = rows[order]
        tf_out[pos] = tf[order]
        fill[terms] += counts
        row0 += len(per_row)
    out = sparse.csc_matrix((tf_out, rows_out, indptr), shape=(row0, n_terms))
    out.has_sorted_indices = True
    return out


def _term_counts(titles: list, texts: list, vocab: dict[str, int]
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """For one batch of documents: (distinct terms per document, tokens per document, term ids, tf uint16), the
    term ids of each document ascending. New words are added to ``vocab``."""
    from emb_s_core.schema import render_document

    lengths = np.empty(len(texts), np.int64)
    cols: list[int] = []
    for i, (title, text) in enumerate(zip(titles, texts)):
        toks = tokenize(render_document(title, text))
        lengths[i] = len(toks)
        cols.extend(vocab.setdefault(t, len(vocab)) for t in toks)
    rows = np.repeat(np.arange(len(texts), dtype=np.int64), lengths)
    keys, tf = np.unique((rows << 32) | np.asarray(cols, np.int64), return_counts=True)
    row_nnz = np.bincount((keys >> 32).astype(np.int64), minlength=len(texts))
    return (row_nnz, lengths.astype(np.int32), (keys & 0xFFFFFFFF).astype(np.int32),
            np.minimum(tf, TF_MAX).astype(np.uint16))
