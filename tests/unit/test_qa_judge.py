"""QA (GLOBAL and retrieve-then-generate), the reference-match and LLM judges, agreement — with mock_response."""
from __future__ import annotations

import json
import re

import numpy as np
import pytest

from emb_s_core import bank, judge, ladder, llm, localize, protocol, qa, runs
from emb_s_core.errors import EmbSError
from testkit.use_bank import question_of, scripted, use_base_ws, ws  # noqa: F401 (fixtures)


def gw(ws, **kw):
    return llm.Gateway.for_workspace(ws, "gpt-4o-mini", params={"mock_response": "unused"}, backoff=0.001, **kw)


def oracle_run(ws, name="oracle", rungs=("2K/geography", "2K/people")):
    """Gold at rank 1 for geography queries, two wrong (geography) documents for people queries."""
    qs = bank.queries(ws).set_index("qid")
    lad = ladder.load(ws)
    rows = []
    for r in rungs:
        for qid in lad.rung(r).qids:
            ids = list(qs.loc[qid, "ref_ids"]) + [190] if qid.startswith("g") else [188, 190]
            rows.append({"rung": r, "qid": qid, "doc_ids": ids, "scores": None})
    runs.create_run(ws, name, "external", "oracle", {})
    runs.save_results(ws, name, rows)
    return name


def reader(ws, always_right=(), always_wrong=()):
    """A reader that answers right iff the answer is in its context (or it is told to)."""
    qs = bank.queries(ws)
    by_question = dict(zip(qs["text"], zip(qs["qid"], qs["answer"])))

    def respond(messages):
        qid, answer = by_question[question_of(messages)]
        if qid in always_wrong:
            return "I do not know"
        if qid in always_right or answer in messages[-1]["content"]:
            return f"{answer}."
        return "unknown"
    return respond


# --------------------------------------------------------------------------------------------- reference judge
@pytest.mark.parametrize("pred,truth,aliases,score", [
    ("Quimby", "Quimby", [], 5),
    ("the quimby.", "Quimby", [], 5),  # articles, case, punctuation
    ("In 1805", "1805", ["in 1805"], 5),  # alias
    ("Quimby town", "Quimby", [], 4),  # contains the answer as a whole phrase
    ("The director was Klara Windvounski in 2017.", "Klara Windvounski", [], 4),
    ("They awarded 10,242 bursaries", "10,242", [], 4),
    ("They awarded 110,242 bursaries", "10,242", [], 0),  # a longer number is not the answer
    ("Quimbys town", "Quimby town", [], 2),  # F1 = 1/2 → round(2.5) = 2, no containment
    ("Pexa", "Quimby", [], 0),
    ("", "Quimby", [], 0),
    (None, "Quimby", [], 0),
])
def test_reference_score(pred, truth, aliases, score):
    assert judge.reference_score(pred, truth, aliases, question="What is it?")["score"] == score


def test_reference_score_needs_the_question():
    with pytest.raises(EmbSError, match="needs the question"):
        judge.reference_score("Terry Richardson or Annie Morton", "Terry Richardson", question=None)


def test_normalize_and_f1():
    assert judge.normalize("  The  Capital, of A Land! ") == "capital of land"
    assert judge.token_f1("p q r", "q r s") == pytest.approx(2 / 3)
    assert judge.token_f1("a q r", "q r s") == pytest.approx(0.8)  # the article is dropped first
    assert judge.token_f1("x", "x") == 1.0 and judge.token_f1("", "") == 0.0


