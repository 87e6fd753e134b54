"""CLI start-up: wall time of short ``emb-s`` commands (a fresh interpreter each), on a small real workspace.

    python3 bench/bench_startup.py                       # this checkout
    python3 bench/bench_startup.py --other DIR --label-other before   # also time another checkout, same run

Prints a Markdown table for bench/RESULTS.md (median of ``--repeats`` runs per command, machine and load stated).
Each command runs as ``python3 -m emb_s_core.cli ...`` with PYTHONPATH set to the checkout being timed, so the two
trees are measured alternately under the same load.
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

COMMANDS = [["--help"], ["info", "-w", "{ws}"], ["runs", "list", "-w", "{ws}"], ["ladder", "show", "-w", "{ws}"],
            ["report", "-w", "{ws}", "--n-boot", "0"]]
IMPORTS = {"import lancedb": "import lancedb", "import lance": "import lance"}


def timed(argv: list[str], tree: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(tree), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    t0 = time.perf_counter()
    subprocess.run([sys.executable, *argv], env=env, check=True, stdout=subprocess.DEVNULL, cwd=tree)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--other", type=Path, default=None, help="another checkout to time in the same run")
    ap.add_argument("--label-other", default="other")
    args = ap.parse_args()
    from testkit.dashboard_factory import build_workspace

    trees = [("this checkout", REPO)] + ([(args.label_other, args.other.resolve())] if args.other else [])
    with tempfile.TemporaryDirectory() as tmp:
        ws = build_workspace(Path(tmp), n_queries=30, n_docs=300)
        load = os.getloadavg()[0]
        rows = []
        for cmd in COMMANDS:
            argv = ["-m", "emb_s_core.cli", *[a.format(ws=ws) for a in cmd]]
            times = {label: [] for label, _ in trees}
            for _ in range(args.repeats):
                for label, tree in trees:  # alternate, so both see the same load
                    times[label].append(timed(argv, tree))
            rows.append(("emb-s " + " ".join(cmd).replace("{ws}", "WS"), times))
        for name, code in IMPORTS.items():
            rows.append((f"python3 -c '{name}'", {trees[0][0]: [timed(["-c", code], REPO)
                                                                for _ in range(args.repeats)]}))
        load_end = os.getloadavg()[0]
    labels = [label for label, _ in trees]
    print(f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}; load average {load:.1f} at start, {load_end:.1f} at end; median of "
          f"{args.repeats} runs, fresh interpreter each; workspace: 300 documents, 12 rungs, 5 runs.\n")
    print("| command | " + " | ".join(f"{label} (s)" for label in labels) + (" | ratio |" if len(labels) > 1 else ""))
    print("|---|" + "---|" * len(labels) + ("---|" if len(labels) > 1 else ""))
    for name, times in rows:
        meds = [statistics.median(times[label]) if label in times else None for label in labels]
        cells = " | ".join(f"{m:.2f}" if m is not None else "" for m in meds)
        ratio = (f" | {meds[1] / meds[0]:.1f}×" if None not in meds else " | ") if len(labels) > 1 else ""
        print(f"| `{name}` | {cells}{ratio} |")


if __name__ == "__main__":
    main()
