"""Paper scale on one machine: the demo bank at N tokens through import, ladder and a BM25 evaluation, each stage in
its own process so its time and peak RSS are its own.

Stages (one workspace under --root, removed at the end unless --keep):
  import  generate the demo bank (``synthetic.generate``) and store it (``bank.add_bank``), as `emb-s demo` does
  ladder  ``ladder.build`` (all rungs, membership, composition)
  bm25    ``evaluate.evaluate(ws, "bm25", k=100)`` on every rung

    nice -n 19 python3 bench/bench_scale.py 10M 50M [--root /tmp] [--keep]

Prints one JSON line per (size, stage) and a Markdown table with the per-token slope between the first and the last
size (log-log: 1.0 means cost per token is flat).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def peak_rss_mib() -> int:
    """This process's resident high-water mark (VmHWM: unlike ru_maxrss it does not inherit the parent's at fork)."""
    line = next(x for x in Path("/proc/self/status").read_text().splitlines() if x.startswith("VmHWM:"))
    return round(int(line.split()[1]) / 1024)


STAGES = ("import", "ladder", "bm25")


def run_stage(stage: str, ws_path: Path, tokens: int) -> dict:
    import hashlib

    from emb_s_core import bank, evaluate, ladder
    from emb_s_core.sources import synthetic
    from emb_s_core.store import Workspace

    t0 = time.perf_counter()
    extra: dict = {}
    if stage == "import":
        ws = Workspace(ws_path, create=True)
        identity = f"demo:tokens={tokens}:seed=0"
        generated = synthetic.generate(tokens, 0)
        extra["generate_s"] = round(time.perf_counter() - t0, 1)
        extra["documents"] = len(generated.documents)
        extra["queries"] = len(generated.queries)
        extra["tokens"] = sum(d.n_tokens or 0 for d in generated.documents)
        bank.add_bank(ws, generated, fmt="demo", path=identity, sha256=hashlib.sha256(identity.encode()).hexdigest())
    elif stage == "ladder":
        lad = ladder.build(Workspace(ws_path))
        extra["rungs"] = len(lad.rungs)
    else:
        ws = Workspace(ws_path)
        name = evaluate.evaluate(ws, "bm25", k=100)
        from emb_s_core import runs

        ws.refresh()
        extra["results"] = len(runs.finished(ws, name))
    return {"stage": stage, "seconds": round(time.perf_counter() - t0, 1),
            "peak_rss_mib": peak_rss_mib(), **extra}


def slope(rows: list[dict], stage: str, key: str) -> str:
    pts = [(r["tokens_asked"], r[key]) for r in rows if r["stage"] == stage and r[key]]
    if len(pts) < 2 or pts[0][0] == pts[-1][0]:
        return "-"
    (x0, y0), (x1, y1) = pts[0], pts[-1]
    return f"{math.log(y1 / y0) / math.log(x1 / x0):.2f}"


def main() -> None:
    from emb_s_core import tokens as tok

    ap = argparse.ArgumentParser()
    ap.add_argument("sizes", nargs="*", default=["10M"])
    ap.add_argument("--root", default="/tmp")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--stage", choices=STAGES, help=argparse.SUPPRESS)
    ap.add_argument("--ws", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.stage:
        print(json.dumps(run_stage(args.stage, Path(args.ws), tok.parse_size(args.sizes[0]))))
        return
    rows = []
    for size in args.sizes:
        ws = Path(args.root) / f"bench-scale-{size}-{os.getpid()}"
        try:
            for stage in STAGES:
                out = subprocess.run([sys.executable, __file__, size, "--stage", stage, "--ws", str(ws)],
                                     check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1]
                row = {"size": size, "tokens_asked": tok.parse_size(size), "load": os.getloadavg()[0],
                       **json.loads(out)}
                print(json.dumps(row), flush=True)
                rows.append(row)
        finally:
            if not args.keep:
                shutil.rmtree(ws, ignore_errors=True)
    print("\n| tokens | stage | seconds | peak RSS MiB | load (1 min) |")
    print("|---|---|---:|---:|---:|")
    for r in rows:
        print(f"| {r['size']} | {r['stage']} | {r['seconds']} | {r['peak_rss_mib']:,} | {r['load']:.1f} |")
    if len(args.sizes) > 1:
        print(f"\nslope of log(time) / log(tokens), {args.sizes[0]} → {args.sizes[-1]}: "
              + ", ".join(f"{s} {slope(rows, s, 'seconds')}" for s in STAGES))
        print("slope of log(peak RSS) / log(tokens): "
              + ", ".join(f"{s} {slope(rows, s, 'peak_rss_mib')}" for s in STAGES))


if __name__ == "__main__":
    main()
