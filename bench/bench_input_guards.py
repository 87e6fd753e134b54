"""Benchmark (not a test): what the issue-23 input guards cost on the import path.

1. Records pickle (a release's ``data.pkl`` shape: one dict per query) loaded by the C unpickler (``pickle.load``, no
   guard) and by the project's guarded pure-Python unpickler (``plain_pickle.load_plain_pickle``: restricted globals,
   each dict key and set member checked before it is hashed, then the expansion count).
2. The lone-surrogate check ``validate.check_text`` over document texts (ASCII and non-ASCII).
3. The hash bomb (nested pairs shared through the memo) refused by the guard: seconds to the refusal, against the C
   unpickler's time at small depths (doubling with each level).

Run from the repository root:  nice python3 bench/bench_input_guards.py [--queries 20000]
"""
from __future__ import annotations

import argparse
import os
import pickle
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_tokens import best  # noqa: E402 - min of repeated timings, shared by the benches

from emb_s_core.errors import EmbSError  # noqa: E402
from emb_s_core.sources import validate  # noqa: E402
from emb_s_core.sources.plain_pickle import load_plain_pickle  # noqa: E402


def _best(fn) -> float:
    return best(fn, 3)


def bomb(depth: int) -> bytes:
    """{t_depth: 1} where t_0 = (1, 2) and t_i = (t_(i-1), t_(i-1)), each level memoized: ~7 bytes per level."""
    blob = bytearray(b"\x80\x04}K\x01K\x02\x86\x940")
    for i in range(depth):
        blob += b"h" + bytes([i]) + b"h" + bytes([i]) + b"\x86\x940"
    return bytes(blob + b"h" + bytes([depth]) + b"K\x01s.")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--queries", type=int, default=20000)
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} cores")
    records = [{"query": f"What did entity {i} found in the year of its charter?", "answer": f"answer {i}",
                "reference_list": [f"reference text {i} {j} " * 20 for j in range(3)], "domain": "law",
                "type": "fact"} for i in range(args.queries)]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "data.pkl"
        path.write_bytes(pickle.dumps(records, protocol=4))
        size = path.stat().st_size
        c = _best(lambda: pickle.loads(path.read_bytes()))
        guarded = _best(lambda: load_plain_pickle(path))
        print(f"records pickle {args.queries:,} queries, {size / 2**20:.1f} MiB: C unpickler {c:.2f} s, "
              f"guarded {guarded:.2f} s ({guarded / c:.1f}x)")
        for depth in (40, 200):
            path.write_bytes(bomb(depth))
            start = time.perf_counter()
            try:
                load_plain_pickle(path)
            except EmbSError:
                pass
            print(f"hash bomb depth {depth} ({path.stat().st_size} bytes): guarded refusal in "
                  f"{time.perf_counter() - start:.3f} s")
        for depth in (18, 20, 22):
            path.write_bytes(bomb(depth))
            out = subprocess.run([sys.executable, "-c", "import pickle,sys,time; t=time.perf_counter(); "
                                  f"pickle.loads(open({str(path)!r},'rb').read()); print(time.perf_counter()-t)"],
                                 capture_output=True, text=True, timeout=300)
            print(f"hash bomb depth {depth}: C unpickler {float(out.stdout):.2f} s (doubles per level: depth 40 "
                  f"≈ {float(out.stdout) * 2 ** (40 - depth) / 86400:,.0f} days)")
    ascii_docs = ["The charter was signed in the spring of that year by the council. " * 30] * 20000
    other_docs = ["Le conseil a signé la charte au printemps de cette année-là. " * 30] * 20000
    for name, docs in (("ASCII", ascii_docs), ("non-ASCII", other_docs)):
        mb = sum(map(len, docs)) / 1e6
        t = _best(lambda docs=docs: [validate.check_text(d, "f", "text") for d in docs])
        print(f"surrogate check, {name} texts: {mb:.0f} M characters in {t:.3f} s ({t / mb * 1000:.1f} ms per M)")


if __name__ == "__main__":
    main()
