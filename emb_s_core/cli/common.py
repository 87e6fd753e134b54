"""Arguments and output helpers shared by the command groups."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any

DEFAULT_MODEL = "local/smollm2-135m"


def add_workspace(parser: argparse.ArgumentParser, *, writes: bool = False) -> None:
    """``--workspace``; a command that writes also gets ``--no-wait`` (fail at once if another writer holds the
    workspace's lock, instead of waiting for it)."""
    parser.add_argument("--workspace", "-w", required=True, metavar="DIR", help="workspace folder")
    if writes:
        parser.add_argument("--no-wait", action="store_true",
                            help="fail at once when another process is writing the workspace (default: wait)")


def print_json(obj: Any) -> None:
    json.dump(obj, sys.stdout, indent=2, default=str)
    sys.stdout.write("\n")


def print_table(rows: list[dict[str, Any]], columns: list[str] | None = None) -> None:
    """Plain aligned text table for terminals."""
    if not rows:
        print("(no rows)")
        return
    columns = columns or list(rows[0])
    cells = [[_fmt(r.get(c)) for c in columns] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(columns)]
    print("  ".join(c.ljust(w) for c, w in zip(columns, widths)))
    print("  ".join("-" * w for w in widths))
    for row in cells:
        print("  ".join(v.ljust(w) for v, w in zip(row, widths)))


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4f}"
    if isinstance(value, int):
        return f"{value:,}"
    return "" if value is None else str(value)

def add_model_options(p: argparse.ArgumentParser, default: str | None = DEFAULT_MODEL, flag: str = "--model") -> None:
    """The model options every LLM-driven command takes (localize, qa, judge, collide, domains)."""
    p.add_argument(flag, default=default, metavar="MODEL",
                   help=f"any litellm model string (default {default}: the offline demo model)")
    p.add_argument("--context-window", type=int, default=None, metavar="N",
                   help="model window in tokens (required for models litellm does not know)")
    p.add_argument("--max-tokens", type=int, default=None, metavar="N", help="reply length limit")
    p.add_argument("--temperature", type=float, default=0.0)
    p.add_argument("--concurrency", type=int, default=4, help="calls in flight (the local model uses 1)")
    p.add_argument("--api-base", default=None, help="OpenAI-compatible endpoint (vLLM, Ollama, ...)")
    p.add_argument("--estimate", action="store_true", help="print the cost estimate and stop")
def gateway_from_args(args: argparse.Namespace, ws, model: str):
    """The llm gateway those options describe; a missing API key fails here, before any work."""
    from emb_s_core import llm

    params = {"api_base": args.api_base} if args.api_base else {}
    max_tokens = args.max_tokens if args.max_tokens is not None else args.default_max_tokens
    if max_tokens < 1:
        from emb_s_core.errors import EmbSError

        raise EmbSError(f"--max-tokens must be ≥ 1, got {max_tokens}", fix="pass --max-tokens N with N ≥ 1.")
    gw = llm.Gateway.for_workspace(ws, model, context_window=args.context_window, max_tokens=max_tokens,
                                   temperature=args.temperature, concurrency=args.concurrency, params=params)
    if gw.is_local:
        print(f"model: {llm.LOCAL_MODEL} — {llm.LOCAL_LABEL}", file=sys.stderr)
    if not args.estimate:
        gw.check_credentials()  # a missing key fails before any counting or writing
    return gw
def print_progress(stage: str, fraction: float) -> None:
    print(f"\r{stage}: {fraction:6.1%}", end="", file=sys.stderr, flush=True)
    if fraction >= 1.0:
        print(file=sys.stderr)
