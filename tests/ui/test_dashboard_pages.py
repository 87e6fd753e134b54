"""AppTest for every dashboard page on a real small workspace: no exception, the figures, tables and controls are
there, and the view state survives the URL round trip."""
from __future__ import annotations

import json

import pytest
from streamlit.testing.v1 import AppTest

from conftest import REPO
from emb_s_core.store import Workspace

pytestmark = pytest.mark.timeout(120)


def run_page(page: str, params: dict | None = None) -> AppTest:
    """Open ``page`` through app.py's navigation (as a browser does), with ``params`` in the URL."""
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=60)
    for k, v in (params or {}).items():
        at.query_params[k] = v
    if page != "1_Home.py":
        at.switch_page(f"pages/{page}")
    return at.run()


def plotly_specs(at: AppTest) -> list[dict]:
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def test_home_shows_bank_summary(app_env):
    at = run_page("1_Home.py", {"ws": str(app_env)})
    assert_clean(at)
    labels = {m.label: m.value for m in at.metric}
    assert labels["Documents"] == "300"
    assert labels["Runs"] == "5"
    assert labels["Rungs"] == "11"  # 1K, 2K per domain (4K/<d> would be the shared rung), shared, 4K-16K, full
    assert int(labels["Queries"]) == 30
    assert len(at.dataframe) >= 3
    run_table = next(d.value for d in at.dataframe if "state" in d.value.columns).set_index("run")["state"]
    assert run_table["overlap"] == "complete" and run_table["partial"].startswith("INCOMPLETE: ")
    assert any("partial (INCOMPLETE: " in c.value.replace("\\", "") for c in at.caption)  # data is shown escaped


def test_home_on_a_fresh_machine_builds_the_demo_in_the_background(monkeypatch, tmp_path):
    """No workspace at all: Home starts the demo build (smallest bank) as a background job of the server process and
    returns at once; the job goes on after the page run ends (as it does when the tab is closed), and the next run
    shows the workspace."""
    from ui import jobs

    monkeypatch.setenv("EMB_S_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("EMB_S_DEMO_TOKENS", str(128 * 1024))
    monkeypatch.setenv("EMB_S_DEMO_RETRIEVERS", "bm25")  # the full demo (dense models) takes minutes
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=240).run()
    assert not at.exception, [e.message for e in at.exception]
    key = str((tmp_path / "data" / "demo").resolve())
    job = jobs.get(key)
    assert job is not None and "in the background" in at.info[0].value
    job = jobs.wait(key, timeout=240)  # the page run is over; the build is not
    assert not job.running and job.error is None and job.stage.startswith("evaluating bm25")
    assert (tmp_path / "data" / "demo" / "workspace.json").is_file()
    at.run()
    assert not at.exception
    labels = {m.label: m.value for m in at.metric}
    assert int(labels["Rungs"].split(" + ")[0]) >= 3 and int(labels["Documents"]) > 0  # the twin's apart
    assert jobs.get(key) is job  # a finished build is not started again


def test_jobs_run_once_per_key_and_keep_errors():
    import threading

    from emb_s_core.errors import EmbSError
    from ui import jobs

    gate = threading.Event()

    def slow(progress):
        progress("waiting", 0.5)
        gate.wait(10)

    first = jobs.start("test-key", slow)
    assert jobs.start("test-key", slow) is first and first.running  # running: not started twice
    gate.set()
    jobs.wait("test-key", 10)
    assert not first.running and first.fraction == 0.5 and first.error is None

    def bad(progress):
        raise EmbSError("no room", fix="free some disk")

    failed = jobs.wait(jobs.start("test-bad", bad).key, 10)
    assert "no room" in failed.error and failed.finished is not None


def test_deleted_workspace_is_a_message_not_a_traceback(app_env, tmp_path):
    gone = app_env.parent / "gone"  # under the data folder, but no longer there
    for page in ("1_Home.py", "2_Overview.py", "3_Query_drilldown.py", "4_Compare.py", "5_Ladder.py"):
        at = run_page(page, {"ws": str(gone)})
        assert not at.exception, page
        assert at.error and "no EMB-S workspace" in at.error[0].value.replace("\\", ""), page


