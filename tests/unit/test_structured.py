"""Replies under a JSON schema where the provider supports one, the free-form reading otherwise (issue 34 §3):
real litellm with mock_response, no network."""
from __future__ import annotations

import json

import pytest

from emb_s_core import bank, judge, llm, localize, qa, runs
from emb_s_core.llm import structured
from testkit.use_bank import question_of, scripted, use_base_ws, ws  # noqa: F401 (fixtures)

from tests.unit.test_qa_judge import oracle_run


def gateway(ws, model="gpt-4o-mini", reply="unused"):
    return llm.Gateway.for_workspace(ws, model, params={"mock_response": reply}, backoff=0.001,
                                     context_window=None if model == "gpt-4o-mini" else 128_000)


def test_asked_only_where_the_model_supports_a_schema(ws):
    original = gateway(ws)
    asked, yes = structured.asking(original, structured.JUDGE)
    assert yes and asked.params["response_format"]["json_schema"]["schema"] == structured.SCHEMAS["judge"]
    assert asked.usage is original.usage and "response_format" not in original.params
    plain, no = structured.asking(gateway(ws, "openai/unknown-model"), structured.JUDGE)
    assert not no and "response_format" not in plain.params


@pytest.mark.parametrize("kind,text,read", [
    ("localize", '{"ids": [40, 7]}', "[40, 7]"),
    ("judge", '{"score": 4, "reason": "the surname only"}', "Score: 4"),
    ("judge", '{"score": 7, "reason": "x"}', "Score: 7"),  # out of range: the parser still says unparseable
    ("qa", '{"answer": "Quimby"}', "Quimby"),
    ("qa", "Quimby, I think.", "Quimby, I think."),  # free form: unchanged
    ("localize", '{"ids": ["a"]}', '{"ids": ["a"]}'),  # malformed: read as free form
])
def test_unwrap_gives_the_free_form_readers_exact_text(kind, text, read):
    assert structured.unwrap(kind, text) == read


def test_runs_record_whether_the_structured_form_was_used(ws, monkeypatch):
    """Localization, QA and the LLM judge under a schema (gpt-4o-mini) read the structured reply and say so in the
    run; a model without schema support is read free-form and its run says nothing of a schema."""
    oracle_run(ws)
    qs = bank.queries(ws).set_index("qid")
    by_text = dict(zip(qs["text"], qs.index))
    scripted(monkeypatch, lambda m: json.dumps({"answer": qs.loc[by_text[question_of(m)], "answer"]}))
    name = qa.answer(ws, gateway(ws), setting="rag", context_run="oracle", k=1, rungs=["2K/people"])
    assert qa.get_qa_run(ws, name)["config"]["structured"] is True
    answers = qa.load_answers(ws, [name]).set_index("qid")
    assert all(answers.loc[q, "answer"] == qs.loc[q, "answer"] for q in answers.index)  # unwrapped, not JSON

    scripted(monkeypatch, lambda m: '{"score": 5, "reason": "same answer"}')
    assert judge.judge(ws, name, "gpt-4o-mini", gateway(ws)) == "llm:gpt-4o-mini"
    rows = judge.load_judgments(ws, ["llm:gpt-4o-mini"], [name])
    assert (rows["score"] == 5).all() and rows["prompt_version"].str.endswith(structured.SUFFIX).all()

    scripted(monkeypatch, lambda m: "Score: 3")  # a model without schema support: free form, no suffix
    judge.judge(ws, name, "openai/no-schema", gateway(ws, "openai/no-schema"))
    rows = judge.load_judgments(ws, ["llm:openai/no-schema"], [name])
    assert (rows["score"] == 3).all() and not rows["prompt_version"].str.endswith(structured.SUFFIX).any()


def test_localization_reads_the_ids_field(ws, monkeypatch):
    from emb_s_core import ladder

    shown = sorted(int(d) for d in ladder.load(ws).rung("2K/people").doc_ids)[-2:]
    scripted(monkeypatch, lambda m: json.dumps({"ids": shown[::-1]}))
    run = localize.localize(ws, gateway(ws), k=2, rungs=["2K/people"], limit=2)
    assert runs.get_run(ws, run)["config"]["structured"] is True
    res = runs.load_results(ws, runs=[run])
    assert [list(d) for d in res["doc_ids"]] == [shown[::-1]] * len(res)
