"""The whole ladder with BM25: ``evaluate.evaluate(ws, "bm25", k=100)`` on every rung of a demo bank's built ladder,
with this checkout's scoring kernel and with ``--before DIR``'s (its ``BM25.rank``, ``rank_matrix`` and ``query_matrix``
swapped in, with its own module's helpers and kernel; same TF matrix code),
each in its own process (so each pays its own preparation), in turns; then bm25s (numpy and numba) the only way it
can give each rung its own statistics: one index per rung, each rung's queries retrieved top-100 on it.

Stored lists of the two project runs are compared (identical ids and scores). The bank is the one
bench_bm25_peers.py generates under ``--root`` (``ws-<size>``; the ladder is built here when missing).

    nice python bench/bench_bm25_ladder.py 30M --before /tmp/before [--root /tmp/bm25-banks]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout, not an installed copy
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402


def project(ws_path: str, variant: str, before: str | None) -> dict:
    from emb_s_core import evaluate
    from emb_s_core.store import Workspace

    if variant == "before":
        from bench_bm25_peers import load_old

        from emb_s_core.retrievers import bm25

        old = load_old(before).BM25
        for method in ("rank", "rank_matrix", "query_matrix"):  # rank calls the others: all of them from before
            if method in vars(old):
                setattr(bm25.BM25, method, vars(old)[method])
    c, t = time.process_time(), time.perf_counter()
    name = evaluate.evaluate(Workspace(ws_path), "bm25", name=f"bm25-{variant}", k=100)
    return {"variant": variant, "run": name, "cpu_s": round(time.process_time() - c, 1),
            "wall_s": round(time.perf_counter() - t, 1)}


def peers(ws_path: str) -> dict:
    import bm25s

    from emb_s_core import bank, ladder
    from emb_s_core.retrievers.bm25 import BM25
    from emb_s_core.retrievers.text import tokenize
    from emb_s_core.store import Workspace

    ws = Workspace(ws_path)
    lad = ladder.load(ws)
    tf = BM25()
    tf.prepare(ws, None)
    rows = tf.postings.tocsr()
    texts = bank.queries(ws).set_index("qid")["text"]
    out = {}
    for backend in ("numpy", "numba"):
        c, t = time.process_time(), time.perf_counter()
        for rung in lad.rungs:
            pos = np.searchsorted(tf.doc_ids, rung.doc_ids)
            corpus = [np.repeat(rows.indices[rows.indptr[i]:rows.indptr[i + 1]],
                                rows.data[rows.indptr[i]:rows.indptr[i + 1]]).tolist() for i in pos]
            model = bm25s.BM25(method="robertson", k1=1.5, b=0.75, backend=backend)
            model.index((corpus, dict(tf.vocab)), show_progress=False)
            q = [[w for w in tokenize(texts[qid]) if w in tf.vocab] or [""] for qid in rung.qids]
            model.retrieve(q, k=min(100, len(pos)), show_progress=False, n_threads=1)
        out[backend] = {"cpu_s": round(time.process_time() - c, 1), "wall_s": round(time.perf_counter() - t, 1)}
    out["rungs"] = len(lad.rungs)
    out["pairs"] = sum(len(r.qids) for r in lad.rungs)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("size")
    ap.add_argument("--root", default="/tmp/bm25-banks")
    ap.add_argument("--before")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--peers", action="store_true", help="also time bm25s re-indexing every rung")
    a = ap.parse_args()
    ws_path = str(Path(a.root) / f"ws-{a.size}")
    if a.child:
        print(json.dumps(peers(ws_path) if a.child == "peers" else project(ws_path, a.child, a.before)))
        return
    from bench_bm25_peers import workspace

    from emb_s_core import ladder, runs
    from emb_s_core.store import Workspace

    ws = workspace(Path(a.root), a.size)
    if not ladder.exists(ws):
        ladder.build(ws)
    for variant in ("before", "after"):
        if runs.get_run(Workspace(ws_path), f"bm25-{variant}") is not None:
            runs.delete_run(Workspace(ws_path), f"bm25-{variant}")
    variants = ["before", "after"] if a.before else ["after"]
    if a.peers:
        variants.append("peers")
    for v in variants:
        args = [sys.executable, __file__, a.size, "--root", a.root, "--child", v]
        if a.before:
            args += ["--before", a.before]
        res = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout.splitlines()[-1])
        print(json.dumps({**res, "size": a.size, "load": round(os.getloadavg()[0], 1)}), flush=True)
    if a.before:
        res = runs.load_results(Workspace(ws_path), runs=["bm25-before", "bm25-after"])
        key = ["rung", "qid"]
        old = res[res["run"] == "bm25-before"].set_index(key).sort_index()
        new = res[res["run"] == "bm25-after"].set_index(key).sort_index()
        same = sum(np.array_equal(x, y) for x, y in zip(old["doc_ids"], new["doc_ids"]))
        with np.errstate(invalid="ignore", divide="ignore"):
            diff = max(float(np.nanmax(np.abs(x - y) / np.maximum(np.abs(x), 1e-300), initial=0))
                       for x, y in zip(old["scores"], new["scores"]))
        print(json.dumps({"lists": len(new), "identical_lists": int(same), "max_score_rel_diff": diff}))


if __name__ == "__main__":
    main()
