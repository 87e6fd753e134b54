"""BM25 per query beside bm25s (numpy and numba backends), one process per size, all measured in turns in that process.

For each size (demo bank of N tokens, generated into ``--root`` once and kept there): the project's BM25 is prepared
over the whole bank; bm25s (method "robertson", k1 = 1.5, b = 0.75: the same formula, without the project's idf
floor at 0) indexes the same token ids (the project's tokenizer, so both see identical documents); then the bank's
first ``--queries`` questions are answered (top-10, one pool = the whole bank) by: the project's kernel, the kernel
of ``--before DIR`` (the code before this change, e.g. ``git archive <commit> emb_s_core | tar -x -C DIR``), bm25s
numpy, and bm25s numba after its JIT compile (timed apart: every fresh process pays it). Rounds alternate between
the contenders and the best round counts; CPU time (process_time) is the figure, wall time is printed beside it
because the machine is shared. Agreement: the project's top-100 against ``--before``'s (ids identical, scores to
1e-12) and top-10 lists identical to bm25s's.

    nice python bench/bench_bm25_peers.py 1M 10M 30M --before /tmp/before [--root /tmp/bm25-banks] [--queries 500]

``--batch 64`` adds the batches ``eval`` runs (issue 32): each contender also answers the queries in batches of 64
(``*-b64``: the project from text and from tokens, ``--before``'s from text and tokens, bm25s on the same batches).
"""
from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import sys
import time
import types
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # this checkout, not an installed copy

import numpy as np  # noqa: E402


def workspace(root: Path, size: str):
    from emb_s_core import bank, tokens as tok
    from emb_s_core.sources import synthetic
    from emb_s_core.store import Workspace

    path = root / f"ws-{size}"
    if not (path / "DONE").exists():
        ws = Workspace(path, create=True)
        identity = f"demo:tokens={tok.parse_size(size)}:seed=0"
        bank.add_bank(ws, synthetic.generate(tok.parse_size(size), 0), fmt="demo", path=identity,
                      sha256=hashlib.sha256(identity.encode()).hexdigest())
        (path / "DONE").write_text("ok")
    return Workspace(path)


def load_old(before: str):
    """The BM25 module of ``before``, with its own compiled kernel (if it has one), not this checkout's: the kernel's
    functions change with the code they serve."""
    src = (Path(before) / "emb_s_core/retrievers/bm25.py").read_text()
    kernel = Path(before) / "emb_s_core/retrievers/bm25_kernel.py"
    if kernel.exists():
        spec = importlib.util.spec_from_file_location("bm25_kernel_before", kernel)
        sys.modules["bm25_kernel_before"] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules["bm25_kernel_before"])
        src = src.replace("emb_s_core.retrievers.bm25_kernel", "bm25_kernel_before")
    text = Path(before) / "emb_s_core/retrievers/text.py"
    if text.exists():  # its tokenizer too: the query tokenizer is part of a query's time from text
        spec = importlib.util.spec_from_file_location("text_before", text)
        sys.modules["text_before"] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules["text_before"])
        src = src.replace("emb_s_core.retrievers.text", "text_before")
    mod = types.ModuleType("bm25_before")
    exec(compile(src, str(Path(before) / "emb_s_core/retrievers/bm25.py"), "exec"), mod.__dict__)
    return mod


def timed(fn) -> tuple[float, float, object]:
    c, t = time.process_time(), time.perf_counter()
    out = fn()
    return time.process_time() - c, time.perf_counter() - t, out