@pytest.mark.parametrize("reply,score", [
    ("4", 4), ("4.", 4), (" 5\n", 5), ("0", 0), ("Score: 5", 5), ("score:3", 3), ("Rating - 2", 2),
    ("I would give this a 4.", 4),
    ("On a 0-5 scale, I give it 4", 4),  # issue 16: parsed as 0 (the scale's first bound)
    ("On a scale from 0 to 5, this is a 3.", 3), ("On a 1–5 scale: 2", 2), ("On a scale of 5, it gets 4", 4),
    ("I'd give it 3/5.", 3), ("Rating: 4/5 (minor omissions)", 4), ("4 out of 5", 4), ("5/5", 5),
    ("Score: 2. On reflection, the final score is 4.", 4),  # the last score the reply gives
    ("5 = fully correct and equivalent to the true answer", 5),
    ("The predicted answer is fully correct. Score: 5", 5),
    ("**4**", 4), ("Score: [4]", 4), ("(3)", 3), ("Answer: 1 — wrong", 1),
    # unparseable: ambiguous, another scale, decimals, no integer 0-5
    ("3 or 4", None), ("3-4", None), ("between 3 and 4", None), ("3/4", None), ("Either 2 or 3.", None),
    ("7/10", None), ("3 out of 10", None), ("10", None), ("4.5", None), ("Score: 4.5/5", None),
    ("good answer", None), ("The predicted answer is correct.", None), ("", None), (None, None),
])
def test_parse_score(reply, score):
    assert judge.parse_score(reply) == score


def test_kappa():
    assert judge.cohen_kappa(np.array([1, 2, 3]), np.array([1, 2, 3])) == pytest.approx(1.0)
    # 2x2 example: p_o = 0.5, p_e = 0.5 → κ = 0
    assert judge.cohen_kappa(np.array([0, 0, 1, 1]), np.array([0, 1, 0, 1])) == pytest.approx(0.0)
    assert np.isnan(judge.cohen_kappa(np.array([]), np.array([])))


# --------------------------------------------------------------------------------------------- QA
def test_rag_qa_uses_top_k_of_a_run(ws, monkeypatch):
    oracle_run(ws)
    seen = []
    respond = reader(ws)
    calls = scripted(monkeypatch, lambda m: (seen.append(m[-1]["content"]), respond(m))[1])
    name = qa.answer(ws, gw(ws), setting="rag", context_run="oracle", k=1, rungs=["2K/geography", "2K/people"])
    assert name == "qa:gpt-4o-mini:rag[oracle]@1"
    ans = qa.load_answers(ws, [name])
    assert len(ans) == 24 and (ans["status"] == "ok").all() and calls["n"] == 24
    qs = bank.queries(ws).set_index("qid")
    for row in ans.itertuples():
        if row.qid.startswith("g"):
            assert list(row.context_ids) == list(qs.loc[row.qid, "ref_ids"])
            assert row.answer == qs.loc[row.qid, "answer"] + "."
        else:
            assert list(row.context_ids) == [188] and row.answer == "unknown"
    assert all(len(re.findall(r"\[DocID=\d+\]", s)) == 1 for s in seen)  # k = 1 document of context
    assert ans["prompt_version"].eq("qa_v1").all() and (ans["cost"] > 0).all()
    info = qa.get_qa_run(ws, name)
    assert info["setting"] == "rag" and info["context_run"] == "oracle" and info["k"] == 1
    # resume: nothing left to do, no call, no write
    version = ws.version
    qa.answer(ws, gw(ws), setting="rag", context_run="oracle", k=1, rungs=["2K/geography", "2K/people"])
    ws.refresh()
    assert ws.version == version and calls["n"] == 24


def test_rag_without_ranking_is_no_context(ws, monkeypatch):
    oracle_run(ws)
    runs.save_results(ws, "oracle", [{"rung": "8K", "qid": "g00", "doc_ids": [], "status": runs.DOES_NOT_FIT}])
    scripted(monkeypatch, reader(ws))
    name = qa.answer(ws, gw(ws), setting="rag", context_run="oracle", k=2, rungs=["8K"], limit=1)
    ans = qa.load_answers(ws, [name])
    assert list(ans["status"]) == [qa.NO_CONTEXT] and ans["answer"].isna().all()


