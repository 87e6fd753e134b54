"""Access vs use: quadrant assignment, thresholds, exclusions, breakdowns, the figure and the CLI."""
from __future__ import annotations

import json

import numpy as np
import pytest

from emb_s_core import diagnose, judge, llm, qa, runs
from emb_s_core.cli import main
from emb_s_core.errors import EmbSError
from emb_s_core.figures.access_use import quadrant_shares
from tests.unit.test_qa_judge import oracle_run, reader
from testkit.use_bank import make_workspace, scripted


@pytest.fixture(scope="module")
def ws(tmp_path_factory):
    """Oracle access (geography gold at rank 1, people wrong) + a reader that answers from its context, except
    g01 (told to fail: a use failure) and p00 (told to succeed: answered without access)."""
    root = tmp_path_factory.mktemp("diag")
    ws = make_workspace(root)
    oracle_run(ws)
    runs.save_results(ws, "oracle", [{"rung": "8K", "qid": "g00", "doc_ids": [], "status": runs.DOES_NOT_FIT}])
    mp = pytest.MonkeyPatch()
    try:
        scripted(mp, reader(ws, always_right={"p00"}, always_wrong={"g01"}))
        gw = llm.Gateway.for_workspace(ws, "gpt-4o-mini", params={"mock_response": "unused"})
        qa.answer(ws, gw, setting="rag", context_run="oracle", k=2, name="qa1",
                  rungs=["2K/geography", "2K/people", "8K"])
    finally:
        mp.undo()
    judge.judge(ws, "qa1", judge.REFERENCE)
    return ws


def test_quadrants_per_query(ws):
    df = diagnose.quadrants(ws, "oracle", "qa1", "reference", k=10)
    q = df.set_index(["rung", "qid"])["quadrant"]
    assert q[("2K/geography", "g00")] == diagnose.ACCESSED_GOOD
    assert q[("2K/geography", "g01")] == diagnose.USE_FAILURE
    assert q[("2K/people", "p00")] == diagnose.UNACCESSED_GOOD
    assert q[("2K/people", "p01")] == diagnose.ACCESS_FAILURE
    dnf = df[df["rung"] == "8K"]
    assert len(dnf) == 24 and dnf["quadrant"].isna().all() and (dnf["reason"] == "answer: no_context").all()
    geo = df[df["rung"] == "2K/geography"]
    assert (geo["sr"] == 1.0).all() and geo["accessed"].all()
    assert list(df["rung"].drop_duplicates()) == ["2K/geography", "2K/people", "8K"]  # ladder order
    assert set(diagnose.cases(df, diagnose.USE_FAILURE)["qid"]) == {"g01"}
    g01 = df[(df["rung"] == "2K/geography") & (df["qid"] == "g01")].iloc[0]
    assert g01["access_ids"] == [2, 190] and g01["context_ids"] == [2, 190] and g01["answer"] == "I do not know"
    assert diagnose.quadrants(ws, "oracle", "qa1", k=1).iloc[0]["access_ids"].__len__() <= 1


def test_thresholds_move_queries(ws):
    strict = diagnose.quadrants(ws, "oracle", "qa1", "reference", k=10, score_threshold=6)
    assert set(strict["quadrant"].dropna()) == {diagnose.USE_FAILURE, diagnose.ACCESS_FAILURE}
    lenient = diagnose.quadrants(ws, "oracle", "qa1", "reference", k=10, access_threshold=0.0)
    assert set(lenient["quadrant"].dropna()) == {diagnose.ACCESSED_GOOD, diagnose.USE_FAILURE}
    # K cuts the ranking: with K=1 the people queries' wrong top-1 stays not accessed; geography stays accessed
    k1 = diagnose.quadrants(ws, "oracle", "qa1", "reference", k=1)
    assert (k1[k1["qid"].str.startswith("g") & k1["quadrant"].notna()]["accessed"]).all()


def test_sr_comes_from_metrics(ws):
    """Access uses metrics.per_query's SR@K (one implementation of the formula)."""
    from emb_s_core import bank, metrics

    df = diagnose.quadrants(ws, "oracle", "qa1", k=1)
    pq = metrics.per_query(runs.load_results(ws, runs=["oracle"]), bank.queries(ws), ks=(1,))
    both = df.merge(pq[["rung", "qid", "SR@1"]], on=["rung", "qid"])
    ok = both["access_status"] == runs.OK
    assert ok.sum() == 24 and np.allclose(both.loc[ok, "sr"], both.loc[ok, "SR@1"])


