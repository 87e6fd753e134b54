"""``emb-s eval``: run a retriever on every rung of the ladder (resumable)."""
from __future__ import annotations

import argparse

from emb_s_core.cli.common import add_workspace


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("eval", help="evaluate a retriever on the ladder's rungs (resumes an interrupted run)")
    add_workspace(p, writes=True)
    p.add_argument("--retriever", "-r", required=True, metavar="SPEC",
                   help="bm25, bm25-reference, dense:minilm-l6, dense:minilm-l3, dense:<folder>, "
                        "dense:litellm/<model>, hybrid:<a>+<b>, rerank:<model>:<base>, rerank:litellm/<model>:<base>")
    p.add_argument("--name", help="run name (default: the spec, plus @chunkN / @kN when not default)")
    p.add_argument("--k", type=int, default=100, help="documents kept per query and rung (default 100)")
    p.add_argument("--rungs", help="comma-separated rung names (default: all)")
    p.add_argument("--batch", type=int, default=64, help="queries per batch; each batch is saved atomically")
    p.add_argument("--chunk", type=int, default=None,
                   help="dense: chunk size in model tokens (MaxP); default the model's max length")
    p.add_argument("--api-base", default=None,
                   help="dense:litellm / rerank:litellm: endpoint URL (or EMB_S_EMBEDDING_API_BASE / "
                        "EMB_S_RERANK_API_BASE)")
    p.add_argument("--ladder", choices=["built", "official", "benign", "both"], default=None,
                   help="which ladder to evaluate on (default: built when the workspace has one, else official; "
                        "benign = the benign twin, added to the run of the same name; both = built and its twin in "
                        "one pass, the twin reusing the term statistics and cached vectors)")
    p.set_defaults(func=cmd_eval)


def cmd_eval(args: argparse.Namespace) -> int:
    from emb_s_core import evaluate, runs
    from emb_s_core.cli.common import ProgressBars
    from emb_s_core.store import Workspace

    ws = Workspace(args.workspace)
    options = {}
    if args.chunk is not None:
        options["chunk_size"] = args.chunk
    if args.api_base:
        options["api_base"] = args.api_base
    progress = ProgressBars()
    rungs = [r.strip() for r in args.rungs.split(",") if r.strip()] if args.rungs else None
    try:
        name = evaluate.evaluate(ws, args.retriever, name=args.name, k=args.k, rungs=rungs, progress=progress,
                                 batch_size=args.batch, ladder=args.ladder, **options)
    finally:
        progress.close()
    ws.refresh()
    n = len(runs.load_results(ws, runs=[name]))
    print(f"run {name!r}: {n:,} (rung, query) results in {ws.path}")
    clamped = runs.get_run(ws, name)["config"].get("k_per_rung", {})
    for rung, depth in clamped.items():
        print(f"  rung {rung} holds fewer than k={args.k} documents: ranked whole (k={depth})")
    return 0
