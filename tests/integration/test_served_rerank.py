"""rerank:litellm/<model>:<base> against a small rerank server on 127.0.0.1 (the vLLM/TEI /rerank JSON) that scores
with the offline MiniLM: the reranked top-10 equals reranking the same candidates locally with the same scores;
requests are batched, a transient 503 is retried, a rerun is served from the cache, a refused call is one error."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler

import numpy as np
import pytest

from emb_s_core import bank, evaluate, ladder, retrievers, runs
from emb_s_core.errors import EmbSError
from emb_s_core.retrievers import embedders
from testkit.http import send_json, start
from testkit.retrieval_bank import copy_workspace, template

SPEC = "rerank:litellm/minilm-test:bm25"


class MiniLMScores:
    """Cosine of the offline MiniLM's embeddings; each text embedded once, so the server and the test's own local
    reranking use exactly the same numbers."""

    def __init__(self) -> None:
        self.model = embedders.SentenceTransformerEmbedder(str(embedders.minilm_l6_path()), key="test")
        self.vectors: dict[str, np.ndarray] = {}
        self.lock = threading.Lock()

    def __call__(self, query: str, texts: list[str]) -> list[float]:
        with self.lock:
            new = [t for t in dict.fromkeys([query, *texts]) if t not in self.vectors]
            if new:
                self.vectors.update(zip(new, self.model.encode(new)))
            q = self.vectors[query]
            return [float(np.dot(q, self.vectors[t])) for t in texts]


@pytest.fixture(scope="module")
def server():
    scores = MiniLMScores()
    state = {"requests": [], "fail_next": 0, "status": 503}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - http.server's name
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            state["requests"].append(body)
            if state["fail_next"]:
                state["fail_next"] -= 1
                self._reply(state["status"], {"error": "try later"})
                return
            s = scores(body["query"], body["documents"])
            self._reply(200, {"id": "r", "results": sorted(
                ({"index": i, "relevance_score": v} for i, v in enumerate(s)), key=lambda r: -r["relevance_score"])})

        def _reply(self, code: int, obj: dict) -> None:
            send_json(self, code, obj)

        def log_message(self, *args):
            pass

    httpd = start(Handler)
    yield f"http://127.0.0.1:{httpd.server_address[1]}", state, scores
    httpd.shutdown()


@pytest.fixture(scope="module")
def ws(tmp_path_factory):
    return copy_workspace(template(tmp_path_factory), tmp_path_factory.mktemp("served") / "ws")


def test_served_rerank_equals_local_rerank_with_the_same_scores(ws, server):
    url, state, scores = server
    lad = ladder.load(ws)
    rung_names = [lad.rungs[0].name, lad.rungs[1].name]  # one domain's two rungs: small, and they share queries
    state["requests"].clear()
    state["fail_next"] = 1  # the first request gets a 503: retried, not an error
    name = evaluate.evaluate(ws, SPEC, name="served", k=10, rungs=rung_names, api_base=url)
    sent = state["requests"]
    assert len(sent) >= 2 and sent[0] == sent[1]  # the failed request was sent again
    assert max(len(b["documents"]) for b in sent) <= 32  # batched
    assert all(b["model"] == "minilm-test" for b in sent)
    cfg = runs.get_run(ws, name)["config"]
    assert cfg["retriever"]["reranker"] == "litellm:hosted_vllm/minilm-test"

    res = runs.load_results(ws, runs=[name]).set_index(["rung", "qid"])
    base = retrievers.get("bm25")
    base.prepare(ws, None)
    doc_ids, texts, _ = retrievers.base.documents(ws, None)
    text_of = dict(zip(doc_ids.tolist(), texts))
    questions = bank.queries(ws).set_index("qid")["text"]
    checked = 0
    for rung in (lad.rung(n) for n in rung_names):
        ranked = base.rank(questions.loc[rung.qids].tolist(), {rung.name: rung.doc_ids}, 100)[rung.name]
        for i, qid in enumerate(rung.qids):
            head = ranked.ids[i]
            s = np.asarray(scores(questions[qid], [text_of[d] for d in head.tolist()]))
            expect = head[np.lexsort((head, -s))][:10]
            np.testing.assert_array_equal(res.loc[(rung.name, qid), "doc_ids"], expect, err_msg=f"{rung.name} {qid}")
            checked += 1
    assert checked == sum(len(lad.rung(n).qids) for n in rung_names)

    state["requests"].clear()
    evaluate.evaluate(ws, SPEC, name="served-again", k=10, rungs=rung_names, api_base=url)
    assert state["requests"] == []  # every (query, document) pair came from the workspace's cache


def test_served_rerank_errors(ws, server):
    url, state, _ = server
    with pytest.raises(EmbSError, match="needs an endpoint.*--api-base"):
        retrievers.get(SPEC).check()
    state["fail_next"], state["status"] = 1, 404
    version = ws.version
    with pytest.raises(EmbSError, match="reranker 'hosted_vllm/other' refused the call"):
        evaluate.evaluate(ws, "rerank:litellm/other:bm25", name="refused", k=5, rungs=[ladder.load(ws).rungs[0].name],
                          api_base=url)
    state["status"] = 503
    assert ws.version == version  # a run is registered with its first results: nothing was written
    assert runs.get_run(ws, "refused") is None and runs.load_results(ws, runs=["refused"]).empty
    with pytest.raises(EmbSError, match="needs a model name"):
        retrievers.get("rerank:litellm/:bm25")
