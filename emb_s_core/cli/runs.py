"""``emb-s runs import|list|delete``: external run files and the runs stored in a workspace."""
from __future__ import annotations

import argparse

from emb_s_core.cli.common import add_workspace, print_json, print_table


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("runs", help="import external run files, list or delete runs")
    rsub = p.add_subparsers(dest="runs_command", metavar="ACTION", required=True)
    i = rsub.add_parser("import", help="import a TREC or JSONL run file as a run")
    i.add_argument("file")
    i.add_argument("--name", required=True, help="run name")
    i.add_argument("--format", choices=["trec", "jsonl"], default=None,
                   help="default: jsonl for .jsonl/.json files, else trec")
    i.add_argument("--rung", default=None,
                   help="TREC: the rung the file ranks (default: one ranking over the bank, filtered per rung)")
    add_workspace(i, writes=True)
    i.set_defaults(func=cmd_import)
    ls = rsub.add_parser("list", help="list the runs")
    add_workspace(ls)
    ls.add_argument("--json", action="store_true")
    ls.set_defaults(func=cmd_list)
    d = rsub.add_parser("delete", help="delete a run and its results")
    d.add_argument("name")
    add_workspace(d, writes=True)
    d.set_defaults(func=cmd_delete)


def cmd_import(args: argparse.Namespace) -> int:
    from emb_s_core.external import import_run
    from emb_s_core.store import Workspace

    out = import_run(Workspace(args.workspace), args.name, args.file, fmt=args.format, rung=args.rung)
    if out["already_imported"]:
        print(f"{args.file} is already imported as run {out['run']!r}; nothing changed.")
    else:
        print(f"imported run {out['run']!r}: {out['rows']:,} (rung, query) rankings for {out['queries']:,} queries")
    if out["duplicates_dropped"]:
        print(f"dropped {out['duplicates_dropped']:,} repeated doc id(s) in {out['rankings_with_duplicates']:,} "
              "ranking(s): each document is kept once, at its first place")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    from emb_s_core import runs
    from emb_s_core.store import Workspace

    ws = Workspace(args.workspace)
    listed = runs.list_runs(ws)
    results = runs.load_results(ws)
    counts = results.groupby("run").size().to_dict() if len(results) else {}
    measured = runs.measurements(ws)
    rows = [{"run": r.run, "kind": r.kind, "system": r.system, "results": int(counts.get(r.run, 0)),
             "created_at": r.created_at, "approximate": runs.approximate_summary(measured.get(r.run, {})),
             "prompts": runs.prompt_summary(r.config)}
            for r in listed.itertuples()]
    if args.json:
        for row in rows:
            row["measurements"] = measured.get(row["run"], {})
        print_json(rows)
    else:
        print_table(rows, ["run", "kind", "system", "results", "created_at", "approximate", "prompts"])
    return 0


def cmd_delete(args: argparse.Namespace) -> int:
    from emb_s_core import runs
    from emb_s_core.store import Workspace

    runs.delete_run(Workspace(args.workspace), args.name)
    print(f"deleted run {args.name!r}")
    return 0
