"""Time the leaderboard (analysis.leaderboard.compute + Leaderboard.table) at the issue's scale: ten runs against a
baseline on 12 rungs of 1,000 queries, i.e. 9 × 12 = 108 paired sign-flip tests plus the bootstrap intervals
(1,000 replicates) of 120 cells, corrected together with Holm.

Per-query rows come from ``metrics.per_query`` on the synthetic results of bench_metrics.make (not timed here).
``--before DIR`` also times the code in DIR (e.g. ``git archive <commit> emb_s_core | tar -x -C DIR``) in a child
process, metric by metric alternating with this checkout, so both are measured in one run under the same load,
and counts the cells whose verdict differs.

Run: python3 bench/bench_leaderboard.py [--queries 1000 --rungs 12 --runs 10 --repeat 3] [--before DIR]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, os.environ.get("BENCH_CODE") or str(HERE.parent))  # this checkout unless told otherwise
sys.path.insert(1, str(HERE))
from emb_s_core import metrics  # noqa: E402  (before bench_metrics, which puts this checkout first on the path)
from emb_s_core.analysis import leaderboard  # noqa: E402
from bench_metrics import make  # noqa: E402,I001

METRICS = ("R@1", "SR@10", "FR@10", "MRR")


def measure(a, metric: str) -> dict:
    results, queries = make(a.queries, a.rungs, a.runs, a.k)
    pq = metrics.per_query(results, queries)
    cols = [f"rung{i}" for i in range(a.rungs)]
    wall, cpu = [], []
    for _ in range(a.repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        board = leaderboard.compute(pq, cols, metric, "run0", correction="holm")
        board.table(detail=True, sort_by=cols[-1])
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return {"metric": metric, "code": str(Path(metrics.__file__).parents[1]), "tests": board.n_tests, "wall": min(wall), "cpu": min(cpu),
            "verdicts": board.cells["verdict"].tolist(), "p": board.cells["p_value"].tolist(),
            "note": getattr(board, "p_note", "")}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--rungs", type=int, default=12)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--k", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--metric", help="measure one metric and print it as JSON (the child of --before)")
    ap.add_argument("--before", help="a directory holding the emb_s_core to compare with")
    a = ap.parse_args()
    if a.metric:
        print(json.dumps(measure(a, a.metric)))
        return
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}; "
          f"{a.runs} runs × {a.rungs} rungs × {a.queries} queries")
    for metric in METRICS:
        now = measure(a, metric)
        line = (f"{metric}: {now['tests']} tests; wall {now['wall']:.2f} s, CPU {now['cpu']:.2f} s")
        if a.before:
            args = [sys.executable, __file__, "--metric", metric, "--queries", str(a.queries), "--rungs",
                    str(a.rungs), "--runs", str(a.runs), "--k", str(a.k), "--repeat", str(a.repeat)]
            out = subprocess.run(args, env={**os.environ, "BENCH_CODE": a.before}, capture_output=True, text=True,
                                 check=True).stdout
            old = json.loads(out.strip().splitlines()[-1])
            differ = sum(x != y for x, y in zip(old["verdicts"], now["verdicts"]))
            assert old["code"] != now["code"], "the child measured this checkout, not --before"
            line += (f" | before: wall {old['wall']:.2f} s, CPU {old['cpu']:.2f} s | speed-up {old['wall'] / now['wall']:.1f}× "
                     f"wall, {old['cpu'] / now['cpu']:.1f}× CPU; verdicts differing {differ}/{len(now['verdicts'])}")
        print(line + f"; load {os.getloadavg()[0]:.2f}")
        print(f"  {now['note']}")


if __name__ == "__main__":
    main()
