"""Access vs use on the adversarial demo bank with the offline local model, end to end through the CLI.

    python3 bench/bench_use_demo.py [WORKDIR] [--tokens 64K] [--base 4K]

Imports a small demo bank, builds a ladder whose base rungs fit the local model's 8K window, then: localization
on the base rungs, retrieve-then-generate QA on the localization's top-5, GLOBAL QA, reference-match judging,
and the access-vs-use table for both QA settings. Prints timings and the quadrant counts (bench/RESULTS.md).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from emb_s_core.cli import main as cli  # noqa: E402


def step(label: str, argv: list[str]) -> float:
    start = time.perf_counter()
    rc = cli(argv)
    took = time.perf_counter() - start
    print(f"## {label}: rc={rc}, {took:.0f} s", flush=True)
    if rc:
        raise SystemExit(rc)
    return took


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("workdir", nargs="?", default=None)
    p.add_argument("--tokens", default="64K")
    p.add_argument("--base", default="4K")
    args = p.parse_args()
    root = Path(args.workdir or tempfile.mkdtemp(prefix="use-demo-"))
    root.mkdir(parents=True, exist_ok=True)
    w = str(root / "ws")
    (root / "demo.json").write_text(json.dumps({"tokens": args.tokens, "seed": 0}))
    if not (root / "ws" / "workspace.json").exists():
        step("import demo bank", ["import", "--format", "demo", str(root / "demo.json"), "--workspace", w])
        step("ladder", ["ladder", "build", "-w", w, "--base", args.base, "--domain-sizes", args.base,
                        "--reserve", "512"])
    from emb_s_core import ladder
    from emb_s_core.store import Workspace

    base = [r.name for r in ladder.load(Workspace(w)).rungs if r.kind == "domain"]
    rungs = ",".join(base)
    times = {}
    times["localize"] = step("localize", ["localize", "-w", w, "--rungs", rungs, "-k", "5", "--max-tokens", "32"])
    loc = "localize:local/smollm2-135m@5"
    times["qa rag"] = step("qa rag", ["qa", "-w", w, "--context-run", loc, "-k", "5", "--rungs", rungs])
    times["qa global"] = step("qa global", ["qa", "-w", w, "--setting", "global", "--rungs", rungs])
    for qa_run in (f"qa:local/smollm2-135m:rag[{loc}]@5", "qa:local/smollm2-135m:global"):
        step(f"judge {qa_run}", ["judge", "-w", w, "--qa-run", qa_run])
        for threshold in ("1.0", "0.5"):
            print(f"### diagnose {qa_run}, access SR@5 >= {threshold}, score >= 4")
            step("diagnose", ["diagnose", "-w", w, "--access-run", loc, "--qa-run", qa_run, "-k", "5",
                              "--access-threshold", threshold, "--by", "multi_source"])
    print(json.dumps({k: round(v) for k, v in times.items()}))


if __name__ == "__main__":
    main()