def run(size: str, a) -> dict:
    import bm25s

    from emb_s_core import bank
    from emb_s_core.retrievers.bm25 import BM25
    from emb_s_core.retrievers.text import tokenize

    ws = workspace(Path(a.root), size)
    project = BM25()
    prep_cpu, _, _ = timed(lambda: project.prepare(ws, None))
    queries = bank.queries(ws)["text"].tolist()[: a.queries]
    pool = {"all": project.doc_ids}
    q_tokens = [[t for t in tokenize(q) if t in project.vocab] or [""] for q in queries]
    # the project from token lists (as bm25s is given them): terms looked up, counted, scored
    def from_tokens():
        return project.rank_matrix(project.term_matrix(q_tokens), pool, 10)["all"]

    contenders = {"project": lambda: project.rank(queries, pool, 10)["all"], "project-tokens": from_tokens}
    if a.before:
        old = load_old(a.before).BM25()
        old.__dict__.update({**project.__dict__, "_pools": {}, "_pool_objects": {}})  # the same TF matrix
        contenders["before"] = lambda: old.rank(queries, pool, 10)["all"]
    # bm25s on the same tokens: each document's term ids, repeated tf times
    rows = project.postings.tocsr()
    corpus = [np.repeat(rows.indices[rows.indptr[i]:rows.indptr[i + 1]],
                        rows.data[rows.indptr[i]:rows.indptr[i + 1]]).tolist() for i in range(rows.shape[0])]
    peers, index_cpu = {}, {}
    for backend in ("numpy", "numba"):
        model = bm25s.BM25(method="robertson", k1=1.5, b=0.75, backend=backend)
        index_cpu[backend], _, _ = timed(lambda: model.index((corpus, dict(project.vocab)), show_progress=False))
        peers[backend] = model
    corpus.clear()  # the peers keep their own index

    def peer(backend):
        return lambda: peers[backend].retrieve(q_tokens, k=10, show_progress=False, n_threads=1)

    contenders["bm25s-numpy"] = peer("numpy")
    compile_cpu, compile_wall, _ = timed(lambda: peers["numba"].retrieve(q_tokens[:2], k=10, show_progress=False,
                                                                          n_threads=1))
    contenders["bm25s-numba"] = peer("numba")
    if a.batch:
        b = a.batch

        def batched(fn, items):
            return lambda: [fn(items[i:i + b]) for i in range(0, len(items), b)]

        contenders[f"project-b{b}"] = batched(lambda qs: project.rank(qs, pool, 10), queries)
        contenders[f"project-tokens-b{b}"] = batched(lambda ts: project.rank_matrix(project.term_matrix(ts), pool, 10),
                                                     q_tokens)
        if a.before:
            contenders[f"before-b{b}"] = batched(lambda qs: old.rank(qs, pool, 10), queries)
            contenders[f"before-tokens-b{b}"] = batched(lambda ts: old.rank_matrix(old.term_matrix(ts), pool, 10),
                                                        q_tokens)
        contenders[f"bm25s-numba-b{b}"] = batched(
            lambda ts: peers["numba"].retrieve(ts, k=10, show_progress=False, n_threads=1), q_tokens)
    best = {name: (float("inf"), float("inf")) for name in contenders}
    outs = {}
    for _ in range(a.rounds):
        for name, fn in contenders.items():
            # every round starts cold: no pool state (column maps, cached weights) from a round before
            project._pools, project._pool_objects = {}, {}
            if a.before:
                old._pools, old._pool_objects = {}, {}
            cpu, wall, outs[name] = timed(fn)
            best[name] = (min(best[name][0], cpu), min(best[name][1], wall))
    ms = {name: {"cpu_ms": round(1e3 * c / len(queries), 4), "wall_ms": round(1e3 * w / len(queries), 4)}
          for name, (c, w) in best.items()}
    ours = outs["project"].ids
    doc_ids = project.doc_ids
    agree = {f"top10_same_as_{p}": int(sum(np.array_equal(ours[i], doc_ids[np.asarray(outs[p][0][i])])
                                         for i in range(len(queries)))) for p in ("bm25s-numpy", "bm25s-numba")}
    for name, out in outs.items():  # the project's batches: the same lists and scores as its one call, to the bit
        if name.startswith(("project-b", "project-tokens-b", "before-b", "before-tokens-b")):
            ids_b = np.concatenate([o["all"].ids for o in out])
            scores_b = np.concatenate([o["all"].scores for o in out])
            agree[f"{name}_bit_identical"] = bool(np.array_equal(ids_b, ours)
                                                  and np.array_equal(scores_b, outs["project"].scores))
    if a.before:
        big_new = project.rank(queries, pool, 100)["all"]
        big_old = old.rank(queries, pool, 100)["all"]
        agree["top100_ids_same_as_before"] = int((big_new.ids == big_old.ids).all(axis=1).sum())
        agree["max_score_rel_diff_vs_before"] = float(np.max(np.abs(big_new.scores - big_old.scores)
                                                             / np.maximum(np.abs(big_old.scores), 1e-300)))
    postings = project.postings
    qm = project.query_matrix(queries)
    per_query = float((postings.indptr[qm.indices + 1] - postings.indptr[qm.indices]).sum() / len(queries))
    return {"size": size, "documents": len(doc_ids), "queries": len(queries), "postings_per_query": round(per_query),
            "load": round(os.getloadavg()[0], 1), "project_prepare_cpu_s": round(prep_cpu, 1),
            "bm25s_index_cpu_s": {k: round(v, 1) for k, v in index_cpu.items()},
            "bm25s_numba_compile_s": {"cpu": round(compile_cpu, 1), "wall": round(compile_wall, 1)},
            "per_query": ms, **agree}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("sizes", nargs="+")
    ap.add_argument("--root", default="/tmp/bm25-banks")
    ap.add_argument("--queries", type=int, default=500)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--before")
    ap.add_argument("--batch", type=int, default=0, help="also answer in batches of this many queries (eval: 64)")
    a = ap.parse_args()
    Path(a.root).mkdir(parents=True, exist_ok=True)
    for size in a.sizes:
        r = run(size, a)
        print(json.dumps(r), flush=True)
        pq = r["per_query"]
        line = ", ".join(f"{n} {v['cpu_ms']:.3f} ms" for n, v in pq.items())
        ratios = "; ".join(f"{mine} ÷ " + ", ".join(f"{n} {pq[mine]['cpu_ms'] / v['cpu_ms']:.2f}×" for n, v in pq.items()
                                                  if not n.startswith("project"))
                           for mine in pq if mine.startswith(("project", "before")))
        print(f"| {size} | {r['documents']:,} | {r['postings_per_query']:,} | {line} | {ratios} | "
              f"load {r['load']} |", flush=True)


if __name__ == "__main__":
    main()