def test_overview_heatmap_marks_cells_that_could_not_run(app_env):
    at = run_page("2_Overview.py", {"ws": str(app_env), "metric": "SR@K", "k": "10", "x": "rung"})
    assert_clean(at)
    specs = plotly_specs(at)
    assert len(specs) == 2  # heatmap + curves
    heat = specs[0]["data"]
    values = heat[1]["z"]
    state = [[c[3] for c in row] for row in heat[1]["customdata"]]
    runs = heat[1]["y"]
    rungs = heat[1]["x"]
    assert len(rungs) == 11 and "longctx" in runs and "partial" in runs
    lc = runs.index("longctx")
    assert state[lc][-1] == "does not fit" and values[lc][-1] is None  # NaN travels as null, never 0
    assert heat[0]["text"][lc][-1] == "does not<br>fit" and heat[1]["text"][lc][-1] == ""
    pa = runs.index("partial")
    assert state[pa][0] == "not run" and values[pa][0] is None
    ov = runs.index("overlap")
    assert all(v is not None and 0.0 <= v <= 1.0 for v in values[ov])
    cells = heat[2]  # the clickable layer carries value, n and interval on hover
    assert "n = %{customdata[0]}" in cells["hovertemplate"] and "95% CI" in cells["hovertemplate"]
    assert len(cells["x"]) == len(runs) * len(rungs)
    assert len(at.dataframe) == 2  # the score table and the effective scale (no twin here: no gap table)
    assert at.selectbox(key="url_metric").value == "SR@K"
    labels = [b.proto.label for b in at.get("download_button")]  # every figure: 4 formats; the table: CSV, LaTeX
    assert labels.count("⬇ PNG") == 2 and labels.count("⬇ PDF") == 2 and "⬇ LaTeX" in labels
    links = at.get("page_link")
    assert links and "Failures of overlap" in links[0].proto.label  # the no-click route to a cell's failures


def test_overview_filters_and_empty_result(app_env):
    at = run_page("2_Overview.py", {"ws": str(app_env), "sources": "multi", "x": "scale"})
    assert_clean(at)
    heat = plotly_specs(at)[0]["data"][1]
    assert heat["x"][:4] == ["1K", "2K", "shared", "4K"]
    at = run_page("2_Overview.py", {"ws": str(app_env), "domain": "history", "task": "nonexistent-task"})
    assert not at.exception
    # an unknown task in the URL is dropped: the view falls back to all tasks and still draws
    assert plotly_specs(at)


def test_overview_url_round_trip(app_env):
    params = {"ws": str(app_env), "metric": "FR@K", "k": "5", "runs": "overlap,overlap-idf", "x": "rung",
              "sources": "multi"}
    at = run_page("2_Overview.py", params)
    assert_clean(at)
    assert at.selectbox(key="url_metric").value == "FR@K"
    assert at.selectbox(key="url_k").value == "5"
    assert at.multiselect(key="url_runs").value == ["overlap", "overlap-idf"]
    assert plotly_specs(at)[0]["data"][1]["y"] == ["overlap", "overlap-idf"]
    # change a control: the URL follows, and a fresh session opened on that URL shows the same view
    at.selectbox(key="url_metric").set_value("MRR").run()
    saved = {k: at.query_params[k] for k in at.query_params}
    assert saved["metric"] == "MRR" and saved["runs"] == "overlap,overlap-idf"
    again = run_page("2_Overview.py", saved)
    assert again.selectbox(key="url_metric").value == "MRR"
    assert again.multiselect(key="url_runs").value == ["overlap", "overlap-idf"]
    assert plotly_specs(again)[0]["layout"]["title"]["text"].startswith("MRR")


