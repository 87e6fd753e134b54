"""``emb-s embed``: fill a dense retriever's embedding cache for the whole bank ahead of evaluation.

Why a step of its own: embedding is the one cost that grows with the bank (326M tokens is ~15 h on 2 CPU cores), so it
is what goes to other machines. The local engine (default) is the retriever's own path (``dense.embed_missing``);
the Ray engine (:mod:`emb_s_core.distributed`) runs the same chunking and model on a Ray cluster. Both read their
work from ``dense.missing_documents`` and write the same cache table in committed batches, so either resumes where an
interrupted run stopped and a following ``emb-s eval`` embeds nothing.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

from emb_s_core import retrievers
from emb_s_core.errors import EmbSError
from emb_s_core.retrievers import dense
from emb_s_core.retrievers.base import EMBEDDINGS
from emb_s_core.store import Workspace

ENGINES = ("local", "ray")


@dataclass
class EmbedReport:
    spec: str
    table: str
    engine: str
    documents: int  # distinct document contents that had no vectors
    chunks: int  # chunk vectors written
    seconds: float


def embed(ws: Workspace, spec: str, engine: str = "local", progress: Callable[[str, float], None] | None = None,
          address: str | None = None, workers: int = 1, num_gpus_per_worker: float = 0, **options: Any
          ) -> EmbedReport:
    """Embed every document of the bank that ``spec``'s cache lacks; options as for :func:`retrievers.get`."""
    if engine not in ENGINES:
        raise EmbSError(f"unknown engine {engine!r}", fix="use --engine local (default) or --engine ray.")
    if workers < 1 or num_gpus_per_worker < 0:
        raise EmbSError(f"--workers must be at least 1 and --num-gpus-per-worker 0 or more (got {workers}, "
                        f"{num_gpus_per_worker})", fix="pass e.g. --workers 2 --num-gpus-per-worker 1.")
    r = retrievers.get(spec, **options)
    if not r.can(EMBEDDINGS):
        raise EmbSError(f"{spec!r} has no embeddings to compute", fix="pass a dense retriever, e.g. dense:minilm-l6.")
    r.check()
    _, hashes = dense.document_hashes(ws, None)
    todo = dense.missing_count(ws, r.table, hashes)
    start = time.perf_counter()
    if engine == "local" or not todo:
        chunks = dense.embed_missing(ws, r.embedder, r.chunk_size, None, hashes, progress, r.vector_dtype) \
            if todo else 0
    else:
        from emb_s_core import distributed

        chunks = distributed.embed_with_ray(ws, spec, r, todo, progress=progress, address=address, workers=workers,
                                            num_gpus_per_worker=num_gpus_per_worker, options=options)
    return EmbedReport(spec, r.table, engine, todo, chunks, time.perf_counter() - start)