def test_rag_skips_ids_that_name_no_document(ws, monkeypatch):
    """A localization reply can invent ids: they take their slot of the top-K but bring no document."""
    runs.create_run(ws, "inventive", "localize", "x", {})
    runs.save_results(ws, "inventive", [{"rung": "2K/geography", "qid": "g00", "doc_ids": [99999, 0, 4]}])
    seen = []
    respond = reader(ws)
    scripted(monkeypatch, lambda m: (seen.append(m[-1]["content"]), respond(m))[1])
    name = qa.answer(ws, gw(ws), setting="rag", context_run="inventive", k=2, rungs=["2K/geography"])
    answers = qa.load_answers(ws, [name]).set_index("qid")
    assert (answers.drop(index="g00")["status"] == qa.NO_CONTEXT).all() and len(seen) == 1
    row = answers.loc["g00"]
    assert row["status"] == "ok" and list(row["context_ids"]) == [0]
    assert json.loads(row["detail"])["missing_ids"] == [99999]
    assert re.findall(r"\[DocID=(\d+)\]", seen[0]) == ["0"]


def test_limit_is_per_rung_seeded_and_shared_by_every_protocol(ws, monkeypatch, capsys):
    """Issue 16: --limit N took the first N qids of the whole bank, so a domain rung could get 0 cells."""
    lad = ladder.load(ws)
    geo, people = lad.rung("2K/geography"), lad.rung("2K/people")
    assert protocol.rung_queries(geo, 3) == protocol.rung_queries(geo, 3)  # seeded: the same every time
    assert len(protocol.rung_queries(geo, 3)) == 3 and len(protocol.rung_queries(people, 3)) == 3
    assert set(protocol.rung_queries(geo, 3)) <= set(geo.qids) and protocol.rung_queries(geo, 99) == geo.qids
    # the old rule (first 3 qids of the bank: g00, g01, g02) would give the people rung none
    assert not set(sorted(q for r in lad.rungs for q in r.qids)[:3]) & set(people.qids)
    scripted(monkeypatch, reader(ws))
    name = qa.answer(ws, gw(ws), setting="global", rungs=["2K/geography", "2K/people"], limit=3)
    answers = qa.load_answers(ws, [name])
    assert answers.groupby("rung").size().to_dict() == {"2K/geography": 3, "2K/people": 3}
    judge.judge(ws, name, limit=2)  # the judge takes the first 2 of the same order on each rung
    judged = judge.load_judgments(ws, ["reference"], [name])
    assert set(zip(judged["rung"], judged["qid"])) == {(r.name, q) for r in (geo, people)
                                                       for q in protocol.rung_queries(r, 2)}
    with pytest.raises(EmbSError, match="--limit must be positive"):
        qa.answer(ws, gw(ws), setting="global", rungs=["2K/geography"], limit=0)
    import dataclasses

    assert protocol.rungs_without_queries([geo, dataclasses.replace(people, qids=[])]) == ["2K/people"]


def test_global_qa_fits_or_does_not(ws, monkeypatch):
    lad = ladder.load(ws)
    calls = scripted(monkeypatch, reader(ws))
    g = gw(ws, context_window=lad.rung("2K/geography").n_tokens + 300, max_tokens=16)
    est = qa.estimate(ws, g, setting="global", rungs=["2K/geography", "8K"], limit=3)
    name = qa.answer(ws, g, setting="global", rungs=["2K/geography", "8K"], limit=3)
    ans = qa.load_answers(ws, [name]).set_index(["rung", "qid"])
    assert (ans.loc["2K/geography", "status"] == "ok").all()
    assert (ans.loc["8K", "status"] == llm.DOES_NOT_FIT).all()
    n_fit = int((ans["status"] == "ok").sum())
    assert calls["n"] == n_fit and est["to_send"] == n_fit and est["does_not_fit"] == len(ans) - n_fit
    assert all(len(c) == 0 for c in ans["context_ids"])  # GLOBAL: the whole rung, not repeated per row
    assert (ans.loc["2K/geography", "answer"].str.endswith(".")).all()  # the answer was in the whole rung


def test_qa_bad_inputs(ws):
    version = ws.version
    with pytest.raises(EmbSError, match="needs a context run"):
        qa.answer(ws, gw(ws), setting="rag")
    with pytest.raises(EmbSError, match="no run named 'ghost'"):
        qa.answer(ws, gw(ws), setting="rag", context_run="ghost")
    with pytest.raises(EmbSError, match="unknown QA setting"):
        qa.answer(ws, gw(ws), setting="oracle")
    ws.refresh()
    assert ws.version == version and not ws.has_table("qa_runs")