def test_overview_without_runs(tmp_path, monkeypatch):
    from testkit.dashboard_factory import make_bank
    from emb_s_core import bank, ladder

    src = make_bank(tmp_path / "bank", n_queries=6, n_docs=40)
    bank.import_path(tmp_path / "ws", "native", src)
    ws = Workspace(tmp_path / "ws")
    ladder.build(ws, ladder.LadderOptions(base="1K", domain_sizes=("1K", "2K"), reserve=64))
    monkeypatch.setenv("EMB_S_DATA", str(tmp_path))
    for page in ("2_Overview.py", "4_Compare.py", "5_Ladder.py", "3_Query_drilldown.py"):
        at = run_page(page, {"ws": str(tmp_path / "ws")})
        assert not at.exception, page
        assert not at.error, page
    at = run_page("2_Overview.py", {"ws": str(tmp_path / "ws")})
    assert "no runs yet" in at.info[0].value


def test_drilldown_walks_failures(app_env):
    at = run_page("3_Query_drilldown.py", {"ws": str(app_env), "by": "failures", "run": "overlap", "rung": "full",
                                           "metric": "R@1"})
    assert_clean(at)
    fails = at.selectbox(key="fail_pick")
    assert fails.options, "the overlap run has R@1 failures on the full rung"
    qid = at.query_params["q"]
    assert qid and qid in fails.value
    ranks = next(d.value for d in at.dataframe if "document" in d.value.columns)  # rungs as columns, one run
    assert ranks["document"].str.match(r"(gold|hard negative) \d+").all() and "full" in ranks.columns
    assert list(ranks.columns[1:]) == [r for r in ranks.columns[1:] if not r.startswith("benign:")]
    top = next(d.value for d in at.dataframe if "mark" in d.value.columns)
    assert list(top.columns[:3]) == ["rank", "doc_id", "mark"] and len(top) == 10
    assert set(top["mark"]) <= {"gold", "hard negative", "other"}
    assert len(fails.options) > 1  # walking: "next" moves to the second failure and the URL follows
    second = fails.options[1].split(" · ")[0]
    at.button(key="fail_next").click().run()
    assert at.selectbox(key="fail_pick").value == second and at.query_params["q"] == second
    at.button(key="fail_prev").click().run()
    assert at.query_params["q"] == qid
    # an R@1 failure: something outranked the gold; the reading view is escaped text with <mark> / <ins> marks
    html_blocks = [m.value for m in at.markdown if "emb-doc'" in m.value]
    assert len(html_blocks) == 2 and any("<mark>" in b or "<ins>" in b for b in html_blocks)


def test_drilldown_search_and_escaping(app_env, tmp_path):
    at = run_page("3_Query_drilldown.py", {"ws": str(app_env), "by": "search", "find": "q0003"})
    assert_clean(at)
    assert at.selectbox(key="search_pick").value == "q0003"
    assert at.query_params["q"] == "q0003"
    at = run_page("3_Query_drilldown.py", {"ws": str(app_env), "by": "search", "find": "no such words zz"})
    assert not at.exception
    assert any("No query" in w.value for w in at.warning)


def test_compare_paired_tests(app_env):
    at = run_page("4_Compare.py", {"ws": str(app_env), "a": "overlap", "b": "overlap-idf", "metric": "SR@K",
                                   "k": "10", "x": "rung"})
    assert_clean(at)
    tests = at.dataframe[0].value
    assert {"delta", "p_value", "ci_low", "ci_high", "n", "wins", "losses", "ties"} <= set(tests.columns)
    assert len(tests) == 11
    # shown through the one formatter: 4 decimals, "< 0.0001" below that
    assert all(p == "< 0.0001" or 0 < float(p) <= 1 for p in tests["p_value"])
    assert (tests["wins"] + tests["losses"] + tests["ties"] == tests["n"]).all()
    assert len(plotly_specs(at)) == 2
    # partial only has the shared rungs: the comparison keeps the common ones and says so
    at = run_page("4_Compare.py", {"ws": str(app_env), "a": "overlap", "b": "partial", "x": "rung"})
    assert_clean(at)
    assert len(at.dataframe[0].value) == 5  # shared, 4K, 8K, 16K, full
    assert any("left out" in c.value for c in at.caption)


