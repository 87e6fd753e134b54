"""The LLM gateway with litellm's mock_response (no network): cache, retries, window check, concurrency, estimate,
secrets."""
from __future__ import annotations

import threading
import time

import pytest

from emb_s_core import llm
from emb_s_core.errors import EmbSError

MSG = [{"role": "user", "content": "What is the capital of Zorland?"}]
SECRET = "sk-test-DO-NOT-LEAK-4f9a8b7c6d5e"


@pytest.fixture
def calls(monkeypatch):
    """Counts real litellm.completion invocations; ``script`` (a list) overrides mock_response per call."""
    litellm = llm.load_litellm()
    real = litellm.completion
    state = {"n": 0, "script": [], "in_flight": 0, "max_in_flight": 0, "sleep": 0.0}
    lock = threading.Lock()

    def counting(*args, **kwargs):
        with lock:
            state["n"] += 1
            state["in_flight"] += 1
            state["max_in_flight"] = max(state["max_in_flight"], state["in_flight"])
            if state["script"]:
                kwargs["mock_response"] = state["script"].pop(0)
        try:
            if state["sleep"]:
                time.sleep(state["sleep"])
            return real(*args, **kwargs)
        finally:
            with lock:
                state["in_flight"] -= 1

    monkeypatch.setattr(litellm, "completion", counting)
    return state


def gateway(tmp_path, **kw):
    kw.setdefault("params", {"mock_response": "Quimby"})
    return llm.Gateway("gpt-4o-mini", cache_path=tmp_path / "cache.sqlite", backoff=0.001, **kw)


def rate_limit(text="slow down"):
    lt = llm.load_litellm()
    return lt.RateLimitError(text, llm_provider="openai", model="gpt-4o-mini")


def test_cache_second_run_makes_no_call(tmp_path, calls):
    first = gateway(tmp_path).complete(MSG)
    assert first.status == llm.OK and first.text == "Quimby" and not first.cached and first.cost > 0
    assert calls["n"] == 1
    again = gateway(tmp_path)  # a new process would build a new gateway on the same workspace cache
    second = again.complete(MSG)
    assert second.cached and second.text == "Quimby" and calls["n"] == 1
    assert again.usage.cache_hits == 1 and again.usage.calls == 0
    # another parameter is another cache entry
    gateway(tmp_path, max_tokens=7).complete(MSG)
    assert calls["n"] == 2
    assert len(llm.ResponseCache(tmp_path / "cache.sqlite")) == 2


def test_retries_rate_limit_then_succeeds(tmp_path, calls):
    calls["script"] = [rate_limit(), rate_limit()]
    gw = gateway(tmp_path, max_retries=3)
    res = gw.complete(MSG)
    assert res.status == llm.OK and res.text == "Quimby" and res.attempts == 3
    assert calls["n"] == 3 and gw.usage.retries == 2


def test_retries_give_up_as_error_and_nothing_cached(tmp_path, calls):
    gw = gateway(tmp_path, max_retries=2, params={"mock_response": rate_limit()})
    res = gw.complete(MSG)
    assert res.status == llm.ERROR and "RateLimitError" in res.error and "3 attempts" in res.error
    assert calls["n"] == 3 and gw.usage.errors == 1
    assert len(llm.ResponseCache(tmp_path / "cache.sqlite")) == 0


def test_server_error_is_retried(tmp_path, calls):
    lt = llm.load_litellm()
    calls["script"] = [lt.InternalServerError("boom", llm_provider="openai", model="gpt-4o-mini")]
    assert gateway(tmp_path).complete(MSG).status == llm.OK
    assert calls["n"] == 2


def test_window_check_before_the_call(tmp_path, calls):
    gw = gateway(tmp_path, context_window=60, max_tokens=20)
    short = gw.complete(MSG)
    assert short.status == llm.OK
    long_msg = [{"role": "user", "content": "word " * 200}]
    res = gw.complete(long_msg)
    assert res.status == llm.DOES_NOT_FIT and res.text is None and res.prompt_tokens > 40
    assert calls["n"] == 1 and gw.usage.does_not_fit == 1  # never sent
    assert gw.fits(40) and not gw.fits(41)  # prompt + max_tokens ≤ window


