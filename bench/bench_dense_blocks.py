"""Dense scoring beyond RAM: block scoring under a memory cap vs unbounded exact scoring, on synthetic vectors.

Writes N chunk vectors (seeded random unit vectors, 384 dims, two chunks per document so MaxP is exercised) into an
embedding-cache table of a fresh workspace, then scores a seeded set of queries (each a noisy copy of a document's
chunk, so the top-10 has a clear head) two ways, each in its own process so peak RSS is its own:

* ``capped``: :class:`~emb_s_core.retrievers.blocks.BlockScorer` under ``--cap`` (vectors streamed from Lance);
* ``exact``: every vector in memory, one matrix product, MaxP by reduceat (the pre-block implementation).

Top-10 per query on two nested pools (all documents, and the first half as a "rung") must be identical.

    nice -n 19 python3 bench/bench_dense_blocks.py [--gib 1.0] [--cap 256M] [--queries 256]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def peak_rss_mib() -> int:
    """This process's resident high-water mark (VmHWM: unlike ru_maxrss it does not inherit the parent's at fork)."""
    line = next(x for x in Path("/proc/self/status").read_text().splitlines() if x.startswith("VmHWM:"))
    return round(int(line.split()[1]) / 1024)


from emb_s_core.retrievers.base import topk  # noqa: E402
from emb_s_core.retrievers.blocks import BlockScorer, parse_cap  # noqa: E402
from emb_s_core.retrievers.dense import load_vectors, write_vectors  # noqa: E402
from emb_s_core.store import Workspace  # noqa: E402

DIM = 384
TABLE = "emb_bench_c256"
WRITE = 65536


def build(ws_path: Path, n_docs: int, seed: int) -> None:
    ws = Workspace(ws_path, create=True)
    rng = np.random.default_rng(seed)
    for start in range(0, n_docs, WRITE // 2):
        docs = np.arange(start, min(start + WRITE // 2, n_docs))
        v = rng.standard_normal((2 * len(docs), DIM), dtype=np.float32)
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        write_vectors(ws, TABLE, [f"h{d:09d}" for d in np.repeat(docs, 2)], [0, 1] * len(docs), v)


def queries(ws: Workspace, n_docs: int, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed + 1)
    picks = rng.choice(n_docs, n, replace=False)
    table = ws.read(TABLE, ["content_hash", "vector"], where="chunk = 0")
    keys = table["content_hash"].to_numpy(zero_copy_only=False)
    vectors = table["vector"].combine_chunks().flatten().to_numpy().reshape(len(table), DIM)
    q = vectors[np.isin(keys, [f"h{d:09d}" for d in picks])] + 0.05 * rng.standard_normal((n, DIM))
    return (q / np.linalg.norm(q, axis=1, keepdims=True)).astype(np.float32)


def score(mode: str, ws_path: Path, n_docs: int, cap: int, out: Path) -> None:
    ws = Workspace(ws_path)
    q = np.load(out.parent / "queries.npy")
    hashes = np.array([f"h{d:09d}" for d in range(n_docs)], dtype=object)
    ids = np.arange(n_docs, dtype=np.int64)
    pools = {"all": ids, "half": ids[: n_docs // 2]}
    base = peak_rss_mib()
    t0 = time.perf_counter()
    result = {}
    if mode == "capped":
        scorer = BlockScorer(ws, TABLE, hashes, cap)
        parts: dict[str, list] = {p: [] for p in pools}
        for _, s in scorer.scores(q):
            for name, pool in pools.items():
                parts[name].append(topk(s[:, pool], pool, 10).ids)
        result = {name: np.vstack(v) for name, v in parts.items()}
        extra = {"passes": -(-len(q) // scorer.query_rows(len(q))), "blocks_read": scorer.blocks_read,
                 "rows_per_block": scorer.block_rows(scorer.query_rows(len(q))), "resident": scorer.resident is not None}
    else:
        vectors, owner = load_vectors(ws, TABLE, hashes)
        s = q @ vectors.T
        s = np.maximum.reduceat(s, np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]]), axis=1)
        result = {name: topk(s[:, pool], pool, 10).ids for name, pool in pools.items()}
        extra = {}
    seconds = time.perf_counter() - t0
    np.savez(out, **result)
    peak = peak_rss_mib()
    print(json.dumps({"mode": mode, "seconds": round(seconds, 1), "peak_rss_mib": peak,
                      "rss_before_scoring_mib": base, **extra}))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gib", type=float, default=1.0, help="GiB of float32 vectors to write")
    ap.add_argument("--cap", default="256M")
    ap.add_argument("--queries", type=int, default=256)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--mode", choices=["capped", "exact"], help=argparse.SUPPRESS)
    ap.add_argument("--ws", help=argparse.SUPPRESS)
    ap.add_argument("--docs", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    cap = parse_cap(args.cap)
    if args.mode:
        score(args.mode, Path(args.ws), args.docs, cap, Path(args.out))
        return
    n_docs = int(args.gib * 2**30 / (2 * DIM * 4))
    with tempfile.TemporaryDirectory(dir="/tmp") as tmp:
        tmp = Path(tmp)
        t0 = time.perf_counter()
        build(tmp / "ws", n_docs, args.seed)
        t_build = time.perf_counter() - t0
        np.save(tmp / "queries.npy", queries(Workspace(tmp / "ws"), n_docs, args.queries, args.seed))
        print(f"{2 * n_docs:,} vectors ({2 * n_docs * DIM * 4 / 2**30:.2f} GiB float32) for {n_docs:,} documents, "
              f"written in {t_build:.0f} s; {args.queries} queries; cap {args.cap}", flush=True)
        runs = {}
        for mode in ("capped", "exact"):
            line = subprocess.run([sys.executable, __file__, "--mode", mode, "--ws", str(tmp / "ws"), "--docs",
                                   str(n_docs), "--cap", args.cap, "--out", str(tmp / f"{mode}.npz")],
                                  check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1]
            print(line, flush=True)
            runs[mode] = np.load(tmp / f"{mode}.npz")
        for pool in ("all", "half"):
            same = (runs["capped"][pool] == runs["exact"][pool]).all(axis=1).mean()
            print(f"pool {pool}: top-10 identical for {same:.1%} of queries")


if __name__ == "__main__":
    main()