def test_ladder_page(app_env):
    at = run_page("5_Ladder.py", {"ws": str(app_env), "run": "overlap"})
    assert_clean(at)
    rungs = at.dataframe[0].value
    assert len(rungs) == 14 and (rungs["kind"] == "absent").sum() == 3  # 11 rungs and the 3 not built, saying why
    assert rungs.set_index("rung").loc["4K/history", "note"].startswith("not built: same documents as shared")
    assert {"hn_coverage", "size"} <= set(rungs.columns)
    assert any(w.value.startswith("warning\\: base rung 1K\\/history holds 0\\%") for w in at.warning)  # hn_share=0
    coverage = next(d.value for d in at.dataframe if "hard_negatives" in d.value.columns)  # first rung, per query
    assert list(coverage.columns) == ["qid", "hard_negatives", "present", "coverage"] and len(coverage)
    assert ((coverage["coverage"] >= 0) & (coverage["coverage"] <= 1)).all()
    kept = next(d.value for d in at.dataframe if "base_needed" in d.value.columns)
    assert kept["queries"].sum() == 30 and kept["dropped"].sum() == 0  # every query kept (by its gold alone)
    assert not any("are dropped" in w.value for w in at.warning)
    assert set(kept["base_full_coverage"]) == {"2K"}  # the base that would keep them all with every near miss
    specs = plotly_specs(at)
    assert len(specs) == 2
    names = [t["name"] for t in specs[1]["data"]]
    assert names[0].startswith("shared") and names[1].startswith("full")  # 3 domains: not "8 × base"


def test_app_navigation_discovers_pages(app_env):
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=60)
    at.query_params["ws"] = str(app_env)
    at.run()
    assert not at.exception
    assert at.title[0].value == "EMB-S Diagnostics"  # Home is the default page
    from ui import navigation

    listed = [p.title for p in navigation.pages()]
    assert listed[0] == "Home" and {"Access vs Use", "Bank audit", "Overview", "Ladder"} <= set(listed)
    links = [el.proto.label for el in at.get("page_link")]
    assert links == listed[1:]  # Home lists every other page, in navigation order
    assert all(p.summary and not p.summary.endswith(".") for p in navigation.pages())


def test_compare_live_query(app_env):
    at = run_page("4_Compare.py", {"ws": str(app_env), "live": "what about his12 w3?", "specs": "bm25"})
    assert_clean(at)
    frames = [d.value for d in at.dataframe if "rank" in d.value.columns and "title" in d.value.columns]
    assert len(frames) == 1 and frames[0]["rank"].tolist() == list(range(1, 11))
    # the fixture's runs were made by a scorer that is no retriever spec: its column shows the error, bm25 still ranks
    at.multiselect(key="url_specs").set_value(["bm25", "word-overlap:idf^0"]).run()
    assert not at.exception
    frames = [d.value for d in at.dataframe if "rank" in d.value.columns and "title" in d.value.columns]
    assert len(frames) == 1 and len(at.error) == 1 and "word-overlap" in at.error[0].value.replace("\\", "")


def test_access_vs_use_page_without_qa(app_env):
    """Without the LLM part the page says so; with it, a workspace with no QA runs says what to run."""
    at = run_page("6_Access_vs_Use.py", {"ws": str(app_env)})
    assert_clean(at)
    text = " ".join(i.value for i in at.info)
    assert "LLM part" in text or "emb-s qa" in text


@pytest.fixture(scope="module")
def use_ws(tmp_path_factory):
    """The LLM part's own QA workspace (oracle access run, scripted reader, reference judge), once it is here."""
    pytest.importorskip("emb_s_core.diagnose", reason="the LLM part is not on this branch yet")
    from emb_s_core import judge, llm, qa
    from tests.unit.test_qa_judge import oracle_run, reader
    from testkit.use_bank import make_workspace, scripted

    ws = make_workspace(tmp_path_factory.mktemp("use"))
    oracle_run(ws)
    mp = pytest.MonkeyPatch()
    try:
        scripted(mp, reader(ws, always_right={"p00"}, always_wrong={"g01"}))
        gw = llm.Gateway.for_workspace(ws, "gpt-4o-mini", params={"mock_response": "unused"})
        qa.answer(ws, gw, setting="rag", context_run="oracle", k=2, name="qa1", rungs=["2K/geography", "2K/people"])
    finally:
        mp.undo()
    judge.judge(ws, "qa1", judge.REFERENCE)
    return ws.path


