"""Cost of comparing runs over their common queries (``analysis.common.restrict``) on a large per-query frame: 8 runs
× 7 scales × N queries with a few hundred rows missing, the shape the leaderboard, paper table and Overview restrict.

    python bench/bench_common_queries.py [--queries 20000] [--repeat 3]
"""
from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from emb_s_core.analysis import common


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--queries", type=int, default=20000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    runs, scales = [f"r{i}" for i in range(8)], ["64K", "128K", "256K", "512K", "1M", "2M", "full"]
    n = len(runs) * len(scales) * args.queries
    pq = pd.DataFrame({"run": np.repeat(runs, len(scales) * args.queries),
                       "scale": np.tile(np.repeat(scales, args.queries), len(runs)),
                       "qid": np.tile([f"q{q}" for q in range(args.queries)], len(runs) * len(scales))})
    pq = pq.drop(np.random.default_rng(0).choice(n, 500, replace=False))
    times = []
    for _ in range(args.repeat):
        t = time.perf_counter()
        kept, left = common.restrict(pq, "scale")
        times.append(time.perf_counter() - t)
    print(f"{len(pq):,} rows, {len(kept):,} kept, {len(left)} (column, run) rows left out: "
          f"restrict {min(times):.2f} s best of {args.repeat} (median {float(np.median(times)):.2f} s)")


if __name__ == "__main__":
    main()
