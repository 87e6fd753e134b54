"""Runs stay readable after a bank edit (issue 16): `collide --apply` retires a query, the ladder is rebuilt, and
report / diagnose still score the old runs on the queries that remain, naming the retired one; resuming a
localization, QA or evaluation run on the rebuilt ladder is refused."""
from __future__ import annotations

import shutil

import pytest

from emb_s_core import collide, diagnose, evaluate, judge, ladder, llm, localize, qa, runs
from emb_s_core.analysis import report
from emb_s_core.cli import main as cli
from emb_s_core.errors import EmbSError
from emb_s_core.store import Workspace
from testkit.use_bank import scripted, use_base_ws, ws  # noqa: F401 (fixtures)

OPTIONS = ladder.LadderOptions(base="2K", domain_sizes=("2K", "4K"), shared_size="4K", reserve=256)


def gw(ws, reply="unused", **kw):
    return llm.Gateway.for_workspace(ws, "gpt-4o-mini", params={"mock_response": reply}, backoff=0.001, **kw)


@pytest.fixture(scope="module")
def edited_base(use_base_ws, tmp_path_factory):
    """bm25, a localization and a QA run (judged) on the ladder; then g00 retired by a Conflict and the ladder
    rebuilt. Made once per module; tests take copies."""
    ws = Workspace(shutil.copytree(use_base_ws.path, tmp_path_factory.mktemp("edited") / "ws"))
    with pytest.MonkeyPatch.context() as monkeypatch:
        evaluate.evaluate(ws, "bm25", name="bm25", rungs=["2K/geography", "4K"], k=10)
        loc = localize.localize(ws, gw(ws, "[DocID=0] 2, 4"), k=3, rungs=["2K/geography"])
        scripted(monkeypatch, lambda m: "Quimby")
        qa_run = qa.answer(ws, gw(ws), setting="rag", context_run="bm25", k=2, rungs=["2K/geography"])
        judge.judge(ws, qa_run)
        assert len(runs.load_results(ws, runs=["bm25"]).query("qid == 'g00'")) == 2
        scripted(monkeypatch, lambda m: "Label: Conflict\nRationale: it names another capital.")
        collide.run(ws, gw(ws), k=1, qids=["g00"])
        assert collide.apply(ws).retired == ["g00"]
    ladder.build(Workspace(ws.path), OPTIONS)
    return ws.path, qa_run, loc


@pytest.fixture
def edited(edited_base, tmp_path):
    """A private copy of the edited workspace: (workspace, QA run name, localization run name)."""
    path, qa_run, loc = edited_base
    return Workspace(shutil.copytree(path, tmp_path / "ws")), qa_run, loc


def test_report_scores_old_runs_on_the_remaining_queries(edited, capsys):
    ws, qa_run, loc = edited
    rows = report.rows(ws, runs=["bm25", loc], metric_names=["SR@10"], n_boot=0)
    geo = rows[(rows["run"] == "bm25") & (rows["rung"] == "2K/geography")]
    assert int(geo["n"].iloc[0]) == 11  # 12 geography queries, g00 retired
    notes = report.bank_notes(ws)
    assert len(notes) == 2
    bm25 = next(n for n in notes if n.startswith("run 'bm25'"))
    assert "made on an earlier bank version" in bm25 and "made on an earlier ladder" in bm25
    assert "1 retired query left out of its scores (2 rows): g00" in bm25
    mine = next(n for n in notes if n.startswith(f"run {loc!r}"))
    assert "made on an earlier ladder (rebuilt since it ran)" in mine
    assert cli(["report", "-w", str(ws.path), "--metrics", "SR@10", "--n-boot", "0"]) == 0
    err = capsys.readouterr().err
    assert "note: run 'bm25'" in err and "g00" in err


def test_diagnose_reads_old_runs_and_names_the_retired_query(edited, capsys):
    ws, qa_run, _ = edited
    df = diagnose.quadrants(ws, "bm25", qa_run, k=2)
    assert "g00" not in set(df["qid"]) and len(df) == 11
    assert df["quadrant"].notna().all()
    notes = diagnose.bank_notes(ws, "bm25", qa_run)
    assert any("g00" in n and n.startswith("run 'bm25'") for n in notes)
    assert any(n.startswith(f"run {qa_run!r}") and "made on an earlier ladder" in n and "g00" in n for n in notes)
    assert cli(["diagnose", "-w", str(ws.path), "--access-run", "bm25", "--qa-run", qa_run, "-k", "2"]) == 0
    captured = capsys.readouterr()
    assert "g00" in captured.err and "access_failure" in captured.out
    left = diagnose.bank_notes(ws, "bm25", qa_run)
    assert left == notes  # reading wrote nothing and changed nothing


def test_resuming_across_a_ladder_rebuild_is_refused(edited, monkeypatch):
    ws, qa_run, loc = edited
    version = ws.version
    with pytest.raises(EmbSError, match="made on another ladder"):
        localize.localize(ws, gw(ws, "1"), k=3, rungs=["2K/geography"])  # its default name: the old run
    scripted(monkeypatch, lambda m: "Quimby")
    with pytest.raises(EmbSError, match="made on another ladder"):
        qa.answer(ws, gw(ws), setting="rag", context_run="bm25", k=2, rungs=["2K/geography"])
    with pytest.raises(EmbSError, match="made on another ladder"):
        evaluate.evaluate(ws, "bm25", name="bm25", rungs=["2K/geography", "4K"], k=10)
    ws.refresh()
    assert ws.version == version
    # a new name starts cleanly on the new ladder
    assert localize.localize(ws, gw(ws, "1"), k=3, name="loc-new", rungs=["2K/geography"]) == "loc-new"


def test_a_changed_configuration_is_still_named_as_such(ws):
    localize.localize(ws, gw(ws, "1"), k=3, rungs=["2K/geography"], limit=1)
    with pytest.raises(EmbSError, match="another configuration"):
        localize.localize(ws, gw(ws, "1", max_tokens=99), k=3, name="localize:gpt-4o-mini@3",
                          rungs=["2K/geography"], limit=1)
