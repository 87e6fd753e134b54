"""The ladder a view is about (built, else official) on a workspace WITH a benign twin: every default a page or a
command picks is a built rung, never the twin's (issue 30 §1); the live box offers only rungs it can search and says
what a retriever costs before it runs; the what-if offers the kept queries and says why one is absent (§4)."""
from __future__ import annotations

import json
import urllib.parse

import pandas as pd
import pytest

from test_illusion_pages import clean, run_page  # the same page runner and checks
from emb_s_core import bank, evaluate, ladder, runs, twin
from emb_s_core.analysis import kept, mixing, views
from emb_s_core.cli import main
from emb_s_core.store import Workspace

pytestmark = pytest.mark.timeout(240)

#: three domains, a 1K base that keeps only some queries (their gold and hard negatives must fit)
OPTIONS = ladder.LadderOptions(base="1K", domain_sizes=("1K", "2K"), shared_size="3K", reserve=128)


@pytest.fixture(scope="module")
def twin_ws(tmp_path_factory) -> Workspace:
    from testkit.retrieval_bank import make_bank

    root = tmp_path_factory.mktemp("ladder-in-view")
    make_bank(root / "bank")
    bank.import_path(root / "ws", "native", root / "bank")
    ws = Workspace(root / "ws")
    ladder.build(ws, OPTIONS)
    twin.build(ws, top_n=3, references=["bm25"])
    evaluate.evaluate(ws, "bm25", name="bm25", k=5, ladder="both")
    # a second run that differs from bm25: its lists without their first document (an external run file's shape)
    runs.create_run(ws, "bm25-minus-top", "external", "run file", {"from": "bm25, first document dropped"})
    res = runs.load_results(ws, runs=["bm25"])
    runs.save_results(ws, "bm25-minus-top", pd.DataFrame({
        "rung": res["rung"], "qid": res["qid"], "doc_ids": [list(d)[1:] for d in res["doc_ids"]],
        "scores": [list(s)[1:] for s in res["scores"]]}))
    return Workspace(root / "ws")


@pytest.fixture
def env(twin_ws, monkeypatch):
    monkeypatch.setenv("EMB_S_DATA", str(twin_ws.path.parent))
    return twin_ws


def test_the_fixture_has_a_twin_after_the_built_ladder(twin_ws):
    """What made every default wrong: the twin's rungs come last in the workspace's rung list."""
    names = ladder.load_all(twin_ws).names
    assert names[-1] == "benign:full" and "full" in names and names.index("full") < names.index("benign:1K/law")
    dropped = kept.absent_reason(ladder.load_all(twin_ws), _dropped_qid(twin_ws))
    assert dropped and "left it out of every rung" in dropped and "do not fit the base budget" in dropped


def _dropped_qid(ws: Workspace) -> str:
    k = ladder.load(ws).kept
    return str(k.loc[~k["kept"].astype(bool), "qid"].iloc[0])


def test_ladder_in_view_is_built_else_official_with_the_twin_apart():
    names = ["1K/law", "3K", "full", "official:64K", "official:full", "benign:1K/law", "benign:3K", "benign:full"]
    view = views.ladder_in_view(names)
    assert (view.kind, view.rungs, view.largest, view.base) == ("built", ("1K/law", "3K", "full"), "full", "1K/law")
    assert view.companion == ("benign:1K/law", "benign:3K", "benign:full")
    assert view.searchable == tuple(names[:5])
    official = views.ladder_in_view(["official:64K", "official:full", "benign:full"])
    assert official.kind == "official" and official.largest == "official:full"
    # scales (domain rungs pooled) are the same names: the twin's scale is never the default either
    assert views.default_rung(["1K", "3K", "full", "benign:1K", "benign:full"]) == "full"
    assert views.default_rung(["benign:3K", "benign:full"]) == "benign:full"  # nothing else to offer
    assert views.default_rung([]) is None


