"""``emb-s notes add|list|tags|delete|export``: tags and notes on cases (a query, optionally one run and rung)."""
from __future__ import annotations

import argparse
import sys

from emb_s_core.cli.common import add_workspace, print_json, print_table


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("notes", help="tags and notes on failure cases (kept across ladder rebuilds and new runs)")
    nsub = p.add_subparsers(dest="notes_command", metavar="ACTION", required=True)
    a = nsub.add_parser("add", help="add tags to a case and/or set its note (tags are added, not replaced)")
    a.add_argument("qid", metavar="QID")
    a.add_argument("--tag", action="append", default=[], help="a tag (repeat for several)")
    a.add_argument("--text", default=None, help="the note (replaces the case's note; default: keep it)")
    _case_options(a)
    add_workspace(a, writes=True)
    a.set_defaults(func=cmd_add)
    ls = nsub.add_parser("list", help="the notes, oldest first")
    ls.add_argument("--tag", default=None, help="comma-separated: only notes of queries with one of these tags")
    ls.add_argument("--qid", default=None, help="only this query's notes")
    ls.add_argument("--all", action="store_true", help="also notes of queries no longer in the bank (orphans)")
    ls.add_argument("--json", action="store_true")
    add_workspace(ls)
    ls.set_defaults(func=cmd_list)
    t = nsub.add_parser("tags", help="every tag with how many cases and queries carry it")
    add_workspace(t)
    t.set_defaults(func=cmd_tags)
    d = nsub.add_parser("delete", help="delete the note of one case")
    d.add_argument("qid", metavar="QID")
    _case_options(d)
    add_workspace(d, writes=True)
    d.set_defaults(func=cmd_delete)
    e = nsub.add_parser("export", help="write the notes to a file (.csv .json .md .tex)")
    e.add_argument("--out", required=True, metavar="FILE")
    e.add_argument("--tag", default=None, help="comma-separated: only notes of queries with one of these tags")
    e.add_argument("--all", action="store_true", help="also notes of queries no longer in the bank")
    add_workspace(e)
    e.set_defaults(func=cmd_export)


def _case_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--run", default=None, help="narrow the case to one run")
    p.add_argument("--rung", default=None, help="narrow the case to one rung or pooled scale")


def _selected(args: argparse.Namespace):
    from emb_s_core import notes
    from emb_s_core.store import Workspace

    ws = Workspace(args.workspace)
    df = notes.load(ws, include_orphans=getattr(args, "all", False))
    tags = [t.strip() for t in (getattr(args, "tag", None) or "").split(",") if t.strip()]
    df = notes.filter_by_tags(df, df, tags)
    if getattr(args, "qid", None):
        df = df[df["qid"] == args.qid]
    out = df.assign(tags=[", ".join(t) for t in df["tags"]])
    return out.reset_index(drop=True)


def cmd_add(args: argparse.Namespace) -> int:
    from emb_s_core import notes
    from emb_s_core.store import Workspace

    if not args.tag and args.text is None:
        from emb_s_core.errors import EmbSError

        raise EmbSError("nothing to add", fix="pass --tag TAG and/or --text NOTE.")
    row = notes.save(Workspace(args.workspace), args.qid, args.tag, args.text, run=args.run, rung=args.rung,
                     merge=True)
    print(f"case {args.qid}" + (f" / {args.run}" if args.run else "") + (f" / {args.rung}" if args.rung else "")
          + f": tags {', '.join(row['tags']) or '(none)'}")
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    df = _selected(args)
    cols = ["qid", "run", "rung", "tags", "text", "updated_at"] + (["orphan"] if args.all else [])
    if args.json:
        print_json(df[cols].to_dict("records"))
    else:
        print_table(df[cols].to_dict("records"))
    return 0


def cmd_tags(args: argparse.Namespace) -> int:
    from emb_s_core import notes
    from emb_s_core.store import Workspace

    print_table(notes.all_tags(Workspace(args.workspace)).to_dict("records"))
    return 0


def cmd_delete(args: argparse.Namespace) -> int:
    from emb_s_core import notes
    from emb_s_core.store import Workspace

    notes.delete(Workspace(args.workspace), args.qid, args.run, args.rung)
    print(f"deleted the note of {args.qid}")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from emb_s_core import export

    df = _selected(args)
    path = export.write_table(df.drop(columns=["note_id"]), args.out)
    print(f"wrote {len(df)} notes to {path}", file=sys.stderr)
    return 0
