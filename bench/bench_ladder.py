"""Time the demo bank's way into a ladder at a given size: generate, store, count tokens, build the ladder.

Usage: python3 bench/bench_ladder.py [10M] [--seed 0]

Token counting is measured on its own (tiktoken over every rendered document, as an import without counts does) so
its share of "count + ladder build" can be reported; the stored bank reuses the generator's counts (counted once).
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from emb_s_core import bank, ladder, tokens  # noqa: E402
from emb_s_core.schema import render_document  # noqa: E402
from emb_s_core.sources import synthetic  # noqa: E402
from emb_s_core.store import Workspace  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("size", nargs="?", default="10M")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    size = tokens.parse_size(args.size)
    t0 = time.perf_counter()
    generated = synthetic.generate(size, args.seed)
    t_gen = time.perf_counter() - t0
    texts = [render_document(d.title, d.text) for d in generated.documents]
    t0 = time.perf_counter()
    counts = tokens.count_batch(texts)
    t_count = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as tmp:
        ws = Workspace(Path(tmp) / "ws", create=True)
        t0 = time.perf_counter()
        bank.add_bank(ws, generated, fmt="demo", path=f"bench:{size}", sha256=f"bench-{size}-{args.seed}")
        t_store = time.perf_counter() - t0
        t0 = time.perf_counter()
        lad = ladder.build(ws)
        t_ladder = time.perf_counter() - t0
    print(f"bank: {sum(counts):,} tokens, {len(texts):,} documents, {len(generated.queries):,} queries")
    print(f"rungs: {len(lad.rungs)} ({', '.join(r.name for r in lad.rungs if r.kind != 'domain' and r.kind != 'mixed')})")
    print(f"generate {t_gen:.1f} s | token counting {t_count:.1f} s | store {t_store:.1f} s | ladder build {t_ladder:.1f} s")
    print(f"token counting share of (counting + ladder build): {t_count / (t_count + t_ladder):.0%}")


if __name__ == "__main__":
    main()
