"""The benign twin on the demo bank and the shared datasets (not a test; results go into bench/RESULTS.md).

    nice -n 19 python3 bench/bench_twin.py fill [--keep DIR]           # shared twin vs per-query pools: how full
    nice -n 19 python3 bench/bench_twin.py gap [--keep DIR] [--dense]  # SR@10 built vs benign, the illusion gap

``fill``: per rung, the share of the built rung's tokens the shared twin holds, against what a per-query benign pool
could hold (documents irrelevant to that one query: median and minimum over the rung's queries). ``gap``: evaluates
bm25 (and with --dense dense:minilm-l6) with ``--ladder both`` and prints the illusion gap per rung.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import pandas as pd  # noqa: E402

from emb_s_core import bank, demo, ladder, twin  # noqa: E402
from emb_s_core.store import Workspace  # noqa: E402

SHARED = Path(os.environ.get("EMB_S_SHARED_DATA", REPO.parent / "shared" / "data"))
DATASETS = [("hotpotqa", "hotpotqa-dev-distractor-500"), ("musique", "musique-ans-200"),
            ("2wiki", "2wikimultihopqa-200"), ("locomo", "locomo10")]


def workspaces(root: Path) -> list[tuple[str, Workspace]]:
    """The default demo bank and each shared dataset in its own workspace, each with the default ladder."""
    out = []
    path = root / "demo"
    if not (path / "workspace.json").exists():
        demo.build(path, retrievers=())
    out.append(("demo (1.25M tokens, seed 0)", Workspace(path)))
    for fmt, folder in DATASETS:
        if not (SHARED / folder).is_dir():
            continue
        path = root / fmt
        if not (path / "workspace.json").exists():
            bank.import_path(path, fmt, SHARED / folder)
        ws = Workspace(path)
        if not ladder.exists(ws):
            ladder.build(ws)
        out.append((fmt, ws))
    return out


def fill(ws: Workspace, top_n: int) -> pd.DataFrame:
    """Per rung: which pools the twin uses, its fill (tokens against the built rung's: the smallest query's pool and
    the mean), residual near misses (0 by construction) and the stored delta's size against full memberships."""
    built = ladder.load(ws)
    t = time.perf_counter()
    lad = twin.build(ws, top_n=top_n)
    seconds = time.perf_counter() - t
    deltas = twin.deltas(ws)
    rows = []
    for b, tw in zip(built.rungs, lad.rungs):
        c = tw.composition
        per = deltas.get(tw.name, {})
        rows.append({"rung": b.name, "built tokens": b.n_tokens, "pools": c["pools"], "fill min": c["fill"],
                     "fill mean": c["fill_mean"], "residual near": c["near_present"],
                     "removed / query": round(sum(len(d[0]) for d in per.values()) / max(len(per), 1), 1),
                     "added / query": round(sum(len(d[1]) for d in per.values()) / max(len(per), 1), 1)})
    out = pd.DataFrame(rows)
    out.attrs["seconds"] = seconds
    out.attrs["near"] = lad.options["near_documents"]
    out.attrs["references"] = ", ".join(lad.options["references"])
    return out


