"""Time metrics.per_query + metrics.aggregate + metrics.paired_test at the issue's scale.

1,000 queries × 12 rungs × 6 runs = 72,000 result rows, each a ranked list of K = 100 ids drawn from a 200K-id bank;
gold sets of 1–4 documents, 0–3 hard negatives, gold placed in the list at random for about half the golds.
Run: python3 bench/bench_metrics.py [--queries 1000 --rungs 12 --runs 6 --k 100 --repeat 3]
"""
from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout, not an installed copy
from emb_s_core import metrics  # noqa: E402


def make(n_q: int, n_rungs: int, n_runs: int, k: int, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    bank = 200_000
    n_gold = rng.choice([1, 1, 2, 3, 4], size=n_q)
    gold = [rng.choice(bank, size=g, replace=False) for g in n_gold]
    hn = [rng.choice(bank, size=int(h), replace=False) for h in rng.integers(0, 4, n_q)]
    queries = pd.DataFrame({"qid": [f"q{i}" for i in range(n_q)], "ref_ids": gold, "hard_negative_ids": hn,
                            "domain": rng.choice(["law", "med", "fin", "tech"], n_q), "task_type": "t", "source": "s"})
    n = n_q * n_rungs * n_runs
    lists = rng.integers(0, bank, size=(n, k))
    qidx = np.tile(np.arange(n_q), n_rungs * n_runs)
    for j in range(4):  # plant gold j at a random position for about half of the rows
        has = (n_gold[qidx] > j) & (rng.random(n) < 0.5)
        rows = np.flatnonzero(has)
        lists[rows, rng.integers(0, k, len(rows))] = [gold[q][j] for q in qidx[rows]]
    results = pd.DataFrame({
        "run": np.repeat([f"run{i}" for i in range(n_runs)], n_q * n_rungs),
        "rung": np.tile(np.repeat([f"rung{i}" for i in range(n_rungs)], n_q), n_runs),
        "qid": queries["qid"].to_numpy()[qidx], "doc_ids": list(lists), "status": "ok"})
    return results, queries


def timed(fn, repeat: int) -> tuple[str, object]:
    """Best wall time and best process CPU time of ``repeat`` calls (CPU time is steadier on a shared machine)."""
    wall, cpu, out = float("inf"), float("inf"), None
    for _ in range(repeat):
        t, c = time.perf_counter(), time.process_time()
        out = fn()
        wall, cpu = min(wall, time.perf_counter() - t), min(cpu, time.process_time() - c)
    return f"{wall:.3f} s wall, {cpu:.3f} s cpu", out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--rungs", type=int, default=12)
    ap.add_argument("--runs", type=int, default=6)
    ap.add_argument("--k", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    results, queries = make(a.queries, a.rungs, a.runs, a.k)
    import os

    print(f"load average: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"machine: {platform.machine()}, {platform.processor() or 'cpu'}, python {platform.python_version()}")
    print(f"rows: {len(results):,} (queries {a.queries} × rungs {a.rungs} × runs {a.runs}), K = {a.k}")
    t_pq, pq = timed(lambda: metrics.per_query(results, queries), a.repeat)
    print(f"per_query:                          {t_pq}  ({len(pq):,} rows, {len(pq.columns)} columns)")
    for name, kw in [("aggregate by run,rung, 1000 boot", {}),
                     ("aggregate by run,rung,domain      ", {"by": ("run", "rung", "domain")}),
                     ("aggregate, SR@10 only, 1000 boot  ", {"metrics": ["SR@10"]}),
                     ("aggregate, no intervals           ", {"n_boot": 0})]:
        t, agg = timed(lambda: metrics.aggregate(pq, **kw), a.repeat)
        print(f"{name}: {t}  ({len(agg):,} rows)")
    t, res = timed(lambda: metrics.paired_test(pq, "run0", "run1", "rung0", "SR@10"), a.repeat)
    print(f"paired_test (10,000 sign flips + bootstrap, n={res['n']}): {t}")


if __name__ == "__main__":
    main()
