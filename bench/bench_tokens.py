"""Token counting: the project's ``tokens.count_batch`` (one thread per core, contiguous slices) against tiktoken's
own ``encode_ordinary_batch`` (a future per text) and a plain loop, on the demo bank's rendered documents.

Why it matters: every import counts every token (342M at paper scale) and the demo generator counts as it goes.

    nice -n 19 python3 bench/bench_tokens.py [--tokens 16M] [--repeats 3]

Prints the best of ``--repeats`` per method and its speed-up over the plain loop, measured in the same process.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def best(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    from emb_s_core import tokens
    from emb_s_core.schema import render_document
    from emb_s_core.sources import synthetic

    ap = argparse.ArgumentParser()
    ap.add_argument("--tokens", default="16M")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    bank = synthetic.generate(tokens.parse_size(args.tokens), 0)
    texts = [render_document(d.title, d.text) for d in bank.documents]
    enc = tokens.encoding()
    expected = sum(d.n_tokens for d in bank.documents)
    methods = {
        "plain loop (encode_ordinary per text)": lambda: [len(enc.encode_ordinary(t)) for t in texts],
        "tiktoken encode_ordinary_batch, 2 threads": lambda: [len(x) for x in enc.encode_ordinary_batch(texts,
                                                                                                      num_threads=2)],
        "tiktoken encode_ordinary_batch, 4 threads": lambda: [len(x) for x in enc.encode_ordinary_batch(texts,
                                                                                                      num_threads=4)],
        f"tokens.count_batch ({os.cpu_count()} threads, slices)": lambda: tokens.count_batch(texts),
    }
    for fn in methods.values():
        assert sum(fn()) == expected  # every method counts the same tokens
    print(f"{len(texts):,} documents, {expected:,} tokens, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}\n")
    print("| method | seconds (best of %d) | M tokens/s | vs plain loop |" % args.repeats)
    print("|---|---:|---:|---:|")
    base = None
    for name, fn in methods.items():
        t = best(fn, args.repeats)
        base = base or t
        print(f"| {name} | {t:.2f} | {expected / t / 1e6:.1f} | {base / t:.2f}× |")


if __name__ == "__main__":
    main()
