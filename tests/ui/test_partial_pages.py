"""Issue 31 §1 on every page (AppTest): a run with missing (rung, query) results is marked INCOMPLETE with its counts
wherever it is shown, and runs side by side are compared over the queries they all have, saying so. The partial run
is made the way a crash leaves one: a real run of the dashboard workspace with some of its result rows deleted."""
from __future__ import annotations

import json
import shutil

import pytest

from emb_s_core import ladder, runs
from emb_s_core.store import Workspace
from test_dashboard_pages import assert_clean, run_page, use_ws  # noqa: F401 - use_ws is a fixture

pytestmark = pytest.mark.timeout(180)


def cut(ws: Workspace, run: str, qids: list[str]) -> int:
    """Delete ``run``'s results of ``qids`` on every rung (one transaction); returns how many rows went."""
    before = len(runs.load_results(ws, runs=[run]))
    with ws.transaction():
        ws.delete_rows("results", f"run = '{run}' AND qid IN ({', '.join(repr(q) for q in qids)})")
    return before - len(runs.load_results(Workspace(ws.path), runs=[run]))


@pytest.fixture
def cut_env(dash_ws, monkeypatch, tmp_path):
    """A copy of the dashboard workspace whose run ``overlap`` lost two queries' results; (path, rows lost,
    expected cells)."""
    monkeypatch.setenv("EMB_S_DATA", str(tmp_path))
    shutil.copytree(dash_ws, tmp_path / "cut")
    ws = Workspace(tmp_path / "cut")
    lad = ladder.load(ws)
    qids = sorted(set(lad.rungs[0].qids))[:2]
    lost = cut(ws, "overlap", qids)
    return tmp_path / "cut", lost, sum(len(r.qids) for r in lad.rungs)


def label(lost: int, expected: int) -> str:
    return f"INCOMPLETE: {expected - lost:,} of {expected:,} (rung, query) results, {lost:,} missing"


def texts(at) -> str:
    """Every warning, caption, text and figure spec the page drew, as one string (escapes removed)."""
    parts = [w.value for w in at.warning] + [c.value for c in at.caption] + [t.value for t in at.get("text")]
    parts += [el.proto.spec for el in at.get("plotly_chart")]
    return "\n".join(parts).replace("\\", "")


def test_home(cut_env):
    path, lost, expected = cut_env
    at = run_page("1_Home.py", {"ws": str(path)})
    assert_clean(at)
    table = next(d.value for d in at.dataframe if "state" in d.value.columns).set_index("run")["state"]
    assert table["overlap"] == label(lost, expected) and table["overlap-idf"] == "complete"
    assert f"overlap ({label(lost, expected)})" in texts(at)


def test_overview_marks_and_compares_common_queries(cut_env):
    path, lost, expected = cut_env
    at = run_page("2_Overview.py", {"ws": str(path), "runs": "overlap,overlap-idf", "paper": "1"})
    assert_clean(at)
    shown = texts(at)
    assert label(lost, expected) in shown  # the warning
    assert f"INCOMPLETE: overlap {expected - lost:,} of {expected:,} results" in shown  # heatmap and curves captions
    assert "2 missing from overlap" in shown  # the caption on common queries
    heat = json.dumps(json.loads(at.get("plotly_chart")[0].proto.spec))  # the figure says both, for its downloads
    assert "INCOMPLETE" in heat and "common queries only (overlap lacks 2 in " in heat
    # the paper table: the row is marked, and its note says which queries each scale compares
    paper = next(d.value for d in at.dataframe if any(str(c).endswith(" SR@10") for c in d.value.columns))
    assert paper.set_index("run").loc["overlap", "results"] == label(lost, expected)
    assert "run 'overlap' is INCOMPLETE" in shown


def test_compare(cut_env):
    path, lost, expected = cut_env
    at = run_page("4_Compare.py", {"ws": str(path), "a": "overlap", "b": "overlap-idf", "x": "rung"})
    assert_clean(at)
    shown = texts(at)
    assert f"run 'overlap' is {label(lost, expected)}" in shown and "2 missing from overlap" in shown
    tests = at.dataframe[0].value
    lad = ladder.load(Workspace(path))
    n_first = len(lad.rungs[0].qids)
    assert tests.set_index("rung").loc[lad.rungs[0].name, "n"] == n_first - 2  # paired over the queries both have


