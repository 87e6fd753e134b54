"""Benchmark (not a test): a synthetic EMB-S release in the published layout, imported, laddered and evaluated.

1. ``generate``: the demo generator's adversarial bank of SIZE tokens (default 50M) written as a release root:
   ``data/<scale>/unique_reference.pkl`` (nested corpora: a seeded order with the chosen queries' gold and hard
   negatives first, each scale the longest prefix within its size) + ``data/<scale>/data.pkl`` (the QAR records), and
   ``qar/test.jsonl`` (``--queries`` records, references as text, plus an unknown key).
2. ``import``: ``emb-s import --format emb-s-release ROOT`` (dedup of every scale, token counting, one transaction).
3. ``official``: ``emb-s ladder build --official``.
4. ``eval``: ``emb-s eval -r bm25 --ladder official --k 100``.
Each stage runs in its own process, so its peak RSS (ru_maxrss of that child) is its own.

Run from the repository root:  nice -n 19 python3 bench/bench_release.py 10M 30M 100M 326M [--queries 1000] [--dir D]
(one release per size under D/<size>/, generated once and kept; the workspace is rebuilt each run). Prints a table and
the slope of log(cost) / log(tokens) between the first and the last size (1.0: cost per token is flat).
"""
from __future__ import annotations

import argparse
import json
import os
import pickle
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def scales_for(total: int) -> list[int]:
    from emb_s_core import tokens

    sizes = [tokens.parse_size(s) for s in ("1M", "10M", "30M", "100M", "326M")]
    return [s for s in sizes if s < 0.99 * total] + [total]  # the bank itself is the last scale, once


def generate(root: Path, total_tokens: int, n_queries: int, seed: int = 0) -> dict:
    import numpy as np

    from emb_s_core import tokens
    from emb_s_core.sources import synthetic

    t0 = time.perf_counter()
    bank = synthetic.generate(total_tokens, seed)
    t_gen = time.perf_counter() - t0
    rng = np.random.default_rng(seed)
    chosen = [bank.queries[i] for i in sorted(rng.choice(len(bank.queries), min(n_queries, len(bank.queries)),
                                                          replace=False))]
    first = list(dict.fromkeys(d for q in chosen for d in (*q.ref_ids, *q.hard_negative_ids)))
    rest = np.setdiff1d(np.arange(len(bank.documents)), first)
    order = np.concatenate([np.asarray(first, np.int64), rng.permutation(rest)])
    cum = np.cumsum([bank.documents[i].n_tokens for i in order])
    texts = [bank.documents[i].text if not bank.documents[i].title else
             f"{bank.documents[i].title}\n{bank.documents[i].text}" for i in order]
    records = [{"query": q.text, "answer": q.answer, "reference_list": [texts_of(bank, d) for d in q.ref_ids],
                "category": q.domain, "task": q.task_type, "qid": q.qid} for q in chosen]
    scales = []
    for size in scales_for(int(cum[-1])):
        n = int(np.searchsorted(cum, size, side="right"))
        label = tokens.format_size(size) if size % (1 << 20) == 0 else f"{max(1, round(size / (1 << 20)))}M"
        folder = root / "data" / label
        folder.mkdir(parents=True, exist_ok=True)
        with open(folder / "unique_reference.pkl", "wb") as fh:
            pickle.dump(texts[:n], fh, protocol=pickle.HIGHEST_PROTOCOL)
        with open(folder / "data.pkl", "wb") as fh:
            pickle.dump(records, fh, protocol=pickle.HIGHEST_PROTOCOL)
        scales.append({"scale": label, "documents": n, "tokens": int(cum[n - 1])})
    (root / "qar").mkdir(parents=True, exist_ok=True)
    with open(root / "qar" / "test.jsonl", "w", encoding="utf-8") as fh:
        for r in records:
            fh.write(json.dumps(r) + "\n")
    return {"generate_s": round(t_gen, 1), "bank_tokens": int(cum[-1]), "documents": len(order),
            "queries": len(records), "scales": scales,
            "release_bytes": sum(p.stat().st_size for p in root.rglob("*") if p.is_file())}