def test_access_vs_use_page(use_ws, monkeypatch, tmp_path):
    monkeypatch.setenv("EMB_S_DATA", str(use_ws.parent))
    at = run_page("6_Access_vs_Use.py", {"ws": str(use_ws), "run": "oracle", "qa": "qa1"})
    assert_clean(at)
    assert len(at.get("plotly_chart")) == 1
    summary = at.dataframe[0].value
    assert {"quadrant", "n", "share"} <= set(summary.columns)
    assert at.dataframe[1].value["qid"].tolist() == ["g01"]  # the one use failure the reader was told to make
    assert not any("plumbing check" in w.value for w in at.warning)  # a real (mocked) model: no such warning
    at.slider(key="url_tu").set_value(0).run()  # every answer now counts as good: no use failure left
    assert at.query_params["tu"] == "0" and "0 (rung, query) cells" in at.caption[-1].value


def test_access_vs_use_shows_judge_agreement_and_labels_an_answer(use_ws, monkeypatch, tmp_path):
    """Issue 22: the judge's measured agreement (false credit, false reject, n, which set) is beside its scores, and
    a researcher labels a case from the page; the label joins the workspace's labelled set."""
    import shutil

    from emb_s_core import labels

    monkeypatch.setenv("EMB_S_DATA", str(tmp_path))
    shutil.copytree(use_ws, tmp_path / "ws")
    params = {"ws": str(tmp_path / "ws"), "run": "oracle", "qa": "qa1"}
    at = run_page("6_Access_vs_Use.py", params)
    assert_clean(at)
    lines = [t.value for t in at.text]
    assert any("judge reference (reference_v11)" in t and "false credit" in t and "held-out" in t for t in lines)
    at.radio(key="label_verdict").set_value("right")
    at.button(key="label_save").click().run()
    assert_clean(at)
    got = labels.load_labels(Workspace(tmp_path / "ws"))
    assert got[["qid", "correct"]].values.tolist() == [["g01", True]]  # the use failure, labelled right
    at = run_page("6_Access_vs_Use.py", params)
    assert any("this workspace's labels" in t.value and "false reject 100.0% [" in t.value and "of 1 right" in t.value
               for t in at.text)  # with its interval (issue 34)


def test_access_vs_use_opens_on_an_llm_judge_and_shows_both_judges(use_ws, monkeypatch, tmp_path):
    """Issue 34 §4: with an LLM judge configured the page defaults to it and shows both judges' agreement; the
    reference judge's first line says how many right answers it is measured to reject."""
    import shutil

    from emb_s_core import judge, llm
    from testkit.use_bank import scripted

    monkeypatch.setenv("EMB_S_DATA", str(tmp_path))
    shutil.copytree(use_ws, tmp_path / "ws")
    ws = Workspace(tmp_path / "ws")
    scripted(monkeypatch, lambda m: "Score: 4")
    judge.judge(ws, "qa1", "gpt-4o-mini", llm.Gateway.for_workspace(ws, "gpt-4o-mini", params={"mock_response": "x"}))
    at = run_page("6_Access_vs_Use.py", {"ws": str(tmp_path / "ws"), "run": "oracle", "qa": "qa1"})
    assert_clean(at)
    assert at.selectbox(key="url_judge").value == "llm:gpt-4o-mini"
    lines = [t.value for t in at.text]
    assert any(t.startswith("judge llm:gpt-4o-mini") for t in lines)  # not measured yet, and says so
    assert any("measured to reject" in t for t in lines)  # the reference judge beside it
    assert any("judge reference (reference_v11)" in t and "blind_r8" in t for t in lines)