def gap(ws: Workspace, specs: list[str]) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """Evaluate ``specs`` on the built ladder and its twin (the twin built after the runs, so dense runs' cached
    vectors are references), then the SR@10 gap per rung and effective scale on both ladders."""
    from emb_s_core import evaluate
    from emb_s_core.analysis import illusion, views

    times = {}
    k = min(100, min(r.n_documents for r in ladder.load(ws).rungs))
    for spec in specs:
        t = time.perf_counter()
        evaluate.evaluate(ws, spec, name=spec, k=k)
        times[f"{spec} built"] = time.perf_counter() - t
    before = ladder.fingerprint(ws, ladder.BENIGN)
    twin.build(ws)  # after the runs: every dense run's cached vectors are a reference too
    if ladder.fingerprint(ws, ladder.BENIGN) != before:  # a new twin: the old twin results are another ladder's
        from emb_s_core import runs

        for spec in specs:
            if runs.get_run(ws, spec) is not None:
                runs.delete_run(ws, spec)
            evaluate.evaluate(ws, spec, name=spec, k=k)
    benign = [r.name for r in ladder.load(ws, kind=ladder.BENIGN).rungs if r.n_documents >= k]
    for spec in specs:
        t = time.perf_counter()
        evaluate.evaluate(ws, spec, name=spec, k=k, ladder=ladder.BENIGN, rungs=benign)
        times[f"{spec} benign"] = time.perf_counter() - t
    pq = views.per_query(ws, specs)
    gaps = illusion.gap(pq, runs=specs, metric_names=["SR@10"], n_resamples=10000, n_boot=1000)
    lad = ladder.load(ws)
    eff = illusion.effective_for_ladder(pq, lad, runs=specs)
    twin_pq = illusion.with_twin_rows(pq, specs)[0]
    twin_only = twin_pq[twin_pq["run"].str.endswith(illusion.TWIN_SUFFIX)]
    eff_twin = illusion.effective_for_ladder(twin_only, lad)
    return gaps, pd.concat([eff, eff_twin], ignore_index=True), times


def cost(ws: Workspace, spec: str, repeat: int = 2) -> dict:
    """Process CPU seconds of evaluating ``spec`` on the built ladder alone vs ``--ladder both`` (fresh runs, same
    process, best of ``repeat``): what the twin adds to an evaluation."""
    from emb_s_core import evaluate, runs

    k = min(100, min(r.n_documents for r in ladder.load(ws).rungs))
    out = {}
    for choice in ("built", "both"):
        best = float("inf")
        for i in range(repeat):
            name = f"cost-{choice}-{i}"
            if runs.get_run(ws, name) is not None:
                runs.delete_run(ws, name)
            t = time.process_time()
            evaluate.evaluate(ws, spec, name=name, k=k, ladder=choice)
            best = min(best, time.process_time() - t)
            runs.delete_run(ws, name)
        out[choice] = best
    out["ratio"] = out["both"] / out["built"]
    return out


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("mode", choices=["fill", "gap", "cost"])
    p.add_argument("--keep", type=Path, default=None)
    p.add_argument("--top-n", type=int, default=twin.DEFAULT_TOP_N)
    p.add_argument("--only", default=None, help="comma-separated workspace names (demo, hotpotqa, ...)")
    p.add_argument("--specs", default="bm25", help="gap: comma-separated retrievers (default bm25)")
    args = p.parse_args()
    root = args.keep or Path(tempfile.mkdtemp(prefix="bench-twin-"))
    print(f"workspaces in {root}; load: {os.getloadavg()}")
    for name, ws in workspaces(root):
        if args.only and name.split(" ")[0] not in args.only.split(","):
            continue
        if args.mode == "fill":
            table = fill(ws, args.top_n)
            print(f"\n## {name}: {table.attrs['near']:,} documents near some kept query under "
                  f"{table.attrs['references']}; twin built in {table.attrs['seconds']:.1f} s")
            print(table.to_markdown(index=False))
        elif args.mode == "cost":
            for spec in args.specs.split(","):
                c = cost(ws, spec)
                print(f"{name} {spec}: CPU s built {c['built']:.1f}, both {c['both']:.1f}, ratio {c['ratio']:.2f}; "
                      f"load {os.getloadavg()[0]:.1f}")
        else:
            gaps, eff, times = gap(ws, args.specs.split(","))
            print(f"\n## {name}: seconds {', '.join(f'{k} {v:.1f}' for k, v in times.items())}; "
                  f"load {os.getloadavg()[0]:.1f}")
            cols = ["run", "rung", "adversarial", "benign", "gap", "ci_low", "ci_high", "p_value", "n"]
            print(gaps[cols].round(3).to_markdown(index=False))
            print()
            print(eff.drop(columns=["values"]).round(3).to_markdown(index=False))


if __name__ == "__main__":
    main()