# --------------------------------------------------------------------------------------------- judges
def test_reference_and_llm_judges_with_agreement(ws, monkeypatch):
    oracle_run(ws)
    scripted(monkeypatch, reader(ws, always_wrong={"g01"}))
    name = qa.answer(ws, gw(ws), setting="rag", context_run="oracle", k=1, rungs=["2K/geography"])
    assert judge.judge(ws, name, judge.REFERENCE) == "reference"
    ref = judge.scores(ws, name, "reference").set_index("qid")
    assert ref.loc["g00", "score"] == 5 and ref.loc["g01", "score"] == 0 and (ref["n_repeats"] == 1).all()

    qs = bank.queries(ws)
    truth = dict(zip(qs["text"], qs["answer"]))

    def grade(messages):
        text = messages[-1]["content"]
        question = question_of(messages)
        if question.endswith("Mioland?"):
            return "This answer looks fine to me."  # unparseable
        predicted = text.split("Predicted answer: ")[1].splitlines()[0]
        return "5" if truth[question] in predicted else "Score: 1"

    calls = scripted(monkeypatch, grade)
    g = gw(ws, max_tokens=4)
    assert judge.judge(ws, name, "gpt-4o-mini", g, repeats=2) == "llm:gpt-4o-mini"
    assert calls["n"] == 24  # 12 answers × 2 repeats, each repeat its own cache entry
    llm_scores = judge.scores(ws, name, "llm:gpt-4o-mini").set_index("qid")
    assert llm_scores.loc["g00", "score"] == 5 and llm_scores.loc["g01", "score"] == 1
    assert (llm_scores["n_repeats"] == 2).all()
    unparse = llm_scores[llm_scores["n_unparseable"] > 0]
    assert len(unparse) == 1 and np.isnan(unparse["score"].iloc[0])  # counted, never a zero
    summ = judge.summary(ws, name).set_index("judge")
    assert summ.loc["llm:gpt-4o-mini", "unparseable"] == 2 and summ.loc["reference", "unparseable"] == 0

    self_agree = judge.agreement(ws, name, "llm:gpt-4o-mini")
    assert self_agree["n"] == 11 and self_agree["exact"] == 1.0
    both = judge.agreement(ws, name, "llm:gpt-4o-mini", "reference")
    assert both["n"] == 11 and both["exact"] == 10 / 11 and both["within_1"] == 1.0
    assert 0 < both["kappa"] <= 1

    # resume: judged cells are not judged again
    judge.judge(ws, name, "gpt-4o-mini", gw(ws, max_tokens=4), repeats=2)
    assert calls["n"] == 24
    raw = judge.load_judgments(ws, ["llm:gpt-4o-mini"], [name])
    assert raw["prompt_version"].eq("judge_v2+schema").all() and len(raw) == 24  # gpt-4o-mini takes a JSON schema


def test_judge_bad_inputs(ws):
    version = ws.version
    with pytest.raises(EmbSError, match="no QA run named 'nope'"):
        judge.judge(ws, "nope")
    with pytest.raises(EmbSError, match="--repeats"):
        judge.judge(ws, "nope", repeats=0)
    ws.refresh()
    assert ws.version == version


def test_judge_prompt_sees_only_question_answer_prediction():
    prompt = protocol.load_prompt("judge")
    text = judge.judge_messages(prompt, "Q?", "A", "P")[0]["content"]
    assert "Question: Q?" in text and "True answer: A" in text and "Predicted answer: P" in text
    assert "DocID" not in text and "0 to 5" in text
    assert json.dumps(judge.judge_messages(prompt, "Q?", "A", "P"))  # plain JSON messages