def test_drilldown_shows_the_answers_judges_and_labels_one(use_ws, monkeypatch, tmp_path):
    """Issue 22: the drill-down shows each QA run's reply to the query per rung with its judge scores, and a label
    saved there joins the workspace's labelled set; the judge that contradicts it is then named."""
    import shutil

    from emb_s_core import labels

    monkeypatch.setenv("EMB_S_DATA", str(tmp_path))
    shutil.copytree(use_ws, tmp_path / "ws")
    params = {"ws": str(tmp_path / "ws"), "by": "search", "find": "g01", "q": "g01"}
    at = run_page("3_Query_drilldown.py", params)
    assert_clean(at)
    lines = [t.value for t in at.text]
    assert "I do not know" in lines  # the reader's reply to g01, as text
    head = [t for t in lines if t.startswith("qa1 · 2K/geography")]
    assert len(head) == 1 and "reference 0.0" in head[0] and "unlabelled" in head[0], lines
    at.selectbox(key="drill_label_pick").set_value(0)
    at.radio(key="drill_label_verdict").set_value("right")
    at.button(key="drill_label_save").click().run()
    assert_clean(at)
    got = labels.load_labels(Workspace(tmp_path / "ws"))
    assert got[["qa_run", "rung", "qid", "correct"]].values.tolist() == [["qa1", "2K/geography", "g01", True]]
    at = run_page("3_Query_drilldown.py", params)
    head = [t.value for t in at.text if t.value.startswith("qa1 · 2K/geography")]
    assert "labelled right, judge reference disagrees" in head[0], head


def test_drilldown_answers_are_text_only_and_absent_without_qa_runs(use_ws, app_env, monkeypatch, tmp_path):
    """A reply carrying Markdown, HTML and a URL is shown literally; a workspace without QA runs shows no section."""
    import shutil

    import pyarrow as pa

    from emb_s_core import bank, qa
    from tests.ui.test_text_only import assert_text_only

    monkeypatch.setenv("EMB_S_DATA", str(tmp_path))
    shutil.copytree(use_ws, tmp_path / "ws")
    ws = Workspace(tmp_path / "ws")
    row = qa.load_answers(ws, ["qa1"]).query("qid == 'g01'").iloc[0].to_dict()
    payload = "**x** <b>y</b> http://e.x :red[r]"
    with ws.transaction():
        ws.write("qa_answers", pa.Table.from_pylist([{**row, "answer": payload}], schema=qa.QA_ANSWERS_SCHEMA),
                 schema=qa.QA_ANSWERS_SCHEMA)
    at = run_page("3_Query_drilldown.py", {"ws": str(tmp_path / "ws"), "by": "search", "find": "g01", "q": "g01"})
    assert_text_only(at, "drilldown answers")
    assert payload in [t.value for t in at.text]
    qid = str(bank.queries(Workspace(app_env))["qid"].iloc[0])  # the dashboard fixture: no QA run
    at = run_page("3_Query_drilldown.py", {"ws": str(app_env), "by": "search", "find": qid, "q": qid})
    assert_clean(at)
    assert not any("Answers to this query" in e.proto.expandable.label for e in at.get("expandable"))


def test_access_vs_use_lists_excluded_cells_and_names_results_of_retired_queries(use_ws, monkeypatch, tmp_path):
    """Issue 16: the excluded cells are a case list with their reason; results of a query the bank no longer holds
    are left out and named, as text."""
    import shutil

    from emb_s_core import runs

    monkeypatch.setenv("EMB_S_DATA", str(tmp_path))  # the URL opens workspaces under it
    shutil.copytree(use_ws, tmp_path / "ws")
    runs.save_results(Workspace(tmp_path / "ws"), "oracle",
                      [{"rung": "2K/geography", "qid": "**gone**", "doc_ids": [0, 2]}])
    at = run_page("6_Access_vs_Use.py", {"ws": str(tmp_path / "ws"), "run": "oracle", "qa": "qa1",
                                         "quadrant": "excluded"})
    assert_clean(at)
    notes = [t.value for t in at.text]
    assert any("run 'oracle': made on an earlier bank version" in n and "**gone**" in n for n in notes)
    assert "0 (rung, query) cells" in at.caption[-1].value  # every answered cell is in a quadrant here


