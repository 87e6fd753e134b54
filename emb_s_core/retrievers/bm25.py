"""Sparse BM25 with per-rung statistics (DESIGN.md §3).

One term-frequency matrix ``TF`` (documents × vocabulary) is built once over the prepared documents. For a pool P
(a rung), with ``N = |P|``, ``df_t`` = documents of P containing t, ``avgdl`` = mean length of P's documents:

    idf_t   = max(0, ln((N − df_t + 0.5) / (df_t + 0.5)))
    w(d, t) = idf_t · tf(d,t)·(k1 + 1) / (tf(d,t) + k1·(1 − b + b·|d| / avgdl))
    score(q, d) = Σ_{t ∈ q} count(t, q) · w(d, t)

``w`` is a sparse matrix per pool (computed once per pool and cached), so a batch of queries is one sparse product
(Q · Wᵀ): cost grows with the postings of the query terms, not with a Python loop over documents. The idf floor at
0 is what rank-bm25's ``BM25Okapi(epsilon=0)`` does to negative idf (terms in more than half the pool), which is the
reference this module is checked against (``bm25-reference``).
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from emb_s_core.progress import counted
from emb_s_core.retrievers.base import Ranking, Retriever, documents, pool_key, topk_sparse
from emb_s_core.retrievers.text import tokenize
from emb_s_core.store import Workspace

K1 = 1.5
B = 0.75


class BM25(Retriever):
    def __init__(self, spec: str = "bm25", k1: float = K1, b: float = B) -> None:
        self.spec = spec
        self.k1 = k1
        self.b = b
        self._weights: dict[str, Any] = {}

    def config(self) -> dict[str, Any]:
        return {"spec": self.spec, "k1": self.k1, "b": self.b, "tokenizer": "lower-\\w+-stopwords-v1",
                "idf": "max(0, ln((N-df+0.5)/(df+0.5))) per rung"}

    def prepare(self, ws: Workspace, doc_ids: np.ndarray, progress=None) -> None:
        from scipy import sparse

        self.doc_ids, texts, _ = documents(ws, doc_ids)
        vocab: dict[str, int] = {}
        cols: list[int] = []
        lengths = np.empty(len(texts), np.int64)
        stage = counted("indexing", len(texts), "documents", "BM25 term frequencies")
        for i, text in enumerate(texts):
            if progress and i % 4096 == 0:
                progress(stage, i / max(len(texts), 1))
            toks = tokenize(text)
            lengths[i] = len(toks)
            cols.extend(vocab.setdefault(t, len(vocab)) for t in toks)
        rows = np.repeat(np.arange(len(texts)), lengths)
        self.tf = sparse.csr_matrix((np.ones(len(cols), np.float64), (rows, np.asarray(cols, np.int64))),
                                    shape=(len(texts), max(len(vocab), 1)))
        self.tf.sum_duplicates()
        if progress:
            progress(stage, 1.0)
        self.vocab = vocab
        self.lengths = lengths
        self._weights = {}

    def _pool_weights(self, positions: np.ndarray):
        """Wᵀ (vocabulary × pool documents) with the pool's own df and avgdl; cached per pool."""
        from scipy import sparse

        key = pool_key(positions)
        if key not in self._weights:
            sub = self.tf[positions]
            n = sub.shape[0]
            df = np.bincount(sub.indices, minlength=sub.shape[1])
            idf = np.maximum(0.0, np.log(n - df + 0.5) - np.log(df + 0.5))
            dl = self.lengths[positions].astype(np.float64)
            avgdl = dl.sum() / n if n else 1.0
            row_of = np.repeat(np.arange(n), np.diff(sub.indptr))
            tf = sub.data
            norm = self.k1 * (1 - self.b + self.b * dl[row_of] / (avgdl or 1.0))
            data = idf[sub.indices] * tf * (self.k1 + 1) / (tf + norm)
            w = sparse.csr_matrix((data, sub.indices, sub.indptr), shape=sub.shape)
            self._weights[key] = w.T.tocsr()
        return self._weights[key]

    def query_matrix(self, queries: list[str]):
        """Query term counts (n_queries × vocabulary); words outside the vocabulary score nothing."""
        from scipy import sparse

        rows, cols = [], []
        for i, q in enumerate(queries):
            for t in tokenize(q):
                j = self.vocab.get(t)
                if j is not None:
                    rows.append(i)
                    cols.append(j)
        return sparse.csr_matrix((np.ones(len(cols)), (rows, cols)), shape=(len(queries), self.tf.shape[1]))

    def rank(self, queries: list[str], pools: Mapping[str, np.ndarray], k: int) -> dict[str, Ranking]:
        qm = self.query_matrix(queries)
        out = {}
        for name, ids in pools.items():
            ids = np.asarray(ids, dtype=np.int64)
            scores = (qm @ self._pool_weights(self.positions(ids))).tocsr()
            scores.sum_duplicates()
            out[name] = topk_sparse(scores, ids, k)
        return out
