"""One timeout-and-retry policy for every endpoint call (chat models, embedding servers, served rerankers).

Why one module: a server that accepts the connection and never answers must end in a bounded time with a clear
line, the same way for every protocol. Each call has a timeout (a flag, else an environment setting, else a default:
well under a minute for an embedding batch, a few minutes for a long-context generation); a transient failure
(timeout, connection refused, 429, 5xx) is retried with capped exponential backoff, and each retry is announced on
stderr (what failed, which attempt, how long the wait), so a slow endpoint is never a silent hang.
"""
from __future__ import annotations

import math
import os
import random
import sys
from typing import Any

from emb_s_core.errors import EmbSError

LLM_TIMEOUT_ENV = "EMB_S_LLM_TIMEOUT"
LLM_RETRIES_ENV = "EMB_S_LLM_RETRIES"
EMBEDDING_TIMEOUT_ENV = "EMB_S_EMBEDDING_TIMEOUT"
EMBEDDING_RETRIES_ENV = "EMB_S_EMBEDDING_RETRIES"
DEFAULT_LLM_TIMEOUT = 180.0  # seconds per generation call: a 128K-token prompt on a busy server takes minutes
DEFAULT_LLM_RETRIES = 4
DEFAULT_EMBEDDING_TIMEOUT = 30.0  # seconds per embedding batch
DEFAULT_EMBEDDING_RETRIES = 3


def setting(value: float | int | None, env: str, default: float | int, *, flag: str, integer: bool = False,
            minimum: float = 0.0) -> Any:
    """``value`` (a flag) when given, else the environment variable ``env``, else ``default``; checked: a number
    above ``minimum`` (retries: at least ``minimum``), so a typo fails before any call with the name to fix."""
    source = flag
    if value is None:
        raw = os.environ.get(env, "").strip()
        if not raw:
            return default
        source = env
        try:
            value = int(raw) if integer else float(raw)
        except ValueError:
            raise EmbSError(f"{env}={raw!r} is not a number", fix=f"set {env} to a number, or unset it.") from None
    number = float(value)
    ok = math.isfinite(number) and (number >= minimum if integer else number > minimum)
    if not ok or (integer and number != int(number)):
        bound = f"a whole number ≥ {minimum:g}" if integer else f"a number > {minimum:g}"
        raise EmbSError(f"{source} must be {bound}, got {value!r}", fix=f"pass {flag} or set {env} to {bound}.")
    return int(number) if integer else number


def llm_timeout(value: float | None = None) -> float:
    return setting(value, LLM_TIMEOUT_ENV, DEFAULT_LLM_TIMEOUT, flag="--timeout")


def llm_retries(value: int | None = None) -> int:
    return setting(value, LLM_RETRIES_ENV, DEFAULT_LLM_RETRIES, flag="--retries", integer=True)


def embedding_timeout(value: float | None = None) -> float:
    return setting(value, EMBEDDING_TIMEOUT_ENV, DEFAULT_EMBEDDING_TIMEOUT, flag="--timeout")


def embedding_retries(value: int | None = None) -> int:
    return setting(value, EMBEDDING_RETRIES_ENV, DEFAULT_EMBEDDING_RETRIES, flag="--retries", integer=True)


def transient(litellm: Any) -> tuple[type[BaseException], ...]:
    """The litellm errors worth another attempt: timeouts, refused connections, rate limits, 5xx."""
    return (litellm.RateLimitError, litellm.Timeout, litellm.APIConnectionError, litellm.InternalServerError,
            litellm.ServiceUnavailableError, litellm.BadGatewayError)


def delay(attempt: int, backoff: float, cap: float) -> float:
    """Seconds before attempt ``attempt + 1``: ``backoff · 2^attempt`` capped, with jitter (half to full)."""
    return min(cap, backoff * 2 ** attempt) * (0.5 + random.random() / 2)


def one_line(text: str, limit: int = 200) -> str:
    """``text`` on one line, cut before any traceback a library pasted into its message, at most ``limit`` chars."""
    text = text.split("Traceback (most recent call last)")[0]
    return " ".join(text.split())[:limit].rstrip(" :-")


def describe(exc: BaseException, limit: int = 200) -> str:
    """``Name: first words of the message`` on one line (callers redact it)."""
    return f"{type(exc).__name__}: {one_line(str(exc), limit)}"


def announce(what: str, attempt: int, attempts: int, wait: float, reason: str) -> None:
    """One stderr line per retry: ``<what>: <reason>; attempt 2 of 5 in 1.3 s``."""
    print(f"{what}: {reason}; attempt {attempt + 2} of {attempts} in {wait:.1f} s", file=sys.stderr, flush=True)


def give_up(what: str, attempts: int, reason: str, kept: str) -> None:
    """The one line printed when the retries are spent: what failed, how often, and what was kept."""
    print(f"{what}: gave up after {attempts} attempts ({reason}); {kept}", file=sys.stderr, flush=True)