def test_repeat_agreement_uses_every_repeat(ws, monkeypatch):
    """Issue 16: agreement compared repeats 0 and 1 only, and n was 0 when repeat 0 was unparseable."""
    oracle_run(ws)
    scripted(monkeypatch, reader(ws))
    name = qa.answer(ws, gw(ws), setting="rag", context_run="oracle", k=1, rungs=["2K/geography"])
    seen: dict[str, int] = {}

    def grade(messages):  # per question: repeat 0 unparseable, then 4, then 4 (g00-g05) or 5 (the others)
        question = question_of(messages)
        n = seen[question] = seen.get(question, -1) + 1
        qid = qs_by_text[question]
        return ["I cannot say.", "4", "4" if qid < "g06" else "5"][n]

    qs_by_text = dict(zip(bank.queries(ws)["text"], bank.queries(ws)["qid"]))
    scripted(monkeypatch, grade)
    judge.judge(ws, name, "gpt-4o-mini", gw(ws, max_tokens=4, concurrency=1), repeats=3)
    self_agree = judge.agreement(ws, name, "llm:gpt-4o-mini")
    assert self_agree["n"] == 12 and self_agree["n_pairs"] == 12  # repeats 1 and 2 of each answer
    assert self_agree["exact"] == pytest.approx(0.5) and self_agree["within_1"] == 1.0
    judge.judge(ws, name, judge.REFERENCE)
    cross = judge.agreement(ws, name, "llm:gpt-4o-mini", "reference")  # reference gives 5 to every answer here
    assert cross["n"] == 12 and cross["n_pairs"] == 24 and cross["exact"] == pytest.approx(6 / 24)


def test_reference_judge_reads_the_question_and_rejudges_old_rule_rows(ws, monkeypatch):
    """The stored reference judgment uses the question's alternatives; rows of rule v1 are judged again."""
    oracle_run(ws)
    qs = bank.queries(ws)
    p00 = qs.set_index("qid").loc["p00"]
    scripted(monkeypatch, lambda m: f"{p00['answer']} or 1999" if question_of(m) == p00["text"] else "x")
    name = qa.answer(ws, gw(ws), setting="rag", context_run="oracle", k=1, rungs=["2K/people"])
    judge.judge(ws, name)
    rows = judge.load_judgments(ws, ["reference"], [name]).set_index("qid")
    assert rows.loc["p00", "prompt_version"] == judge.REFERENCE_VERSION
    # the bank asks no "X or Y?": "<answer> or 1999" is a hedge between two years, not credited (issue 22)
    assert rows.loc["p00", "score"] <= 1 and rows.loc["p00", "raw"] == "hedge"
    # an old-rule row is replaced on the next run; a current one is not
    table = judge.load_judgments(ws, ["reference"], [name])
    table.loc[table["qid"] == "p00", ["prompt_version", "score"]] = [None, 0.0]
    with ws.transaction():
        ws.write("judgments", __import__("pyarrow").Table.from_pandas(
            table[table["qid"] == "p00"][judge.JUDGMENTS_SCHEMA.names], schema=judge.JUDGMENTS_SCHEMA,
            preserve_index=False), schema=judge.JUDGMENTS_SCHEMA)
    assert judge.scores(ws, name, "reference").set_index("qid").loc["p00", "score"] == 0
    version = ws.version
    judge.judge(ws, name)
    ws.refresh()
    assert ws.version == version + 1  # one batch: only the old-rule row
    assert judge.scores(ws, name, "reference").set_index("qid").loc["p00", "score"] <= 1


def test_llm_judgments_of_the_old_parser_are_read_with_the_new_one(ws, monkeypatch):
    """A row stored when "On a 0-5 scale, I give it 4" parsed as 0 reads as 4; "3 or 4" (stored as 3) as unparseable."""
    import pyarrow as pa

    oracle_run(ws)
    scripted(monkeypatch, reader(ws))
    name = qa.answer(ws, gw(ws), setting="rag", context_run="oracle", k=1, rungs=["2K/geography"], limit=2)
    qids = sorted(qa.load_answers(ws, [name])["qid"])
    rows = [{"judge": "llm:gpt-4o-mini", "qa_run": name, "rung": "2K/geography", "qid": q, "repeat": 0,
             "score": old, "status": "ok", "raw": raw, "prompt_version": "judge_v1", "cost": 0.0}
            for q, raw, old in zip(qids, ["On a 0-5 scale, I give it 4", "3 or 4"], [0.0, 3.0])]
    with ws.transaction():
        ws.write("judgments", pa.Table.from_pylist(rows, schema=judge.JUDGMENTS_SCHEMA), schema=judge.JUDGMENTS_SCHEMA)
    got = judge.load_judgments(ws, ["llm:gpt-4o-mini"]).set_index("qid")
    assert got.loc[qids[0], "score"] == 4 and got.loc[qids[0], "status"] == "ok"
    assert np.isnan(got.loc[qids[1], "score"]) and got.loc[qids[1], "status"] == judge.UNPARSEABLE
    assert judge.summary(ws, name).set_index("judge").loc["llm:gpt-4o-mini", "unparseable"] == 1


