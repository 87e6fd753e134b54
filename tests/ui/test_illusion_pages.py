"""The illusion on the dashboard: twin rows and the gap on the Overview, effective scale, and the "Why did it move?"
page agreeing with `emb-s explain` on the same cell."""
from __future__ import annotations

import json
import urllib.parse

import pytest
from streamlit.testing.v1 import AppTest

from conftest import REPO
from emb_s_core import evaluate, twin
from emb_s_core.analysis import explain
from emb_s_core.cli import main

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="module")
def twin_ws(tmp_path_factory):
    from testkit.retrieval_bank import copy_workspace, template

    ws = copy_workspace(template(tmp_path_factory), tmp_path_factory.mktemp("illusion") / "ws")
    twin.build(ws, top_n=3)
    evaluate.evaluate(ws, "bm25", name="bm25", k=5, ladder="both")
    return ws


@pytest.fixture
def env(twin_ws, monkeypatch, tmp_path):
    monkeypatch.setenv("EMB_S_DATA", str(twin_ws.path.parent))
    return twin_ws  # (the URL opens only workspaces under the data folder)


def run_page(page: str, params: dict) -> AppTest:
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=90)
    for k, v in params.items():
        at.query_params[k] = v
    at.switch_page(f"pages/{page}")
    return at.run()


def clean(at: AppTest) -> None:
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def test_overview_shows_the_twin_beside_each_run_and_the_gap(env):
    at = run_page("2_Overview.py", {"ws": str(env.path), "metric": "SR@K", "k": "5", "x": "scale"})
    clean(at)
    heat, curves = (json.loads(el.proto.spec) for el in at.get("plotly_chart"))
    assert heat["data"][1]["y"] == ["bm25", "bm25 · benign"]
    dashes = {t["name"]: t["line"].get("dash") for t in curves["data"] if t.get("mode") == "lines+markers"}
    assert dashes == {"bm25": "solid", "bm25 · benign": "dash"}
    tables = [el.value for el in at.dataframe]
    gap = next(t for t in tables if "gap" in t.columns)
    assert set(gap["run"]) == {"bm25"}
    assert set(gap["twin references"]) == {"bm25 (top-3)"} and set(gap["own reference"]) == {
        "yes: gap partly by construction"}  # issue 31 §4: the references with every gap, own gap by construction
    captions = [c.value.replace("\\", "") for c in at.caption]  # Markdown escapes undone
    assert any("benign twin references: bm25 (top-3)" in c and "by construction" in c for c in captions)
    shown = gap[["gap", "benign", "adversarial"]].astype(float)  # shown at 4 decimals (export.display_frame)
    assert ((shown["gap"] - (shown["benign"] - shown["adversarial"])).abs() <= 2e-4).all()
    assert any("effective scale (SR@10)" in t.columns for t in tables)
    off = run_page("2_Overview.py", {"ws": str(env.path), "x": "scale"})
    off.toggle(key="twin").set_value(False).run()
    clean(off)
    assert json.loads(off.get("plotly_chart")[0].proto.spec)["data"][1]["y"] == ["bm25"]


