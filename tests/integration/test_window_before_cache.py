"""The window check comes before the response cache, always (issue 16): a reply cached under a larger
``--context-window`` never turns a cell that does not fit the current window into ``ok``, for localize, qa, judge,
collide and domains. Each test fills the cache through the real command with a large window, gives that cache to
a twin workspace (or a new run name) and reruns with a window the prompts just miss."""
from __future__ import annotations

import shutil

from emb_s_core import bank, collide, domains, judge, ladder, llm, localize, protocol, qa, runs
from emb_s_core.store import Workspace
from tests.conftest import native_bank
from testkit.use_bank import scripted, use_base_ws, ws  # noqa: F401 (fixtures)

BIG = 100_000


def gw(ws, window, reply="unused", max_tokens=16):
    return llm.Gateway.for_workspace(ws, "gpt-4o-mini", context_window=window, max_tokens=max_tokens,
                                     params={"mock_response": reply}, backoff=0.001)


def twin(ws: Workspace, path) -> Workspace:
    """A copy of ``ws`` as it is now (its response cache included)."""
    return Workspace(shutil.copytree(ws.path, path))


def share_cache(src: Workspace, dst: Workspace) -> None:
    shutil.copy(src.path / llm.CACHE_FILE, dst.path / llm.CACHE_FILE)


def test_gateway_checks_the_window_before_the_cache(ws):
    messages = [{"role": "user", "content": "What is the capital of Zorland? " * 20}]
    big = gw(ws, BIG, reply="Quimby")
    assert big.complete(messages).status == llm.OK
    n = big.count_tokens(messages)
    assert big.complete(messages).cached  # the cache holds the answer
    small = gw(ws, n + 16 - 1, reply="Quimby")  # one token short
    result = small.complete(messages)
    assert result.status == llm.DOES_NOT_FIT and not result.cached and result.prompt_tokens == n
    assert small.usage.cache_hits == 0 and small.usage.does_not_fit == 1 and small.usage.calls == 0
    est = small.estimate([messages])
    assert (est["does_not_fit"], est["cached"], est["to_send"]) == (1, 0, 0)
    assert gw(ws, n + 16, reply="Quimby").complete(messages).cached  # exactly fitting still reads the cache


def test_localize_cached_rung_does_not_fit_a_smaller_window(ws):
    big = gw(ws, BIG, "[DocID=0] 2")
    localize.localize(ws, big, k=3, name="big", rungs=["2K/geography"])
    assert (runs.load_results(ws, runs=["big"])["status"] == runs.OK).all()
    prompt = protocol.load_prompt("localize")
    context = protocol.context_of(protocol.documents_by_id(ws), ladder.load(ws).rung("2K/geography").doc_ids)
    texts = bank.queries(ws).set_index("qid")["text"]
    smallest = min(big.count_tokens(localize.messages_for(prompt, texts[q], context, 3))
                   for q in ladder.load(ws).rung("2K/geography").qids)
    small = gw(ws, smallest + 16 - 1, "[DocID=0] 2")  # the rung's context alone fits, no whole prompt does
    localize.localize(ws, small, k=3, name="small", rungs=["2K/geography"])
    res = runs.load_results(ws, runs=["small"])
    assert len(res) == 12 and (res["status"] == runs.DOES_NOT_FIT).all()
    assert small.usage.cache_hits == 0 and small.usage.does_not_fit == 12


def test_global_qa_cached_answer_does_not_fit_a_smaller_window(ws, monkeypatch):
    scripted(monkeypatch, lambda m: "Quimby")
    qa.answer(ws, gw(ws, BIG), setting="global", name="big", rungs=["2K/geography"])
    prompt = protocol.load_prompt("qa")
    context = protocol.context_of(protocol.documents_by_id(ws), ladder.load(ws).rung("2K/geography").doc_ids)
    texts = bank.queries(ws).set_index("qid")["text"]
    small = gw(ws, BIG)
    smallest = min(small.count_tokens([{"role": "user", "content": prompt.render(context=context, question=texts[q])}])
                   for q in ladder.load(ws).rung("2K/geography").qids)
    small = gw(ws, smallest + 16 - 1)
    qa.answer(ws, small, setting="global", name="small", rungs=["2K/geography"])
    ans = qa.load_answers(ws, ["small"])
    assert len(ans) == 12 and (ans["status"] == llm.DOES_NOT_FIT).all() and ans["answer"].isna().all()
    assert small.usage.cache_hits == 0


def test_judge_cached_score_does_not_fit_a_smaller_window(ws, monkeypatch, tmp_path):
    scripted(monkeypatch, lambda m: "Quimby")
    name = qa.answer(ws, gw(ws, BIG), setting="global", rungs=["2K/geography"], limit=3)
    other = twin(ws, tmp_path / "twin")
    scripted(monkeypatch, lambda m: "5")
    judge.judge(ws, name, "gpt-4o-mini", gw(ws, BIG, "5", max_tokens=4))
    assert (judge.load_judgments(ws)["status"] == llm.OK).all()
    share_cache(ws, other)
    small = gw(other, 20, "5", max_tokens=4)  # no judge prompt fits 20 tokens
    judge.judge(other, name, "gpt-4o-mini", small)
    got = judge.load_judgments(other)
    assert len(got) == 3 and (got["status"] == llm.DOES_NOT_FIT).all() and got["score"].isna().all()
    assert small.usage.cache_hits == 0


def test_collide_cached_verdict_does_not_fit_a_smaller_window(tmp_path):
    bank.import_path(tmp_path / "a", "native", native_bank(tmp_path / "bank"))
    a = Workspace(tmp_path / "a")
    b = twin(a, tmp_path / "b")
    collide.run(a, gw(a, BIG, "Label: Hard Negative\nRationale: another date.", max_tokens=32), k=1)
    assert (collide.verdicts(a)["status"] == llm.OK).all()
    share_cache(a, b)
    small = gw(b, 30, "Label: Hard Negative\nRationale: another date.", max_tokens=32)
    collide.run(b, small, k=1)
    v = collide.verdicts(b)
    assert len(v) and (v["status"] == llm.DOES_NOT_FIT).all() and v["label"].isna().all()
    assert small.usage.cache_hits == 0


def test_domains_cached_label_does_not_fit_a_smaller_window(tmp_path):
    bank.import_path(tmp_path / "a", "native", native_bank(tmp_path / "bank"))
    a = Workspace(tmp_path / "a")
    b = twin(a, tmp_path / "b")
    names = domains.resolve(["law", "math"])
    assert (domains.label(a, names, gateway=gw(a, BIG, "Domain: Law", max_tokens=8)).documents["domain"]
            == "law").all()
    share_cache(a, b)
    small = gw(b, 30, "Domain: Law", max_tokens=8)
    lab = domains.label(b, names, gateway=small)
    assert lab.documents["domain"].isna().all() and (lab.documents["status"] == llm.DOES_NOT_FIT).all()
    assert small.usage.cache_hits == 0
