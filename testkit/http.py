"""Fake OpenAI-compatible endpoints on 127.0.0.1 for tests: the JSON reply and the threaded server every fake
endpoint needs (embeddings, chat completions, rerank), so each test writes only what its endpoint answers."""
from __future__ import annotations

import hashlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def send_json(handler: BaseHTTPRequestHandler, code: int, body: object) -> None:
    """Answer the request with status ``code`` and ``body`` as JSON."""
    raw = json.dumps(body).encode()
    handler.send_response(code)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(raw)))
    handler.end_headers()
    handler.wfile.write(raw)


def start(handler: type[BaseHTTPRequestHandler]) -> ThreadingHTTPServer:
    """Serve ``handler`` on a free port of 127.0.0.1 in a daemon thread (``shutdown()`` stops it)."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


# ------------------------------------------------------------------------------------ a misbehaving endpoint
#: what each route of :class:`MisbehavingEndpoint` does (``<behaviour>-if-<word>``: only to requests holding word)
BEHAVIOURS = ("ok", "hang", "slow", "500", "flaky", "garbage", "empty", "short", "dim", "nan", "missing", "drip",
              "endless", "huge")


def fake_vector(text: str, dim: int) -> list[float]:
    """A deterministic unit-free vector for ``text`` (its SHA-256 bytes, centred): same text, same vector."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return [(digest[i % len(digest)] - 127.5) / 128.0 for i in range(dim)]


