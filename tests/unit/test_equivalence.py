"""The learned answer-equivalence judge: trained reproducibly offline on a small labelled sample, cached outside the
repository, asked only where the rules fall back to token F1, and never past the rules' vetoes (issue 34)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from emb_s_core import equivalence, judge, labels
from testkit.use_bank import use_base_ws, ws  # noqa: F401 (fixtures)


@pytest.fixture(scope="module")
def sample() -> list[dict]:
    """The first 300 blind replies of round 1 (file order): about 120 reach the fallback, both labels among them."""
    return [r for r in labels.load_set("answers_blind.jsonl") if r["split"] == "blind_r1"][:300]


@pytest.fixture(scope="module")
def trained(sample) -> equivalence.Model:
    return equivalence.train(sample, equivalence.default_encoder())


def test_trains_reproducibly_offline_on_a_small_sample(sample, trained):
    kept, _ = equivalence.at_fallback(sample)
    assert 50 <= len(kept) < len(sample) and {r["correct"] for r in kept} == {True, False}
    again = equivalence.train(sample, equivalence.default_encoder())
    assert np.array_equal(trained.coef, again.coef) and trained.threshold == again.threshold
    assert trained.coef.shape == (len(equivalence.FEATURES),) and 0.5 <= trained.threshold < 1
    # it learned something: on its own training items it ranks right replies above wrong ones
    x = equivalence.features([equivalence.Item.of(r) for r in kept], equivalence.default_encoder())
    p = trained.probability(x)
    right = np.array([r["correct"] for r in kept])
    assert p[right].mean() > p[~right].mean() + 0.2


def test_cached_outside_the_repo_under_a_key_of_data_and_code(sample, trained, monkeypatch, tmp_path):
    monkeypatch.setenv("EMB_S_MODEL_CACHE", str(tmp_path))
    monkeypatch.setattr(equivalence, "training_rows", lambda: sample)
    monkeypatch.setattr(equivalence, "train", lambda rows, encode, key="": equivalence.Model(
        trained.mean, trained.scale, trained.coef, trained.intercept, trained.threshold, key))
    equivalence.load_model.cache_clear()
    try:
        model = equivalence.load_model()
        path = equivalence.model_path(equivalence.cache_key(sample))
        assert path.parent == tmp_path and path.is_file() and model.key == equivalence.cache_key(sample)
        assert json.loads(path.read_text())["code"] == equivalence.CODE_VERSION
        equivalence.load_model.cache_clear()
        monkeypatch.setattr(equivalence, "train", lambda *a, **k: pytest.fail("trained again despite the cache"))
        assert np.array_equal(equivalence.load_model().coef, trained.coef)
        assert equivalence.cache_key(sample) != equivalence.cache_key(sample[1:])  # other data, other model
    finally:
        equivalence.load_model.cache_clear()


def _credits_everything() -> equivalence.Model:
    n = len(equivalence.FEATURES)
    return equivalence.Model(np.zeros(n), np.ones(n), np.zeros(n), 10.0, 0.5)


def _credits_nothing() -> equivalence.Model:
    n = len(equivalence.FEATURES)
    return equivalence.Model(np.zeros(n), np.ones(n), np.zeros(n), -10.0, 0.5)


Q = "What does Caroline do to relax after work?"
GOLD = "She goes running in the park near her house"


@pytest.mark.parametrize("reply,why", [
    ("No idea, it isn't mentioned.", "refusal"),
    ("Maybe running, or perhaps painting.", None),  # a hedge: the rules or the veto hold it back
    ("She does not go running; she paints landscapes.", None),  # a negation the gold has not
    ("She jogs around a lake, though I might be wrong about that.", None),  # doubt
])
def test_vetoes_hold_even_when_the_model_credits_everything(reply, why):
    got = equivalence.score(reply, GOLD, [], Q, model=_credits_everything())
    assert got["score"] <= 3 and got["reason"] != "learned"
    if why:
        assert got["reason"] == why or got.get("vetoed") == why


@pytest.mark.parametrize("question,gold,reply", [
    ("Who was born first, Ulf Merbold or Mirosław Hermaszewski?", "Ulf Merbold",
     "Mirosław Hermaszewski was born first."),  # a competitor
    ("When did the battle take place?", "25 December 1505", "It took place on 3 March 1507."),  # another date
    ("How many children did he have?", "five", "He had seven children with his two wives."),  # another number
    ("Which countries border it?", "France and Spain", "France, Spain and Portugal border it."),  # an extra member
])
def test_rule_vetoes_and_conflicting_numbers_are_kept(question, gold, reply):
    got = equivalence.score(reply, gold, [], question, model=_credits_everything())
    assert got["score"] <= 3 and got["reason"] != "learned"


def test_asked_only_where_the_rules_fall_back_to_token_f1():
    paraphrase = "After work she jogs through the park by her home."
    rule = judge.reference_score(paraphrase, GOLD, [], question=Q)
    assert rule["reason"] == equivalence.FALLBACK and rule["score"] < 4
    got = equivalence.score(paraphrase, GOLD, [], Q, model=_credits_everything())
    assert got["score"] == 4 and got["reason"] == "learned" and got["probability"] > 0.99
    assert equivalence.score(paraphrase, GOLD, [], Q, model=_credits_nothing())["score"] == rule["score"]
    exact = equivalence.score("She goes running in the park near her house.", GOLD, [], Q, model=_credits_nothing())
    assert exact["score"] >= 4 and exact["probability"] is None  # the rules decided: the model was not asked


def test_the_learned_judge_runs_offline_on_a_qa_run(ws, monkeypatch):  # noqa: F811 (fixture)
    """``judge(ws, run, "learned")``: no gateway, rows under its own rule, the reference judge's reading kept where
    the rules decide; a change of rule judges its rows again."""
    from emb_s_core import bank, qa
    from testkit.use_bank import question_of, scripted

    from tests.unit.test_qa_judge import gw, oracle_run

    monkeypatch.setattr(equivalence, "load_model", _credits_everything)
    oracle_run(ws)
    qs = bank.queries(ws).set_index("qid")
    scripted(monkeypatch, lambda m: "No idea." if question_of(m) == qs.loc["p00", "text"] else
             f"I believe it is {qs.set_index('text').loc[question_of(m), 'answer']}.")
    name = qa.answer(ws, gw(ws), setting="rag", context_run="oracle", k=1, rungs=["2K/people"])
    assert judge.judge(ws, name, judge.LEARNED) == "learned"
    rows = judge.load_judgments(ws, ["learned"], [name]).set_index("qid")
    assert set(rows["prompt_version"]) == {judge.rule_version(judge.LEARNED)} != {judge.REFERENCE_VERSION}
    assert rows.loc["p00", "score"] == 0 and rows.loc["p00", "raw"] == "refusal"
    assert (rows.drop(index="p00")["score"] >= 4).all()
    assert judge.pending(ws, name, judge.LEARNED, 1, None, None).empty


def test_its_measured_agreement_is_stored_for_todays_rule_and_shown():
    """bench/bench_equivalence.py --write-figures stores the leave-one-round-out figures under today's rule name
    (a new CODE_VERSION or reference rule finds none until it is measured again), per dataset."""
    from emb_s_core import diagnose

    df = labels.agreement(None, judge.LEARNED, 4)
    assert set(df["labelled_set"]) == {labels.LOO_SET} and set(df["rule"]) == {judge.rule_version(judge.LEARNED)}
    assert set(df["dataset"]) == {labels.ALL, "hotpotqa", "musique", "2wiki", "locomo"}
    overall = df[df["dataset"] == labels.ALL].iloc[0]
    assert overall["n"] > 4000 and overall["false_credit"] <= 0.05
    assert any("held out of the learned judge's training" in line
               for line in diagnose.agreement_lines(None, judge.LEARNED))
    assert labels.agreement(None, judge.LEARNED, 3).empty  # measured only at the "answered well" line it credits
