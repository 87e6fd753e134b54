"""Localization (paper §A.3) with mock_response: prompt, canonicalization, audit, run storage, does-not-fit,
resume, errors."""
from __future__ import annotations

import json

import pytest

from emb_s_core import ladder, llm, localize, protocol, runs
from emb_s_core.errors import EmbSError
from testkit.use_bank import use_base_ws, ws  # noqa: F401 (fixtures)


def gw(ws, reply="[DocID=0] 12, 3, 12, 999", **kw):
    return llm.Gateway.for_workspace(ws, "gpt-4o-mini", params={"mock_response": reply}, backoff=0.001, **kw)


@pytest.mark.parametrize("reply,k,expected", [
    ("[DocID=12], [DocID=7], 30", 10, [12, 7, 30]),
    ("12, 7, 12, 7, 30, 4", 3, [12, 7, 30]),
    ("The documents are 5 and then 5 again and 8.", 10, [5, 8]),
    ("none of them", 10, []),
    ("", 10, []),
    (None, 10, []),
    ("007, 7", 10, [7]),
    ("relevance 3.5 for DocID 286", 10, [286]),  # issue 16: gave [3, 5, 286]
    ("DocID 286 (score 0.92), DocID 12 (score 0.5).", 10, [286, 12]),
    ("12,7,30", 10, [12, 7, 30]),
    ("The most relevant is DocID 41.", 10, [41]),  # a sentence's full stop is not a decimal point
])
def test_canonicalize(reply, k, expected):
    assert localize.canonicalize(reply, k) == expected


def test_read_ids_audits_what_was_dropped():
    ids, dropped = localize.read_ids("DocID 286 (relevance 3.5), 12, 286, 7, 9 and 1.2.3", 3)
    assert ids == [286, 12, 7]
    assert {k: v for k, v in dropped.items() if v} == {"decimals": ["3.5", "1.2.3"], "repeated": [286],
                                                       "beyond_k": [9]}
    audit = localize.audit("x", ids, {286, 12}, None, dropped)
    assert audit["dropped_decimals"] == ["3.5", "1.2.3"] and audit["n_repeated"] == 1
    assert audit["dropped_beyond_k"] == [9] and audit["ids_not_in_context"] == [7]


def test_audit_flags():
    ctx_text = protocol.serialize(__import__("pandas").DataFrame(
        {"doc_id": [1, 2], "title": ["A", None], "text": ["The capital of Zorland is Quimby and it has a port.",
                                                          "Other text"]}))
    ok = localize.audit("1, 2", [1, 2], {1, 2}, ctx_text)
    assert ok == {"n_ids": 2, "ids_not_in_context": [], "n_not_in_context": 0, "no_ids": False,
                  "document_text": False, "dropped_decimals": [], "n_repeated": 0, "dropped_beyond_k": [],
                  "dropped_numbering": [], "dropped_counts": [], "dropped_set_aside": [], "dropped_prose_years": []}
    invented = localize.audit("1, 77", [1, 77], {1, 2}, ctx_text)
    assert invented["ids_not_in_context"] == [77] and invented["n_not_in_context"] == 1
    assert localize.audit("I cannot tell.", [], {1, 2}, ctx_text)["no_ids"]
    echo = localize.audit("The capital of Zorland is Quimby and it has a port.", [], {1, 2}, ctx_text)
    assert echo["document_text"] and echo["no_ids"]


def test_prompt_serializes_the_rung(ws):
    docs = protocol.documents_by_id(ws)
    rung = ladder.load(ws).rung("2K/geography")
    context = protocol.context_of(docs, rung.doc_ids)
    assert context.count("[DocID=") == rung.n_documents
    assert context.startswith(f"[DocID={int(rung.doc_ids[0])}]\n")
    prompt = protocol.load_prompt("localize")
    msgs = localize.messages_for(prompt, "What is the capital of Zorland?", context, 5)
    text = msgs[0]["content"]
    assert prompt.version == "localize_v2" and "What is the capital of Zorland?" in text
    assert "5 most relevant" in text and context in text
    with pytest.raises(EmbSError, match="no prompt file"):
        protocol.load_prompt("localize", version=99)


def test_localize_run_is_a_run(ws):
    name = localize.localize(ws, gw(ws), k=3, rungs=["2K/geography", "4K"], limit=4)
    assert name == "localize:gpt-4o-mini@3"
    assert runs.get_run(ws, name)["kind"] == "localize"
    res = runs.load_results(ws, runs=[name])
    lad = ladder.load(ws)
    expected = {(r, q) for r in ("2K/geography", "4K") for q in protocol.rung_queries(lad.rung(r), 4)}
    assert set(zip(res["rung"], res["qid"])) == expected and len(expected) == 8  # --limit is per rung
    assert (res["status"] == runs.OK).all()
    shown = {r: set(lad.rung(r).doc_ids.tolist()) for r in ("2K/geography", "4K")}
    for rung, ids in zip(res["rung"], res["doc_ids"]):  # ids not shown in the rung's context are dropped
        assert list(ids) == [i for i in (0, 12, 3, 999) if i in shown[rung]][:3]
    assert runs.get_run(ws, name)["config"]["id_rule"] == localize.DOCID
    detail = json.loads(res["detail"].iloc[0])
    assert detail["id_rule"] == localize.DOCID and 999 in detail["audit"]["ids_not_in_context"]
    assert detail["prompt_version"] == "localize_v2" and detail["reply"].startswith("[DocID=0]")
    assert detail["audit"]["n_ids"] == len(res["doc_ids"].iloc[0]) and detail["cost"] > 0
    summary = localize.audit_summary(ws, name)
    assert summary["calls"].sum() == len(expected) and summary["ok"].sum() == len(expected)


