"""Reciprocal-rank fusion of two retrievers: ``s(d) = Σ_r 1 / (k_rrf + rank_r(d))`` with ``k_rrf = 60`` and 1-based
ranks over each retriever's top-``depth`` list of the same rung (a document absent from a list adds nothing)."""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from emb_s_core.retrievers.base import MEASURED, QueryPools, Ranking, Retriever, stacked, topk
from emb_s_core.store import Workspace

K_RRF = 60
DEPTH = 100


class Hybrid(Retriever):
    def __init__(self, spec: str, parts: list[Retriever], depth: int = DEPTH, k_rrf: int = K_RRF) -> None:
        self.spec = spec
        self.parts = parts
        self.depth = depth
        self.k_rrf = k_rrf

    def check(self) -> None:
        for p in self.parts:
            p.check()

    def config(self) -> dict[str, Any]:
        return {"spec": self.spec, "fusion": "rrf", "k_rrf": self.k_rrf, "depth": self.depth,
                "parts": [p.config() for p in self.parts]}

    def uncached(self, ws: Workspace, doc_ids: np.ndarray | None = None) -> int:
        return max(p.uncached(ws, doc_ids) for p in self.parts)

    def prepare(self, ws: Workspace, doc_ids: np.ndarray, progress=None) -> None:
        for p in self.parts:
            p.prepare(ws, doc_ids, progress)
        self.doc_ids = self.parts[0].doc_ids

    def adopt(self, parts: list[Retriever]) -> None:
        """Use ``parts`` (the same specs, already prepared over the same documents) in place of its own: the live
        path shares them with the parts' own live retrievers (``evaluate.prepared``)."""
        if [p.spec for p in parts] != [p.spec for p in self.parts]:
            raise ValueError(f"{self.spec}: parts {[p.spec for p in parts]} are not its own")
        self.parts = list(parts)
        self.doc_ids = self.parts[0].doc_ids

    @property
    def capabilities(self) -> frozenset[str]:  # type: ignore[override]
        """An approximate part makes the fusion a measured run (its recall is stored with the run)."""
        return frozenset({MEASURED}) if any(p.can(MEASURED) for p in self.parts) else frozenset()

    def measurements(self, pools: Mapping[str, np.ndarray], queries: Mapping[str, Mapping[str, str]]
                     ) -> dict[str, Any]:
        """The parts' measurements, under each part's spec (an approximate dense part carries its recall)."""
        return {p.spec: m for p in self.parts if (m := p.measurements(pools, queries))}

    def rank(self, queries: list[str], pools: Mapping[str, np.ndarray], k: int) -> dict[str, Ranking]:
        lists = [p.rank(queries, pools, max(k, self.depth)) for p in self.parts]
        out = {}
        for name, ids in pools.items():
            ids = np.asarray(ids, dtype=np.int64)
            fused = np.zeros((len(queries), len(ids)))
            for ranking in lists:
                r = ranking[name]
                n_q, width = r.ids.shape
                place = np.tile(np.arange(width), n_q)
                live = place < np.repeat(np.full(n_q, width) if r.lengths is None else r.lengths, width)
                rows = np.repeat(np.arange(n_q), width)[live]
                np.add.at(fused, (rows, np.searchsorted(ids, r.ids.reshape(-1)[live])),
                          1.0 / (self.k_rrf + 1 + place[live]))
            out[name] = topk(fused, ids, k, decimals=12)
        return out

    def rank_each(self, queries: list[str], pools: Mapping[str, QueryPools], k: int) -> dict[str, Ranking]:
        """The parts' per-query lists fused per query, over that query's own pool."""
        lists = [p.rank_each(queries, pools, max(k, self.depth)) for p in self.parts]
        out = {}
        for name, qp in pools.items():
            parts = []
            for i in range(len(queries)):
                ids = qp.pool(i)
                fused = np.zeros((1, len(ids)))
                for ranking in lists:
                    row = ranking[name].row(i)[0]
                    np.add.at(fused[0], np.searchsorted(ids, row), 1.0 / (self.k_rrf + np.arange(1, len(row) + 1)))
                parts.append(topk(fused, ids, k, decimals=12))
            out[name] = stacked(parts)
        return out
