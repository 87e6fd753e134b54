"""``emb-s explain``: what displaced the gold between two nested rungs (per-cell cause shares, displaced queries)."""
from __future__ import annotations

import argparse

from emb_s_core.cli.common import add_workspace, print_json, print_table


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("explain", help="why a run's SR fell between two nested rungs: what displaced each lost gold "
                                            "(the dashboard's \"Why did it move?\" page)")
    add_workspace(p)
    p.add_argument("--run", required=True, help="run name")
    p.add_argument("--from", dest="rung_from", required=True, metavar="RUNG", help="the smaller rung, e.g. 512K")
    p.add_argument("--to", dest="rung_to", required=True, metavar="RUNG", help="the larger rung, e.g. 1M")
    p.add_argument("--k", type=int, default=10, help="top-K cut-off (default 10)")
    p.add_argument("--json", action="store_true", help="print the breakdown and the displaced queries as JSON")
    p.set_defaults(func=cmd_explain)


def cmd_explain(args: argparse.Namespace) -> int:
    import sys

    from emb_s_core.analysis import explain, run_state
    from emb_s_core.store import Workspace

    ws = Workspace(args.workspace)
    out = explain.explain(ws, args.run, args.rung_from, args.rung_to, args.k)
    for line in run_state.run_notes(run_state.for_workspace(ws), [args.run]):
        print(f"note: {line}", file=sys.stderr if args.json else sys.stdout)
    if args.json:
        print_json({**out, "displaced": out["displaced"].to_dict("records"),
                    "breakdown": out["breakdown"].to_dict("records")})
        return 0
    n = len(out["displaced"])
    print(f"run {args.run!r}, {args.rung_from} -> {args.rung_to}, top-{args.k}: {n:,} of {out['queries']:,} "
          "queries lost a gold document")
    print()
    print_table(out["breakdown"].to_dict("records"))
    if n:
        print()
        rows = out["displaced"].assign(
            lost=lambda d: d["lost"].map(lambda v: " ".join(map(str, v))),
            displacers=lambda d: [" ".join(f"{x}({c})" for x, c in zip(ds, cs))
                                  for ds, cs in zip(d["displacers"], d["causes"])])
        print_table(rows[["qid", "domain", "lost", "displacers"]].to_dict("records"))
    return 0
