"""``emb-s eval``: run a retriever on every rung of the ladder (resumable)."""
from __future__ import annotations

import argparse

from emb_s_core.cli.common import add_embedding_endpoint_options, add_model_prompt_options, add_workspace, \
    endpoint_options, model_prompt_options


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("eval", help="evaluate a retriever on the ladder's rungs (resumes an interrupted run)")
    add_workspace(p, writes=True)
    p.add_argument("--retriever", "-r", required=True, metavar="SPEC",
                   help="bm25, bm25-reference, dense:minilm-l6, dense:minilm-l3, dense:minilm-static, dense:<folder>, "
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
    add_embedding_endpoint_options(p)
    add_model_prompt_options(p)
    p.add_argument("--ladder", choices=["built", "official", "benign", "both"], default=None,
                   help="which ladder to evaluate on (default: built when the workspace has one, else official; "
                        "benign = the benign twin, added to the run of the same name; both = built and its twin in "
                        "one pass, the twin reusing the term statistics and cached vectors)")
    p.add_argument("--memory-cap", default=None, metavar="SIZE",
                   help="dense: memory for scoring, e.g. 256M or 2G; vectors are streamed from the workspace in "
                        "blocks under it, results unchanged (default: EMB_S_DENSE_MEMORY_CAP or 1/8 of RAM)")
    p.add_argument("--vector-dtype", choices=["float32", "float16"], default=None,
                   help="dense: how cached vectors are stored (float16 halves disk and I/O; part of the run's "
                        "identity)")
    p.add_argument("--ann", choices=["ivf_pq", "ivf_hnsw_sq"], default=None,
                   help="dense: approximate search with a LanceDB index (opt-in; the run stores its recall@10 "
                        "against exact scoring per rung)")
    p.add_argument("--ann-depth", type=int, default=None, help="ANN: candidate chunks per query (default 1000)")
    p.add_argument("--ann-exact-below", type=int, default=None,
                   help="ANN: rungs with at most this many documents are scored exactly (default 20000)")
    p.add_argument("--ann-recall-sample", type=int, default=None,
                   help="ANN: queries per rung checked against exact scoring (seeded; default 100)")
    p.set_defaults(func=cmd_eval)


def cmd_eval(args: argparse.Namespace) -> int:
    from emb_s_core import evaluate, runs
    from emb_s_core.cli.common import ProgressBars
    from emb_s_core.store import Workspace

    from emb_s_core import retrievers

    ws = Workspace(args.workspace)
    options = endpoint_options(args) | model_prompt_options(args)
    if args.chunk is not None:
        options["chunk_size"] = args.chunk
    if args.api_base:
        options["api_base"] = args.api_base
    if args.memory_cap:
        options["memory_cap"] = args.memory_cap
    if args.vector_dtype:
        options["vector_dtype"] = args.vector_dtype
    if args.ann:
        options.update(ann=args.ann, ann_depth=args.ann_depth, ann_exact_below=args.ann_exact_below,
                       ann_recall_sample=args.ann_recall_sample)
    spec, options = retrievers.fold_options(args.retriever, options)  # prompts are part of the model: in its spec
    progress = ProgressBars()
    rungs = [r.strip() for r in args.rungs.split(",") if r.strip()] if args.rungs else None
    try:
        name = evaluate.evaluate(ws, spec, name=args.name, k=args.k, rungs=rungs, progress=progress,
                                 batch_size=args.batch, ladder=args.ladder, **options)
    finally:
        progress.close()
    ws.refresh()
    n = len(runs.load_results(ws, runs=[name]))
    print(f"run {name!r}: {n:,} (rung, query) results in {ws.path}")
    clamped = runs.get_run(ws, name)["config"].get("k_per_rung", {})
    for rung, depth in clamped.items():
        print(f"  rung {rung} holds fewer than k={args.k} documents: ranked whole (k={depth})")
    approximate = runs.approximate_summary(runs.measurements(ws, name).get(name, {}))
    if approximate:
        print(approximate)
    return 0
