"""``emb-s leaderboard``: every run against a baseline at every rung or scale, paired tests corrected across the
table; the correction is printed under it."""
from __future__ import annotations

import argparse
import sys

from emb_s_core.cli.common import add_workspace, print_table

FORMATS = ["table", "csv", "json", "markdown", "latex"]


def _split(value: str | None) -> list[str]:
    return [v.strip() for v in (value or "").split(",") if v.strip()]


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("leaderboard", help="runs × rungs for one metric, each cell tested against a baseline run "
                                           "(paired, multiple-testing corrected)")
    add_workspace(p)
    p.add_argument("--metric", default="SR@10", help="one metric: R@1, SR@K, FR@K (K a number), MRR, nDCG@10, "
                                                     "HN-intrusion (default SR@10)")
    p.add_argument("--baseline", default=None, metavar="RUN", help="the run every other is tested against "
                                                                   "(default: the first run)")
    p.add_argument("--correction", choices=["holm", "bonferroni", "none"], default="holm",
                   help="multiple-testing correction across all comparisons shown (default holm)")
    p.add_argument("--alpha", type=float, default=0.05, help="significance level after correction (default 0.05)")
    p.add_argument("--x", choices=["scale", "rung"], default="scale",
                   help="columns: pooled scales (domain rungs of one size together) or every rung")
    p.add_argument("--runs", default=None, help="comma-separated run names (default: every run)")
    p.add_argument("--domain", default=None, help="comma-separated domains (default: all)")
    p.add_argument("--task", default=None, help="comma-separated task types (default: all)")
    p.add_argument("--sources", choices=["all", "single", "multi"], default="all", help="single/multi-source queries")
    p.add_argument("--tag", default=None, help="comma-separated tags: only queries carrying one of them")
    p.add_argument("--sort", default=None, metavar="COLUMN",
                   help="sort rows by a column (a rung or scale), 'run' or 'vs baseline' (default: run order)")
    p.add_argument("--ascending", action="store_true", help="sort ascending (default descending)")
    p.add_argument("--detail", action="store_true", help="add the n and 95%% interval of every cell as columns")
    p.add_argument("--long", action="store_true",
                   help="one row per cell with every number (value, n, interval, delta, p, adjusted p, verdict)")
    p.add_argument("--format", choices=FORMATS, default=None,
                   help="output format (default: from --out's suffix, else an aligned text table)")
    p.add_argument("--out", default=None, metavar="FILE", help="write to FILE (.csv .json .md .tex) instead of stdout")
    p.add_argument("--n-boot", type=int, default=1000, help="bootstrap replicates per cell interval")
    p.add_argument("--n-resamples", type=int, default=10000,
                   help="random sign vectors a Monte Carlo p-value starts with (more are drawn until no verdict can "
                        "flip; grid-valued metrics such as R@1 and SR@K get exact p-values)")
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=cmd_leaderboard)


def cmd_leaderboard(args: argparse.Namespace) -> int:
    from emb_s_core import export
    from emb_s_core.analysis import leaderboard
    from emb_s_core.store import Workspace

    ws = Workspace(args.workspace)
    board = leaderboard.for_workspace(
        ws, args.metric, args.baseline, x=args.x, runs=_split(args.runs) or None, correction=args.correction,
        alpha=args.alpha, domains=_split(args.domain), tasks=_split(args.task), sources=args.sources,
        tags=_split(args.tag), n_boot=args.n_boot, n_resamples=args.n_resamples, seed=args.seed)
    df = board.cells if args.long else board.table(detail=args.detail, sort_by=args.sort,
                                                   descending=not args.ascending)
    legend = board.legend()
    fmt = None if args.format == "table" else args.format
    if args.out:
        path = export.write_table(df, args.out, fmt, note=legend)
        print(f"wrote {len(df)} rows to {path}", file=sys.stderr)
        if export.table_format(path, fmt) in ("csv", "json"):
            print(legend, file=sys.stderr)
    elif fmt is None:
        print_table(df.to_dict("records"))
        print(f"\n{legend}")
    else:
        sys.stdout.write(export.table_to(df, fmt, note=legend))
        if fmt in ("csv", "json"):  # machine-readable output stays clean: the legend goes to stderr
            print(legend, file=sys.stderr)
    return 0
