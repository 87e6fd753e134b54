"""Embedding on a Ray cluster: Ray Data ``map_batches`` over an actor pool (one model per actor, on a GPU each when
asked), writing the workspace's own embedding cache.

Ray is an optional extra (``pip install -e '.[distributed]'``) and is imported only here. The driver (the machine
holding the workspace) reads the documents that have no vectors yet (``dense.missing_documents``) in rounds of
``ROUND_DOCS``; each round is one Ray dataset whose batches the actors chunk and embed exactly as the local path
does (``dense.embed_chunks``), and the driver writes the round's vectors in one committed transaction. So a killed
job keeps its finished rounds and the next run embeds only the rest; a run with nothing missing starts no cluster
work. The actors need the project installed where they run (the same image or ``pip install -e .`` on each node).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from emb_s_core.errors import EmbSError
from emb_s_core.progress import counted
from emb_s_core.retrievers import dense
from emb_s_core.store import Workspace

ROUND_DOCS = 8192  # documents per Ray dataset (one committed cache write each)
BATCH_DOCS = 64  # documents per map_batches call in an actor


class EmbedActor:
    """One model per actor: built from the retriever spec (so the actor computes exactly what the local path does)."""

    def __init__(self, spec: str, options: dict[str, Any], device: str, threads: int = 0,
                 precision: str = "float32") -> None:
        from emb_s_core import retrievers

        r = retrievers.get(spec, **options)
        self.embedder = r.embedder
        self.chunk_size = r.chunk_size
        self.embedder.use_device(device, precision)  # the driver's precision: its cache key says which
        if threads:
            self.embedder.use_threads(threads)

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        part = list(zip(batch["content_hash"].tolist(), batch["text"].tolist()))
        hashes, chunks, vectors = dense.embed_chunks(self.embedder, self.chunk_size, part)
        return {"content_hash": np.asarray(hashes, dtype=object), "chunk": np.asarray(chunks, np.int32),
                "vector": np.asarray(vectors, np.float32)}


def _ray():
    try:
        import ray
    except ImportError as exc:
        raise EmbSError("the Ray engine needs Ray, which is not installed",
                        fix="pip install -e '.[distributed]' (or pip install 'ray[data]>=2.60'), or use "
                            "--engine local.") from exc
    return ray


def embed_with_ray(ws: Workspace, spec: str, retriever: dense.Dense, todo: int,
                   progress: Callable[[str, float], None] | None = None, address: str | None = None,
                   workers: int = 1, num_gpus_per_worker: float = 0, options: dict[str, Any] | None = None) -> int:
    """Embed the bank's uncached documents on Ray; returns the number of chunk vectors written."""
    ray = _ray()
    started = not ray.is_initialized()
    if started:
        try:
            ray.init(address=address, include_dashboard=False, log_to_driver=False)
        except Exception as exc:  # no cluster at that address, bad URL
            raise EmbSError(f"cannot connect to a Ray cluster at {address or 'a new local one'} "
                            f"({type(exc).__name__}: {str(exc)[:200]})",
                            fix="start one with `ray start --head` (then --address auto), pass "
                                "--address ray://HOST:10001, or use --engine local.") from exc
    device = "cuda" if num_gpus_per_worker else "cpu"
    # on CPUs each actor gets its share of the cluster's cores and computes on that many threads
    cpus = 0 if num_gpus_per_worker else max(1, int(ray.cluster_resources().get("CPU", 1)) // max(workers, 1))
    resources: dict[str, Any] = {"num_gpus": num_gpus_per_worker} if num_gpus_per_worker else {"num_cpus": cpus}
    written = done = 0
    stage = counted("embedding", todo, "documents", f"{retriever.embedder.key} on Ray, {workers} workers")
    if progress:
        progress(stage, 0.0)
    try:
        for part in dense.missing_documents(ws, retriever.table, None, batch=ROUND_DOCS):
            items = [{"content_hash": h, "text": t} for h, t in part]
            out = ray.data.from_items(items).map_batches(
                EmbedActor, fn_constructor_kwargs={"spec": spec, "options": dict(options or {}), "device": device,
                                                   "threads": cpus, "precision": retriever.embedder.precision},
                batch_size=BATCH_DOCS, batch_format="numpy", compute=ray.data.ActorPoolStrategy(size=workers),
                **resources)
            hashes: list[str] = []
            chunks: list[int] = []
            vectors: list[np.ndarray] = []
            for b in out.iter_batches(batch_format="numpy", batch_size=None):
                hashes.extend(str(h) for h in b["content_hash"])
                chunks.extend(int(c) for c in b["chunk"])
                vectors.append(np.asarray(b["vector"], np.float32))
            if hashes:
                dense.write_vectors(ws, retriever.table, hashes, chunks, np.vstack(vectors), retriever.vector_dtype)
            written += len(hashes)
            done += len(part)
            if progress:
                progress(stage, min(1.0, done / max(todo, 1)))
    finally:
        if started:
            ray.shutdown()
    return written
