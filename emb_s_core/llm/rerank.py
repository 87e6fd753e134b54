"""Served rerankers (vLLM or TEI ``/rerank``, Qwen3-Reranker-8B and the like) through litellm's rerank API.

Why served: the paper's rerank rows use an 8B reranker nobody runs on a laptop. Like every model call it is batched
(``batch_size`` documents per request), cached (one row per (model, query, document) in the workspace's response
cache, so a rerun or another rung sends nothing) and retried with backoff on transient failures; a refused call
(wrong model, no key) is one EmbSError.

LLM rerankers (Qwen3-Reranker) score "yes" after a chat prompt that carries an instruction: served by vLLM's
``/rerank`` they expect the client to send the query and each document already in that format (vLLM's
``qwen3_rerank_client`` example). :data:`TEMPLATES` holds those formats as data; a template applies when asked for
(``--rerank-template``) or when its name patterns match the model, with ``--rerank-instruction`` or its default
instruction. The formatted texts are what is cached, so another instruction is another cache entry.
"""
from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass, field

import numpy as np

from emb_s_core.errors import EmbSError
from emb_s_core.llm.cache import ResponseCache
from emb_s_core.llm import bounded, retry
from emb_s_core.llm.gateway import load_litellm
from emb_s_core.llm.secrets import redact

API_BASE_ENV = "EMB_S_RERANK_API_BASE"
API_KEY_ENV = "EMB_S_RERANK_API_KEY"
#: litellm provider used when the model names none (a bare or hub name): vLLM's /rerank; a TEI server is
#: ``huggingface/<model>`` (litellm sends TEI's own JSON, ``texts``)
DEFAULT_PROVIDER = "hosted_vllm"

WEB_SEARCH = "Given a web search query, retrieve relevant passages that answer the query"
_QWEN3_SYSTEM = ('<|im_start|>system\nJudge whether the Document meets the requirements based on the Query and the '
                 'Instruct provided. Note that the answer can only be "yes" or "no".<|im_end|>\n<|im_start|>user\n')
#: template name -> how the query and each document are sent ({instruction}, {query}, {document}), the default
#: instruction, and lower-case substrings of model names it applies to unless another template is asked for
TEMPLATES: dict[str, dict[str, object]] = {
    "qwen3": {"query": _QWEN3_SYSTEM + "<Instruct>: {instruction}\n<Query>: {query}\n",
              "document": "<Document>: {document}<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n",
              "instruction": WEB_SEARCH, "match": ["qwen3-reranker"]},
    "instruct": {"query": "<Instruct>: {instruction}\n<Query>: {query}", "document": "{document}",
                 "instruction": WEB_SEARCH, "match": []},
    "none": {"query": "{query}", "document": "{document}", "instruction": "", "match": []},
}


def _providers() -> set[str]:
    """litellm's provider prefixes (``cohere``, ``hosted_vllm``, ...)."""
    return {str(getattr(p, "value", p)) for p in load_litellm().provider_list}


def template_for(model: str, name: str | None = None) -> str:
    """The template asked for, else the one whose patterns match ``model``, else none."""
    if name is not None:
        if name.strip().lower() not in TEMPLATES:
            raise EmbSError(f"unknown reranker template {name!r}",
                            fix=f"use one of: {', '.join(TEMPLATES)} (--rerank-template).")
        return name.strip().lower()
    low = model.lower()
    return next((t for t, row in TEMPLATES.items() if any(p in low for p in row["match"])), "none")  # type: ignore


