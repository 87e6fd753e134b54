"""Every endpoint exchange bounded in time (connect, first byte and total) and in reply size.

Why at the socket: httpx's timeouts are per read, so a server that sends one byte every 2 s, or streams without end,
never trips them. litellm sends every HTTP request of the calls this project makes (chat through the OpenAI client,
embeddings, served reranking) through ``litellm.client_session`` or a handler given one; :func:`http_client` is that
client, and its sockets read the limits of the call in progress (:func:`limits`, a context variable, so each thread
of a batch has its own): each read waits at most until the call's deadline, and the bytes received are counted
against what the call asked for (tokens → bytes for chat, dimension × inputs for embeddings). A reply over its size
is cut off there, nothing of it is kept, and the caller reports it as one error (never retried: the server would send
it again).
"""
from __future__ import annotations

import contextlib
import contextvars
import threading
import time
from dataclasses import dataclass
from typing import Any, Iterator

#: room for headers and the JSON around a reply's payload
BASE_REPLY_BYTES = 1 << 20
#: bytes one generated token may take in a chat reply (JSON escapes of non-ASCII text are 6 bytes a character)
BYTES_PER_TOKEN = 256
#: bytes one vector component may take in a JSON embedding reply ("-0.012345678901234567, ")
BYTES_PER_COMPONENT = 32
#: the widest embedding assumed before an endpoint's dimension is known
MAX_DIMENSION = 16384
#: bytes of one document's entry in a rerank reply
BYTES_PER_RERANK_RESULT = 512


def chat_reply_limit(max_tokens: int) -> int:
    """The largest chat reply body accepted for ``max_tokens`` asked."""
    return BASE_REPLY_BYTES + BYTES_PER_TOKEN * max(int(max_tokens), 1)


def embedding_reply_limit(n_inputs: int, dim: int | None) -> int:
    """The largest embedding reply body accepted for ``n_inputs`` texts of dimension ``dim`` (unknown: the widest)."""
    return BASE_REPLY_BYTES + BYTES_PER_COMPONENT * max(n_inputs, 1) * (dim or MAX_DIMENSION)


def rerank_reply_limit(n_documents: int) -> int:
    return BASE_REPLY_BYTES + BYTES_PER_RERANK_RESULT * max(n_documents, 1)


@dataclass
class Limits:
    """One call's bounds and what happened: ``deadline`` (time.monotonic), ``max_bytes``; ``too_large`` and
    ``timed_out`` are set when a bound cut the exchange off."""

    deadline: float
    max_bytes: int
    received: int = 0
    too_large: bool = False
    timed_out: bool = False

    def remaining(self) -> float:
        return self.deadline - time.monotonic()


_CURRENT: contextvars.ContextVar[Limits | None] = contextvars.ContextVar("emb_s_http_limits", default=None)


@contextlib.contextmanager
def limits(timeout: float, max_bytes: int) -> Iterator[Limits]:
    """Bound every HTTP exchange made inside the block (this thread) to ``timeout`` seconds in all and ``max_bytes``
    received per exchange."""
    state = Limits(time.monotonic() + float(timeout), int(max_bytes))
    token = _CURRENT.set(state)
    try:
        yield state
    finally:
        _CURRENT.reset(token)


class ReplyTooLarge(Exception):
    """A reply bigger than what its call asked for (never retried: the server would send it again)."""


def check(state: Limits) -> None:
    """Raise ReplyTooLarge when an exchange of the call was cut off at its size."""
    if state.too_large:
        raise ReplyTooLarge(f"the reply passed {state.max_bytes:,} bytes, more than the call asked for")


def _deadline_timeout(timeout: float | None) -> float | None:
    state = _CURRENT.get()
    if state is None:
        return timeout
    left = state.remaining()
    if left <= 0:
        state.timed_out = True
        import httpcore

        raise httpcore.ReadTimeout("the call's deadline has passed")
    return left if timeout is None else min(timeout, left)


class _BoundedStream:
    """A httpcore network stream whose reads and writes wait at most until the deadline and whose reads count."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        import httpcore

        try:
            data = self._inner.read(max_bytes, _deadline_timeout(timeout))
        except httpcore.ReadTimeout:
            state = _CURRENT.get()
            if state is not None and state.remaining() <= 0:
                state.timed_out = True
            raise
        state = _CURRENT.get()
        if state is not None:
            state.received += len(data)
            if state.received > state.max_bytes:
                state.too_large = True
                raise httpcore.ReadError(f"reply larger than {state.max_bytes} bytes")
        return data

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _deadline_timeout(timeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None) -> Any:
        return _BoundedStream(self._inner.start_tls(ssl_context, server_hostname, _deadline_timeout(timeout)))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


def _backend() -> Any:
    import httpcore

    class BoundedBackend(httpcore.SyncBackend):
        def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                        socket_options: Any = None) -> Any:
            return _BoundedStream(super().connect_tcp(host, port, _deadline_timeout(timeout), local_address,
                                                      socket_options))

    return BoundedBackend()


def _reset_received() -> None:
    state = _CURRENT.get()
    if state is not None:
        state.received = 0


def _transport() -> Any:
    """httpx's transport with the bounded backend and a fresh byte count per request."""
    import httpx

    class BoundedTransport(httpx.HTTPTransport):
        def handle_request(self, request: httpx.Request) -> httpx.Response:
            _reset_received()
            return super().handle_request(request)

    transport = BoundedTransport()
    transport._pool._network_backend = _backend()  # noqa: SLF001 - httpx offers no other way to choose it
    return transport


_CLIENT_LOCK = threading.Lock()
_CLIENT: Any = None


def http_client() -> Any:
    """The one httpx client every endpoint call goes through (bounded by the :func:`limits` of the call)."""
    global _CLIENT
    with _CLIENT_LOCK:
        if _CLIENT is None:
            import httpx

            _CLIENT = httpx.Client(transport=_transport(), timeout=None)
    return _CLIENT
