"""Nothing from a bank, a run or the URL is interpreted as Markdown or HTML on any page (AppTest), the URL may open
only workspaces under the data folder, and bad URL state falls back with a one-line notice (issue 10 §3).

Every Markdown-bearing element (markdown, caption, headers, alerts, expander / metric / widget / page-link labels)
is rendered by a CommonMark renderer with raw HTML on (as Streamlit does with rehype-raw): no <img>, link, script
or markup from the payload may come out, and Streamlit's own directives (:red[...], $math$) must stay escaped.
"""
from __future__ import annotations

import re

import pytest
from markdown_it import MarkdownIt
from streamlit.testing.v1 import AppTest

from conftest import REPO
from ui.safe import WORD_JOINER, html_fragment, md

pytestmark = pytest.mark.timeout(300)  # the first test builds the payload workspace (~2 min at load 15-20)

RENDER = MarkdownIt("commonmark", {"html": True}).enable("table").enable("strikethrough")
PAGES = ["1_Home.py", "2_Overview.py", "3_Query_drilldown.py", "4_Compare.py", "5_Ladder.py",
         "6_Access_vs_Use.py", "7_Bank_audit.py", "8_Explain.py", "8_Leaderboard.py"]


def run_page(page: str, params: dict) -> AppTest:
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=90)
    for k, v in params.items():
        at.query_params[k] = v
    if page != "1_Home.py":
        at.switch_page(f"pages/{page}")
    return at.run()


def markdown_sources(node) -> list[tuple[str, str]]:
    """(element type, Markdown source) of every element under ``node`` that Streamlit renders as Markdown."""
    out = []
    proto = getattr(node, "proto", None)
    kind = getattr(node, "type", "")
    if proto is not None:
        for field in ("body", "label"):
            value = getattr(proto, field, None)
            if isinstance(value, str) and value and kind not in ("code", "text", "exception"):
                out.append((f"{kind}.{field}", value))
        if kind == "expandable":  # expander labels live on the block
            label = getattr(getattr(proto, "expandable", None), "label", "")
            if label:
                out.append(("expander.label", label))
    for child in getattr(node, "children", {}).values():
        out.extend(markdown_sources(child))
    return out


def assert_text_only(at: AppTest, where: str) -> int:
    assert not at.exception, [e.message for e in at.exception]
    sources = markdown_sources(at._tree)
    for kind, src in sources:
        html = RENDER.render(src)
        for bad in ("<img", "<a ", "<script", "<strong>bold", "<b>b</b>"):
            assert bad not in html, f"{where}: {kind} renders {bad!r}: {src[:300]!r}"
        for directive in (":red[", "$x^"):
            assert directive not in src, f"{where}: {kind} carries an unescaped {directive!r}: {src[:300]!r}"
        autolink = re.search(r"(?i)https?://|www\.|[-.\w+]+@[-\w]+\.[-\w]", src.replace("\\", ""))  # GFM literals
        assert autolink is None, f"{where}: {kind} would autolink {autolink.group(0)!r}: {src[:300]!r}"
    return len(sources)


@pytest.fixture
def payload_env(payload_ws, monkeypatch, tmp_path):
    ws, _port = payload_ws
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "evil").symlink_to(ws)
    monkeypatch.setenv("EMB_S_DATA", str(tmp_path / "data"))
    from emb_s_core import runs
    from emb_s_core.store import Workspace

    w = Workspace(ws)
    evil_run = next(r for r in runs.list_runs(w)["run"] if r.startswith("run "))
    qid = str(runs.load_results(w, runs=["overlap"])["qid"].iloc[0])
    rung = str(runs.load_results(w, runs=["overlap"])["rung"].iloc[0])
    return str(tmp_path / "data" / "evil"), evil_run, qid, rung


@pytest.mark.parametrize("page", PAGES)
def test_payload_bank_renders_as_text_on_every_page(payload_env, page):
    ws, evil_run, qid, rung = payload_env
    base = {"ws": ws, "run": evil_run, "rung": rung, "q": qid, "a": evil_run, "b": "overlap", "x": "rung",
            "metric": "R@1"}
    # (Bank audit reads q= as its search box: leave it out there, so the verdicts of the first queries show)
    at = run_page(page, base if page != "7_Bank_audit.py" else {k: v for k, v in base.items() if k != "q"})
    n = assert_text_only(at, page)
    assert n > 3
    if page == "7_Bank_audit.py":  # the payload's verdicts and rationales are there, as text
        assert "Queries tested" in [m.label for m in at.metric]
        assert any("Rationale: " in t.value and "<script>" in t.value for t in at.text)
    if page == "6_Access_vs_Use.py":  # a judged QA run whose answers carry the payload
        assert at.get("plotly_chart") and len(at.dataframe) >= 1
    if page == "3_Query_drilldown.py":  # search mode: the URL's find= is reflected in the page, and every document
        at = run_page(page, {**base, "by": "search", "find": f"{qid[:5]}![x](http://127.0.0.1:1/f)`"})
        assert_text_only(at, "drilldown search")
        at = run_page(page, {**base, "by": "search", "find": qid})
        assert_text_only(at, "drilldown search hit")
        labels = [src for kind, src in markdown_sources(at._tree) if kind == "expander.label"]
        assert labels and all("\\!\\[q\\]" in lab for lab in labels if "doc" in lab), labels[:2]


