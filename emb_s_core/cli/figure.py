"""``emb-s figure heatmap|curves|mixing``: the dashboard's figures as files (PNG, SVG, PDF or interactive HTML)."""
from __future__ import annotations

import argparse

from emb_s_core.cli.common import add_workspace


def _csv(text: str | None) -> list[str]:
    return [t.strip() for t in (text or "").split(",") if t.strip()]


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("figure", help="draw a dashboard figure to PNG/SVG/PDF/HTML")
    p.add_argument("kind", choices=["heatmap", "curves", "mixing"],
                   help="heatmap: run x rung; curves: degradation with interval bands; mixing: paper Figure 4")
    add_workspace(p)
    p.add_argument("--metric", default="SR@10", help="SR@K, FR@K (K in 1,5,10,20,50,100), R@1, MRR, nDCG@10, "
                                                     "HN-intrusion (default SR@10)")
    p.add_argument("--out", "-o", required=True, nargs="+", metavar="FILE",
                   help="output file(s); the suffix picks the format: .png .svg .pdf .html (several share one "
                        "browser session)")
    p.add_argument("--runs", default=None, help="comma-separated runs (default: all; mixing uses the first)")
    p.add_argument("--columns", choices=["scale", "rung"], default="scale",
                   help="scale: domain rungs of one size pooled (default); rung: every rung")
    p.add_argument("--domain", default=None, help="comma-separated domains to keep")
    p.add_argument("--task", default=None, help="comma-separated task types to keep")
    p.add_argument("--sources", choices=["all", "single", "multi"], default="all",
                   help="single- or multi-source queries only")
    p.add_argument("--no-twin", action="store_true",
                   help="leave the benign twin out (default: each run's '<run> · benign' row / dashed curve beside "
                        "it, when the workspace has twin results)")
    p.add_argument("--size", choices=["screen", "column", "page"], default="screen",
                   help="preset: screen (as the dashboard draws it, default); column: a paper column, 336 px = "
                        "3.5 in wide with 11 px (8 pt) text and no title (the LaTeX caption replaces it); page: the text "
                        "width, 672 px = 7 in")
    p.add_argument("--width", type=int, default=None, metavar="PX", help="width in px (1 px = 0.75 pt in the PDF)")
    p.add_argument("--height", type=int, default=None, metavar="PX",
                   help="height in px (default: kept in proportion to the width)")
    p.add_argument("--font-size", type=float, default=None, metavar="PX",
                   help="base font size in px; title, legend and cell labels keep their proportions")
    p.add_argument("--no-title", dest="title", action="store_false", default=None,
                   help="leave out the title and caption line (the paper's own caption replaces them)")
    p.add_argument("--title", dest="title", action="store_true", help="keep them (also with --size column)")
    p.set_defaults(func=cmd_figure)


def cmd_figure(args: argparse.Namespace) -> int:
    from emb_s_core import export
    from emb_s_core.analysis import views
    from emb_s_core.figures import layout
    from emb_s_core.store import Workspace

    opts = layout.layout(args.size, width=args.width, height=args.height, font_size=args.font_size,
                         title=args.title)  # checked before any work
    fig = views.figure(Workspace(args.workspace), args.kind, args.metric, run_names=_csv(args.runs) or None,
                       x=args.columns, domains=_csv(args.domain), tasks=_csv(args.task), sources=args.sources,
                       twin=not args.no_twin)
    for path in export.figures_to_files([(fig, out) for out in args.out], opts=opts):
        print(path)
    return 0
