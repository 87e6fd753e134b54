"""ANN on nested pools: one IVF-PQ search masked per pool (what `--ann` does) vs exact scoring, and vs a LanceDB
prefilter search on the smallest pool, on clustered synthetic vectors.

N vectors (384 dims, 1,000 seeded clusters, one chunk per document) are written to an embedding-cache table; pools
are prefixes of one seeded permutation (nested, like the ladder). Queries are noisy copies of documents of the
smallest pool, so every pool holds their neighbourhoods. Reports recall@10 against exact scoring per pool and
candidate depth, the share of queries whose candidates held fewer than 10 of a pool's documents (`--ann` scores
those exactly), and seconds per query batch.

    nice -n 19 python3 bench/bench_ann_pools.py [--n 200000] [--queries 100]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from emb_s_core.retrievers import ann  # noqa: E402
from emb_s_core.retrievers.blocks import BlockScorer  # noqa: E402
from emb_s_core.retrievers.dense import write_vectors  # noqa: E402
from emb_s_core.store import Workspace  # noqa: E402

DIM = 384
TABLE = "emb_bench_ann"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=200_000)
    ap.add_argument("--queries", type=int, default=100)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    centers = rng.standard_normal((1000, DIM)).astype(np.float32)
    with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
        ws = Workspace(Path(tmp) / "ws", create=True)
        hashes = np.array([f"h{i:09d}" for i in range(args.n)], dtype=object)
        for start in range(0, args.n, 50_000):
            m = min(50_000, args.n - start)
            v = centers[rng.integers(0, 1000, m)] + 0.9 * rng.standard_normal((m, DIM)).astype(np.float32)
            v /= np.linalg.norm(v, axis=1, keepdims=True)
            write_vectors(ws, TABLE, hashes[start: start + m].tolist(), [0] * m, v)
        t0 = time.perf_counter()
        ann.ensure_index(ws, TABLE, ann.AnnOptions())
        ws.refresh()
        print(f"{args.n:,} vectors; IVF-PQ index built in {time.perf_counter() - t0:.0f} s "
              f"(load {os.getloadavg()[0]:.1f})", flush=True)
        order = rng.permutation(args.n)
        sizes = [s for s in (2_000, 10_000, 50_000, args.n) if s <= args.n]
        pools = {s: np.sort(order[:s]) for s in sizes}
        doc_ids = np.arange(args.n, dtype=np.int64)
        scorer = BlockScorer(ws, TABLE, hashes, 1 << 30)
        picks = order[: sizes[0]][rng.choice(sizes[0], args.queries, replace=False)]
        table = ws.read(TABLE, ["vector"])
        vectors = table["vector"].combine_chunks().flatten().to_numpy().reshape(-1, DIM)
        q = vectors[picks] + 0.02 * rng.standard_normal((args.queries, DIM)).astype(np.float32)
        q /= np.linalg.norm(q, axis=1, keepdims=True)
        exact_scores = scorer.score_all(q)
        exact = {s: p[np.argsort(-exact_scores[:, p], axis=1, kind="stable")[:, :10]] for s, p in pools.items()}
        print("| pool docs | depth | recall@10 (mask) | short lists | s per batch |")
        print("|---:|---:|---:|---:|---:|")
        for depth in (100, 1000, 4000):
            opts = ann.AnnOptions(depth=depth)
            t0 = time.perf_counter()
            rows, slot, score = ann.search(ws, TABLE, q, scorer.unique, opts)
            seconds = time.perf_counter() - t0
            doc = scorer.column_of_doc.argsort()[slot]  # unique hashes are the documents here
            for s, p in pools.items():
                member = np.zeros(args.n, bool)
                member[p] = True
                ids, _, short = ann.top_k_in_pool(rows, doc, score, doc_ids, member, len(q), 10)
                ok = np.setdiff1d(np.arange(len(q)), short)
                recall = ann.recall_at_k(exact[s][ok], ids[ok]) if len(ok) else float("nan")
                print(f"| {s:,} | {depth} | {recall:.3f} | {len(short) / len(q):.0%} | {seconds:.2f} |", flush=True)
        # the alternative DESIGN.md measured: a prefilter on the small pool's members
        small = pools[sizes[0]]
        where = "content_hash IN (" + ",".join(f"'{h}'" for h in hashes[small]) + ")"
        tbl = ws.table(TABLE)
        t0 = time.perf_counter()
        got = []
        for i in range(len(q)):
            res = (tbl.search(q[i]).distance_type("dot").where(where, prefilter=True).limit(10).nprobes(20)
                   .refine_factor(10).select(["content_hash", "_distance"]).to_arrow())
            got.append([int(h[1:]) for h in res["content_hash"].to_pylist()] + [-1] * (10 - res.num_rows))
        print(f"\nprefilter on the {sizes[0]:,}-document pool: recall@10 "
              f"{ann.recall_at_k(exact[sizes[0]], np.array(got)):.3f}, {time.perf_counter() - t0:.2f} s for "
              f"{len(q)} queries (one search each)")


if __name__ == "__main__":
    main()
