"""Time the leaderboard (analysis.leaderboard.compute + Leaderboard.table) at the issue's scale: ten runs against a
baseline on 12 rungs of 1,000 queries, i.e. 9 × 12 = 108 paired sign-flip tests (10,000 sign vectors each) plus the
bootstrap intervals (1,000 replicates) of 120 cells, corrected together with Holm.

Per-query rows come from ``metrics.per_query`` on the synthetic results of bench_metrics.make (not timed here).
Run: python3 bench/bench_leaderboard.py [--queries 1000 --rungs 12 --runs 10 --repeat 3]
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # this checkout, not an installed copy
sys.path.insert(0, str(HERE))
from bench_metrics import make  # noqa: E402
from emb_s_core import metrics  # noqa: E402
from emb_s_core.analysis import leaderboard  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--rungs", type=int, default=12)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--k", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    results, queries = make(a.queries, a.rungs, a.runs, a.k)
    pq = metrics.per_query(results, queries)
    cols = [f"rung{i}" for i in range(a.rungs)]
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}; "
          f"{len(pq):,} per-query rows ({a.runs} runs × {a.rungs} rungs × {a.queries} queries)")
    for metric in ("SR@10", "MRR", "FR@10"):
        wall, cpu = [], []
        for _ in range(a.repeat):
            t0, c0 = time.perf_counter(), time.process_time()
            board = leaderboard.compute(pq, cols, metric, "run0", correction="holm")
            table = board.table(detail=True, sort_by=cols[-1])
            wall.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
        print(f"{metric}: {board.n_tests} tests, {len(table)} rows; wall min {min(wall):.2f} s / max "
              f"{max(wall):.2f} s; process CPU min {min(cpu):.2f} s")


if __name__ == "__main__":
    main()
