"""Endpoints that hang or lie, against a real misbehaving OpenAI-compatible server on 127.0.0.1 (testkit.http): one
route per behaviour (hang, slow, 500, flaky 503, garbage, empty, short, wrong dimension, NaN, missing fields). Each
ends within its timeout with a clear outcome (a result, or one reason; never a traceback, never a stored reply),
retries are announced on stderr, and a rerun against the repaired server sends only the calls that failed."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from emb_s_core import llm, retrievers
from emb_s_core.errors import EmbSError
from emb_s_core.llm import retry
from emb_s_core.retrievers import dense
from emb_s_core.schema import ERROR, OK
from testkit.http import MisbehavingEndpoint
from testkit.retrieval_bank import copy_workspace, template, text_workspace
from testkit.use_bank import use_base_ws, ws  # noqa: F401 (fixtures)

pytestmark = pytest.mark.timeout(180)
REPO = Path(__file__).resolve().parents[2]
TIMEOUT = 0.5
DIM = 8
#: route -> what the embedder must do with two texts (None: answer; else words of the one-line error)
EMBEDDING_OUTCOMES = {
    "ok": None, "slow": None, "flaky": None,
    "hang": "gave up after 3 attempts of 0.5 s each (last: Timeout",
    "500": "gave up after 3 attempts of 0.5 s each (last: InternalServerError",
    "garbage": "gave up after 3 attempts",
    "empty": "malformed reply for model 'openai/fake': no vectors (data is empty) for 2 texts",
    "short": "malformed reply for model 'openai/fake': 1 vectors for 2 texts",
    "dim": "malformed reply for model 'openai/fake': dimension 9, but this model's earlier vectors have 8",
    "nan": "malformed reply for model 'openai/fake': 1 of 2 vectors hold NaN or infinite values",
    "missing": "malformed reply for model 'openai/fake': item 0 has no embedding",
}
CHAT_OUTCOMES = {
    "ok": None, "slow": None, "flaky": None,
    "hang": "gave up after 3 attempts (timeout 0.5 s); last: Timeout",
    "500": "gave up after 3 attempts (timeout 0.5 s); last: InternalServerError",
    "garbage": "gave up after 3 attempts",
    "empty": "MalformedReply: the reply has no choices (choices: [] or missing)",
    "short": "MalformedReply: the reply has no choices",
    "missing": "gave up after 3 attempts",  # litellm refuses a choice without a message as a server error
}


@pytest.fixture(scope="module")
def endpoint():
    llm.load_litellm()  # its import (seconds on a busy machine) is not part of any call's time
    with MisbehavingEndpoint(dim=DIM, slow_s=0.2, hang_s=30, flaky_failures=2, lifetime_s=170) as ep:
        yield ep


def _embedder(base: str, retries: int = 2):
    r = retrievers.get("dense:litellm/openai/fake", api_base=base, timeout=TIMEOUT, retries=retries)
    r.embedder.batch_size = 2
    return r


@pytest.mark.parametrize("route", list(EMBEDDING_OUTCOMES))
def test_each_embedding_route_ends_within_its_timeout_with_a_clear_outcome(endpoint, route, capfd):
    embedder = _embedder(endpoint.base(route)).embedder
    start = time.monotonic()
    expected = EMBEDDING_OUTCOMES[route]
    if expected is None:
        first, second = embedder.encode(["alpha", "beta"]), embedder.encode(["gamma", "delta"])
        assert first.shape == second.shape == (2, DIM) and np.isfinite(first).all()
    else:
        with pytest.raises(EmbSError) as caught:
            embedder.encode(["alpha", "beta"])
            embedder.encode(["gamma", "delta"])  # "dim" lies on its second reply
        message = str(caught.value)
        assert expected in message and "\n" not in message and "Traceback" not in message
        assert "a rerun sends only the missing ones" in message or "only the missing ones are sent" in message
    # 3 attempts at most, each bounded by the timeout, plus backoff (0.25-0.5 s, then 0.5-1 s)
    assert time.monotonic() - start < 3 * TIMEOUT + 1.5 + 2.0
    err = capfd.readouterr().err
    if route in ("hang", "500", "garbage"):
        assert "attempt 2 of 3 in" in err and "attempt 3 of 3 in" in err
        assert "gave up after 3 attempts" in err and "vectors already embedded are kept" in err
        assert len(endpoint.sent(route)) == 3  # our 3 attempts and nothing more (litellm's own retries are off)
    if route == "flaky":
        assert "ServiceUnavailableError" in err and "attempt 3 of 3" in err


@pytest.mark.parametrize("route", list(CHAT_OUTCOMES))
def test_each_chat_route_is_a_reply_or_an_error_cell_with_its_reason(endpoint, route, tmp_path, capfd):
    gw = llm.Gateway("openai/fake", cache_path=tmp_path / "cache.sqlite", context_window=4096, timeout=TIMEOUT,
                     max_retries=2, backoff=0.05, params={"api_base": endpoint.base(route), "api_key": "x"})
    start = time.monotonic()
    result = gw.complete([{"role": "user", "content": f"question for {route}"}])
    assert time.monotonic() - start < 3 * TIMEOUT + 2.0
    expected = CHAT_OUTCOMES[route]
    if expected is None:
        assert result.status == OK and result.text == f"reply to: question for {route}"
    else:
        assert result.status == ERROR and result.text is None
        assert expected in result.error and "Traceback" not in result.error and "\n" not in result.error
    # only a good reply is cached: asking again sends again exactly when the first answer was an error
    sent = len(endpoint.sent(route, "chat"))
    again = gw.complete([{"role": "user", "content": f"question for {route}"}])
    assert again.cached == (expected is None)
    assert (len(endpoint.sent(route, "chat")) == sent) == (expected is None)
    err = capfd.readouterr().err
    if route in ("hang", "500"):
        assert "model openai/fake:" in err and "attempt 2 of 3 in" in err and "gave up after 3 attempts" in err


def test_a_chat_rerun_sends_only_the_calls_that_failed(tmp_path):
    with MisbehavingEndpoint(hang_s=30, lifetime_s=120) as ep:
        base = ep.base("hang-if-STALL")
        prompts = [[{"role": "user", "content": f"question {i}{' STALL' if i == 2 else ''}"}] for i in range(4)]

        def gateway():
            return llm.Gateway("openai/fake", cache_path=tmp_path / "cache.sqlite", context_window=4096,
                               timeout=TIMEOUT, max_retries=1, backoff=0.05, concurrency=2,
                               params={"api_base": base, "api_key": "x"})

        first = gateway().complete_many(prompts)
        assert [r.status for r in first] == [OK, OK, ERROR, OK]
        assert "gave up after 2 attempts" in first[2].error
        ep.heal()
        before = len(ep.requests)
        second = gateway().complete_many(prompts)
        assert [r.status for r in second] == [OK] * 4 and [r.cached for r in second] == [True, True, False, True]
        assert [texts for _, _, texts in ep.requests[before:]] == [["question 2 STALL"]]


def test_an_embedding_failure_keeps_what_was_embedded_and_a_rerun_sends_only_the_rest(tmp_path, capfd):
    texts = ["one", "two", "three", "four", "the longest document, which the server STALLs on"]
    ws = text_workspace(tmp_path, texts)
    with MisbehavingEndpoint(dim=DIM, hang_s=30, lifetime_s=120) as ep:
        r = _embedder(ep.base("hang-if-STALL"), retries=1)
        version = ws.version
        with pytest.raises(EmbSError, match=r"gave up after 2 attempts .*\(4 of 5 documents embedded and kept\)"):
            r.prepare(ws, None)
        assert "gave up after 2 attempts" in capfd.readouterr().err
        ws.refresh()
        _, hashes = dense.document_hashes(ws, None)
        assert ws.version == version + 1  # the finished documents, committed once
        assert dense.missing_count(ws, r.table, hashes) == 1
        ep.heal()
        before = len(ep.requests)
        again = _embedder(ep.base("hang-if-STALL"))
        again.prepare(ws, None)
        assert [t for _, _, t in ep.requests[before:]] == [[texts[-1]]]  # only the failed one is sent again
        assert again.vectors.shape == (5, DIM) and dense.missing_count(ws, again.table, hashes) == 0


@pytest.mark.parametrize("route", ["dim", "nan", "short", "garbage"])
def test_a_malformed_reply_is_never_stored(tmp_path, route):
    ws = text_workspace(tmp_path, ["aa", "bb", "cc", "dd"])
    with MisbehavingEndpoint(dim=DIM, lifetime_s=60) as ep:
        r = _embedder(ep.base(route), retries=0)
        with pytest.raises(EmbSError) as caught:
            r.prepare(ws, None)
    kept = 2 if route == "dim" else 0  # "dim" answers its first request well
    assert f"({kept} of 4 documents embedded and kept)" in str(caught.value)
    ws.refresh()
    if kept:
        vectors = ws.read(r.table).column("vector").to_numpy(zero_copy_only=False)
        assert len(vectors) == kept and all(len(v) == DIM and np.isfinite(v).all() for v in vectors)
    else:
        assert not ws.has_table(r.table)


def test_settings_come_from_flag_then_environment_then_default(monkeypatch):
    monkeypatch.delenv(retry.EMBEDDING_TIMEOUT_ENV, raising=False)
    monkeypatch.delenv(retry.LLM_TIMEOUT_ENV, raising=False)
    assert retry.embedding_timeout() == 30.0 and retry.llm_timeout() == 180.0 and retry.llm_retries() == 4
    monkeypatch.setenv(retry.EMBEDDING_TIMEOUT_ENV, "12.5")
    assert retry.embedding_timeout() == 12.5 and retry.embedding_timeout(3) == 3.0
    monkeypatch.setenv(retry.LLM_RETRIES_ENV, "two")
    with pytest.raises(EmbSError, match="EMB_S_LLM_RETRIES='two' is not a number"):
        llm.Gateway("local/smollm2-135m")
    with pytest.raises(EmbSError, match="--timeout must be a number > 0, got 0"):
        retry.llm_timeout(0)
    with pytest.raises(EmbSError, match="--retries must be a whole number ≥ 0, got -1"):
        retry.embedding_retries(-1)
    # the served reranker keeps the same policy (it had its own fixed 120 s)
    from emb_s_core.llm.rerank import ServedReranker

    served = ServedReranker("bge-reranker", api_base="http://127.0.0.1:9")
    assert served.timeout == 12.5 and served.max_retries == retry.DEFAULT_EMBEDDING_RETRIES
    assert ServedReranker("bge-reranker", api_base="http://127.0.0.1:9", timeout=2, max_retries=0).timeout == 2.0


def test_eval_against_a_hanging_server_ends_in_one_line_and_resumes(tmp_path_factory, tmp_path):
    """The CLI end to end: `emb-s eval -r dense:litellm/...` with --timeout/--retries against a server that hangs on
    one document: retries on stderr, one error line, exit 2, the other documents' vectors kept; the rerun against
    the repaired server sends only that document and finishes the run."""
    ws = copy_workspace(template(tmp_path_factory), tmp_path / "ws")
    word = _word_of_one_document(ws)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with MisbehavingEndpoint(dim=DIM, hang_s=30, lifetime_s=150) as ep:
        cmd = [sys.executable, "-m", "emb_s_core.cli", "eval", "-w", str(ws.path), "-r", "dense:litellm/openai/fake",
               "--api-base", ep.base(f"hang-if-{word}"), "--timeout", "0.5", "--retries", "1", "--k", "5"]
        start = time.monotonic()
        out = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
        assert out.returncode == 2, out.stderr
        assert time.monotonic() - start < 60
        lines = out.stderr.strip().splitlines()
        assert "attempt 2 of 2 in" in out.stderr and "Traceback" not in out.stderr
        assert lines[-1].startswith("emb-s: error: ") and "gave up after 2 attempts of 0.5 s each" in lines[-1]
        assert "documents embedded and kept" in lines[-1]
        failed = {t for _, _, texts in ep.requests for t in texts if word in t}
        ep.heal()
        before = len(ep.requests)
        from emb_s_core.cli import main

        assert main(cmd[3:]) == 0  # the rerun in this process (litellm is loaded already): quicker, the same CLI
        resent = [t for _, kind, texts in ep.requests[before:] if kind == "embeddings" for t in texts]
        documents_resent = [t for t in resent if t in failed]
        assert documents_resent and set(documents_resent) <= failed
        assert len(set(resent)) < 0.5 * ws.read("documents", columns=["text"]).num_rows  # not the whole bank again


def _word_of_one_document(ws) -> str:
    """A word that exactly one document (and no query) holds: the server stalls on that document alone."""
    from collections import Counter

    docs = ws.read("documents", columns=["text"]).column("text").to_pylist()
    queries = " ".join(ws.read("queries", columns=["text"]).column("text").to_pylist())
    counts = Counter(w for text in docs for w in set(text.split()))
    return next(w for w, n in counts.items() if n == 1 and w not in queries and len(w) > 4)


def test_qa_against_a_server_that_hangs_on_some_questions_then_resumes(ws, capsys, monkeypatch):
    """`emb-s qa` with --timeout/--retries: the questions the server hangs on end as error cells within the timeout
    (retries announced), the others are answered; the rerun against the repaired server sends only the failed ones,
    and a third run sends nothing."""
    from emb_s_core import ladder
    from emb_s_core.cli import main

    monkeypatch.setenv("OPENAI_API_KEY", "not-needed")  # the OpenAI client wants one, the local server ignores it
    rung = next(r for r in ladder.load(ws).rungs if r.name == "full")
    qids = set(rung.qids)
    assert any(q.startswith("p") for q in qids) and any(q.startswith("g") for q in qids)
    with MisbehavingEndpoint(hang_s=30, lifetime_s=150) as ep:  # hangs on "In which year was X born?" only
        argv = ["qa", "-w", str(ws.path), "--setting", "global", "--model", "openai/fake", "--api-base",
                ep.base("hang-if-which"), "--context-window", "32000", "--rungs", "full", "--limit", "6",
                "--timeout", "0.5", "--retries", "1", "--concurrency", "4", "--name", "qa-hang"]
        start = time.monotonic()
        main(argv)
        assert time.monotonic() - start < 60
        err = capsys.readouterr().err
        assert "attempt 2 of 2 in" in err and "gave up after 2 attempts" in err and "Traceback" not in err
        failed = {t for _, _, texts in ep.requests for t in texts if "which" in t}
        answered = {t for _, _, texts in ep.requests for t in texts if "which" not in t}
        assert failed and answered
        ep.heal()
        before = len(ep.requests)
        assert main(argv) == 0
        resent = [t for _, _, texts in ep.requests[before:] for t in texts]
        assert sorted(resent) == sorted(failed)  # each failed question once, no answered one again
        before = len(ep.requests)
        assert main(argv) == 0 and len(ep.requests) == before  # all cached now


def test_a_local_server_without_a_key_is_called_once_not_retried(endpoint, tmp_path, monkeypatch, capfd):
    """--api-base to a local OpenAI-compatible server with no OPENAI_API_KEY: litellm's client refuses to start
    without a key and calls that a 500; the gateway sends a placeholder key, so the one call goes through."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)  # no .streamlit/secrets.toml here
    gw = llm.Gateway("openai/fake", cache_path=tmp_path / "cache.sqlite", context_window=4096, timeout=TIMEOUT,
                     max_retries=2, backoff=0.05, params={"api_base": endpoint.base("ok")})
    result = gw.complete([{"role": "user", "content": "question without a key"}])
    assert result.status == OK and result.attempts == 1, result
    assert "attempt 2" not in capfd.readouterr().err