def test_leaderboard(cut_env):
    path, lost, expected = cut_env
    at = run_page("8_Leaderboard.py", {"ws": str(path), "runs": "overlap,overlap-idf", "base": "overlap-idf",
                                       "detail": "1"})
    assert_clean(at)
    table = at.dataframe[0].value.set_index("run")
    assert table.loc["overlap", "results"] == label(lost, expected) and table.loc["overlap-idf", "results"] == "complete"
    shown = texts(at)
    assert "2 missing from overlap" in shown and "run 'overlap' is INCOMPLETE" in shown
    assert f"INCOMPLETE: overlap {expected - lost:,}" in shown  # the figure's caption
    assert "common queries only (overlap lacks 2 in " in shown
    n_cols = [c for c in table.columns if c.endswith(" n")]
    assert (table.loc["overlap", n_cols] == table.loc["overlap-idf", n_cols]).all()  # the same queries per column


@pytest.mark.parametrize("page,params", [
    ("3_Query_drilldown.py", {"by": "failures", "run": "overlap"}),
    ("5_Ladder.py", {"run": "overlap"}),
    ("8_Explain.py", {"run": "overlap"}),
])
def test_single_run_pages_warn(cut_env, page, params):
    path, lost, expected = cut_env
    at = run_page(page, {"ws": str(path), **params})
    assert_clean(at)
    assert any(f"run 'overlap' is {label(lost, expected)}" in w.value.replace("\\", "") for w in at.warning)
    at = run_page(page, {"ws": str(path), **params, "run": "overlap-idf"})  # a complete run: no warning
    assert not any("INCOMPLETE" in w.value for w in at.warning)


def test_access_vs_use(use_ws, monkeypatch, tmp_path):
    monkeypatch.setenv("EMB_S_DATA", str(tmp_path))
    shutil.copytree(use_ws, tmp_path / "use")
    ws = Workspace(tmp_path / "use")
    qid = ladder.load(ws).rungs[0].qids[0]
    assert cut(ws, "oracle", [qid]) >= 1
    at = run_page("6_Access_vs_Use.py", {"ws": str(tmp_path / "use"), "run": "oracle", "qa": "qa1"})
    assert_clean(at)
    assert any("run 'oracle' is INCOMPLETE" in w.value.replace("\\", "") for w in at.warning)


def test_overview_gap_over_common_queries(tmp_path_factory, monkeypatch, tmp_path):
    """Two runs on the built ladder and its twin, one of which lost a query's results: the illusion gap and the
    effective scale compare the same queries, and the page says which were left out."""
    from emb_s_core import evaluate, twin
    from testkit.retrieval_bank import copy_workspace, template

    ws = copy_workspace(template(tmp_path_factory), tmp_path / "ws")
    twin.build(ws, top_n=3)
    for name in ("a", "b"):
        evaluate.evaluate(ws, "bm25", name=name, k=5, ladder="both")
    qid = ladder.load(ws).rungs[-1].qids[0]  # a query of the shared rungs
    cut(ws, "b", [qid])
    monkeypatch.setenv("EMB_S_DATA", str(tmp_path))
    at = run_page("2_Overview.py", {"ws": str(ws.path), "runs": "a,b", "x": "scale"})
    assert_clean(at)
    shown = texts(at)
    assert "b (INCOMPLETE: " in shown
    gap_note = next(c.value for c in at.caption if "in each rung" in c.value).replace("\\", "")
    assert "1 missing from b" in gap_note
    gap = next(d.value for d in at.dataframe if "gap" in d.value.columns)
    assert (gap.groupby("rung")["n"].nunique() == 1).all()  # a and b: the same queries on every rung
    eff = next(d.value for d in at.dataframe if "threshold" in d.value.columns)
    assert eff["n"].nunique() == 1