@pytest.mark.parametrize("reply,ids", [
    ("Of the 11 passages only two count: 31 and 5.", [31, 5]),                 # a count before its noun
    ("Doc 31 looks close but not 31 after all; the answer is in 5 and 1987.", [5, 1987]),  # set aside
    ("The 1987 album is covered by 5, then 31.", [5, 31]),                       # a year in prose
    ("Documents 5 and 31 (11 is irrelevant).", [5, 31]),
    ("Relevant: 1987 and 5.", [1987, 5]),                                        # an id that looks like a year
])
def test_localization_reads_what_the_reply_names_as_its_answer(reply, ids):
    context = {1, 5, 11, 31, 1987, 2}
    assert localize.canonicalize(reply, 2, context) == ids


@pytest.mark.parametrize("reply,score", [
    ("I'd rate this a three out of five: the year is right, the month is not.", 3),
    ("Score: 4\nScore: 2", None),                               # two scores, neither revised
    ("Score: 4 — on reflection the date is wrong. Score: 2", 2),  # revised
])
def test_judge_parser_reads_scales_in_words_and_revisions(reply, score):
    assert judge.parse_score(reply) == score


@pytest.mark.parametrize("reply,score", [
    ("I'd rate the prediction a two: the city is wrong.", 2),                    # a score word after "rate"
    ("Score: 3.0\nRight person, wrong year.", 3),                               # an integer written as a decimal
    ("Score: 3.5", None),
    ("Score: 4 (if the nickname counts), otherwise 1.", None),                  # a score under a condition
    ("Score: 4\nReason: if anything the answer is more precise than the reference.", 4),  # a later line's "if"
])
def test_judge_parser_round_four_classes(reply, score):
    assert judge.parse_score(reply) == score


def test_localization_ranges_in_words():
    assert localize.canonicalize("DocIDs 11 through 13, then 2.", 4, {2, 11, 12, 13, 31}) == [11, 12, 13, 2]


@pytest.mark.parametrize("reply,ids", [
    ("[2,031, 40]", [2031, 40]),                                     # a thousands separator inside a JSON list
    ("[2, 31]", [2, 31]),                                            # a plain list stays as written
    ("[40, 7]\nActually 7 is the remake. Final list: [40, 2]", [40, 2]),  # a revised list
    ("Top: 40. Then 2. (DocIDs 7, 31 and 2031 are unrelated.)", [40, 2]),  # a group set aside
])
def test_localization_round_five_classes(reply, ids):
    assert localize.canonicalize(reply, 2, {2, 7, 31, 40, 2031}) == ids


def test_judge_parser_reads_a_revised_scaled_score():
    assert judge.parse_score("Score: 3/5 -> on reflection 2/5: the year is off.") == 2
    assert judge.parse_score("Score: 3/5. It names 4/5 of the members.") == 3


@pytest.mark.parametrize("reply,score", [
    ('{"score": 2, "reason": "a score of 5 needs the right year"}', 2),          # the JSON key, not the prose
    ("On this scale (0 = wrong, 5 = fully right) the answer earns a 4.", 4),     # a rubric is no score
    ("Score: 3 (the names differ: 'Ian' vs 'Ian Tor' - actually that is the same person, so 5).", 5),
    ("Score: 4, maybe 3 given the missing year. I'll settle on 3.", 3),
])
def test_judge_parser_round_six_classes(reply, score):
    assert judge.parse_score(reply) == score


