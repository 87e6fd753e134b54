"""Query and document prompts of an embedding model: part of the model, not of the text.

Asymmetric embedders are trained with one prefix on questions and another (or none) on documents; encoding both
sides the same way measures a different model. The prompts come, in this order, from what the user gave (flags or
the spec's ``?prompts=`` / ``?instruction=``), the model folder's own sentence-transformers config (``prompts`` /
``default_prompt_name``), a preset of :data:`PRESETS` whose name patterns match the model, or nothing. Presets are
data: a new family is one row. The document prompt keys the embedding cache (:meth:`Prompts.cache_tag`); both prompts
and where they came from are part of the run's configuration (:meth:`Prompts.config`).

A served embedder gets the prompt as text, or as the provider's ``input_type`` where it takes one (``input_type``
given, or the provider's pair in :data:`INPUT_TYPES`); then no text is prefixed, since the server applies its own.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from emb_s_core.errors import EmbSError

#: the web-search retrieval instruction the instruction-tuned families publish as their default
WEB_SEARCH = "Given a web search query, retrieve relevant passages that answer the query"

#: preset name -> query prompt, document prompt, an instruction template (``{instruction}`` filled by
#: ``--instruction``; the query prompt is the template with the default instruction), and lower-case substrings of
#: model names the preset is applied to when the model's own config names no prompts. Sources: the model cards.
PRESETS: dict[str, dict[str, Any]] = {  # the first row whose pattern matches wins: the specific ones come first
    "e5-instruct": {"template": "Instruct: {instruction}\nQuery: ", "instruction": WEB_SEARCH, "document": "",
                    "match": ["e5-large-instruct", "e5-mistral"]},
    "e5": {"query": "query: ", "document": "passage: ",
           "match": ["/e5-", "/multilingual-e5-", "e5-small", "e5-base", "e5-large"]},
    "bge": {"query": "Represent this sentence for searching relevant passages: ", "document": "",
            "match": ["bge-small-en", "bge-base-en", "bge-large-en"]},
    "bge-zh": {"query": "为这个句子生成表示以用于检索相关文章：", "document": "",
               "match": ["bge-small-zh", "bge-base-zh", "bge-large-zh"]},
    "qwen3-embedding": {"template": "Instruct: {instruction}\nQuery:", "instruction": WEB_SEARCH, "document": "",
                        "match": ["qwen3-embedding"]},
    "gte-qwen": {"template": "Instruct: {instruction}\nQuery: ", "instruction": WEB_SEARCH, "document": "",
                 "match": ["gte-qwen"]},
    "gte": {"query": "", "document": "", "match": ["/gte-small", "/gte-base", "/gte-large"]},
    "kalm": {"template": "Instruct: {instruction} \nQuery: ", "instruction": WEB_SEARCH, "document": "",
             "match": ["kalm-embedding"]},
    "nomic": {"query": "search_query: ", "document": "search_document: ", "match": ["nomic-embed-text"]},
    "none": {"query": "", "document": "", "match": []},
}

#: the names a sentence-transformers config gives its query / document prompts, most specific first
QUERY_NAMES = ("query", "search_query", "retrieval.query", "retrieval_query", "s2p_query")
DOCUMENT_NAMES = ("document", "passage", "search_document", "corpus", "retrieval.passage", "retrieval_passage")

#: litellm provider prefix -> (query input_type, document input_type), for providers whose embedding API takes one
INPUT_TYPES: dict[str, tuple[str, str]] = {
    "cohere": ("search_query", "search_document"),
    "cohere_chat": ("search_query", "search_document"),
    "voyage": ("query", "document"),
    "nvidia_nim": ("query", "passage"),
    "bedrock/cohere": ("search_query", "search_document"),
}

QUERY, DOCUMENT = "query", "document"


@dataclass(frozen=True)
class Prompts:
    """What is prepended to queries and documents (``query``/``document`` text), or the ``input_type`` a served
    embedder is sent for each side; ``source`` says where they came from (shown with the run)."""

    query: str = ""
    document: str = ""
    source: str = "none"
    query_input_type: str | None = None
    document_input_type: str | None = None

    def text(self, side: str) -> str:
        return self.query if side == QUERY else self.document

    def input_type(self, side: str) -> str | None:
        return self.query_input_type if side == QUERY else self.document_input_type

    @property
    def empty(self) -> bool:
        return not (self.query or self.document or self.query_input_type or self.document_input_type)

    def cache_tag(self) -> str:
        """The document side's part of the embedding cache key: '' without a document prompt (so caches made
        before prompts existed stay valid), else a short stable digest of it."""
        if not self.document and not self.document_input_type:
            return ""
        blob = json.dumps({"document": self.document, "input_type": self.document_input_type}, sort_keys=True)
        return "|doc=" + hashlib.sha1(blob.encode("utf-8")).hexdigest()[:10]

    def config(self) -> dict[str, Any]:
        """The run's record of the prompts ({} when there are none and none were asked for, so older runs keep their
        identity; empty prompts given to override a model's own are recorded)."""
        if self.empty and self.source == "none":
            return {}
        out: dict[str, Any] = {"query_prompt": self.query, "document_prompt": self.document,
                               "prompt_source": self.source}
        if self.query_input_type or self.document_input_type:
            out["input_type"] = {QUERY: self.query_input_type, DOCUMENT: self.document_input_type}
        return out