@dataclass
class ServedReranker:
    """``score(query, texts)`` → relevance scores from a served reranker, cached per (model, query, text)."""

    model: str
    api_base: str | None = None
    api_key: str | None = None
    batch_size: int = 32
    max_retries: int | None = None  # None: EMB_S_EMBEDDING_RETRIES, else 3 (a scoring call, like an embedding batch)
    backoff: float = 0.5
    timeout: float | None = None  # seconds per call; None: EMB_S_EMBEDDING_TIMEOUT, else 30 (see llm.retry)
    cache: ResponseCache | None = None
    instruction: str | None = None  # None: the template's default
    template: str | None = None  # None: by model name (TEMPLATES), else none
    requests: int = field(default=0, init=False)  # calls sent (for tests and the run summary)

    def __post_init__(self) -> None:
        self.template = template_for(self.model, self.template)
        if self.instruction is not None and self.template == "none":
            self.template = "instruct"  # an instruction asked for is sent, in the generic Qwen-style format
        if self.instruction is None:
            self.instruction = str(TEMPLATES[self.template]["instruction"])
        self.timeout = retry.embedding_timeout(self.timeout)
        self.max_retries = retry.embedding_retries(self.max_retries)
        self.api_base = self.api_base or os.environ.get(API_BASE_ENV)
        self.api_key = self.api_key or os.environ.get(API_KEY_ENV)
        if self.model.split("/")[0] not in _providers():  # a bare or hub name (Qwen/Qwen3-Reranker-8B): vLLM/TEI
            self.model = f"{DEFAULT_PROVIDER}/{self.model}"

    def check(self) -> None:
        if self.model.startswith(f"{DEFAULT_PROVIDER}/") and not self.api_base:
            raise EmbSError(f"the served reranker {self.model!r} needs an endpoint",
                            fix=f"pass --api-base http://HOST:PORT (the vLLM/TEI server) or set {API_BASE_ENV}.")

    def config(self) -> dict[str, str]:
        """What the run records about the prompt format ({} without one, so older runs keep their identity)."""
        return {} if self.template == "none" else {"template": self.template, "instruction": self.instruction or ""}

    def formatted(self, query: str, texts: list[str]) -> tuple[str, list[str]]:
        """The query and documents as the reranker expects them (its template, with the instruction)."""
        row = TEMPLATES[self.template or "none"]
        return (str(row["query"]).format(instruction=self.instruction, query=query),
                [str(row["document"]).format(document=t) for t in texts])

    def _key(self, query: str, text: str) -> str:
        blob = json.dumps({"rerank": self.model, "query": query, "document": text}, sort_keys=True)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    def score(self, query: str, texts: list[str]) -> np.ndarray:
        query, texts = self.formatted(query, texts)
        out = np.full(len(texts), np.nan)
        keys = [self._key(query, t) for t in texts]
        todo = []
        for i, key in enumerate(keys):
            hit = self.cache.get(key) if self.cache is not None else None
            if hit is None:
                todo.append(i)
            else:
                out[i] = float(hit["text"])
        for start in range(0, len(todo), self.batch_size):
            batch = todo[start: start + self.batch_size]
            scores = self._call(query, [texts[i] for i in batch])
            for i, s in zip(batch, scores):
                out[i] = s
                if self.cache is not None:
                    self.cache.put(keys[i], self.model, repr(float(s)), 0, 0, 0.0)
        return out

    def _call(self, query: str, documents: list[str]) -> list[float]:
        litellm = load_litellm()
        retryable = retry.transient(litellm)
        from litellm.llms.custom_httpx.http_handler import HTTPHandler

        kwargs = {"api_base": self.api_base} if self.api_base else {}
        kwargs["client"] = HTTPHandler(client=bounded.http_client())  # bounded in time and size (llm.bounded)
        if self.api_key:
            kwargs["api_key"] = self.api_key
        last = ""
        for attempt in range(self.max_retries + 1):
            self.requests += 1
            try:
                with bounded.limits(self.timeout, bounded.rerank_reply_limit(len(documents))) as cut:
                    try:
                        response = litellm.rerank(model=self.model, query=query, documents=documents,
                                                  top_n=len(documents), return_documents=False,
                                                  timeout=self.timeout, **kwargs)
                    except Exception:
                        bounded.check(cut)
                        raise
            except bounded.ReplyTooLarge as exc:
                raise EmbSError(f"reranker {self.model!r} sent an oversized reply: {exc} ({len(documents)} "
                                "documents)", where=redact(self.api_base or "litellm default endpoint"),
                                fix="fix or replace the server; nothing from this reply was stored.") from None
            except retryable as exc:
                last = redact(retry.describe(exc))
                if attempt < self.max_retries:
                    wait = retry.delay(attempt, self.backoff, 8.0)
                    retry.announce(redact(f"reranker {self.model}"), attempt, self.max_retries + 1, wait, last)
                    time.sleep(wait)
                continue
            except Exception as exc:  # noqa: BLE001 - a refused call: the user must fix model, endpoint or key
                raise EmbSError(f"reranker {self.model!r} refused the call: {redact(str(exc)[:300])}",
                                where=redact(self.api_base or "litellm default endpoint"),
                                fix="check the model name, the --api-base URL and its key "
                                    f"({API_KEY_ENV}).") from None
            scores = [np.nan] * len(documents)
            for result in response.results or []:
                scores[int(result["index"])] = float(result["relevance_score"])
            if any(np.isnan(s) for s in scores):
                raise EmbSError(f"reranker {self.model!r} scored {sum(not np.isnan(s) for s in scores)} of "
                                f"{len(documents)} documents", where=redact(self.api_base or "litellm"),
                                fix="the server must return a score for every document (top_n = all).")
            return scores
        raise EmbSError(f"reranker {self.model!r} failed after {self.max_retries + 1} attempts; last: {last}",
                        where=redact(self.api_base or "litellm default endpoint"),
                        fix="check that the server is up, then rerun: finished batches are kept.")
