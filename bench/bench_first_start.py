"""The first start of a fresh clone, timed without any browser visit: when do the demo's bm25 and dense results exist?

    python3 bench/bench_first_start.py [--timeout 900] [--warm-model-cache]

Clones this repository's committed HEAD into a temporary folder (so ``data/`` is empty, as on a fresh clone), then
starts what ``scripts/run.sh`` execs after installing: ``python -m ui.serve`` (this Python, whose environment has the
install), headless, and sends it no request at all. From outside, it polls the clone's ``data/demo`` workspace every
second through the project's reader API and records when each demo run first has stored results and when it is
complete on the built ladder. The model cache (the static model's distilled table) is empty unless
``--warm-model-cache``, so the one-time distillation is inside the measurement. Prints JSON with the load average at
start and end. A benchmark, not a test.
"""
from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from emb_s_core import demo, ladder, runs  # noqa: E402
from emb_s_core.store import Workspace  # noqa: E402


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _state(path: Path) -> dict[str, tuple[int, int]]:
    """run → (stored results, (rung, query) pairs of the built ladder); empty while nothing is readable yet."""
    if not (path / "workspace.json").is_file():
        return {}
    try:
        ws = Workspace(path)
        if not ladder.exists(ws):
            return {}
        pairs = sum(len(r.qids) for r in ladder.load(ws).rungs)
        names = set(runs.list_runs(ws)["run"])
        out = {}
        for name in names:
            res = runs.load_results(ws, runs=[name])
            built = res[~res["rung"].str.startswith("benign")] if "rung" in res else res
            out[name] = (len(built), pairs)
        return out
    except Exception:  # noqa: BLE001 - a table being created: look again
        return {}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--timeout", type=float, default=900)
    p.add_argument("--warm-model-cache", action="store_true")
    args = p.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-first-start-"))
    clone = root / "clone"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
    env = dict(os.environ, HF_HUB_OFFLINE="1", LITELLM_LOCAL_MODEL_COST_MAP="True")
    env.pop("EMB_S_DATA", None)
    if not args.warm_model_cache:
        env["EMB_S_MODEL_CACHE"] = str(root / "model-cache")
    load_start = os.getloadavg()
    t0 = time.time()
    log = open(root / "server.log", "w")
    proc = subprocess.Popen([sys.executable, "-m", "ui.serve", "--server.port", str(_port()), "--server.headless",
                             "true", "--browser.gatherUsageStats", "false"], cwd=clone, env=env, stdout=log,
                            stderr=subprocess.STDOUT)
    first: dict[str, float] = {}
    complete: dict[str, float] = {}
    try:
        while time.time() - t0 < args.timeout and proc.poll() is None:
            for name, (n, pairs) in _state(clone / "data" / "demo").items():
                if n and name not in first:
                    first[name] = round(time.time() - t0, 1)
                    print(f"{first[name]:7.1f} s  first results of {name}", file=sys.stderr, flush=True)
                if n >= pairs and name not in complete:
                    complete[name] = round(time.time() - t0, 1)
                    print(f"{complete[name]:7.1f} s  {name} complete on the built ladder", file=sys.stderr, flush=True)
            if set(demo.DEMO_RETRIEVERS) <= set(complete):
                break
            time.sleep(1.0)
    finally:
        proc.terminate()
        proc.wait(30)
        log.close()
    print(json.dumps({"retrievers": list(demo.DEMO_RETRIEVERS), "model_cache": "warm" if args.warm_model_cache
                      else "empty", "first_results_s": first, "complete_s": complete,
                      "load_start": [round(x, 1) for x in load_start],
                      "load_end": [round(x, 1) for x in os.getloadavg()], "cpus": os.cpu_count(),
                      "server_log_tail": (root / "server.log").read_text()[-600:]}, indent=1))


if __name__ == "__main__":
    main()