@dataclass(frozen=True)
class PromptOptions:
    """What the user asked for: a preset name (``none`` = no prompts even if the model has some), explicit query /
    document prompts, an instruction (filled into the preset's or the generic instruction template), and
    ``input_type`` as "QUERY,DOCUMENT" for a served embedder."""

    preset: str | None = None
    query: str | None = None
    document: str | None = None
    instruction: str | None = None
    input_type: str | None = None

    @classmethod
    def from_options(cls, opts: Mapping[str, Any]) -> PromptOptions:
        return cls(opts.get("prompts"), opts.get("query_prompt"), opts.get("document_prompt"),
                   opts.get("instruction"), opts.get("input_type"))

    @property
    def given(self) -> bool:
        return any(v is not None for v in (self.preset, self.query, self.document, self.instruction))

    def check(self) -> PromptOptions:
        """Fail now on an unknown preset or an unreadable input type, before a model is loaded."""
        if self.preset is not None:
            preset(self.preset)
        if self.input_type is not None:
            resolve("", PromptOptions(input_type=self.input_type), served=True)
        return self


GENERIC_TEMPLATE = "Instruct: {instruction}\nQuery: "


def split_options(arg: str, allowed: tuple[str, ...]) -> tuple[str, dict[str, str]]:
    """``model?prompts=e5&instruction=...`` -> (model, {key: value}), values percent-decoded; keys limited to
    ``allowed``, so a model name is never misread."""
    from urllib.parse import unquote

    model, sep, query = arg.partition("?")
    if not sep:
        return arg, {}
    pairs = [p.partition("=") for p in query.split("&") if p]
    bad = [k for k, eq, _ in pairs if k not in allowed or not eq]
    if bad or not pairs:
        raise EmbSError(f"cannot read the options after '?' in {arg!r} ({', '.join(bad) or 'none given'})",
                        fix="write e.g. dense:<model>?prompts=e5 or ?instruction=<text> (percent-encoded); options: "
                            + ", ".join(allowed) + ".")
    return model, {k: unquote(v) for k, _, v in pairs}


def join_options(model: str, options: Mapping[str, str]) -> str:
    """The inverse of :func:`split_options`: values percent-encoded (a space, '+', ':', '?', '&' or a newline cannot
    break a hybrid's or a reranker's spec), keys sorted so one setting has one spelling."""
    from urllib.parse import quote

    return model + "?" + "&".join(f"{k}={quote(str(options[k]), safe='')}" for k in sorted(options))


def preset(name: str) -> dict[str, Any]:
    row = PRESETS.get(name.strip().lower())
    if row is None:
        raise EmbSError(f"unknown prompt preset {name!r}", fix=f"use one of: {', '.join(PRESETS)}; or give "
                        "--query-prompt / --document-prompt yourself.")
    return row


