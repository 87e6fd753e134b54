"""Endpoints that defeat per-read timeouts or send more than was asked (issue 33 §1, §2): a server that sends one
byte at a time, one that streams without end, and one whose reply is far larger than the tokens or vectors asked
for. Every call (generation, embedding, served reranking) ends within its timeout in all — connect, first byte and
total — with one line saying why, and nothing of an oversized reply is stored."""
from __future__ import annotations

import sqlite3
import time

import pytest

from emb_s_core import llm, retrievers
from emb_s_core.errors import EmbSError
from emb_s_core.llm import bounded
from emb_s_core.llm.rerank import ServedReranker
from emb_s_core.schema import ERROR
from testkit.http import MisbehavingEndpoint
from testkit.use_bank import use_base_ws, ws  # noqa: F401 (fixtures)

pytestmark = pytest.mark.timeout(180)
TIMEOUT = 1.0
#: a per-read timeout never fires: a byte comes every DRIP_S < TIMEOUT
DRIP_S = 0.3
#: time a loaded 2-core machine may add to a call beyond its timeout (client set-up, token counting)
SLACK = 4.0


@pytest.fixture(scope="module")
def endpoint():
    llm.load_litellm()  # its import is not part of any call's time
    with MisbehavingEndpoint(dim=8, hang_s=60, lifetime_s=170, drip_s=DRIP_S, huge_bytes=30 << 20) as ep:
        yield ep


@pytest.mark.parametrize("route", ["drip", "endless"])
def test_a_chat_call_to_a_trickling_server_ends_within_its_timeout(endpoint, route, tmp_path, capfd):
    gw = llm.Gateway("openai/fake", cache_path=tmp_path / "cache.sqlite", context_window=4096, max_tokens=32,
                     timeout=TIMEOUT, max_retries=1, backoff=0.05, params={"api_base": endpoint.base(route)})
    start = time.monotonic()
    result = gw.complete([{"role": "user", "content": f"question for {route}"}])
    # two attempts of at most TIMEOUT each, plus the backoff: never the server's pace
    assert time.monotonic() - start < 2 * TIMEOUT + SLACK
    assert result.status == ERROR and "\n" not in result.error and "Traceback" not in result.error
    if route == "drip":
        assert "gave up after 2 attempts (timeout 1 s)" in result.error
        assert "attempt 2 of 2 in" in capfd.readouterr().err  # the retry is announced
    else:  # an endless stream passes the size asked for long before the timeout: refused at once, not retried
        assert result.error.startswith("ReplyTooLarge: the reply passed 1,056,768 bytes, more than the call asked")
        assert "32 tokens asked" in result.error and "nothing of it was stored" in result.error


def test_an_oversized_chat_reply_is_refused_and_nothing_is_stored(endpoint, tmp_path):
    cache = tmp_path / "cache.sqlite"
    gw = llm.Gateway("openai/fake", cache_path=cache, context_window=4096, max_tokens=32, timeout=10,
                     max_retries=2, params={"api_base": endpoint.base("huge")})
    start = time.monotonic()
    result = gw.complete([{"role": "user", "content": "a 30 MB reply to 32 tokens"}])
    assert time.monotonic() - start < 5
    assert result.status == ERROR and result.error.startswith("ReplyTooLarge:") and result.attempts == 1
    assert len(endpoint.sent("huge", "chat")) == 1  # not retried: the server would send it again
    with sqlite3.connect(cache) as db:
        assert db.execute("SELECT count(*) FROM responses").fetchone()[0] == 0
    assert cache.stat().st_size < 1 << 20


@pytest.mark.parametrize("route", ["drip", "endless", "huge"])
def test_an_embedding_batch_is_bounded_in_time_and_size(endpoint, route):
    r = retrievers.get("dense:litellm/openai/fake", api_base=endpoint.base(route), timeout=TIMEOUT, retries=1)
    start = time.monotonic()
    with pytest.raises(EmbSError) as caught:
        r.embedder.encode(["alpha", "beta"])
    assert time.monotonic() - start < 2 * TIMEOUT + SLACK
    message = str(caught.value)
    assert "\n" not in message and "Traceback" not in message
    if route == "drip":
        assert "gave up after 2 attempts of 1 s each" in message
    else:  # 2 texts of unknown dimension: at most 1 MiB + 2 × 16384 × 32 bytes
        assert f"oversized reply for model 'openai/fake': the reply passed {bounded.embedding_reply_limit(2, None):,}" \
               " bytes" in message and "nothing from this reply was stored" in message


@pytest.mark.parametrize("route", ["drip", "endless"])
def test_a_served_reranker_is_bounded_in_time_and_size(endpoint, route):
    reranker = ServedReranker("bge-test", api_base=endpoint.base(route), timeout=TIMEOUT, max_retries=1,
                              backoff=0.05)
    start = time.monotonic()
    with pytest.raises(EmbSError) as caught:
        reranker.score("query", ["one document", "another"])
    assert time.monotonic() - start < 2 * TIMEOUT + SLACK
    message = str(caught.value)
    assert "\n" not in message and "Traceback" not in message
    assert ("failed after 2 attempts" if route == "drip" else "sent an oversized reply") in message


def test_qa_against_a_trickling_server_ends_within_timeout_times_attempts(ws, capsys, monkeypatch):  # noqa: F811
    """`emb-s qa --timeout 1 --retries 1` against a server sending one byte every 0.3 s: each question ends in two
    bounded attempts (announced), as error cells, and the command returns."""
    from emb_s_core.cli import main

    monkeypatch.setenv("OPENAI_API_KEY", "not-needed")
    with MisbehavingEndpoint(hang_s=60, lifetime_s=150, drip_s=DRIP_S) as ep:
        argv = ["qa", "-w", str(ws.path), "--setting", "global", "--model", "openai/fake", "--api-base",
                ep.base("drip"), "--context-window", "32000", "--rungs", "full", "--limit", "2",
                "--timeout", "1", "--retries", "1", "--concurrency", "2", "--name", "qa-drip"]
        start = time.monotonic()
        main(argv)
        assert time.monotonic() - start < 30  # was: past 150 s with no retry announced
    err = capsys.readouterr().err
    assert "attempt 2 of 2 in" in err and "gave up after 2 attempts" in err and "Traceback" not in err
