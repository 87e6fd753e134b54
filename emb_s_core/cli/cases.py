"""``emb-s cases export|import``: shareable case lists (CSV / JSONL) — a view's cases out, a colleague's list in as
a tag."""
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
