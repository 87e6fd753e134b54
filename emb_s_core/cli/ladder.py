"""``emb-s ladder build`` and ``emb-s ladder show``."""
from __future__ import annotations

import argparse

from emb_s_core.cli.common import add_workspace, print_json, print_table


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("ladder", help="build or show the reference-corpus ladder")
    lsub = p.add_subparsers(dest="ladder_command", metavar="ACTION", required=True)
    b = lsub.add_parser("build", help="build the nested ladder from the workspace's bank")
    add_workspace(b, writes=True)
    b.add_argument("--base", default="64K", help="base (per-domain) rung size (default 64K); a bank with one or few "
                   "domains may need more (e.g. 512K) to keep every query whose gold fits (the summary says)")
    b.add_argument("--domain-sizes", default="64K,128K,256K", help="per-domain rung sizes (default 64K,128K,256K)")
    b.add_argument("--shared-size", default=None, help="shared rung size (default 8 x base = 512K)")
    b.add_argument("--max-size", default=None, help="largest doubling rung (default: up to the bank size)")
    b.add_argument("--encoding", default=None, help="tiktoken encoding (default: the workspace's, cl100k_base)")
    b.add_argument("--reserve", type=int, default=1024, help="prompt/query reserve subtracted from every budget")
    b.add_argument("--seed", type=int, default=0)
    b.add_argument("--strict", action="store_true", help="fail when a domain's gold sets do not fit the base rung")
    b.add_argument("--hn-share", type=float, default=1.0, metavar="SHARE",
                   help="the most of a base budget (0-1) the kept queries' hard negatives may reserve (default 1.0: "
                        "queries are kept only with all their hard negatives, coverage 1.0 at the base; 0: the gold "
                        "alone decides, near misses then enter with scale)")
    b.add_argument("--control", choices=["benign"], default=None,
                   help="build a control ladder beside the built one instead: 'benign' = its benign twin (same "
                        "rungs, budgets, queries and gold; the rest irrelevant to every kept query). The built "
                        "ladder's options are used; the ones above are ignored")
    b.add_argument("--top-n", type=int, default=20,
                   help="--control benign: leave out each kept query's top-N documents under the references "
                        "(default 20)")
    b.add_argument("--reference", default=None, metavar="SPECS",
                   help="--control benign: comma-separated reference retrievers whose top-N define each query's "
                        "near misses (default: bm25, whatever is cached or was run; a dense one named here is "
                        "embedded). Stored with the twin and shown with every gap; changing them marks twin results "
                        "stale. A reference's own gap is partly by construction")
    b.add_argument("--official", action="store_true",
                   help="store an imported EMB-S release's published scales as the official ladder (membership as "
                        "published) instead of building one; the built ladder stays")
    b.add_argument("--source", default=None, help="--official: which imported release (when there are several)")
    b.set_defaults(func=cmd_build)
    s = lsub.add_parser("show", help="print the rung table")
    add_workspace(s)
    s.add_argument("--ladder", choices=["built", "official", "benign"], default=None,
                   help="which ladder (default: built when it exists, else official)")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_show)


def cmd_build(args: argparse.Namespace) -> int:
    from emb_s_core.ladder import LadderOptions, build
    from emb_s_core.store import Workspace

    if args.official:
        return _build_official(args)
    if args.control == "benign":
        return _build_twin(args)
    opts = LadderOptions(base=args.base, domain_sizes=tuple(s.strip() for s in args.domain_sizes.split(",")),
                         shared_size=args.shared_size, max_size=args.max_size, encoding=args.encoding,
                         reserve=args.reserve, seed=args.seed, strict=args.strict, hn_share=args.hn_share)
    from emb_s_core.analysis import kept

    ws = Workspace(args.workspace)
    ladder = build(ws, opts, progress=True)
    for message in ladder.messages:
        print(message)
    summary = kept.table(ws, ladder)
    print_table(summary.to_dict("records"))
    note = kept.dropped_note(summary, args.base, ws.path)
    if note:
        print(f"\nnote: {note}")
    print()
    print_table(ladder.table(absent=True).to_dict("records"))
    return 0


def _build_official(args: argparse.Namespace) -> int:
    from emb_s_core import official
    from emb_s_core.store import Workspace

    ladder = official.build(Workspace(args.workspace), source=args.source, encoding=args.encoding, progress=True)
    for message in ladder.messages:
        print(message)
    for row in ladder.kept[~ladder.kept["kept"]].head(20).itertuples():
        print(f"  dropped {row.qid}: {row.reason}")
    print()
    print_table(ladder.table().to_dict("records"))
    return 0


def _build_twin(args: argparse.Namespace) -> int:
    from emb_s_core import twin
    from emb_s_core.store import Workspace

    references = [r.strip() for r in args.reference.split(",") if r.strip()] if args.reference else None
    lad = twin.build(Workspace(args.workspace), top_n=args.top_n, references=references)
    for message in lad.messages:
        print(message)
    print()
    print_table(lad.table().to_dict("records"))
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    import sys

    from emb_s_core.evaluate import ladder_kinds
    from emb_s_core.ladder import load, stale_reason
    from emb_s_core.store import Workspace

    ws = Workspace(args.workspace)
    kind = ladder_kinds(ws, args.ladder)[0]
    stale = stale_reason(ws, kind)
    if stale:
        print(f"warning: this ladder is stale: {stale}; rebuild it with `emb-s ladder build`.", file=sys.stderr)
    ladder = load(ws, allow_stale=True, kind=kind)
    for message in ladder.messages:  # e.g. a base rung under 90% hard-negative coverage
        if message.startswith("warning:"):
            print(message, file=sys.stderr)
    if args.json:
        print_json({"options": ladder.options,
                    "rungs": [dict(row, composition=r.composition) for row, r in
                              zip(ladder.table().to_dict("records"), ladder.rungs)],
                    "absent": ladder.absent})
        return 0
    print_table(ladder.table(absent=True).to_dict("records"))
    return 0