def test_mixing_pair_and_explain_default_are_built_rungs(twin_ws):
    from emb_s_core.analysis import explain

    lad = ladder.load_all(twin_ws)
    assert mixing.rung_pair(lad) == ["3K", "full"]
    pair = explain.largest_drop(views.per_query(twin_ws), lad, "bm25")
    assert pair is not None and not any(ladder.kind_of(r) == ladder.BENIGN for r in pair)


def test_cli_figure_mixing_draws_the_built_pair(twin_ws, tmp_path, capsys):
    out = tmp_path / "mixing.html"
    assert main(["figure", "mixing", "--workspace", str(twin_ws.path), "--out", str(out)]) == 0
    html = out.read_text()
    assert "rungs: 3K, full" in html and "benign:full" not in html


def test_compare_defaults_and_live_box_use_the_built_ladder(env):
    at = run_page("4_Compare.py", {"ws": str(env.path), "a": "bm25", "b": "bm25-minus-top",
                                   "live": "court statute appeal", "specs": "bm25"})
    clean(at)
    side = at.selectbox(key="url_rung")
    assert side.value == "full" and "benign:full" in side.options  # the twin is there to pick, never the default
    link = next(p for p in at.get("page_link") if "drill-down" in p.proto.label)
    assert urllib.parse.parse_qs(link.proto.query_string)["rung"] == ["full"]
    live = at.selectbox(key="live_rung")
    assert live.value == "full" and live.options == ladder.load(env).names  # no twin rung: it cannot be searched
    frames = [d.value for d in at.dataframe if {"rank", "title"} <= set(d.value.columns)]
    assert len(frames) == 1 and frames[0]["rank"].tolist() == list(range(1, 11))
    with pytest.raises(Exception, match="benign-twin rung"):
        evaluate.live_query(env, "bm25", "court", "benign:full")


def test_live_box_says_what_a_retriever_costs_before_it_runs(env):
    evaluate._LIVE.clear()
    first = evaluate.live_cost(env, "bm25")
    assert first.state == evaluate.LOADS and first.at_once and "loads an index of the bank" in first.note
    assert evaluate.live_cost(env, "no-such:retriever").note == ""  # its live query says why, in its column
    at = run_page("4_Compare.py", {"ws": str(env.path), "live": "court statute appeal",
                                   "specs": "bm25,dense:minilm-l6"})
    clean(at)
    said = " ".join(w.value for w in at.warning).replace("\\", "")
    assert "dense:minilm-l6 has no run on this workspace" in said and "embedding them first takes about" in said
    n_docs = bank.info(env)["documents"]
    assert f"its {n_docs:,} documents" in said and "emb-s eval --workspace" in said
    frames = [d.value for d in at.dataframe if {"rank", "title"} <= set(d.value.columns)]
    assert len(frames) == 1  # bm25 ranked at once; the model was neither loaded nor run
    assert not any("dense:minilm-l6" in k[2] for k in evaluate._LIVE)
    assert at.button(key="live_go_dense:minilm-l6")  # running it is the user's choice, its cost said first
    cost = evaluate.live_cost(env, "dense:minilm-l6")
    assert cost.state == evaluate.EMBEDS and cost.to_embed == n_docs and not cost.at_once
    assert evaluate.live_cost(env, "bm25").state == evaluate.READY  # loaded by the page above


def test_whatif_offers_the_kept_queries_and_says_why_one_is_absent(env):
    lad = ladder.load(env)
    on_ladder = set(lad.kept.loc[lad.kept["kept"].astype(bool), "qid"])
    kept_qids = [q for q in bank.queries(env)["qid"] if q in on_ladder]  # in bank order, as before
    at = run_page("4_Compare.py", {"ws": str(env.path)})
    clean(at)
    offered = [o.split(" · ")[0] for o in at.selectbox(key="whatif_pick").options]
    assert offered == kept_qids and len(kept_qids) < len(bank.queries(env))
    assert any(f"{len(kept_qids)} of {len(bank.queries(env))} bank queries are on the ladder" in c.value
               for c in at.caption)
    gone = _dropped_qid(env)
    at = run_page("3_Query_drilldown.py", {"ws": str(env.path), "by": "search", "find": gone, "q": gone})
    clean(at)
    said = " ".join(i.value for i in at.info).replace("\\", "")
    assert f"{gone} is on none: the ladder left it out of every rung" in said and "build the ladder" not in said


