"""Reranking of another retriever's top-N: a local sentence-transformers ``CrossEncoder`` folder
(``rerank:<folder>:<base>``) or a served reranker through litellm (``rerank:litellm/<model>:<base>``, see
:mod:`emb_s_core.llm.rerank`).

Each (query, document) pair is scored once per call even when the document is in the top-N of several rungs, so
the cost follows the union of the candidate lists, not the number of rungs. Documents below the top-N keep their
order after the reranked ones. No trained reranker ships offline: pass a local CrossEncoder folder (or a hub name,
downloaded when downloads are on) or an endpoint. A local cross-encoder runs on the device
:mod:`~emb_s_core.retrievers.device` chooses (the GPU when torch reports one; half precision there).
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from emb_s_core.errors import EmbSError
from emb_s_core.retrievers.base import Ranking, Retriever, documents, stacked
from emb_s_core.store import Workspace

DEPTH = 100


@lru_cache(maxsize=4)
def _load_cross_encoder(path: str, device: str = "cpu"):
    from sentence_transformers import CrossEncoder

    from emb_s_core.retrievers import device as device_mod

    try:
        model = CrossEncoder(path, device=device)
        return model.half() if device_mod.half_precision(device) else model
    except Exception as exc:
        raise EmbSError(f"cannot load reranker {path!r} ({type(exc).__name__}: {str(exc)[:200]})",
                        fix="pass a local sentence-transformers CrossEncoder folder: rerank:<folder>:<base-spec>.") \
            from exc


SERVED = "litellm/"


class Rerank(Retriever):
    def __init__(self, spec: str, model: str, base: Retriever, depth: int = DEPTH, api_base: str | None = None,
                 instruction: str | None = None, template: str | None = None, device: str | None = None) -> None:
        self.spec = spec
        self.model = model
        self.base = base
        self.depth = depth
        self.served = None
        self.device_request = device
        self.device = "cpu"
        if model.startswith(SERVED):
            from emb_s_core.llm.rerank import ServedReranker

            if not model[len(SERVED):]:
                raise EmbSError("rerank:litellm/ needs a model name",
                                fix="e.g. rerank:litellm/Qwen/Qwen3-Reranker-8B:bm25 with --api-base.")
            self.served = ServedReranker(model[len(SERVED):], api_base=api_base, instruction=instruction,
                                         template=template)
        elif instruction is not None or template is not None:
            raise EmbSError("--rerank-instruction / --rerank-template apply to served rerankers "
                            "(rerank:litellm/<model>:<base>)",
                            fix="leave them out for a local cross-encoder folder (it takes (query, document) pairs).")

    def _folder(self) -> str:
        """The local cross-encoder's folder: the path given, or a hub name's folder in the Hugging Face cache."""
        from emb_s_core.retrievers.embedders import hub_folder, looks_like_hub_name

        path = Path(self.model).expanduser()
        if path.exists():
            return str(path)
        if looks_like_hub_name(self.model):
            return hub_folder(self.model, "reranker model", "rerank:/path/to/cross-encoder:<base-spec>")
        raise EmbSError(f"reranker model {self.model!r} not found (no such folder)",
                        fix="pass a local CrossEncoder folder or a hub name (rerank:<folder-or-org/name>:<base-spec>; "
                            "none ships offline) or a served one: rerank:litellm/<model>:<base-spec> --api-base URL.")

    def check(self) -> None:
        if self.served is not None:
            self.served.check()
        else:
            from emb_s_core.retrievers import device as device_mod

            self.device = device_mod.choose(self.device_request)
            _load_cross_encoder(self._folder(), self.device)
        self.base.check()

    def config(self) -> dict[str, Any]:
        if self.served is not None:
            return {"spec": self.spec, "reranker": f"litellm:{self.served.model}", "depth": self.depth,
                    **self.served.config(), "base": self.base.config()}
        from emb_s_core.retrievers import device as device_mod

        path = Path(self.model).expanduser()
        reranker = str(path.resolve()) if path.exists() else self.model
        # scored in half precision on a GPU (``check`` chose the device): not the same numbers as float32
        half = {"precision": "float16"} if device_mod.half_precision(self.device) else {}
        return {"spec": self.spec, "reranker": reranker, "depth": self.depth, **half, "base": self.base.config()}

    def uncached(self, ws: Workspace, doc_ids: np.ndarray | None = None) -> int:
        return self.base.uncached(ws, doc_ids)

    def prepare(self, ws: Workspace, doc_ids: np.ndarray, progress=None) -> None:
        self.base.prepare(ws, doc_ids, progress)
        self.doc_ids, self.texts, _ = documents(ws, doc_ids)
        if self.served is not None and self.served.cache is None:
            from emb_s_core.llm.cache import CACHE_FILE, ResponseCache

            self.served.cache = ResponseCache(ws.path / CACHE_FILE)

    def _score(self, query: str, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.empty(0)
        if self.served is not None:
            return self.served.score(query, texts)
        from emb_s_core.retrievers import device as device_mod

        ce = _load_cross_encoder(self._folder(), self.device)
        return np.asarray(ce.predict([(query, t) for t in texts], batch_size=device_mod.batch_size(self.device),
                                     show_progress_bar=False), np.float64).reshape(-1)

    def rank(self, queries: list[str], pools: Mapping[str, np.ndarray], k: int) -> dict[str, Ranking]:
        base = self.base.rank(queries, pools, max(k, self.depth))
        pair_scores: list[dict[int, float]] = []
        for i, q in enumerate(queries):
            cand = np.unique(np.concatenate([r.row(i)[0][: self.depth] for r in base.values()]))
            s = self._score(q, [self.texts[j] for j in self.positions(cand)])
            pair_scores.append(dict(zip(cand.tolist(), s.tolist())))
        out = {}
        for name, r in base.items():
            parts = []
            for i in range(len(queries)):  # rows may differ in length (a base's per-query pools): one list each
                row = r.row(i)[0]
                head = row[: self.depth]
                s = np.array([pair_scores[i][d] for d in head.tolist()])
                order = np.lexsort((head, -s))
                ranked = np.concatenate([head[order], row[self.depth:]])[:k]
                ranked_scores = np.concatenate([s[order], np.full(max(0, len(row) - self.depth), -np.inf)])[:k]
                parts.append(Ranking(ranked[None, :], ranked_scores[None, :]))
            out[name] = stacked(parts)
        return out