def test_md_and_html_fragment_escape_everything():
    payload = "`c` ![q](http://h/x) [l](http://h) <img src=x> **b** :red[r] $m$ http://h/auto"
    html = RENDER.render(md(payload))
    assert "<img" not in html and "<a " not in html and "<strong>" not in html and "<code>" not in html
    shown = html.replace("&lt;", "<").replace("&gt;", ">").replace(WORD_JOINER, "")
    assert f"<p>{payload}</p>" == shown.strip()  # shown literally (plus invisible word joiners)
    assert md("a\nb", one_line=True) == "a b"
    frag = html_fragment("it&#x27;s ![q](http://h)\n\n**b**")
    assert "\n" not in frag and "![" not in frag and "**" not in frag and "&#x27;" in frag


def errors(at: AppTest) -> list[str]:
    return [e.value.replace("\\", "") for e in at.error]  # shown escaped: compare the text


def test_workspace_outside_the_data_folder_is_refused_with_a_message(app_env, monkeypatch):
    at = run_page("1_Home.py", {"ws": "/etc/passwd"})
    assert not at.exception, [e.message for e in at.exception]
    assert any("outside the data folder" in e and "EMB_S_ALLOW_ANY_WORKSPACE=1" in e for e in errors(at)), errors(at)
    assert [m.label for m in at.metric][:1] == ["Documents"]  # and the default workspace is opened instead
    at = run_page("2_Overview.py", {"ws": str(app_env) + "/../../../etc"})  # no way out through ..
    assert any("outside the data folder" in e for e in errors(at))
    monkeypatch.setenv("EMB_S_ALLOW_ANY_WORKSPACE", "1")  # local single-user: any path, still a clear message
    at = run_page("1_Home.py", {"ws": "/etc/passwd"})
    assert not at.exception, [e.message for e in at.exception]
    assert any("is a file, not an EMB" in e for e in errors(at)), errors(at)


def test_workspace_named_relative_to_the_data_folder_and_links_use_that_name(app_env):
    at = run_page("2_Overview.py", {"ws": "dash"})  # hand-typed ?ws=dash opens DATA/dash
    assert not at.exception and not errors(at), errors(at)
    assert at.query_params["ws"] == "dash"
    at = run_page("2_Overview.py", {"ws": str(app_env)})  # an absolute path is rewritten to the shareable name
    assert not errors(at), errors(at)
    assert at.query_params["ws"] == "dash"
    for hostile in ("../../etc", "dash/../../etc", "~/.ssh"):  # relative names still cannot leave the data folder
        at = run_page("2_Overview.py", {"ws": hostile})
        assert any("outside the data folder" in e for e in errors(at)), (hostile, errors(at))


@pytest.mark.parametrize("params,notice", [
    ({"k": "abc"}, "Ignored from the link: k=abc"),
    ({"k": "99999999999999999999"}, "Ignored from the link: k=99999999999999999999"),
    ({"metric": "NOPE@K"}, "Ignored from the link: metric=NOPE@K"),
    ({"runs": "overlap,ghost"}, "Ignored from the link: runs=ghost"),
    ({"x": "sideways"}, "Ignored from the link: x=sideways"),
])
def test_bad_url_state_falls_back_with_a_one_line_notice(app_env, params, notice):
    at = run_page("2_Overview.py", {"ws": str(app_env), **params})
    assert not at.exception, [e.message for e in at.exception]
    captions = [c.value for c in at.caption]
    hits = [c for c in captions if c.replace("\\", "").startswith(notice)]
    assert len(hits) == 1 and "\n" not in hits[0], captions
    assert at.get("plotly_chart"), "the fallback view is still drawn"


def test_unknown_run_and_rung_on_the_drilldown_fall_back_with_notices(app_env):
    at = run_page("3_Query_drilldown.py", {"ws": str(app_env), "by": "failures", "run": "ghost", "rung": "9Z/none"})
    assert not at.exception, [e.message for e in at.exception]
    text = " ".join(c.value.replace("\\", "") for c in at.caption)
    assert "Ignored from the link: run=ghost" in text and "Ignored from the link: rung=9Z/none" in text


def test_thresholds_from_the_url_are_checked(app_env):
    at = run_page("6_Access_vs_Use.py", {"ws": str(app_env), "ta": "abc", "tu": "99"})
    assert not at.exception, [e.message for e in at.exception]
