"""Retrieval benchmarks (not tests): run on the shared real datasets; results go into bench/RESULTS.md.

    python3 bench/bench_retrieval.py embed   # cached embedding path vs a bare SentenceTransformer.encode loop
    python3 bench/bench_retrieval.py ladder  # whole-ladder dense run vs the largest rung alone
    python3 bench/bench_retrieval.py bm25    # sparse BM25 vs rank-bm25 per query at 100K+ documents
    python3 bench/bench_retrieval.py full    # all offline retrievers, all rungs, the four shared datasets

Each ratio is measured within one run (the machine is shared and noisy). Workspaces go to a temp folder
(``--keep DIR`` to reuse one between sections: the ladder section reuses the full section's embeddings).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402

from emb_s_core import bank, evaluate, ladder, retrievers, runs  # noqa: E402
from emb_s_core.store import Workspace  # noqa: E402

SHARED = Path(os.environ.get("EMB_S_SHARED_DATA", REPO.parent / "shared" / "data"))
DATASETS = [("hotpotqa", "hotpotqa-dev-distractor-500"), ("musique", "musique-ans-200"),
            ("2wiki", "2wikimultihopqa-200"), ("locomo", "locomo10")]


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def shared_workspace(root: Path) -> Workspace:
    """The four shared datasets in one workspace with the default ladder (built once per --keep folder)."""
    path = root / "shared-ws"
    if not (path / "workspace.json").exists():
        for fmt, folder in DATASETS:
            bank.import_path(path, fmt, SHARED / folder)
    ws = Workspace(path)
    if not ladder.exists(ws):
        ladder.build(ws)
    return ws


def bench_embed(root: Path, n_docs: int) -> dict:
    """Our prepare (chunk + encode + LanceDB cache write) vs a bare encode loop over the same chunk texts."""
    from sentence_transformers import SentenceTransformer

    from emb_s_core.retrievers.embedders import minilm_l6_path

    ws = shared_workspace(root)
    docs = bank.documents(ws, ["doc_id"]).sort_values("doc_id")["doc_id"].to_numpy()[:n_docs]
    r = retrievers.get("dense:minilm-l6")
    e = r.embedder
    _, texts, _ = retrievers.base.documents(ws, docs)
    chunks = [c for cs in e.chunks(texts, r.chunk_size) for c in cs]
    model = SentenceTransformer(str(minilm_l6_path()), device="cpu")
    model.encode(chunks[:64], batch_size=64)  # warm-up

    def bare():
        for start in range(0, len(chunks), 1024):
            model.encode(chunks[start:start + 1024], batch_size=64, normalize_embeddings=True)

    def ours():
        fresh = Workspace(root / f"embed-{time.time_ns()}", create=True)
        # a workspace holding only these documents: the cache is empty, so everything is embedded and written
        from emb_s_core.schema import DOCUMENT_SCHEMA

        with fresh.transaction():
            fresh.write("documents", ws.read("documents", where=f"doc_id <= {int(docs[-1])}"), schema=DOCUMENT_SCHEMA)
        rr = retrievers.get("dense:minilm-l6")
        rr.prepare(fresh, docs)
        return rr.embedded

    _, t_bare1 = timed(bare)
    n_embedded, t_ours = timed(ours)
    _, t_bare2 = timed(bare)
    t_bare = (t_bare1 + t_bare2) / 2
    return {"documents": len(docs), "chunks": len(chunks), "embedded": n_embedded, "bare_s": round(t_bare, 2),
            "bare_runs_s": [round(t_bare1, 2), round(t_bare2, 2)], "ours_s": round(t_ours, 2),
            "ours_over_bare": round(t_ours / t_bare, 3), "chunks_per_s_ours": round(len(chunks) / t_ours, 1)}


def bench_ladder(root: Path, spec: str) -> dict:
    """Whole ladder vs the largest rung alone, embeddings cached (prepare both first)."""
    ws = shared_workspace(root)
    lad = ladder.load(ws)
    evaluate.evaluate(ws, spec, name="warm", k=100, rungs=["full"])  # embeds the bank once
    _, t_full = timed(lambda: evaluate.evaluate(ws, spec, name=f"only-full-{time.time_ns()}", k=100,
                                                rungs=["full"]))
    _, t_all = timed(lambda: evaluate.evaluate(ws, spec, name=f"all-{time.time_ns()}", k=100))
    pairs_all = sum(len(r.qids) for r in lad.rungs)
    return {"spec": spec, "rungs": len(lad.rungs), "queries": len(lad.rung("full").qids),
            "documents_full": lad.rung("full").n_documents, "pairs_all": pairs_all,
            "largest_rung_s": round(t_full, 2), "whole_ladder_s": round(t_all, 2),
            "ratio": round(t_all / t_full, 3)}


def synthetic_100k(root: Path, n_docs: int, seed: int = 0) -> Workspace:
    """n_docs documents made from the shared datasets' real paragraphs (each reused with its sentences shuffled,
    10% of words dropped and a numeric tag), plus the datasets' real questions as queries."""
    from emb_s_core.retrievers.base import documents as docs_of
    from testkit import write_jsonl

    path = root / f"bm25-{n_docs}"
    if (path / "workspace.json").exists():
        return Workspace(path)
    src = shared_workspace(root)
    _, texts, _ = docs_of(src)
    questions = bank.queries(src)["text"].tolist()
    rnd = random.Random(seed)
    rows = []
    for i in range(n_docs):
        words = texts[i % len(texts)].split()
        if i >= len(texts):
            words = [w for w in words if rnd.random() > 0.1]
            cut = rnd.randrange(len(words)) if words else 0
            words = words[cut:] + words[:cut] + [f"tag{i % 997}"]
        rows.append({"doc_id": i, "text": " ".join(words) or "empty"})
    qs = [{"qid": f"q{j}", "text": q, "answer": "-", "ref_ids": [j]} for j, q in enumerate(questions)]
    write_jsonl(root / "bm25-bank" / "documents.jsonl", rows)
    write_jsonl(root / "bm25-bank" / "queries.jsonl", qs)
    bank.import_path(path, "native", root / "bm25-bank")
    return Workspace(path)