@pytest.mark.parametrize("reply,ids", [
    ("Of the 12 passages, 2 are needed: the ones with IDs 7 and 31.", [7, 31]),  # a count, then a list of ids
    ("[[31], [7]]", [31, 7]),                                                     # a nested list
])
def test_localization_round_six_classes(reply, ids):
    assert localize.canonicalize(reply, 2, {2, 7, 12, 31, 40}) == ids


@pytest.mark.parametrize("reply,score", [
    ("The reference has 4 names and the prediction 3 of them, so I'd score it 2.", 2),  # "score" as a verb
    ("I'd score it somewhere between 2 and 3.", None),
])
def test_judge_parser_round_seven_classes(reply, score):
    assert judge.parse_score(reply) == score


@pytest.mark.parametrize("reply,ids", [
    ("DocID 1987 covers the 1987 season, so it is not relevant. The needed ones are DocID 7 and DocID 40.", [7, 40]),
    ("DocID 31 could help, but I think the two needed are DocID 2 and DocID 40.", [2, 40]),
    ("DocID 2 031 and DocID 40", [2031, 40]),                                    # a space as thousands separator
])
def test_localization_round_seven_classes(reply, ids):
    assert localize.canonicalize(reply, 2, {2, 7, 31, 40, 1987, 2031}) == ids


@pytest.mark.parametrize("reply,score", [
    ("Somewhere between a 3 and a 4; I'll settle on 4 since the place is right.", 4),
    ("Score: 3 (maybe 2)", None),
    ("A score of 5 would need the exact date, so I'd say Score: 3.", 3),
])
def test_judge_parser_round_eight_classes(reply, score):
    assert judge.parse_score(reply) == score


def test_localization_ignores_an_echoed_k_and_reads_the_ids_named_after_it():
    assert localize.canonicalize("Looking at it, k = 2, and the documents are 7 and 40.", 2, {2, 7, 31, 40}) == [7, 40]


@pytest.mark.parametrize("reply,score", [  # issue 34: overall scores after criteria, "N of 5", conclusions, hedges
    ("Correctness: 5/5. Completeness: 3/5. Overall: 4", 4),
    ("Accuracy - 5\nCompleteness - 3\nFinal: 4", 4),
    ("Relevance: 2/5, Precision: 4/5. Total: 3", 3),
    ("Correctness: 5/5. Completeness: 3/5.", None),  # criteria without an overall score
    ("Points: 1 of 5", 1),
    ("zero", 0),
    ("The answer names another person, so zero.", 0),
    ("The surname is right. (A 5 would require the full name; giving 4.)", 4),
    ("I'd say 4, maybe 5", None),
    ("I'd give it a 3, maybe 4", None),
    ("I'd give it a 3.", 3),
])
def test_judge_parser_issue_34_classes(reply, score):
    assert judge.parse_score(reply) == score


@pytest.mark.parametrize("reply,ids", [  # issue 34: localization replies that need no guessing
    ("Relevant: 501, 502\nNot relevant: 503, 504", [501, 502]),
    ("Irrelevant documents: 503. Relevant documents: 501", [501]),
    ("DocID 77 is about a different film and is not relevant. DocID 12 answers it.", [12]),
    ("DocID 12 answers it; DocID 77 is about a different film, so it is not relevant.", [12]),
    ("None. (I checked documents 1 through 40.)", []),
    ("1) 2950 2) 2951 3) 10", [2950, 2951, 10]),
    ("DocID 400 — wait, I meant DocID 404", [404]),
    ("I was torn between 400 and 403; DocID 403 it is.", [403]),
    ("The band with 4 members is in DocID 12.", [12]),
    ("Sessions 3 and 4 discuss it: DocID 12.", [12]),
    ("The film (1946) is described in 12 and 30.", [12, 30]),
])
def test_localization_issue_34_classes(reply, ids):
    assert localize.read_ids(reply, 3, set(range(1, 3000)))[0] == ids
