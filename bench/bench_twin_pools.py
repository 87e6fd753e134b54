"""The benign twin before (one shared pool per rung) and after (per-query pools) on one demo workspace: how benign and
how full each is, and the illusion gap per retriever on each (not a test; results go into bench/RESULTS.md).

    nice -n 19 python3 bench/bench_twin_pools.py --old-tree DIR --workspace DIR [--tokens 1M] [--specs bm25,...]
    nice -n 19 python3 bench/bench_twin_pools.py --old-tree DIR --workspace DIR --cost [--specs bm25]

``--old-tree`` is a copy of the code before this change (``git archive <commit> | tar -x -C DIR``): its CLI builds
the shared twin and evaluates runs ``old-<spec>`` on it; this tree then builds the per-query twin and evaluates runs
``<spec>`` on it. Both twins are audited with the same code (each kept query's own hard negatives and bm25 top-N
neighbours present in its pool on each rung, and the rung's tokens against the built rung's).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from emb_s_core import demo, evaluate, ladder, tokens, twin  # noqa: E402
from emb_s_core.analysis import illusion  # noqa: E402
from emb_s_core.store import Workspace  # noqa: E402


def audit(ws: Workspace, near_q: dict[str, np.ndarray], pooled: bool) -> pd.DataFrame:
    """Per twin rung: kept queries with any own near miss in their pool, how many such documents, and the tokens of
    the smallest pool against the built rung's."""
    built, benign = ladder.load(ws), ladder.load(ws, kind="benign")
    tok = ladder.serialized_tokens(ws)
    deltas = twin.deltas(ws) if pooled else {}
    rows = []
    for b, t in zip(built.rungs, benign.rungs):
        hit_q, hit_docs, fills = 0, 0, []
        for q in b.qids:
            pool = twin.pool(t.doc_ids, deltas.get(t.name, {}).get(q))
            present = int(twin.member(pool, near_q[q]).sum())
            hit_q += present > 0
            hit_docs += present
            fills.append(int(tok.loc[pool].sum()) / int(tok.loc[b.doc_ids].sum()))
        rows.append({"rung": b.name, "queries with own near misses": f"{hit_q}/{len(b.qids)}",
                     "near misses present": hit_docs, "fill min": round(min(fills), 3),
                     "fill mean": round(float(np.mean(fills)), 3)})
    return pd.DataFrame(rows)


def old_cli(tree: Path, *args: str) -> str:
    env = dict(os.environ, PYTHONPATH=str(tree))
    out = subprocess.run([sys.executable, "-m", "emb_s_core.cli", *args], cwd=tree, env=env, capture_output=True,
                         text=True)
    if out.returncode:
        raise SystemExit(f"old tree: {' '.join(args)} failed: {out.stderr}")
    return out.stdout


def cost(args: argparse.Namespace, specs: list[str]) -> None:
    """CPU seconds of ``eval`` on the built ladder alone vs ``--ladder both`` (fresh runs, best of 3; bench_twin's
    ``cost``), with the per-query twin here and with the shared twin of the old tree on a copy of the workspace."""
    import shutil

    sys.path.insert(0, str(REPO / "bench"))
    from bench_twin import cost as measure

    copy = args.workspace.with_name(args.workspace.name + "-old")
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(args.workspace, copy)
    old_cli(args.old_tree, "ladder", "build", "--workspace", str(copy), "--control", "benign")
    probe = ("import sys, json; sys.path.insert(0, 'bench'); from bench_twin import cost; "
             "from emb_s_core.store import Workspace; "
             f"print(json.dumps(cost(Workspace({str(copy)!r}), sys.argv[1], repeat=3)))")
    for spec in specs:
        env = dict(os.environ, PYTHONPATH=str(args.old_tree))
        out = subprocess.run([sys.executable, "-c", probe, spec], cwd=args.old_tree, env=env, capture_output=True,
                             text=True, check=True)
        before = json.loads(out.stdout.strip().splitlines()[-1])
        after = measure(Workspace(args.workspace), spec, repeat=3)
        print(f"{spec}: CPU s built alone {before['built']:.2f} / {after['built']:.2f}, both {before['both']:.2f} / "
              f"{after['both']:.2f}, ratio shared twin {before['ratio']:.2f}, per-query twin {after['ratio']:.2f}; "
              f"load {os.getloadavg()[0]:.1f}")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--old-tree", type=Path, required=True)
    p.add_argument("--workspace", type=Path, required=True)
    p.add_argument("--tokens", default="1M")
    p.add_argument("--specs", default="bm25")
    p.add_argument("--cost", action="store_true", help="only the cost of --ladder both (after a first full run)")
    args = p.parse_args()
    specs = args.specs.split(",")
    if args.cost:
        return cost(args, specs)
    print(f"load {os.getloadavg()}")
    t = time.perf_counter()
    ws = demo.build(args.workspace, tokens=tokens.parse_size(args.tokens), retrievers=tuple(specs))
    print(f"demo ({args.tokens}, {', '.join(specs)}, per-query twin and its runs): {time.perf_counter() - t:.0f} s")
    k = min(100, min(r.n_documents for r in ladder.load(ws).rungs))
    kept = list(ladder.load(ws).kept.query("kept")["qid"])
    near = twin.near_documents(ws, kept, twin.DEFAULT_TOP_N, ["bm25"])
    near_q = {q: np.array(sorted(near.per_query[q]), np.int64) for q in kept}

    # before: the shared twin, by the old code
    ws_arg = ["--workspace", str(args.workspace)]
    old_cli(args.old_tree, "ladder", "build", *ws_arg, "--control", "benign")
    before = audit(Workspace(args.workspace), near_q, pooled=False)
    for spec in specs:
        old_cli(args.old_tree, "eval", *ws_arg, "-r", spec, "--name", f"old-{spec}", "--k", str(k), "--ladder", "both")
    old_gap = json.loads(old_cli(args.old_tree, "report", *ws_arg, "--illusion", "--format", "json",
                                 "--runs", ",".join(f"old-{s}" for s in specs)))["gap"]

    # after: the per-query twin; the runs' stale twin results are redone, their built results stay
    t = time.perf_counter()
    twin.build(ws)
    built_s = time.perf_counter() - t
    after = audit(ws, near_q, pooled=True)
    for spec in specs:
        evaluate.evaluate(ws, spec, name=spec, k=k, ladder="benign")
    new_gap, _ = illusion.report(ws, runs=specs, n_boot=1000)

    print(f"\n## twin audit (own hard negatives + bm25 top-{twin.DEFAULT_TOP_N}, {len(kept)} kept queries); "
          f"per-query twin built in {built_s:.1f} s")
    audit_table = before.merge(after, on="rung", suffixes=(" before", " after"))
    print(audit_table.to_markdown(index=False))
    old = pd.DataFrame(old_gap)
    old["run"] = old["run"].str.removeprefix("old-")
    both = old.merge(new_gap, on=["run", "rung", "metric"], suffixes=(" before", " after"))
    both = both[both["metric"] == "SR@10"]
    cols = ["run", "rung", "adversarial before", "benign before", "gap before", "benign after", "gap after",
            "ci_low after", "ci_high after", "n after"]
    print("\n## illusion gap (SR@10), before and after")
    print(both[cols].round(3).to_markdown(index=False))
    print(f"\nload {os.getloadavg()}")


if __name__ == "__main__":
    main()
