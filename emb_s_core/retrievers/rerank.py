"""Cross-encoder reranking of another retriever's top-N (sentence-transformers ``CrossEncoder``).

Each (query, document) pair is scored once per call even when the document is in the top-N of several rungs, so
the cost follows the union of the candidate lists, not the number of rungs. Documents below the top-N keep their
order after the reranked ones. No trained reranker ships offline: pass a local CrossEncoder folder.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from emb_s_core.errors import EmbSError
from emb_s_core.retrievers.base import Ranking, Retriever, documents
from emb_s_core.store import Workspace

DEPTH = 100


@lru_cache(maxsize=4)
def _load_cross_encoder(path: str):
    from sentence_transformers import CrossEncoder

    try:
        return CrossEncoder(path, device="cpu")
    except Exception as exc:
        raise EmbSError(f"cannot load reranker {path!r} ({type(exc).__name__}: {str(exc)[:200]})",
                        fix="pass a local sentence-transformers CrossEncoder folder: rerank:<folder>:<base-spec>.") \
            from exc


class Rerank(Retriever):
    def __init__(self, spec: str, model: str, base: Retriever, depth: int = DEPTH) -> None:
        self.spec = spec
        self.model = model
        self.base = base
        self.depth = depth

    def check(self) -> None:
        if not Path(self.model).expanduser().exists():
            raise EmbSError(f"reranker model {self.model!r} not found (no such folder)",
                            fix="pass a local CrossEncoder folder: rerank:<folder>:<base-spec>; none ships offline.")
        _load_cross_encoder(str(Path(self.model).expanduser()))
        self.base.check()

    def config(self) -> dict[str, Any]:
        return {"spec": self.spec, "reranker": str(Path(self.model).expanduser().resolve()), "depth": self.depth,
                "base": self.base.config()}

    def prepare(self, ws: Workspace, doc_ids: np.ndarray, progress=None) -> None:
        self.base.prepare(ws, doc_ids, progress)
        self.doc_ids, self.texts, _ = documents(ws, doc_ids)

    def rank(self, queries: list[str], pools: Mapping[str, np.ndarray], k: int) -> dict[str, Ranking]:
        base = self.base.rank(queries, pools, max(k, self.depth))
        ce = _load_cross_encoder(str(Path(self.model).expanduser()))
        pair_scores: list[dict[int, float]] = []
        for i, q in enumerate(queries):
            cand = np.unique(np.concatenate([r.ids[i, : self.depth] for r in base.values()]))
            texts = [self.texts[j] for j in self.positions(cand)]
            s = ce.predict([(q, t) for t in texts], show_progress_bar=False) if len(cand) else []
            pair_scores.append(dict(zip(cand.tolist(), np.asarray(s, dtype=np.float64).reshape(-1).tolist())))
        out = {}
        for name, r in base.items():
            n = min(k, r.ids.shape[1])
            ids = np.empty((len(queries), n), np.int64)
            scores = np.empty((len(queries), n))
            for i in range(len(queries)):
                head = r.ids[i, : self.depth]
                s = np.array([pair_scores[i][d] for d in head.tolist()])
                order = np.lexsort((head, -s))
                ranked = np.concatenate([head[order], r.ids[i, self.depth:]])[:n]
                ranked_scores = np.concatenate([s[order], np.full(max(0, r.ids.shape[1] - self.depth), -np.inf)])[:n]
                ids[i], scores[i] = ranked, ranked_scores
            out[name] = Ranking(ids, scores)
        return out
