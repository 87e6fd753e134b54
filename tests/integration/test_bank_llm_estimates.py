"""`collide --estimate` and `domains label --estimate` print tokens and cost like the other LLM commands, and send
nothing (issue 16)."""
from __future__ import annotations

import re

from emb_s_core import bank, collide, domains, llm
from emb_s_core.cli import main as cli
from emb_s_core.store import Workspace
from tests.conftest import native_bank
from testkit.use_bank import scripted

ESTIMATE = re.compile(r"estimate: (\d+) cells, (\d+) cached, (\d+) do not fit, (\d+) calls to send, ([\d,]+) prompt "
                      r"tokens, ≤ ([\d,]+) reply tokens, cost ≤ \$(\d+\.\d+)")


def workspace(tmp_path) -> Workspace:
    bank.import_path(tmp_path / "ws", "native", native_bank(tmp_path / "bank"))
    return Workspace(tmp_path / "ws")


def gw(ws, reply, max_tokens=32):
    return llm.Gateway.for_workspace(ws, "gpt-4o-mini", max_tokens=max_tokens, params={"mock_response": reply})


def test_collide_estimate_counts_tokens_and_cost_and_sends_nothing(tmp_path, monkeypatch, capsys):
    ws = workspace(tmp_path)
    n_queries = len(bank.queries(ws))
    calls = scripted(monkeypatch, lambda m: "Label: Hard Negative\nRationale: another date.")
    est = collide.estimate(ws, gw(ws, "x"), k=2)
    assert est["calls"] == est["to_send"] == 2 * n_queries and est["already_done"] == 0
    assert est["prompt_tokens"] > 50 * est["calls"] and est["max_completion_tokens"] == 32 * est["calls"]
    assert est["cost_usd_max"] > 0 and calls["n"] == 0
    assert cli(["collide", "-w", str(ws.path), "--model", "gpt-4o-mini", "-k", "2", "--estimate"]) == 0
    match = ESTIMATE.search(capsys.readouterr().out)
    assert match and int(match.group(4)) == 2 * n_queries and calls["n"] == 0
    collide.run(ws, gw(ws, "x"), k=2)
    again = collide.estimate(ws, gw(ws, "x"), k=2)
    assert again["calls"] == 0 and again["already_done"] == 2 * n_queries  # stored verdicts are done


def test_domains_estimate_counts_tokens_and_cost_and_sends_nothing(tmp_path, monkeypatch, capsys):
    ws = workspace(tmp_path)
    n_docs = len(bank.documents(ws, ["doc_id"]))
    calls = scripted(monkeypatch, lambda m: "Domain: Law")
    names = domains.resolve(["law", "math"])
    est = domains.estimate(ws, gw(ws, "x", 8), names)
    assert est["calls"] == est["to_send"] == n_docs and est["prompt_tokens"] > 0 and est["cost_usd_max"] > 0
    assert calls["n"] == 0
    assert cli(["domains", "label", "-w", str(ws.path), "--model", "gpt-4o-mini", "--domains", "law,math",
                "--estimate"]) == 0
    match = ESTIMATE.search(capsys.readouterr().out)
    assert match and int(match.group(1)) == n_docs and calls["n"] == 0
    domains.label(ws, names, gateway=gw(ws, "x", 8))
    cached = domains.estimate(ws, gw(ws, "x", 8), names)
    assert cached["cached"] == n_docs and cached["to_send"] == 0