def test_window_from_litellm_or_required(tmp_path):
    assert gateway(tmp_path).window == 128000
    with pytest.raises(EmbSError, match="--context-window"):
        llm.Gateway("my-vllm/some-model")
    assert llm.Gateway("my-vllm/some-model", context_window=4096).window == 4096
    assert llm.Gateway(llm.LOCAL_MODEL).window == llm.LOCAL_WINDOW
    with pytest.raises(EmbSError, match="positive"):
        llm.Gateway("gpt-4o-mini", context_window=0)


def test_concurrency_limit_and_order(tmp_path, calls):
    calls["sleep"] = 0.05
    gw = gateway(tmp_path, concurrency=3)
    batch = [[{"role": "user", "content": f"question {i}"}] for i in range(9)]
    calls["script"] = []
    out = gw.complete_many(batch)
    assert len(out) == 9 and all(r.status == llm.OK for r in out)
    assert calls["max_in_flight"] <= 3 and calls["max_in_flight"] >= 2
    assert gw.usage.calls == 9


def test_estimate_counts_cached_and_does_not_fit(tmp_path, calls):
    gw = gateway(tmp_path, context_window=100, max_tokens=20)
    gw.complete(MSG)
    batch = [MSG, [{"role": "user", "content": "another question"}], [{"role": "user", "content": "x " * 300}]]
    est = gw.estimate(batch)
    assert (est["calls"], est["cached"], est["to_send"], est["does_not_fit"]) == (3, 1, 1, 1)
    assert est["max_completion_tokens"] == 20 and 0 < est["cost_usd_max"] < 0.001
    assert calls["n"] == 1  # an estimate never calls the model
    unknown = llm.Gateway("my-vllm/some-model", context_window=4096, params={"mock_response": "x"})
    assert unknown.estimate([MSG])["cost_usd_max"] is None


def test_missing_key_is_named_not_valued(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)  # no .streamlit/secrets.toml here
    gw = llm.Gateway("gpt-4o-mini", cache_path=tmp_path / "c.sqlite")
    with pytest.raises(EmbSError, match="OPENAI_API_KEY") as err:
        gw.check_credentials()
    assert "secrets.toml" in str(err.value)


def test_key_never_in_errors_or_output(tmp_path, monkeypatch, calls, capsys, caplog):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    lt = llm.load_litellm()
    # a provider that echoes the key in its error message (it happens) ...
    auth = lt.AuthenticationError(f"Incorrect API key provided: {SECRET}", llm_provider="openai",
                                  model="gpt-4o-mini")
    gw = gateway(tmp_path, params={"mock_response": auth})
    with pytest.raises(EmbSError) as err:
        gw.complete(MSG)
    assert SECRET not in str(err.value) and "***" in str(err.value)
    assert err.value.__cause__ is None and err.value.__suppress_context__
    # ... and in a retryable error that ends up stored as the call's error
    gw = gateway(tmp_path, max_retries=1, params={"mock_response": rate_limit(f"limit for key {SECRET}")})
    res = gw.complete(MSG)
    assert res.status == llm.ERROR and SECRET not in res.error and "***" in res.error
    out = capsys.readouterr()
    assert SECRET not in out.out + out.err + caplog.text
    assert SECRET.encode() not in (tmp_path / "cache.sqlite").read_bytes()


def test_secrets_toml(tmp_path, monkeypatch):
    monkeypatch.delenv("EMB_S_TEST_API_KEY", raising=False)
    path = tmp_path / ".streamlit" / "secrets.toml"
    path.parent.mkdir()
    path.write_text(f'EMB_S_TEST_API_KEY = "{SECRET}"\nnested = {{ a = 1 }}\n')
    assert llm.load_secrets(path) == ["EMB_S_TEST_API_KEY"]
    import os

    assert os.environ["EMB_S_TEST_API_KEY"] == SECRET
    assert llm.redact(f"error with {SECRET} inside") == "error with *** inside"
    monkeypatch.delenv("EMB_S_TEST_API_KEY")
    path.write_text(f'EMB_S_TEST_API_KEY = "{SECRET}\n')  # broken TOML quoting the key
    with pytest.raises(EmbSError, match="cannot parse the secrets file") as err:
        llm.load_secrets(path)
    assert SECRET not in str(err.value)


def test_cache_key_ignores_secrets(tmp_path):
    a = llm.Gateway("gpt-4o-mini", params={"api_key": "one-secret-value"})
    b = llm.Gateway("gpt-4o-mini", params={"api_key": "another-secret-value"})
    assert a.cache_key(MSG) == b.cache_key(MSG)
    assert a.cache_key(MSG) != a.cache_key(MSG, salt=1)
