"""Fake OpenAI-compatible endpoints on 127.0.0.1 for tests: the JSON reply and the threaded server every fake
endpoint needs (embeddings, chat completions, rerank), so each test writes only what its endpoint answers."""
from __future__ import annotations

import json
import threading
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
