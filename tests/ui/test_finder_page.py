"""The drill-down's landing view is the finder, on a demo workspace with its benign twin (AppTest): defaults from the
view's ladder (never the twin), the same rows as ``analysis.finder``, one query opened with its rank table (rungs as
columns, the twin's apart) and the reading view of the gold and the document that took its place; the Overview's
link to it."""
from __future__ import annotations

import urllib.parse

import pytest

from emb_s_core import bank
from emb_s_core.analysis import drilldown, finder
from emb_s_core.store import Workspace
from test_illusion_pages import clean, run_page

pytestmark = pytest.mark.timeout(180)


@pytest.fixture
def env(demo_twin_ws, monkeypatch, tmp_path):
    monkeypatch.setenv("EMB_S_DATA", str(tmp_path))
    (tmp_path / "demo").symlink_to(demo_twin_ws)
    return tmp_path / "demo"


def test_the_drilldown_opens_on_the_finder_of_the_view_ladder(env):
    at = run_page("3_Query_drilldown.py", {"ws": "demo", "metric": "R@1"})
    clean(at)
    assert at.radio(key="url_by").value == "finder"
    assert at.selectbox(key="url_rung").value == "512K" and at.selectbox(key="url_from").value == "64K"
    assert "benign:64K" not in at.selectbox(key="url_from").options  # the twin is no continuation of the ladder
    ws = Workspace(env)
    rows = finder.find(ws, "bm25", "64K", "512K", "R@1")
    table = next(d.value for d in at.dataframe if "took its place" in d.value.columns)
    assert table["qid"].tolist() == rows["qid"].tolist() and len(rows) >= 2
    assert table.equals(finder.readable(rows))
    assert finder.summary(rows).replace("(", "").split(" of ")[0] in " ".join(c.value for c in at.caption)
    pick = at.selectbox(key="finder_pick")
    assert pick.value == rows["qid"].iloc[0] and at.query_params["q"] == pick.value
    # the opened query: its ranks for the run it came from, rungs as columns, the twin's in a table of their own
    ranks = [d.value for d in at.dataframe if "document" in d.value.columns
             and "names and numbers only it has" not in d.value.columns]
    assert [c for c in ranks[0].columns if c != "document"][-1] == "512K"
    assert all(c.startswith("benign:") for c in ranks[1].columns if c != "document")
    heading = [m.value for m in at.markdown if m.value.startswith("**Rank of each gold")][0]
    for word in (drilldown.NOT_IN_LIST, drilldown.NOT_IN_POOL):  # the heading names every word the cells use
        assert word in heading
    cells = {c for t in ranks for c in t.drop(columns="document").to_numpy().ravel()}
    assert cells <= {drilldown.NOT_IN_LIST, drilldown.NOT_IN_POOL, ""} | {str(i) for i in range(1, 1000)}
    # the reading view: the finder's gold and the document that took its place, at the larger rung
    first = rows.iloc[0]
    assert at.selectbox(key="top_rung").value == first["other_rung"]
    said = [m.value for m in at.markdown if m.value.startswith("**Gold doc ")][0]
    assert f"Gold doc {first['gold']} " in said and f" {first['other']} that outranked it" in said
    reading = next(d.value for d in at.dataframe if "names and numbers only it has" in d.value.columns)
    texts = bank.documents_by_id(ws, (int(first["gold"]), int(first["other"])))
    qtext = bank.queries(ws).set_index("qid").at[first["qid"], "text"]
    r = drilldown.reading(texts[int(first["gold"])]["text"], texts[int(first["other"])]["text"], qtext)
    assert reading["names and numbers only it has"].tolist() == [" ".join(r.only_left), " ".join(r.only_right)]
    docs = [m.value for m in at.markdown if "emb-doc'" in m.value]
    assert len(docs) == 2 and all("<mark>" in d for d in docs)  # the query's terms, marked in both


def test_the_reverse_list_and_a_twin_cell(env):
    at = run_page("3_Query_drilldown.py", {"ws": "demo", "metric": "R@1", "dir": "gained"})
    clean(at)
    gained = finder.find(Workspace(env), "bm25", "64K", "512K", "R@1", direction=finder.GAINED)
    table = next(d.value for d in at.dataframe if "outranked it at 64K" in d.value.columns)
    assert table["qid"].tolist() == gained["qid"].tolist()
    # a twin heatmap cell opens the twin's own finder: its base, never the built ladder's
    at = run_page("3_Query_drilldown.py", {"ws": "demo", "by": "finder", "run": "bm25", "rung": "benign:512K"})
    clean(at)
    assert at.selectbox(key="url_from").value == "benign:64K"
    assert all(o.startswith("benign:") for o in at.selectbox(key="url_from").options)


def test_the_overview_links_a_cell_to_its_finder(env):
    at = run_page("2_Overview.py", {"ws": "demo", "x": "rung"})
    clean(at)
    at.selectbox(key="cell_run").set_value("bm25")
    at.selectbox(key="cell_rung").set_value("512K")
    at.run()
    links = {link.proto.label: dict(urllib.parse.parse_qsl(link.proto.query_string)) for link in at.get("page_link")}
    finder_link = next(p for label, p in links.items() if "loses at" in label)
    assert finder_link["by"] == "finder" and finder_link["rung"] == "512K" and finder_link["run"] == "bm25"
    at.selectbox(key="cell_rung").set_value("64K/law").run()  # a base rung: nothing below it, its failures only
    labels = [link.proto.label for link in at.get("page_link")]
    assert not any("loses at" in label for label in labels) and any("Failures of" in label for label in labels)


def test_a_searched_query_opens_its_top_k_on_the_view_ladder_largest_rung(env):
    qid = bank.queries(Workspace(env))["qid"].iloc[0]
    at = run_page("3_Query_drilldown.py", {"ws": "demo", "by": "search", "find": qid, "q": qid})
    clean(at)
    assert at.selectbox(key="top_rung").value == "512K"  # never the twin's benign:512K, the last rung listed
    assert "benign:512K" in at.selectbox(key="top_rung").options