def test_compare_names_an_empty_run(app_env, tmp_path):
    import shutil

    from emb_s_core import runs

    copy = app_env.parent / "copy"  # under the data folder: the URL opens only those
    shutil.copytree(app_env, copy)
    runs.create_run(Workspace(copy), "fresh", "retriever", "bm25", {"k": 100})  # registered, no results
    at = run_page("4_Compare.py", {"ws": str(copy), "a": "overlap", "b": "fresh"})
    assert not at.exception
    assert any("fresh has no results yet" in w.value.replace("\\", "") for w in at.warning)
    assert not any("under the current filters" in w.value for w in at.warning)


def test_home_figures_fit_and_say_what_they_count(app_env):
    """Tokens short enough for the metric box with the exact count in its help; text vs serialized tokens named;
    no raw JSON in the Sources table; counts with thousands separators."""
    from emb_s_core import bank, ladder
    from emb_s_core.store import Workspace
    from emb_s_core.tokens import format_short

    at = run_page("1_Home.py", {"ws": str(app_env)})
    assert_clean(at)
    info = bank.info(Workspace(app_env))
    tokens = next(m for m in at.metric if m.label == "Text tokens")
    assert tokens.value == format_short(info["tokens"]) and len(tokens.value) <= 6
    full = [r for r in ladder.load(Workspace(app_env)).rungs if r.n_documents == info["documents"]][-1]
    helped = tokens.proto.help.replace("\\", "")
    assert f"{info['tokens']:,} text tokens" in helped and f"{full.n_tokens:,} serialized tokens" in helped
    sources = next(d for d in at.dataframe if "source" in d.value.columns)
    assert not sources.value.astype(str).isin(["{}", "[]"]).any().any()
    domains = next(d for d in at.dataframe if "domain" in d.value.columns and "text tokens" in d.value.columns)
    assert json.loads(domains.proto.columns)["text tokens"]["type_config"]["format"] == "localized"


def test_a_label_saved_while_another_process_writes_is_busy_and_kept(use_ws, monkeypatch, tmp_path):
    """A label is a dashboard write: behind an `emb-s eval` holding the writer lock it does not hang, names the
    writer, writes nothing and keeps the choice; once the writer is gone the same click saves it."""
    import os
    import shutil
    import subprocess
    import sys
    import time

    from emb_s_core import labels

    monkeypatch.setenv("EMB_S_DATA", str(tmp_path))
    shutil.copytree(use_ws, tmp_path / "ws")
    params = {"ws": str(tmp_path / "ws"), "run": "oracle", "qa": "qa1"}
    hold = ("import sys, time\nfrom emb_s_core.store import Workspace\nws = Workspace(sys.argv[1])\n"
            "with ws.writer():\n    print('held', flush=True)\n    time.sleep(120)\n")
    holder = subprocess.Popen([sys.executable, "-c", hold, str(tmp_path / "ws")], cwd=REPO, stdout=subprocess.PIPE,
                              text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        assert holder.stdout.readline().strip() == "held"
        at = run_page("6_Access_vs_Use.py", params)
        at.radio(key="label_verdict").set_value("right")
        start = time.monotonic()
        at.button(key="label_save").click().run()
        assert time.monotonic() - start < 30 and not at.exception and not at.success
        assert at.warning and any("another command is writing this workspace" in w.value for w in at.warning)
        assert not any(str(holder.pid) in w.value for w in at.warning)
        assert at.radio(key="label_verdict").value == "right"
        assert labels.load_labels(Workspace(tmp_path / "ws")).empty
    finally:
        holder.kill()
        holder.wait()
    at.button(key="label_save").click().run()
    assert at.success and labels.load_labels(Workspace(tmp_path / "ws"))["correct"].tolist() == [True]
