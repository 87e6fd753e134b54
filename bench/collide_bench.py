"""Collision testing cost on a real bank: candidate search (exact dense top-k outside the RefList over the whole
bank, cached embeddings) and labeling throughput with the offline model, on a workspace made by domains_bench.py.

Usage: python3 bench/collide_bench.py WORKSPACE [--k 10] [--local-calls 3]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from emb_s_core import collide, llm  # noqa: E402
from emb_s_core.store import Workspace  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("workspace", type=Path)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--local-calls", type=int, default=3)
    args = ap.parse_args()
    ws = Workspace(args.workspace)
    t0 = time.perf_counter()
    cands = collide.candidates(ws, "dense:minilm-l6", args.k)
    t_all = time.perf_counter() - t0
    n_q = cands["qid"].nunique()
    print(f"candidates: {n_q:,} queries × k={args.k} over {len(ws.read('documents', ['doc_id'])):,} documents "
          f"in {t_all:.1f} s (model load + cached vectors + scoring), {1000 * t_all / n_q:.1f} ms per query")
    gw = llm.Gateway.for_workspace(ws, llm.LOCAL_MODEL, max_tokens=48)
    first = sorted(cands["qid"].unique())[: max(1, (args.local_calls + 1) // 2)]
    t0 = time.perf_counter()
    report = collide.run(ws, gw, "dense:minilm-l6", k=2, qids=first)
    t_local = time.perf_counter() - t0
    print(f"local model ({llm.LOCAL_MODEL}, max 48 reply tokens): {report.labeled_now} verdicts in {t_local:.1f} s "
          f"({t_local / max(report.labeled_now, 1):.1f} s per verdict incl. candidate search); counts {report.counts}")


if __name__ == "__main__":
    main()