def texts_of(bank, doc_id: int) -> str:
    d = bank.documents[doc_id]
    return d.text if not d.title else f"{d.title}\n{d.text}"


_WRAP = ("import resource, sys\n"
         "from emb_s_core.cli import main\n"
         "rc = main(sys.argv[1:])\n"
         "sys.stderr.write('\\nMAXRSS_KB %d\\n' % resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\n"
         "sys.exit(rc)\n")


def stage(argv: list[str]) -> dict:
    """Run ``emb-s ARGV`` in a child process: wall time and that child's own peak RSS."""
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", _WRAP, *argv], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    seconds = time.perf_counter() - t0
    if proc.returncode:
        raise SystemExit(f"emb-s {' '.join(argv)} failed:\n{proc.stderr[-2000:]}")
    peak_kb = int(proc.stderr.rsplit("MAXRSS_KB", 1)[1].split()[0])
    return {"seconds": round(seconds, 1), "peak_rss_mb": round(peak_kb / 1024),
            "stdout_tail": proc.stdout.strip().splitlines()[-12:]}


def main() -> None:
    from bench_scale import slope

    from emb_s_core import tokens

    ap = argparse.ArgumentParser()
    ap.add_argument("sizes", nargs="*", default=["50M"], help="bank sizes, e.g. 10M 30M 100M 326M")
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--dir", default="/tmp/emb-s-release-bench")
    ap.add_argument("--generate-only", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.generate_only:
        out = generate(Path(args.dir) / "release", tokens.parse_size(args.sizes[0]), args.queries)
        out["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
        print(json.dumps(out))
        return
    rows: list[dict] = []
    for size in args.sizes:
        base = Path(args.dir) / size
        root, ws = base / "release", base / "ws"
        results: dict = {"size": size, "load_before": os.getloadavg()}
        if not (root / "qar" / "test.jsonl").exists():  # generating is not part of the import
            t0 = time.perf_counter()
            proc = subprocess.run([sys.executable, __file__, size, "--generate-only", "--queries",
                                   str(args.queries), "--dir", str(base)], capture_output=True, text=True)
            if proc.returncode:
                raise SystemExit(proc.stderr[-2000:])
            results["generate"] = dict(json.loads(proc.stdout.strip().splitlines()[-1]),
                                       generate_and_write_s=round(time.perf_counter() - t0, 1))
        if (ws / "workspace.json").exists():
            shutil.rmtree(ws)
        for name, argv in (("import", ["import", "--format", "emb-s-release", str(root), "--workspace", str(ws)]),
                           ("official", ["ladder", "build", "--official", "--workspace", str(ws)]),
                           ("eval_bm25", ["eval", "-r", "bm25", "--ladder", "official", "--k", "100",
                                          "--workspace", str(ws)])):
            results[name] = stage(argv)
            rows.append({"size": size, "tokens_asked": tokens.parse_size(size), "stage": name,
                         "seconds": results[name]["seconds"], "peak_rss_mib": results[name]["peak_rss_mb"],
                         "load": os.getloadavg()[0]})
        results["load_after"] = os.getloadavg()
        print(json.dumps(results, indent=1), flush=True)
    print("\n| tokens | stage | seconds | peak RSS MiB | load (1 min) |")
    print("|---|---|---:|---:|---:|")
    for r in rows:
        print(f"| {r['size']} | {r['stage']} | {r['seconds']} | {r['peak_rss_mib']:,} | {r['load']:.1f} |")
    if len(args.sizes) > 1:
        stages = ("import", "official", "eval_bm25")
        print(f"\nslope of log(time) / log(tokens), {args.sizes[0]} → {args.sizes[-1]}: "
              + ", ".join(f"{s} {slope(rows, s, 'seconds')}" for s in stages))
        print("slope of log(peak RSS) / log(tokens): " + ", ".join(f"{s} {slope(rows, s, 'peak_rss_mib')}"
                                                                   for s in stages))


if __name__ == "__main__":
    main()