def test_does_not_fit_is_recorded_never_sent(ws):
    lad = ladder.load(ws)
    window = lad.rung("4K").n_tokens + 400  # the 2K rungs and the shared 4K fit, 8K and full do not
    g = gw(ws, context_window=window, max_tokens=16)
    est = localize.estimate(ws, g, k=5, rungs=["2K/geography", "8K", "full"], limit=2)
    name = localize.localize(ws, g, k=5, rungs=["2K/geography", "8K", "full"], limit=2)
    res = runs.load_results(ws, runs=[name]).set_index(["rung", "qid"])
    dnf = res[res.index.get_level_values("rung").isin(["8K", "full"])]
    assert len(dnf) == 4 and (dnf["status"] == runs.DOES_NOT_FIT).all()
    assert all(len(ids) == 0 for ids in dnf["doc_ids"])
    assert est["does_not_fit"] == 4 and est["to_send"] + est["cached"] == len(res) - 4
    assert g.usage.calls == len(res) - 4  # the does-not-fit cells were never sent


def test_rerun_resumes_without_writing_or_calling(ws):
    localize.localize(ws, gw(ws), k=3, rungs=["2K/people"], limit=30)
    version = ws.version
    g = gw(ws)
    localize.localize(ws, g, k=3, rungs=["2K/people"], limit=30)
    ws.refresh()
    assert ws.version == version and g.usage.calls == 0 and g.usage.cache_hits == 0
    # the same cells under another run name come from the cache: no call either
    g2 = gw(ws)
    localize.localize(ws, g2, k=3, name="again", rungs=["2K/people"], limit=30)
    assert g2.usage.calls == 0 and g2.usage.cache_hits == len(ladder.load(ws).rung("2K/people").qids)


def test_errors_are_stored_then_retried_on_resume(ws):
    lt = llm.load_litellm()
    limit = lt.RateLimitError("slow down", llm_provider="openai", model="gpt-4o-mini")
    bad = gw(ws, reply=limit, max_retries=0)
    name = localize.localize(ws, bad, k=3, name="flaky", rungs=["2K/geography"], limit=2)
    res = runs.load_results(ws, runs=[name])
    assert (res["status"] == runs.ERROR).all() and len(res) == 2
    assert "RateLimitError" in json.loads(res["detail"].iloc[0])["error"]
    localize.localize(ws, gw(ws), k=3, name="flaky", rungs=["2K/geography"], limit=2)
    res = runs.load_results(ws, runs=[name])
    assert (res["status"] == runs.OK).all() and len(res) == 2


def test_bad_inputs_leave_workspace_unchanged(ws):
    version = ws.version
    with pytest.raises(EmbSError, match="no rung named 'nope'"):
        localize.localize(ws, gw(ws), rungs=["nope"])
    with pytest.raises(EmbSError, match="--limit"):
        localize.localize(ws, gw(ws), limit=0, name="other")
    ws.refresh()
    assert ws.version == version and runs.list_runs(ws).empty
    localize.localize(ws, gw(ws), k=3, name="fixed", rungs=["2K/people"], limit=1)
    version = ws.version
    with pytest.raises(EmbSError, match="another configuration"):
        localize.localize(ws, gw(ws), k=4, name="fixed", rungs=["2K/people"], limit=1)
    ws.refresh()
    assert ws.version == version


def test_cli_missing_key_fails_before_anything(ws, monkeypatch, tmp_path, capsys):
    from emb_s_core.cli import main

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)  # no .streamlit/secrets.toml
    version = ws.version
    assert main(["localize", "-w", str(ws.path), "--model", "gpt-4o-mini", "--limit", "1"]) == 2
    err = capsys.readouterr().err
    assert "OPENAI_API_KEY" in err and "secrets.toml" in err
    ws.refresh()
    assert ws.version == version and runs.list_runs(ws).empty
    assert main(["localize", "-w", str(ws.path), "--model", "gpt-4o-mini", "--limit", "1", "--rungs", "2K/people",
                 "--estimate"]) == 0  # an estimate needs no key
    assert "cost ≤ $" in capsys.readouterr().out
    assert main(["localize", "-w", str(ws.path), "--model", "my-server/model", "--limit", "1"]) == 2
    assert "--context-window" in capsys.readouterr().err


def test_edited_prompt_cannot_resume_an_old_run(ws, monkeypatch):
    localize.localize(ws, gw(ws), k=3, name="p", rungs=["2K/people"], limit=1)
    real = protocol.load_prompt("localize")
    edited = protocol.Prompt(real.name, real.version, real.template + "\nBe brief.")
    assert edited.digest != real.digest
    monkeypatch.setattr(protocol, "load_prompt", lambda name, version=1: edited)
    with pytest.raises(EmbSError, match="another configuration"):
        localize.localize(ws, gw(ws), k=3, name="p", rungs=["2K/people"], limit=1)
