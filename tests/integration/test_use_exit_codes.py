"""qa, localize and judge exit non-zero when nothing succeeded, printing the error counts (issue 16): a fake
OpenAI-compatible server on 127.0.0.1 that fails every chat completion (HTTP 400, or 500 until retries run out)."""
from __future__ import annotations

from http.server import BaseHTTPRequestHandler

import pytest

from emb_s_core import llm, qa
from emb_s_core.cli import main as cli
from testkit.http import send_json, start
from testkit.use_bank import scripted, use_base_ws, ws  # noqa: F401 (fixtures)


class FailingServer:
    """Answers every POST with ``status`` (an OpenAI-style error body); ``ok_after`` requests later it answers."""

    def __init__(self, status: int, ok_after: int | None = None):
        self.requests = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                self.rfile.read(int(self.headers["Content-Length"]))
                outer.requests += 1
                if ok_after is not None and outer.requests > ok_after:
                    body = {"id": "x", "object": "chat.completion", "created": 0, "model": "fake",
                            "choices": [{"index": 0, "finish_reason": "stop",
                                         "message": {"role": "assistant", "content": "4"}}],
                            "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11}}
                    code = 200
                else:
                    body = {"error": {"message": "bad request" if status == 400 else "boom",
                                      "type": "invalid_request_error" if status == 400 else "server_error"}}
                    code = status
                send_json(self, code, body)

        self.httpd = start(Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def close(self) -> None:
        self.httpd.shutdown()


@pytest.fixture
def bad_request(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    server = FailingServer(400)
    yield server
    server.close()


def model_args(server) -> list[str]:
    return ["--api-base", server.url, "--context-window", "100000", "--concurrency", "1"]


def test_qa_and_localize_exit_1_when_every_call_fails(ws, bad_request, capsys):
    rc = cli(["qa", "-w", str(ws.path), "--model", "openai/fake", *model_args(bad_request), "--setting", "global",
              "--rungs", "2K/geography", "--limit", "2"])
    out, err = capsys.readouterr()
    assert rc == 1 and bad_request.requests == 2
    assert "nothing succeeded: all 2 model calls failed (2 BadRequestError)" in err
    assert "2 errors (2 BadRequestError)" in out
    assert (qa.load_answers(ws)["status"] == llm.ERROR).all()
    rc = cli(["localize", "-w", str(ws.path), "--model", "openai/fake", *model_args(bad_request),
              "--rungs", "2K/geography", "--limit", "2"])
    assert rc == 1 and "nothing succeeded" in capsys.readouterr().err


def test_judge_exits_1_when_every_call_fails(ws, bad_request, monkeypatch, capsys):
    scripted(monkeypatch, lambda m: "Quimby")
    name = qa.answer(ws, llm.Gateway.for_workspace(ws, "gpt-4o-mini", params={"mock_response": "x"}),
                     setting="global", rungs=["2K/geography"], limit=2)
    monkeypatch.undo()
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    rc = cli(["judge", "-w", str(ws.path), "--qa-run", name, "--judge", "openai/fake", *model_args(bad_request)])
    assert rc == 1 and "nothing succeeded: all 2 model calls failed" in capsys.readouterr().err
    # the reference judge makes no call and succeeds
    assert cli(["judge", "-w", str(ws.path), "--qa-run", name]) == 0


def test_partial_success_exits_0_and_prints_the_counts(ws, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    server = FailingServer(400, ok_after=1)  # the first call fails, the rest succeed
    try:
        rc = cli(["qa", "-w", str(ws.path), "--model", "openai/fake", *model_args(server), "--setting", "global",
                  "--rungs", "2K/geography", "--limit", "3"])
    finally:
        server.close()
    out = capsys.readouterr().out
    assert rc == 0 and "1 errors (1 BadRequestError)" in out


def test_server_errors_after_retries_are_counted(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    server = FailingServer(500)
    try:
        gw = llm.Gateway("openai/fake", context_window=1000, max_retries=2, backoff=0.001,
                         params={"api_base": server.url})
        res = gw.complete([{"role": "user", "content": "hi"}])
    finally:
        server.close()
    assert res.status == llm.ERROR and gw.usage.ok == 0 and gw.usage.errors == 1
    assert gw.usage.error_kinds == {"InternalServerError (after retries)": 1}
