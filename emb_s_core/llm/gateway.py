"""The one place that calls litellm: retries, concurrency, context-window check, cost.

Why one gateway: every protocol (localization, QA, judges) must behave the same way under failure. A rerun must cost
nothing (:mod:`emb_s_core.llm.cache`); a rate limit, timeout or 5xx must be retried with exponential backoff
(``delay = backoff · 2^attempt``, capped); an input that does not fit the window must never be sent and never be
scored zero (``prompt_tokens + max_tokens > window`` → status ``does_not_fit``, checked before the cache is read, so
a reply cached under a larger window never makes it ``ok``); and API keys must never leak into
logs, results or exceptions (every message passes :func:`emb_s_core.llm.secrets.redact`).

The offline demo model (:mod:`emb_s_core.llm.local`) is served through a litellm custom provider registered in
:func:`load_litellm`, so it goes through exactly the same path as a hosted model.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from emb_s_core.errors import EmbSError
from emb_s_core.llm.cache import CACHE_FILE, ResponseCache
from emb_s_core.llm import bounded, retry
from emb_s_core.llm.local import LOCAL_LABEL, LOCAL_MODEL, LOCAL_WINDOW, local_handler, local_tokenizer
from emb_s_core.llm.secrets import NO_KEY, SECRET_NAME, load_secrets, redact
from emb_s_core.schema import DOES_NOT_FIT, ERROR, OK

Messages = list[dict[str, str]]
ProgressFn = Callable[[str, float], None]


@dataclass
class CallResult:
    """One model call: the reply, or why there is none (``does_not_fit`` is never a zero score)."""

    status: str
    text: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    cached: bool = False
    attempts: int = 0
    error: str | None = None

    def to_detail(self) -> dict:
        return {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                "cost": self.cost, "cached": self.cached, "error": self.error}


@dataclass
class Usage:
    """Running totals for one gateway (thread-safe updates)."""

    calls: int = 0
    ok: int = 0  # replies this gateway returned (sent or from the cache)
    cache_hits: int = 0
    does_not_fit: int = 0
    errors: int = 0
    error_kinds: dict[str, int] = field(default_factory=dict)  # "BadRequestError": 3, ... (see error_kind)
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0


OPENAI_COMPATIBLE = frozenset({"openai", "text-completion-openai"})


@dataclass
class Gateway:
    """Calls one model through litellm with the project's guarantees.

    ``context_window`` overrides litellm's model info and is required for models litellm does not know.
    ``params`` go to ``litellm.completion`` unchanged (``api_base``, ``mock_response`` in tests, ...); all of them
    except secrets are part of the cache key.
    """

    model: str
    cache_path: str | os.PathLike[str] | None = None
    context_window: int | None = None
    max_tokens: int = 256
    temperature: float = 0.0
    concurrency: int = 4
    max_retries: int | None = None  # None: EMB_S_LLM_RETRIES, else 4 (see llm.retry)
    backoff: float = 1.0
    max_backoff: float = 60.0
    timeout: float | None = None  # seconds per call; None: EMB_S_LLM_TIMEOUT, else 180
    params: dict[str, Any] = field(default_factory=dict)
    usage: Usage = field(default_factory=Usage)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self.timeout = retry.llm_timeout(self.timeout)
        self.max_retries = retry.llm_retries(self.max_retries)
        self.cache = ResponseCache(self.cache_path) if self.cache_path else None
        self.is_local = self.model == LOCAL_MODEL
        if self.is_local:
            self.concurrency = 1  # one CPU model; threads would only contend
        provider = self.model.split("/")[0] if "/" in self.model else "openai"
        if self.params.get("api_base") and "api_key" not in self.params and provider in OPENAI_COMPATIBLE:
            load_secrets()  # a key in .streamlit/secrets.toml counts
            if not os.environ.get("OPENAI_API_KEY"):
                self.params["api_key"] = NO_KEY  # a local server ignores it (as the embedding endpoints do)
        self._window = self._resolve_window()

    @classmethod
    def for_workspace(cls, ws: Any, model: str, **kwargs: Any) -> "Gateway":
        """A gateway whose cache lives in the workspace folder (``<workspace>/llm_cache.sqlite``)."""
        return cls(model, cache_path=Path(ws.path) / CACHE_FILE, **kwargs)

    # ------------------------------------------------------------------ window, tokens, cost
    @property
    def window(self) -> int:
        return self._window

    def _resolve_window(self) -> int:
        if self.context_window is not None:
            if int(self.context_window) <= 0:
                raise EmbSError(f"context window must be positive, got {self.context_window}",
                                fix="pass --context-window N with N > 0.")
            return int(self.context_window)
        if self.is_local:
            return LOCAL_WINDOW
        litellm = load_litellm()
        try:
            info = litellm.get_model_info(self.model)
        except Exception:
            info = {}
        window = info.get("max_input_tokens") or info.get("max_tokens")
        if not window:
            raise EmbSError(f"litellm does not know the context window of model {self.model!r}",
                            fix="pass --context-window N (tokens) for this model.")
        return int(window)

    def count_tokens(self, messages: Messages) -> int:
        """Prompt tokens as the model sees them (local: its own chat template; others: litellm's counter)."""
        if self.is_local:
            return len(local_tokenizer().apply_chat_template(messages, add_generation_prompt=True, tokenize=True,
                                                              return_dict=True)["input_ids"])
        return int(load_litellm().token_counter(model=self.model, messages=messages))

    def fits(self, prompt_tokens: int) -> bool:
        """``prompt_tokens + max_tokens ≤ window``: the reply needs room too."""
        return prompt_tokens + self.max_tokens <= self.window

    def price(self, prompt_tokens: int, completion_tokens: int) -> float | None:
        """USD from litellm's bundled cost map; 0 for the local model; None when the map has no price."""
        if self.is_local:
            return 0.0
        try:
            p, c = load_litellm().cost_per_token(model=self.model, prompt_tokens=prompt_tokens,
                                             completion_tokens=completion_tokens)
        except Exception:
            return None
        return float(p + c)

    # ------------------------------------------------------------------ keys
    def check_credentials(self) -> None:
        """Fail before any work when the provider's key is missing (names the variable, never its value)."""
        if self.is_local or "mock_response" in self.params or "api_key" in self.params or "api_base" in self.params:
            return
        load_secrets()
        try:
            env = load_litellm().validate_environment(model=self.model)
        except Exception:
            return
        missing = env.get("missing_keys") or []
        if missing and not env.get("keys_in_environment"):
            raise EmbSError(f"no API key for model {self.model!r}: {', '.join(missing)} is not set",
                            fix=f"export {missing[0]}=... or put it in .streamlit/secrets.toml.")

    # ------------------------------------------------------------------ calls
    def cache_key(self, messages: Messages, salt: object = None) -> str:
        params = {k: v for k, v in self.params.items() if not SECRET_NAME.search(k)}
        blob = json.dumps({"model": self.model, "messages": messages, "max_tokens": self.max_tokens,
                           "temperature": self.temperature, "params": params, "salt": salt},
                          sort_keys=True, default=repr)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    def complete(self, messages: Messages, *, salt: object = None, prompt_tokens: int | None = None) -> CallResult:
        """One call: window check → cache → litellm with retries → cache. Never raises for per-call failures
        (they come back as status ``error``); raises EmbSError for problems the user must fix (key, model).

        The window check comes first, always: the cache key does not hold the window, so a reply cached under a
        larger ``context_window`` must never turn a prompt that does not fit this one into ``ok``.
        """
        n_prompt = self.count_tokens(messages) if prompt_tokens is None else prompt_tokens
        if not self.fits(n_prompt):
            with self._lock:
                self.usage.does_not_fit += 1
            return CallResult(DOES_NOT_FIT, prompt_tokens=n_prompt,
                              error=f"{n_prompt} prompt + {self.max_tokens} reply tokens > window {self.window}")
        key = self.cache_key(messages, salt)
        if self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                with self._lock:
                    self.usage.cache_hits += 1
                    self.usage.ok += 1
                return CallResult(OK, hit["text"], hit["prompt_tokens"], hit["completion_tokens"], 0.0, cached=True)
        result = self._call_with_retries(messages, n_prompt)
        with self._lock:
            self.usage.prompt_tokens += result.prompt_tokens
            self.usage.completion_tokens += result.completion_tokens
            self.usage.cost += result.cost
            self.usage.retries += max(0, result.attempts - 1)
            self.usage.errors += result.status == ERROR
            self.usage.ok += result.status == OK
            if result.status == ERROR:
                kind = error_kind(result.error)
                self.usage.error_kinds[kind] = self.usage.error_kinds.get(kind, 0) + 1
        if result.status == OK and self.cache is not None:
            self.cache.put(key, self.model, result.text or "", result.prompt_tokens, result.completion_tokens,
                           result.cost)
        return result

    def complete_many(self, batch: Sequence[Messages], *, salts: Sequence[object] | None = None,
                      prompt_tokens: Sequence[int | None] | None = None) -> list[CallResult]:
        """``complete`` over a batch with at most ``concurrency`` calls in flight; results in input order."""
        salts = list(salts) if salts is not None else [None] * len(batch)
        counts = list(prompt_tokens) if prompt_tokens is not None else [None] * len(batch)
        if self.concurrency <= 1 or len(batch) <= 1:
            return [self.complete(m, salt=s, prompt_tokens=c) for m, s, c in zip(batch, salts, counts)]
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            return list(pool.map(lambda args: self.complete(args[0], salt=args[1], prompt_tokens=args[2]),
                                 zip(batch, salts, counts)))

    def _call_with_retries(self, messages: Messages, n_prompt: int) -> CallResult:
        """litellm with the timeout and retries of :mod:`.retry`; a malformed reply (no choices, no message) is an
        error cell with its reason, never a traceback and never an ``ok`` reply."""
        litellm = load_litellm()
        retryable = retry.transient(litellm)
        fatal = (litellm.AuthenticationError, litellm.PermissionDeniedError, litellm.NotFoundError)
        what = redact(f"model {self.model}")
        attempts = self.max_retries + 1
        last = ""
        for attempt in range(attempts):
            with self._lock:
                self.usage.calls += 1
            try:
                response = self._send(litellm, messages)
                text = redact(reply_text(response))  # a reply echoing a key is stored and shown masked
            except bounded.ReplyTooLarge as exc:  # never retried: the server would send it again
                return CallResult(ERROR, prompt_tokens=n_prompt, attempts=attempt + 1,
                                  error=f"ReplyTooLarge: {exc} ({self.max_tokens} tokens asked); nothing of it was "
                                        "stored")
            except litellm.ContextWindowExceededError as exc:
                return CallResult(DOES_NOT_FIT, prompt_tokens=n_prompt, attempts=attempt + 1,
                                  error=redact(f"provider: {type(exc).__name__}"))
            except fatal as exc:
                raise EmbSError(f"model {self.model!r} refused the call: {redact(_short(exc))}",
                                fix="check the model name and its API key (environment or .streamlit/secrets.toml)."
                                ) from None
            except retryable as exc:
                last = redact(retry.describe(exc))
                if attempt < self.max_retries:
                    wait = retry.delay(attempt, self.backoff, self.max_backoff)
                    retry.announce(what, attempt, attempts, wait, last)
                    time.sleep(wait)
                continue
            except Exception as exc:  # noqa: BLE001 - a per-call failure is recorded, the run goes on
                return CallResult(ERROR, prompt_tokens=n_prompt, attempts=attempt + 1,
                                  error=redact(f"{type(exc).__name__}: {_short(exc)}"))
            usage = getattr(response, "usage", None)
            p_tok = _count(getattr(usage, "prompt_tokens", 0)) or n_prompt
            c_tok = _count(getattr(usage, "completion_tokens", 0))
            cost = self.price(p_tok, c_tok) or 0.0
            return CallResult(OK, text, p_tok, c_tok, cost, attempts=attempt + 1)
        retry.give_up(what, attempts, last, "the call is an error cell; finished calls are kept and a rerun "
                                            "sends only the failed ones")
        return CallResult(ERROR, prompt_tokens=n_prompt, attempts=attempts,
                          error=f"gave up after {attempts} attempts (timeout {self.timeout:g} s); last: {last}")

    def _send(self, litellm: Any, messages: Messages) -> Any:
        """One litellm call, bounded in all by the timeout and in reply size by the tokens asked."""
        with bounded.limits(self.timeout, bounded.chat_reply_limit(self.max_tokens)) as state:
            try:
                response = litellm.completion(model=self.model, messages=messages, max_tokens=self.max_tokens,
                                              temperature=self.temperature, timeout=self.timeout, num_retries=0,
                                              **self.params)
            except Exception:
                bounded.check(state)
                raise
        return response

    # ------------------------------------------------------------------ estimate
    def estimate(self, batch: Iterable[Messages], *, salts: Sequence[object] | None = None,
                 prompt_tokens: Sequence[int | None] | None = None) -> dict:
        """What a run would cost before it starts: calls, cached, does-not-fit, tokens, USD (upper bound: every
        reply at ``max_tokens``)."""
        batch = list(batch)
        salts = list(salts) if salts is not None else [None] * len(batch)
        counts = list(prompt_tokens) if prompt_tokens is not None else [None] * len(batch)
        out = {"model": self.model, "window": self.window, "calls": len(batch), "cached": 0, "does_not_fit": 0,
               "to_send": 0, "prompt_tokens": 0, "max_completion_tokens": 0, "cost_usd_max": 0.0}
        for messages, salt, count in zip(batch, salts, counts):
            n = self.count_tokens(messages) if count is None else count
            if not self.fits(n):  # before the cache, as in complete()
                out["does_not_fit"] += 1
                continue
            if self.cache is not None and self.cache.get(self.cache_key(messages, salt)) is not None:
                out["cached"] += 1
                continue
            out["to_send"] += 1
            out["prompt_tokens"] += n
            out["max_completion_tokens"] += self.max_tokens
        price = self.price(out["prompt_tokens"], out["max_completion_tokens"])
        out["cost_usd_max"] = price
        if self.is_local:
            out["note"] = LOCAL_LABEL
        elif price is None:
            out["note"] = "litellm's cost map has no price for this model; cost unknown"
        return out


_ERROR_NAME = re.compile(r"\b([A-Z]\w*(?:Error|Exception|Timeout))\b")


def error_kind(error: str | None) -> str:
    """A short class for an error message, for counts: the exception name it names ("BadRequestError"), with
    "after retries" when the gateway gave up retrying it."""
    text = error or ""
    names = _ERROR_NAME.findall(text)
    name = names[0] if names else (text.split(":")[0][:40] or "error")
    return f"{name} (after retries)" if text.startswith("gave up after") else name


class MalformedReply(Exception):
    """A reply that parsed as JSON but lacks what a chat completion must hold."""


def reply_text(response: Any) -> str:
    """The first choice's message text, or MalformedReply naming what is missing (``choices: []``, no message,
    content that is not text)."""
    choices = getattr(response, "choices", None)
    if not choices:
        raise MalformedReply("the reply has no choices (choices: [] or missing)")
    message = getattr(choices[0], "message", None)
    if message is None:
        raise MalformedReply("the reply's first choice has no message")
    content = getattr(message, "content", None)
    if content is not None and not isinstance(content, str):
        raise MalformedReply(f"the reply's message content is {type(content).__name__}, not text")
    return content or ""


def _count(value: Any) -> int:
    """A token count from a reply's usage; anything that is not a non-negative whole number counts as 0."""
    try:
        number = int(value or 0)
    except (TypeError, ValueError):
        return 0
    return max(number, 0)


def _short(exc: BaseException, limit: int = 300) -> str:
    return retry.one_line(str(exc), limit)


# --------------------------------------------------------------------------------------------- litellm
_LITELLM_LOCK = threading.Lock()
_LITELLM: Any = None


def load_litellm() -> Any:
    """Import litellm once (3-4 s), quiet, offline cost map, with the local provider registered."""
    global _LITELLM
    with _LITELLM_LOCK:
        if _LITELLM is None:
            os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            import litellm

            litellm.suppress_debug_info = True
            litellm.telemetry = False
            # the project's retry policy (llm.retry) is the only one: litellm would otherwise let the OpenAI client
            # retry each embedding request twice more (it reads max_retries=0 as "the default")
            litellm.DEFAULT_MAX_RETRIES = 0
            # every HTTP exchange bounded in time and size by the call in progress (llm.bounded)
            litellm.client_session = bounded.http_client()
            if not any(item.get("provider") == "local" for item in litellm.custom_provider_map):
                litellm.custom_provider_map = [*litellm.custom_provider_map,
                                               {"provider": "local", "custom_handler": local_handler()}]
            _LITELLM = litellm
    return _LITELLM


def progress_noop(stage: str, fraction: float) -> None:  # pragma: no cover - default progress callback
    return None