class MisbehavingEndpoint:
    """An OpenAI-compatible server (``/v1/embeddings``, ``/v1/chat/completions``) on 127.0.0.1 with one route per
    behaviour: ``api_base = endpoint.base("hang")`` hangs, ``base("flaky")`` answers 503 ``flaky_failures`` times
    and then well, ``base("dim")`` changes the vectors' dimension after its first reply, and so on (BEHAVIOURS).
    ``base("hang-if-WORD")`` misbehaves only for requests whose texts hold WORD. ``heal()`` makes every route
    answer well (a rerun against a repaired server). ``drip`` announces a 100000-byte reply and sends one byte
    every ``drip_s``; ``endless`` streams a chunked reply without end; ``huge`` sends a valid reply padded to
    ``huge_bytes``. Bounded: a hang lasts at most ``hang_s`` (or until ``close``),
    and the server stops by itself after ``lifetime_s``. ``requests`` lists (route, kind, texts) of every request."""

    def __init__(self, dim: int = 8, slow_s: float = 0.3, hang_s: float = 20.0, flaky_failures: int = 2,
                 lifetime_s: float = 300.0, drip_s: float = 2.0, huge_bytes: int = 40 << 20) -> None:
        self.dim, self.slow_s, self.hang_s, self.flaky_failures = dim, slow_s, hang_s, flaky_failures
        self.drip_s, self.huge_bytes = drip_s, huge_bytes
        self.requests: list[tuple[str, str, list[str]]] = []
        self.healed = False
        self._seen: dict[str, int] = {}
        self._lock = threading.Lock()
        self._released = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:
                outer._answer(self)

        self.httpd = start(Handler)
        self.port = self.httpd.server_address[1]
        self._timer = threading.Timer(lifetime_s, self.close)
        self._timer.daemon = True
        self._timer.start()

    def base(self, behaviour: str) -> str:
        return f"http://127.0.0.1:{self.port}/{behaviour}/v1"

    def heal(self) -> None:
        self.healed = True

    def sent(self, route: str | None = None, kind: str | None = None) -> list[list[str]]:
        """The texts of each request (to ``route``/of ``kind`` when given)."""
        return [texts for r, k, texts in self.requests if route in (None, r) and kind in (None, k)]

    def close(self) -> None:
        self._released.set()
        self._timer.cancel()
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> "MisbehavingEndpoint":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ----------------------------------------------------------------------------------------- internals
    def _answer(self, handler: BaseHTTPRequestHandler) -> None:
        route, _, rest = handler.path.lstrip("/").partition("/")
        kind = "embeddings" if rest.endswith("embeddings") else "chat"
        try:
            body = json.loads(handler.rfile.read(int(handler.headers.get("Content-Length") or 0)) or b"{}")
        except ValueError:
            body = {}
        if kind == "embeddings":
            raw = body.get("input", [])
            texts = [raw] if isinstance(raw, str) else [str(t) for t in raw]
        else:
            texts = [str(m.get("content", "")) for m in body.get("messages", [])]
        behaviour, _, word = route.partition("-if-")
        with self._lock:
            self.requests.append((route, kind, texts))
            seen = self._seen[route] = self._seen.get(route, 0) + 1
        if self.healed or (word and not any(word in t for t in texts)):
            behaviour = "ok"
        if behaviour == "hang":
            self._released.wait(self.hang_s)  # bounded; the client's timeout should end it much sooner
            return  # close without a reply
        if behaviour == "slow":
            time.sleep(self.slow_s)
        if behaviour in ("drip", "endless"):
            self._trickle(handler, behaviour)
            return
        if behaviour == "500" or (behaviour == "flaky" and seen <= self.flaky_failures):
            code = 500 if behaviour == "500" else 503
            send_json(handler, code, {"error": {"message": f"{behaviour} route", "type": "server_error"}})
            return
        if behaviour == "garbage":
            raw_reply = b"<html>this is not JSON"
            handler.send_response(200)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(raw_reply)))
            handler.end_headers()
            handler.wfile.write(raw_reply)
            return
        reply = self._embeddings(behaviour, texts, seen) if kind == "embeddings" else self._chat(behaviour, texts, body)
        if behaviour == "huge":
            reply["padding"] = "x" * self.huge_bytes
        try:
            send_json(handler, 200, reply)
        except OSError:  # the client hung up (a bounded client refusing a huge reply)
            return

    def _trickle(self, handler: BaseHTTPRequestHandler, behaviour: str) -> None:
        """``drip``: one byte of a 100000-byte body every ``drip_s``; ``endless``: 64 KiB chunks without end. Both
        stop at ``hang_s`` or ``close`` (the client's bounds should end them much sooner)."""
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        if behaviour == "drip":
            handler.send_header("Content-Length", "100000")
        else:
            handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        stop = time.monotonic() + self.hang_s
        chunk = b" " * 65536
        try:
            handler.wfile.write(b"{" if behaviour == "drip" else b"1\r\n{\r\n")
            while time.monotonic() < stop and not self._released.is_set():
                if behaviour == "drip":
                    handler.wfile.write(b" ")
                    handler.wfile.flush()
                    self._released.wait(self.drip_s)
                else:
                    handler.wfile.write(b"10000\r\n" + chunk + b"\r\n")
        except OSError:  # the client hung up: what a bounded client does
            return

    def _embeddings(self, behaviour: str, texts: list[str], seen: int) -> dict:
        dim = self.dim + 1 if behaviour == "dim" and seen > 1 else self.dim
        data = [{"object": "embedding", "index": i, "embedding": fake_vector(t, dim)} for i, t in enumerate(texts)]
        if behaviour == "empty":
            data = []
        elif behaviour == "short":
            data = data[:-1]
        elif behaviour == "nan":
            data[0]["embedding"][0] = float("nan")
        elif behaviour == "missing":
            del data[0]["embedding"]
        return {"object": "list", "model": "fake", "data": data, "usage": {"prompt_tokens": 1, "total_tokens": 1}}

    def _chat(self, behaviour: str, texts: list[str], body: dict) -> dict:
        choice = {"index": 0, "finish_reason": "stop",
                  "message": {"role": "assistant", "content": f"reply to: {(texts or [''])[-1][:40]}"}}
        if behaviour == "missing":
            del choice["message"]
        choices = [] if behaviour in ("empty", "short") else [choice]
        return {"id": "fake-1", "object": "chat.completion", "created": int(time.time()), "model": body.get("model"),
                "choices": choices, "usage": {"prompt_tokens": 5, "completion_tokens": 3, "total_tokens": 8}}
