"""Embedding throughput: the local engine vs the Ray engine with 1 and 2 workers, same bank, same model.

A demo bank (default 256K tokens) is generated once; each engine embeds it from scratch into its own copy of the
workspace with dense:minilm-l3 (ONNX, CPU). Ray is started once (``ray.init(num_cpus=2)``) and its start time is
reported apart. Vectors of the Ray runs are checked against the local run's.

    nice -n 19 python3 bench/bench_ray_embed.py [--tokens 256K]
"""
from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from emb_s_core import bank, embed, retrievers, tokens  # noqa: E402
from emb_s_core.retrievers.dense import document_hashes, load_vectors  # noqa: E402
from emb_s_core.sources import synthetic  # noqa: E402
from emb_s_core.store import Workspace  # noqa: E402

SPEC = "dense:minilm-l3"


def vectors(ws: Workspace) -> np.ndarray:
    _, hashes = document_hashes(ws, None)
    return load_vectors(ws, retrievers.get(SPEC).table, hashes)[0]


def main() -> None:
    import ray

    ap = argparse.ArgumentParser()
    ap.add_argument("--tokens", default="256K")
    args = ap.parse_args()
    size = tokens.parse_size(args.tokens)
    with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
        base = Path(tmp) / "base"
        ws = Workspace(base, create=True)
        identity = f"demo:tokens={size}:seed=0"
        bank.add_bank(ws, synthetic.generate(size, 0), fmt="demo", path=identity,
                      sha256=hashlib.sha256(identity.encode()).hexdigest())
        t0 = time.perf_counter()
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
        print(f"ray.init(num_cpus=2): {time.perf_counter() - t0:.1f} s", flush=True)
        rows, reference = [], None
        for engine, workers in (("local", 1), ("ray", 1), ("ray", 2)):
            dest = Path(tmp) / f"{engine}-{workers}"
            shutil.copytree(base, dest)
            w = Workspace(dest)
            load = os.getloadavg()[0]
            rep = embed.embed(w, SPEC, engine=engine, workers=workers)
            w.refresh()
            got = vectors(w)
            if reference is None:
                reference = got
            diff = float(np.abs(got - reference).max())
            rows.append((engine, workers, rep.documents, rep.chunks, rep.seconds, load, diff))
            print(rows[-1], flush=True)
        ray.shutdown()
    print("\n| engine | workers | documents | chunks | seconds | chunks/s | load (1 min) | max |Δ| vs local |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for engine, workers, docs, chunks, secs, load, diff in rows:
        print(f"| {engine} | {workers} | {docs:,} | {chunks:,} | {secs:.1f} | {chunks / secs:.1f} | {load:.1f} | "
              f"{diff:.1e} |")


if __name__ == "__main__":
    main()
