"""float16 storage and ANN search against exact dense scoring, on a demo bank with real embeddings.

One demo bank (default 512K tokens) and its ladder; dense:minilm-l3 evaluated exactly (float32), with float16
vectors, and with ANN (IVF-PQ, every rung searched approximately: --ann-exact-below 0) at two candidate depths.
Prints per rung: top-10 identical to exact (float16), overlap@10 (float16), ANN recall@10 as stored with the run,
and the wall time of each evaluation.

    nice -n 19 python3 bench/bench_dense_ann.py [--tokens 512K]
"""
from __future__ import annotations

import argparse
import hashlib
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from emb_s_core import bank, evaluate, ladder, runs, tokens  # noqa: E402
from emb_s_core.sources import synthetic  # noqa: E402
from emb_s_core.store import Workspace  # noqa: E402

SPEC = "dense:minilm-l3"


def lists(ws: Workspace, run: str) -> dict[tuple[str, str], list[int]]:
    res = runs.load_results(ws, runs=[run])
    return {(r, q): list(ids[:10]) for r, q, ids in zip(res["rung"], res["qid"], res["doc_ids"])}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tokens", default="512K")
    args = ap.parse_args()
    size = tokens.parse_size(args.tokens)
    with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
        ws = Workspace(Path(tmp) / "ws", create=True)
        identity = f"demo:tokens={size}:seed=0"
        bank.add_bank(ws, synthetic.generate(size, 0), fmt="demo", path=identity,
                      sha256=hashlib.sha256(identity.encode()).hexdigest())
        lad = ladder.build(ws)
        k = min(10, min(r.n_documents for r in lad.rungs))
        timings = {}
        for label, opts in (("exact float32", {}), ("exact float16", {"vector_dtype": "float16"}),
                            ("ANN ivf_pq depth 1000", {"ann": "ivf_pq", "ann_exact_below": 0, "ann_depth": 1000}),
                            ("ANN ivf_pq depth 100", {"ann": "ivf_pq", "ann_exact_below": 0, "ann_depth": 100})):
            t0 = time.perf_counter()
            name = evaluate.evaluate(ws, SPEC, name=label, k=k, **opts)
            timings[label] = time.perf_counter() - t0
            ws.refresh()
            print(f"{label}: {timings[label]:.1f} s (run {name!r})", flush=True)
        exact, half = lists(ws, "exact float32"), lists(ws, "exact float16")
        recall = {label: runs.measurements(ws, label)[label]["ann_recall@10"]
                  for label in ("ANN ivf_pq depth 1000", "ANN ivf_pq depth 100")}
        n_docs = sum(r.n_documents for r in lad.rungs if r.name == "full")
        print(f"\nbank: {n_docs:,} documents, {len(lad.rungs)} rungs, load {os.getloadavg()[0]:.1f}")
        print("| rung | docs | queries | f16 top-10 identical | f16 overlap@10 | ANN recall@10 depth 1000 | depth 100 |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for r in lad.rungs:
            keys = [(r.name, q) for q in r.qids]
            same = np.mean([exact[x] == half[x] for x in keys])
            overlap = np.mean([len(set(exact[x]) & set(half[x])) / len(exact[x]) for x in keys])
            print(f"| {r.name} | {r.n_documents:,} | {len(keys)} | {same:.3f} | {overlap:.4f} | "
                  f"{recall['ANN ivf_pq depth 1000'][r.name]:.3f} | {recall['ANN ivf_pq depth 100'][r.name]:.3f} |")


if __name__ == "__main__":
    main()
