"""rank-bm25 ``BM25Okapi(epsilon=0)`` on each rung, with the same tokenization as ``bm25``: the cross-check.

Why epsilon=0: rank-bm25 replaces a negative idf (a term in more than half of the documents) by
``epsilon × average idf`` — 0.25 × mean idf by default — which lifts very common terms above zero. The sparse BM25
floors negative idf at 0 instead; with ``epsilon=0`` the two formulas are the same, so their top-10 lists must be
identical. It is slow (a Python loop over documents per query term): use it on small rungs only.
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from emb_s_core.retrievers.base import Ranking, Retriever, documents, pool_key, topk
from emb_s_core.retrievers.text import tokenize
from emb_s_core.store import Workspace


class BM25Reference(Retriever):
    def __init__(self, spec: str = "bm25-reference") -> None:
        self.spec = spec
        self._indexes: dict[str, Any] = {}

    def config(self) -> dict[str, Any]:
        return {"spec": self.spec, "library": "rank-bm25 BM25Okapi", "k1": 1.5, "b": 0.75, "epsilon": 0.0,
                "tokenizer": "lower-\\w+-stopwords-v1"}

    def prepare(self, ws: Workspace, doc_ids: np.ndarray, progress=None) -> None:
        self.doc_ids, texts, _ = documents(ws, doc_ids)
        self.tokens = [tokenize(t) for t in texts]
        self._indexes = {}

    def _index(self, positions: np.ndarray):
        from rank_bm25 import BM25Okapi

        key = pool_key(positions)
        if key not in self._indexes:
            self._indexes[key] = BM25Okapi([self.tokens[i] for i in positions], k1=1.5, b=0.75, epsilon=0.0)
        return self._indexes[key]

    def rank(self, queries: list[str], pools: Mapping[str, np.ndarray], k: int) -> dict[str, Ranking]:
        out = {}
        for name, ids in pools.items():
            ids = np.asarray(ids, dtype=np.int64)
            index = self._index(self.positions(ids))
            scores = np.vstack([index.get_scores(tokenize(q)) for q in queries]) if queries else np.empty((0, len(ids)))
            out[name] = topk(scores, ids, k)
        return out