def bench_bm25(root: Path, n_docs: int, n_ref_queries: int) -> dict:
    ws = synthetic_100k(root, n_docs)
    questions = bank.queries(ws)["text"].tolist()
    sparse = retrievers.get("bm25")
    _, t_index = timed(lambda: sparse.prepare(ws, None))
    pool = {"all": sparse.doc_ids}
    _, t_weights = timed(lambda: sparse.rank(questions[:1], pool, 10))  # builds the pool's weights once
    sample = questions[:n_ref_queries]
    ranked, t_sparse = timed(lambda: sparse.rank(questions, pool, 10))
    ref = retrievers.get("bm25-reference")
    _, t_ref_index = timed(lambda: ref.prepare(ws, None))
    _, t_ref_build = timed(lambda: ref.rank(sample[:1], pool, 10))
    ref_ranked, t_ref = timed(lambda: ref.rank(sample, pool, 10))
    same = [bool(np.array_equal(ranked["all"].ids[i], ref_ranked["all"].ids[i])) for i in range(len(sample))]
    per_q_sparse = t_sparse / len(questions)
    per_q_ref = t_ref / len(sample)
    return {"documents": n_docs, "queries_sparse": len(questions), "queries_reference": len(sample),
            "sparse_tokenize_index_s": round(t_index, 2), "sparse_pool_weights_s": round(t_weights, 2),
            "sparse_ms_per_query": round(per_q_sparse * 1e3, 3),
            "reference_index_s": round(t_ref_index + t_ref_build, 2),
            "reference_ms_per_query": round(per_q_ref * 1e3, 1), "speedup": round(per_q_ref / per_q_sparse, 1),
            "identical_top10": f"{sum(same)}/{len(same)}"}


def bench_full(root: Path, specs: list[str]) -> dict:
    ws = shared_workspace(root)
    lad = ladder.load(ws)
    qs = bank.queries(ws).set_index("qid")
    out = {"documents": int(lad.rung("full").n_documents), "tokens": int(lad.rung("full").n_tokens),
           "rungs": lad.names, "queries_kept": len(lad.rung("full").qids), "runs": []}
    for spec in specs:
        name, t = timed(lambda: evaluate.evaluate(ws, spec, k=100))
        res = runs.load_results(ws, runs=[name], rungs=["full"])
        gold = qs.loc[res["qid"], "ref_ids"]
        sr10 = np.mean([len(set(ids[:10]) & set(g)) / len(g) for ids, g in zip(res["doc_ids"], gold)])
        out["runs"].append({"spec": spec, "seconds": round(t, 1), "results": int(len(runs.load_results(
            ws, runs=[name]))), "SR@10_full": round(float(sr10), 4)})
    return out


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("section", choices=["embed", "ladder", "bm25", "full"])
    p.add_argument("--keep", type=Path, default=None, help="reuse/keep workspaces in this folder")
    p.add_argument("--docs", type=int, default=None)
    p.add_argument("--ref-queries", type=int, default=20)
    p.add_argument("--spec", default="dense:minilm-l6")
    args = p.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="bench-retrieval-"))
    root.mkdir(parents=True, exist_ok=True)
    if args.section == "embed":
        out = bench_embed(root, args.docs or 2000)
    elif args.section == "ladder":
        out = bench_ladder(root, args.spec)
    elif args.section == "bm25":
        out = bench_bm25(root, args.docs or 100_000, args.ref_queries)
    else:
        out = bench_full(root, list(retrievers.OFFLINE))
    print(json.dumps({args.section: out}, indent=1))


if __name__ == "__main__":
    main()