def test_explain_page_agrees_with_the_cli(env, capsys):
    lad_from, lad_to = "2K/law", "full"
    at = run_page("8_Explain.py", {"ws": str(env.path), "run": "bm25", "from": lad_from, "to": lad_to, "k": "5"})
    clean(at)
    assert main(["explain", "--workspace", str(env.path), "--run", "bm25", "--from", lad_from, "--to", lad_to,
                 "--k", "5", "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    shares = next(el.value for el in at.dataframe if "cause" in el.value.columns)
    assert shares["share"].round(9).tolist() == [round(r["share"], 9) for r in cli["breakdown"]]
    assert shares["cause"].tolist() == list(explain.CAUSES)
    assert cli["breakdown"][0]["n"] > 0  # the cell has displaced queries: the comparison means something
    displaced = next(el.value for el in at.dataframe if "displacers" in el.value.columns)
    assert displaced["qid"].tolist() == [r["qid"] for r in cli["displaced"]]
    link = at.get("page_link")[-1].proto
    params = dict(urllib.parse.parse_qsl(link.query_string))
    first = cli["displaced"][0]
    assert params["q"] == first["qid"] and params["rung"] == lad_to
    assert [int(d) for d in params["hl"].split(",")] == first["displacers"]
    drill = run_page("3_Query_drilldown.py", params)  # the link opens the query with its displacers marked
    clean(drill)
    top = next(el.value for el in drill.dataframe if "displaced the gold" in el.value.columns)
    assert set(top.loc[top["displaced the gold"], "doc_id"]) == set(first["displacers"])


def test_displaced_queries_download_as_a_case_list(env, downloads):
    import io

    import pandas as pd

    at = run_page("8_Explain.py", {"ws": str(env.path), "run": "bm25", "from": "2K/law", "to": "full", "k": "5"})
    clean(at)
    displaced = next(el.value for el in at.dataframe if "displacers" in el.value.columns)
    name = next(n for n in downloads if n.startswith("displaced_bm25_2K_law_full") and n.endswith(".csv"))
    cases = pd.read_csv(io.StringIO(downloads[name]().decode()))
    assert cases["qid"].tolist() == displaced["qid"].tolist() and len(cases)
    assert cases["run"].eq("bm25").all() and cases["rung"].eq("full").all()


def test_explain_page_with_rungs_that_do_not_nest(env):
    at = run_page("8_Explain.py", {"ws": str(env.path), "run": "bm25", "from": "full"})
    clean(at)
    assert any("No rung of the ladder contains full" in el.value for el in at.info)


def test_overview_links_a_cell_to_what_displaced_its_gold(env):
    at = run_page("2_Overview.py", {"ws": str(env.path), "x": "rung"})
    clean(at)
    link = next(el.proto for el in at.get("page_link") if "displaced the gold" in el.proto.label)
    params = dict(urllib.parse.parse_qsl(link.query_string))
    assert params["run"] == "bm25" and params["from"] in {"2K/history", "2K/law", "2K/medicine"}
    explain_page = run_page("8_Explain.py", params)
    clean(explain_page)
    assert explain_page.selectbox(key="url_from").value == params["from"]


def test_why_did_it_move_opens_on_the_largest_drop_under_one_name(env):
    from emb_s_core import ladder
    from emb_s_core.analysis import views
    from ui import navigation

    at = run_page("8_Explain.py", {"ws": str(env.path), "run": "bm25", "k": "5"})
    clean(at)
    pair = (at.selectbox(key="url_from").value, at.selectbox(key="url_to").value)
    assert pair == explain.largest_drop(views.per_query(env), ladder.load_all(env), "bm25", 5)
    lad = ladder.load_all(env)
    assert lad.rung(pair[0]).n_documents < lad.rung(pair[1]).n_documents  # never two equal pools
    assert at.title[0].value == "Why did it move?"
    page = next(p for p in navigation.pages() if p.path.name == "8_Explain.py")
    assert (page.title, page.url_path) == ("Why did it move?", "why_did_it_move")


@pytest.mark.parametrize("rung", ["benign:2K", "benign:2K/law"])
def test_a_twin_cell_opens_its_failures_in_the_drilldown(env, rung):
    """What a click on a twin heatmap cell opens (the Overview switches to these parameters): the twin rung's (or
    pooled scale's) failures, like any other cell."""
    from emb_s_core.analysis import drilldown, views

    at = run_page("3_Query_drilldown.py", {"ws": str(env.path), "run": "bm25", "rung": rung, "metric": "SR@K",
                                           "k": "5", "by": "failures"})  # a base cell: nothing below it
    clean(at)
    box = next(b for b in at.selectbox if b.label == "Rung or scale")
    assert box.value == rung
    pq = views.per_query(env, ["bm25"])
    fails = drilldown.failures(pq, "bm25", rung, "SR@5", x="rung" if "/" in rung else "scale")
    shown = " ".join(c.value for c in at.caption) + " ".join(s.value for s in at.success)
    assert (f"{len(fails):,} failures" in shown) if len(fails) else ("No failures" in shown)
