"""``emb-s demo``: the built-in adversarial bank, its ladder and the offline retrievers, in one command."""
from __future__ import annotations

import argparse

from emb_s_core.cli.common import add_workspace, print_table


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="generate the adversarial demo bank, build its ladder, evaluate retrievers")
    add_workspace(p, writes=True)
    p.add_argument("--tokens", default=None, help="bank size in tokens, e.g. 1M or 10M (default: about 1.25M)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--retrievers", default=None,
                   help="comma-separated retriever specs (default: bm25, dense:minilm-static and their hybrid)")
    p.add_argument("--k", type=int, default=100, help="ranking depth stored per (rung, query)")
    p.set_defaults(func=cmd_demo)


def cmd_demo(args: argparse.Namespace) -> int:
    from emb_s_core import demo, ladder, tokens
    from emb_s_core.cli.common import ProgressBars

    progress = ProgressBars()  # one bar per stage, in its units ("embedding 4,614 documents", "ranking ... pairs")

    retrievers = tuple(s.strip() for s in args.retrievers.split(",")) if args.retrievers else demo.DEMO_RETRIEVERS
    size = tokens.parse_size(args.tokens) if args.tokens else None
    try:
        ws = demo.build(args.workspace, tokens=size, seed=args.seed, progress=progress, retrievers=retrievers,
                        k=args.k)
    finally:
        progress.close()
    print(f"demo workspace ready at {ws.path}")
    print_table(ladder.load(ws).table().to_dict("records"))
    return 0
