"""dense:litellm/<model> against a real OpenAI-compatible /v1/embeddings server on 127.0.0.1 (stdlib http.server in
a thread) backed by the offline MiniLM: litellm's real client, real HTTP, batching, caching, retries."""
from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler

import numpy as np
import pytest

from emb_s_core import retrievers
from emb_s_core.errors import EmbSError
from emb_s_core.retrievers import embedders
from testkit.http import send_json, start
from testkit.retrieval_bank import text_workspace

TEXTS = ["Paris is the capital of France.", "Berlin is the capital of Germany.", "Insulin lowers blood sugar.",
         "The treaty ended the war.", "Contracts bind the parties."]


class Server:
    def __init__(self, fail_first: int = 0):
        self.model = embedders._load_st(str(embedders.minilm_l6_path()))
        self.requests: list[list[str]] = []
        self.fail_left = fail_first
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # keep test output clean
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if outer.fail_left > 0:
                    outer.fail_left -= 1
                    self.send_response(503)
                    self.send_header("Content-Type", "application/json")
                    self.end_headers()
                    self.wfile.write(b'{"error": {"message": "busy", "type": "server_error"}}')
                    return
                texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
                outer.requests.append(texts)
                vecs = outer.model.encode(texts, normalize_embeddings=False)
                data = {"object": "list", "model": body["model"],
                        "data": [{"object": "embedding", "index": i, "embedding": v.tolist()}
                                 for i, v in enumerate(vecs)],
                        "usage": {"prompt_tokens": 1, "total_tokens": 1}}
                send_json(self, 200, data)

        self.httpd = start(Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def close(self):
        self.httpd.shutdown()


@pytest.fixture
def server():
    s = Server()
    yield s
    s.close()


def test_litellm_embeddings_match_the_local_model_and_are_cached(tmp_path, server):
    ws = text_workspace(tmp_path, TEXTS)
    r = retrievers.get("dense:litellm/openai/minilm", api_base=server.url)
    r.embedder.batch_size = 2
    r.prepare(ws, None)
    assert [len(b) for b in server.requests] == [2, 2, 1]  # batched
    local = server.model.encode(TEXTS, normalize_embeddings=True)
    np.testing.assert_allclose(r.vectors, local, atol=1e-5)
    assert int(np.argmax(r.score(["capital of Germany"]))) == 1
    server.requests.clear()
    again = retrievers.get("dense:litellm/openai/minilm", api_base=server.url)
    again.prepare(ws, None)
    assert again.embedded == 0 and server.requests == []  # documents come from the cache
    assert again.config()["model"] == "openai/minilm" and again.config()["chunk_size"] == 512


def test_litellm_retries_then_succeeds(tmp_path):
    s = Server(fail_first=1)
    try:
        r = retrievers.get("dense:litellm/openai/minilm", api_base=s.url)
        r.embedder.retries = 2
        vec = r.embedder.encode(["hello"])
        assert vec.shape == (1, 384) and s.fail_left == 0
    finally:
        s.close()


def test_unreachable_endpoint_is_a_clear_error(tmp_path):
    ws = text_workspace(tmp_path, TEXTS[:2])
    r = retrievers.get("dense:litellm/openai/minilm", api_base="http://127.0.0.1:9/v1")
    r.embedder.retries = 0
    version = ws.version
    with pytest.raises(EmbSError, match="embedding endpoint failed for model 'openai/minilm'"):
        r.prepare(ws, None)
    assert ws.version == version


def test_several_replicas_share_the_batches_and_a_dead_one_is_named(tmp_path):
    a, b = Server(), Server()
    try:
        r = retrievers.get("dense:litellm/openai/minilm", api_base=f"{a.url}, {b.url}")
        r.embedder.batch_size = 1
        vecs = r.embedder.encode(TEXTS)
        # round-robin: batch i to replica i mod 2
        assert a.requests == [[TEXTS[0]], [TEXTS[2]], [TEXTS[4]]] and b.requests == [[TEXTS[1]], [TEXTS[3]]]
        np.testing.assert_allclose(vecs, a.model.encode(TEXTS, normalize_embeddings=True), atol=1e-5)
        dead = retrievers.get("dense:litellm/openai/minilm", api_base=f"{a.url},http://127.0.0.1:9/v1")
        dead.embedder.batch_size, dead.embedder.retries = 1, 0
        with pytest.raises(EmbSError, match="127.0.0.1:9"):
            dead.embedder.encode(TEXTS)
    finally:
        a.close()
        b.close()