def _from_row(row: Mapping[str, Any], instruction: str | None) -> tuple[str, str]:
    if "template" in row:
        return row["template"].format(instruction=instruction or row["instruction"]), row.get("document", "")
    if instruction is not None:
        return GENERIC_TEMPLATE.format(instruction=instruction), row.get("document", "")
    return row.get("query", ""), row.get("document", "")


def matching_preset(model: str) -> str | None:
    """The preset whose name patterns match ``model`` (a hub name or folder path), if any."""
    low = model.lower().replace("\\", "/")
    low = low if low.startswith("/") else "/" + low
    for name, row in PRESETS.items():
        if any(p in low for p in row.get("match", ())):
            return name
    return None


def own_prompts(prompts: Mapping[str, str] | None, default_name: str | None) -> tuple[str, str] | None:
    """(query, document) prompt from a sentence-transformers config's ``prompts`` / ``default_prompt_name``; None
    when it names neither side."""
    prompts = dict(prompts or {})
    q = next((prompts[n] for n in QUERY_NAMES if n in prompts), None)
    d = next((prompts[n] for n in DOCUMENT_NAMES if n in prompts), None)
    if not q and not d:
        if default_name and prompts.get(default_name):  # one prompt for every text, as the model's encode does
            return prompts[default_name], prompts[default_name]
        return None
    return q or "", d or ""


def config_prompts(folder: str | Path) -> tuple[dict[str, str], str | None]:
    """A model folder's ``config_sentence_transformers.json`` prompts and default prompt name (empty when absent)."""
    path = Path(folder).expanduser() / "config_sentence_transformers.json"
    if not path.is_file():
        return {}, None
    try:
        cfg = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}, None
    prompts = cfg.get("prompts") if isinstance(cfg.get("prompts"), dict) else {}
    return {str(k): str(v) for k, v in prompts.items()}, cfg.get("default_prompt_name")


def resolve(model: str, options: PromptOptions, own: tuple[str, str] | None = None, served: bool = False) -> Prompts:
    """The prompts for ``model``: given > the model's own config (``own``) > a matching preset > none.

    A served model is never guessed a preset from its name (the server may add its own prefixes): it gets the
    prompts given, or an ``input_type`` (given as "QUERY,DOCUMENT", or its provider's pair in :data:`INPUT_TYPES`
    when prompts are asked for)."""
    q_type = d_type = None
    if options.input_type is not None:
        parts = [p.strip() for p in options.input_type.split(",")]
        if len(parts) != 2 or not all(parts):
            raise EmbSError(f"cannot read input type {options.input_type!r}",
                            fix="give the query and document input types separated by a comma, e.g. "
                                "--input-type query,passage.")
        q_type, d_type = parts
    if options.given:
        row = preset(options.preset) if options.preset else {}
        query, document = _from_row(row, options.instruction) if (row or options.instruction) else ("", "")
        if options.query is not None:
            query = options.query
        if options.document is not None:
            document = options.document
        source = f"preset {options.preset.strip().lower()}" if options.preset else "given"
        if options.preset and (options.query is not None or options.document is not None):
            source += " + given"
    elif own is not None and not served:
        (query, document), source = own, "model config"
    elif not served and (name := matching_preset(model)) is not None:
        (query, document), source = _from_row(PRESETS[name], None), f"preset {name} (by model name)"
    else:
        query, document, source = "", "", "none"
    if served and q_type is None and (query or document):
        provider = next((p for p in sorted(INPUT_TYPES, key=len, reverse=True) if model.startswith(p + "/")), None)
        if provider is not None:
            q_type, d_type = INPUT_TYPES[provider]
    if q_type is not None:  # the provider applies the prompt: no text prefix besides what was given explicitly
        if options.query is None:
            query = ""
        if options.document is None:
            document = ""
        source = source if source != "none" else "input_type"
    return Prompts(query, document, source, q_type, d_type)
