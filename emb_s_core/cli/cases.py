"""``emb-s cases export|import|lost-at-scale``: shareable case lists (CSV / JSONL) — a view's cases out, a
colleague's list in as a tag — and the finder's rows (queries fine at a smaller rung, lost at a larger one)."""
from __future__ import annotations

import argparse
import sys

from emb_s_core.cli.common import add_workspace


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("cases", help="export the cases of a view as CSV/JSONL, or import such a list as a tag")
    csub = p.add_subparsers(dest="cases_command", metavar="ACTION", required=True)
    e = csub.add_parser("export", help="the failures of a run at a rung (or the cases of a tag) to a file")
    e.add_argument("--out", required=True, metavar="FILE", help="the list (.csv or .jsonl)")
    e.add_argument("--run", default=None, help="with --rung: that cell's failures")
    e.add_argument("--rung", default=None, help="a rung or pooled scale")
    e.add_argument("--metric", default="SR@10", help="what counts as a failure (default SR@10 < 1)")
    e.add_argument("--tag", default=None, help="comma-separated: the cases of queries with one of these tags")
    e.add_argument("--base-url", default=None, metavar="URL",
                   help="where the dashboard is served, for the drill-down links (default http://localhost:8501)")
    add_workspace(e)
    e.set_defaults(func=cmd_export)
    i = csub.add_parser("import", help="tag every case of a list (from this workspace or a copy of it)")
    i.add_argument("file", metavar="FILE", help="a list written by `emb-s cases export` (.csv or .jsonl)")
    i.add_argument("--tag", required=True, help="the tag to give its cases")
    add_workspace(i, writes=True)
    i.set_defaults(func=cmd_import)
    f = csub.add_parser(
        "lost-at-scale", help="queries a run gets at a smaller rung and fails at a larger one, the gold that fell "
                              "furthest first, with the document that took its place (the drill-down's finder)",
        description="For one run: the queries that succeed at the smaller rung (or pooled scale) and fail at the "
                    "larger one by --metric, sorted by how far the gold fell (its rank on each side), each with the "
                    "document that took its place (hard negative, same domain, other domain or other source; new in "
                    "the larger pool or already there) and that document's rank. --gained lists the reverse. The "
                    "same rows as the dashboard's Query drill-down opens on.")
    add_workspace(f)
    f.add_argument("--run", required=True, help="run name (see `emb-s runs list`)")
    f.add_argument("--from", dest="small", default=None, metavar="RUNG",
                   help="the smaller rung or pooled scale (default: the ladder's base scale, e.g. 64K)")
    f.add_argument("--to", dest="large", default=None, metavar="RUNG",
                   help="the larger rung or scale (default: the ladder's largest rung; never the benign twin's)")
    f.add_argument("--metric", default="SR@10", help="SR@K, FR@K, R@1, MRR, nDCG@10 or HN-intrusion (default SR@10)")
    f.add_argument("--gained", action="store_true",
                   help="the reverse list: queries that fail at --from and succeed at --to")
    f.add_argument("--format", choices=("table", "csv", "markdown", "json"), default="table",
                   help="table (default, for the terminal), csv, markdown or json")
    f.add_argument("--out", default=None, metavar="FILE", help="write to FILE instead of standard output")
    f.set_defaults(func=cmd_lost_at_scale)


def cmd_export(args: argparse.Namespace) -> int:
    from pathlib import Path

    from emb_s_core.analysis import cases
    from emb_s_core.errors import EmbSError
    from emb_s_core.store import Workspace

    fmt = cases.format_of(args.out)
    out = Path(args.out)
    if not out.parent.is_dir():
        raise EmbSError("the output folder does not exist", where=str(out.parent), fix="create it first.")
    tags = [t.strip() for t in (args.tag or "").split(",") if t.strip()]
    df = cases.for_workspace(Workspace(args.workspace), run=args.run, rung=args.rung, metric=args.metric, tags=tags,
                             base_url=args.base_url or cases.DEFAULT_BASE_URL)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(cases.to_text(df, fmt), encoding="utf-8")
    tmp.replace(out)
    why = f": {df.attrs['why_empty']}" if df.empty and df.attrs.get("why_empty") else ""
    print(f"wrote {len(df)} cases to {out}{why}", file=sys.stderr)
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from emb_s_core.analysis import cases
    from emb_s_core.store import Workspace

    r = cases.import_as_tag(Workspace(args.workspace), args.file, args.tag)
    print(f"tagged {r['tagged']} of {r['cases']} cases {args.tag!r}"
          + (f"; {r['unknown_queries']} skipped (query not in this bank)" if r["unknown_queries"] else "")
          + (f"; {r['runs_dropped']} tagged on the query only (run not in this workspace)" if r["runs_dropped"]
             else ""))
    return 0


def cmd_lost_at_scale(args: argparse.Namespace) -> int:
    from pathlib import Path

    from emb_s_core import export, ladder
    from emb_s_core.analysis import finder, views
    from emb_s_core.cli.common import print_table
    from emb_s_core.errors import EmbSError
    from emb_s_core.store import Workspace

    ws = Workspace(args.workspace)
    pq = views.per_query(ws, [args.run])
    if pq.empty:
        raise EmbSError(f"no results for run {args.run!r}", fix="see `emb-s runs list` for the runs in this workspace.")
    lad = ladder.load_all(ws, allow_stale=True)
    large = args.large or finder.defaults(lad, pq)[1]
    small = args.small or finder.defaults(lad, pq, large)[0]
    if small is None or large is None:
        raise EmbSError("the ladder has no smaller rung to compare with", fix="pass --from and --to.")
    rows = finder.find(ws, args.run, small, large, args.metric, lad=lad, per_query_df=pq,
                       direction=finder.GAINED if args.gained else finder.LOST)
    table = finder.readable(rows)
    if args.format == "table":
        text = None
    else:
        text = export.table_to(table, args.format, note=finder.summary(rows) if args.format == "markdown" else None)
    print(finder.summary(rows), file=sys.stderr)
    if args.out:
        out = Path(args.out)
        if not out.parent.is_dir():
            raise EmbSError("the output folder does not exist", where=str(out.parent), fix="create it first.")
        tmp = out.with_name(out.name + ".tmp")
        tmp.write_text(text if text is not None else table.to_string(index=False) + "\n", encoding="utf-8")
        tmp.replace(out)
        print(f"wrote {len(table)} rows to {out}", file=sys.stderr)
    elif text is not None:
        sys.stdout.write(text)
    else:
        print_table(table.to_dict("records"))
    return 0
