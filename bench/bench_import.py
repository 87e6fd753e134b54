"""Import throughput: the four shared datasets, and a synthetic BEIR corpus of N documents.

Measures wall time of read+validate (the importer alone) and of the whole import (plus token counting and the
LanceDB write), and peak resident memory. Run from the repository root:

    python3 bench/bench_import.py [--docs 100000]

Not part of the test suite; results go into bench/RESULTS.md by hand with the machine description.
"""
from __future__ import annotations

import argparse
import json
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from emb_s_core import bank  # noqa: E402
from emb_s_core.sources import read_bank  # noqa: E402

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
DATASETS = [("hotpotqa", "hotpotqa-dev-distractor-500"), ("musique", "musique-ans-200"),
            ("2wiki", "2wikimultihopqa-200"), ("locomo", "locomo10")]


def synthetic_beir(folder: Path, n_docs: int, seed: int = 0) -> Path:
    """A BEIR folder with n_docs ~60-word documents, n_docs/10 queries, 1-3 gold each."""
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(20000)]
    folder.mkdir(parents=True)
    with open(folder / "corpus.jsonl", "w") as fh:
        for i in range(n_docs):
            fh.write(json.dumps({"_id": f"d{i}", "title": f"Title {i}", "text": " ".join(rng.choices(words, k=60))}))
            fh.write("\n")
    n_q = n_docs // 10
    with open(folder / "queries.jsonl", "w") as fh:
        for i in range(n_q):
            fh.write(json.dumps({"_id": f"q{i}", "text": " ".join(rng.choices(words, k=8))}) + "\n")
    (folder / "qrels").mkdir()
    with open(folder / "qrels" / "test.tsv", "w") as fh:
        fh.write("query-id\tcorpus-id\tscore\n")
        for i in range(n_q):
            for d in rng.sample(range(n_docs), rng.randint(1, 3)):
                fh.write(f"q{i}\td{d}\t1\n")
    return folder


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=100_000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        ws = tmp / "ws"
        rows = []
        if SHARED.is_dir():
            for fmt, folder in DATASETS:
                b, t_read = timed(lambda: read_bank(fmt, SHARED / folder))
                rep, t_all = timed(lambda: bank.import_path(ws, fmt, SHARED / folder))
                rows.append((fmt, rep.n_documents, rep.n_queries, t_read, t_all))
        beir, t_gen = timed(lambda: synthetic_beir(tmp / "beir", args.docs))
        size = (beir / "corpus.jsonl").stat().st_size / 2**20
        b, t_read = timed(lambda: read_bank("beir", beir))
        rep, t_all = timed(lambda: bank.import_path(tmp / "ws2", "beir", beir))
        rows.append((f"beir synthetic ({size:.0f} MiB corpus)", rep.n_documents, rep.n_queries, t_read, t_all))
    print("| source | documents | queries | read+validate s | full import s | docs/s (full) |")
    print("|---|---|---|---|---|---|")
    for name, nd, nq, tr, ta in rows:
        print(f"| {name} | {nd:,} | {nq:,} | {tr:.2f} | {ta:.2f} | {nd / ta:,.0f} |")
    print(f"\npeak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