def test_drilldown_failures_open_on_the_built_ladder(env):
    at = run_page("3_Query_drilldown.py", {"ws": str(env.path), "by": "failures", "run": "bm25", "metric": "SR@K",
                                           "k": "1"})
    clean(at)
    rung = at.selectbox(key="url_rung")
    assert rung.value == "full" and "benign:full" in rung.options
    assert any("at **full**" in c.value for c in at.caption)
    top = at.selectbox(key="top_rung")  # the top-K of the failure opens on the same rung
    assert top.value == "full"


@pytest.mark.parametrize("x", ["rung", "scale"])
def test_leaderboard_sorts_by_the_built_ladders_largest_column(env, x):
    at = run_page("8_Leaderboard.py", {"ws": str(env.path), "x": x})
    clean(at)
    sort = at.selectbox(key="url_sort")
    assert sort.value == "full" and "benign:full" in sort.options


def test_ladder_page_mixing_figure_is_the_built_pair(env):
    at = run_page("5_Ladder.py", {"ws": str(env.path), "run": "bm25"})
    clean(at)
    figs = [json.loads(el.proto.spec) for el in at.get("plotly_chart")]
    mixing_fig = figs[-1]
    shown = {str(x) for trace in mixing_fig["data"] for x in (trace.get("x") or [])} | \
        {trace.get("name") for trace in mixing_fig["data"]}
    assert "benign:full" not in json.dumps(mixing_fig)
    assert "full" in shown or "full" in json.dumps(mixing_fig["layout"])
    assert list(at.dataframe[-1].value["rung"]) == ["3K", "full"]
    built = ladder.load(env).names
    assert "benign" not in json.dumps(figs[0]["data"])  # composition: the built ladder, not run on into the twin
    assert at.selectbox(key="url_coverage_rung").options == built  # a twin rung's stored coverage is its built one's


def test_home_counts_the_twin_apart_and_shows_no_internal_notes(env):
    at = run_page("1_Home.py", {"ws": str(env.path)})
    clean(at)
    rungs = next(m for m in at.metric if m.label == "Rungs")
    n = len(ladder.load(env).names)
    assert rungs.value == f"{n} + {n} twin"
    shown = " ".join(c.value for c in at.caption).replace("\\", "")
    notes = [m for m in ladder.load_all(env).messages if not m.startswith("warning:")]
    assert any(m.startswith("benign twin:") for m in notes)  # the twin's build notes exist: the test can fail
    assert not [m for m in notes if m[:40] in shown]  # they are for the Ladder page and `ladder show`, not Home


def test_home_does_not_ask_to_rerun_what_the_background_build_is_running(dash_ws, monkeypatch, tmp_path):
    """A run the demo build is still writing is "not complete": Home says the build is running it, not "rerun the
    command"; with no build running, rerunning is the advice."""
    import shutil
    import threading

    from ui import jobs

    monkeypatch.setenv("EMB_S_DATA", str(tmp_path))
    demo = (tmp_path / "demo").resolve()  # the key the server's demo build runs under (ui.first_start)
    shutil.copytree(dash_ws, demo)  # its run "partial" stopped early: not complete
    release = threading.Event()
    jobs.start(str(demo), lambda progress: release.wait(60))
    try:
        at = run_page("1_Home.py", {"ws": "demo"})
        assert not at.exception, [e.message for e in at.exception]
        said = " ".join(c.value for c in at.caption)
        assert "Not complete" in said and "background build is still running them" in said
        assert "Rerunning the same command" not in said
    finally:
        release.set()
        jobs.wait(str(demo), 10)
    at = run_page("1_Home.py", {"ws": "demo"})
    said = " ".join(c.value for c in at.caption)
    assert "Not complete" in said and "Rerunning the same command resumes a run" in said
