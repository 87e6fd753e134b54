"""``emb-s embed``: fill a dense retriever's embedding cache ahead of evaluation, locally or on a Ray cluster."""
from __future__ import annotations

import argparse

from emb_s_core.cli.common import add_embedding_endpoint_options, add_model_prompt_options, add_workspace, \
    endpoint_options, model_prompt_options


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("embed", help="embed the bank for a dense retriever (local, or on a Ray cluster); resumable")
    add_workspace(p, writes=True)
    p.add_argument("--retriever", "-r", required=True, metavar="SPEC",
                   help="dense:minilm-l6, dense:minilm-l3, dense:minilm-static, dense:<folder> or dense:litellm/<model>")
    p.add_argument("--engine", choices=["local", "ray"], default="local",
                   help="local (default): this process; ray: Ray Data actors (pip install -e '.[distributed]')")
    p.add_argument("--address", default=None,
                   help="ray: the cluster (auto, or ray://HOST:10001); default a new local Ray")
    p.add_argument("--workers", type=int, default=1, help="ray: actors, one model each (default 1)")
    p.add_argument("--num-gpus-per-worker", type=float, default=0,
                   help="ray: GPUs per actor; the model then runs on CUDA (default 0: CPU)")
    p.add_argument("--chunk", type=int, default=None,
                   help="chunk size in model tokens (MaxP), as for eval's --chunk")
    p.add_argument("--vector-dtype", choices=["float32", "float16"], default=None,
                   help="how the vectors are stored, as for eval's --vector-dtype")
    p.add_argument("--api-base", default=None, help="dense:litellm: endpoint URL (or EMB_S_EMBEDDING_API_BASE)")
    add_embedding_endpoint_options(p)
    add_model_prompt_options(p, rerank=False)
    p.set_defaults(func=cmd_embed)


def cmd_embed(args: argparse.Namespace) -> int:
    from emb_s_core import embed, retrievers
    from emb_s_core.cli.common import ProgressBars
    from emb_s_core.store import Workspace

    options = {k: v for k, v in (("chunk_size", args.chunk), ("vector_dtype", args.vector_dtype),
                                 ("api_base", args.api_base)) if v is not None} | endpoint_options(args) \
        | model_prompt_options(args)
    spec, options = retrievers.fold_options(args.retriever, options)  # the same spec eval folds them into
    progress = ProgressBars()  # a bar opens on the first report, so an early error prints one line
    try:
        report = embed.embed(Workspace(args.workspace), spec, engine=args.engine, progress=progress,
                             address=args.address, workers=args.workers,
                             num_gpus_per_worker=args.num_gpus_per_worker, **options)
    finally:
        progress.close()
    if not report.documents:
        print(f"{report.spec}: every document is already embedded ({report.table}); nothing to do.")
    else:
        print(f"{report.spec}: embedded {report.documents:,} documents ({report.chunks:,} chunks) with the "
              f"{report.engine} engine in {report.seconds:.1f} s into {report.table}")
    return 0