def test_summary_shares_and_breakdowns(ws):
    df = diagnose.quadrants(ws, "oracle", "qa1", "reference")
    s = diagnose.summary(df, ("rung",))
    assert set(s["quadrant"]) == set(diagnose.QUADRANTS) and len(s) == 3 * 4
    geo = s[s["rung"] == "2K/geography"].set_index("quadrant")
    assert geo.loc[diagnose.USE_FAILURE, "n"] == 1 and geo.loc[diagnose.ACCESSED_GOOD, "n"] == 11
    assert geo["share"].sum() == pytest.approx(1.0) and (geo["n_classified"] == 12).all()
    dnf = s[s["rung"] == "8K"]
    assert (dnf["n_excluded"] == 24).all() and dnf["share"].isna().all()  # excluded, not a zero share
    for by in (["domain"], ["task_type"], ["multi_source"], ["rung", "domain"]):
        b = diagnose.summary(df, by)
        assert b.groupby(by)["n"].sum().sum() == df["quadrant"].notna().sum()
    with pytest.raises(EmbSError, match="cannot break down"):
        diagnose.summary(df, ["colour"])


def test_figure(ws):
    s = diagnose.summary(diagnose.quadrants(ws, "oracle", "qa1", "reference"))
    fig = quadrant_shares(s)
    assert len(fig.data) == 4 and fig.layout.barmode == "stack"
    use = next(t for t in fig.data if t.name == diagnose.LABELS[diagnose.USE_FAILURE])
    assert list(use.x) == ["2K/geography", "2K/people", "8K"]
    assert use.y[0] == pytest.approx(1 / 12) and np.isnan(use.y[2])
    area = quadrant_shares(s, kind="area")
    assert all(t.stackgroup == "shares" for t in area.data)


def test_bad_inputs(ws):
    version = ws.version
    with pytest.raises(EmbSError, match="no run named 'x'"):
        diagnose.quadrants(ws, "x", "qa1")
    with pytest.raises(EmbSError, match="no QA run named 'y'"):
        diagnose.quadrants(ws, "oracle", "y")
    with pytest.raises(EmbSError, match="has not judged"):
        diagnose.quadrants(ws, "oracle", "qa1", "llm:gpt-4o")
    assert ws.version == version


def test_cli_diagnose(ws, capsys, tmp_path):
    fig = tmp_path / "f.html"
    assert main(["diagnose", "-w", str(ws.path), "--access-run", "oracle", "--qa-run", "qa1", "--json",
                 "--figure", str(fig)]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["quadrant"] for r in rows} == set(diagnose.QUADRANTS) and fig.stat().st_size > 1000
    assert main(["diagnose", "-w", str(ws.path), "--access-run", "oracle", "--qa-run", "qa1",
                 "--cases", "use_failure"]) == 0
    out = capsys.readouterr().out
    assert "g01" in out and "p01" not in out
    assert main(["diagnose", "-w", str(ws.path), "--access-run", "nope", "--qa-run", "qa1"]) == 2
    assert "no run named 'nope'" in capsys.readouterr().err


def test_missing_access_is_excluded_with_reason(ws):
    oracle_run(ws, name="geo-only", rungs=("2K/geography",))
    df = diagnose.quadrants(ws, "geo-only", "qa1")
    people = df[df["rung"] == "2K/people"]
    assert people["quadrant"].isna().all() and (people["reason"] == "access: missing").all()
    assert people["accessed"].isna().all() and people["score"].notna().all()  # answered and judged, not accessed
    s = diagnose.summary(df).set_index(["rung", "quadrant"])
    assert s.loc[("2K/people", diagnose.ACCESS_FAILURE), "n"] == 0
    assert s.loc[("2K/people", diagnose.ACCESS_FAILURE), "n_excluded"] == 12


def test_cli_lists_the_excluded_cells_with_their_reasons(ws, capsys):
    """Issue 16: the excluded cells (here g00 on 8K: its access cell does not fit, so its rag answer had no
    context) and why, from the CLI."""
    df = diagnose.quadrants(ws, "oracle", "qa1")
    excluded = diagnose.cases(df, diagnose.EXCLUDED)
    assert len(excluded) == int(df["quadrant"].isna().sum()) > 0 and excluded["reason"].notna().all()
    assert main(["diagnose", "-w", str(ws.path), "--access-run", "oracle", "--qa-run", "qa1", "--cases", "excluded",
                 "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {(r["rung"], r["qid"]) for r in rows} == set(zip(excluded["rung"], excluded["qid"]))
    g00 = next(r for r in rows if (r["rung"], r["qid"]) == ("8K", "g00"))
    assert g00["reason"] == "answer: no_context" and g00["access_status"] == "does_not_fit"
    assert main(["diagnose", "-w", str(ws.path), "--access-run", "oracle", "--qa-run", "qa1", "--cases", "excluded"]) == 0
    assert "answer: no_context" in capsys.readouterr().out
    with pytest.raises(EmbSError, match="excluded"):
        diagnose.cases(df, "nonsense")  # the error names the choices, 'excluded' among them
