"""AppTest of the Leaderboard page on the real small dashboard workspace: sort, filter, baseline change, correction
choice, downloads (the page's own download callables, run), URL state, tags as a filter."""
from __future__ import annotations

import io
import shutil

import pandas as pd
import pytest

from emb_s_core import notes
from emb_s_core.store import Workspace
from test_dashboard_pages import assert_clean, plotly_specs, run_page

pytestmark = pytest.mark.timeout(180)
PAGE = "8_Leaderboard.py"
RUNS = ["overlap", "overlap-idf", "overlap-idf2", "longctx", "partial"]


def board(at) -> pd.DataFrame:
    return at.dataframe[0].value


def legend(at) -> str:
    return next(t.value for t in at.text if t.value.startswith("Cells: mean"))


def test_default_view_and_url_state(app_env):
    at = run_page(PAGE, {"ws": str(app_env), "metric": "SR@K", "k": "1"})
    assert_clean(at)
    t = board(at)
    assert sorted(t["run"]) == sorted(RUNS) and list(t.columns[:2]) == ["run", "vs baseline"]
    assert t.set_index("run").loc["overlap", "vs baseline"] == "baseline"
    assert "full" in t.columns and "1K" in t.columns  # pooled scales by default
    assert "Holm" in legend(at) and "SR@1" in legend(at)
    heat = plotly_specs(at)[0]["data"][1]  # the figure: same cells, n and interval on hover
    assert heat["y"] == t["run"].tolist() and heat["x"] == [c for c in t.columns
                                                            if c not in ("run", "vs baseline", "effective scale",
                                                                         "results")]
    assert t.columns[-2] == "effective scale"  # from the built ladder's scales, SR@10 (analysis.illusion)
    assert t.columns[-1] == "results" and t.set_index("run").loc["partial", "results"].startswith("INCOMPLETE: ")
    row = t["run"].tolist().index("overlap-idf")
    assert heat["text"][row] == [c if c != "–" else "no score" for c in t.iloc[row, 2:-2]]
    hover = " | ".join(heat["customdata"][row][-1])  # the hover's data fields (the template holds the markup)
    assert "n = " in hover and "95% CI" in hover and "corrected p = " in hover
    saved = dict(at.query_params)
    assert saved["base"] == "overlap" and saved["corr"] == "holm" and saved["sort"] == "full"
    again = run_page(PAGE, {**saved, "x": "rung", "detail": "1"})
    assert_clean(again)
    t2 = board(again)
    assert "full n" in t2.columns and "full 95% CI" in t2.columns and "shared" in t2.columns
    assert (t2.set_index("run").loc["longctx", "full n"]) == 0  # does not fit: no queries scored


def test_sort(app_env):
    at = run_page(PAGE, {"ws": str(app_env), "metric": "MRR"})
    at.selectbox(key="url_sort").set_value("run").run()
    at.toggle(key="url_desc").set_value(False).run()
    assert_clean(at)
    assert board(at)["run"].tolist() == sorted(RUNS)
    at.selectbox(key="url_sort").set_value("full").run()
    at.toggle(key="url_desc").set_value(True).run()
    values = [float(c.split()[0]) for c in board(at)["full"] if c != "–"]
    assert values == sorted(values, reverse=True) and board(at)["run"].iloc[-1] == "longctx"
    assert at.query_params["sort"] == "full" and at.query_params["desc"] == "1"


def test_filters_narrow_the_queries(app_env):
    every = board(run_page(PAGE, {"ws": str(app_env), "detail": "1"})).set_index("run")
    multi = run_page(PAGE, {"ws": str(app_env), "detail": "1", "sources": "multi"})
    assert_clean(multi)
    m = board(multi).set_index("run")
    assert 0 < m.loc["overlap", "full n"] < every.loc["overlap", "full n"]
    none = run_page(PAGE, {"ws": str(app_env), "domain": "history", "task": "fact", "sources": "multi"})
    assert not none.exception and "No query matches" in none.warning[0].value


def test_baseline_change(app_env):
    at = run_page(PAGE, {"ws": str(app_env), "metric": "SR@K", "k": "1", "x": "rung"})
    at.selectbox(key="url_base").set_value("overlap-idf2").run()
    assert_clean(at)
    t = board(at).set_index("run")
    assert t.loc["overlap-idf2", "vs baseline"] == "baseline" and t.loc["overlap", "vs baseline"] != "baseline"
    assert "baseline overlap-idf2" in legend(at) and at.query_params["base"] == "overlap-idf2"


def with_fixed_run(src, dst, n_fixed: int = 6):
    """A copy of the workspace plus run ``fix6``: overlap's rankings, except that on the full rung gold is moved
    first for ``n_fixed`` single-source queries overlap misses at R@1. R@1 then differs on exactly those queries,
    all by +1, so the exact sign-flip p at full is 2 / 2^6 = 0.03125 and 1 on every other rung."""
    from emb_s_core import bank, runs

    shutil.copytree(src, dst)
    ws = Workspace(dst)
    res = runs.load_results(ws, runs=["overlap"])
    gold = bank.queries(ws).set_index("qid")["ref_ids"]
    fixed = 0
    for i, row in res.iterrows():
        g = [int(x) for x in gold[row["qid"]]]
        if row["rung"] == "full" and len(g) == 1 and int(row["doc_ids"][0]) != g[0] and fixed < n_fixed:
            res.at[i, "doc_ids"] = g + [int(d) for d in row["doc_ids"] if int(d) != g[0]]
            fixed += 1
    assert fixed == n_fixed
    runs.create_run(ws, "fix6", "external", "gold first on six queries", {})
    runs.save_results(ws, "fix6", res[["rung", "qid", "doc_ids", "scores"]])
    return dst


def test_correction_choice(app_env, tmp_path):
    ws = with_fixed_run(app_env, tmp_path / "fixed")
    at = run_page(PAGE, {"ws": str(ws), "metric": "R@1", "x": "rung", "runs": "overlap,fix6", "base": "overlap"})
    assert_clean(at)
    t = board(at).set_index("run")
    assert t.loc["fix6", "full"].endswith("=")  # Holm: 11 comparisons (11 rungs), p = 0.03125 × 11 > 0.05
    assert "Holm" in legend(at) and "11 comparisons" in legend(at)
    at.selectbox(key="url_corr").set_value("none").run()
    assert_clean(at)
    assert board(at).set_index("run").loc["fix6", "full"].endswith("▲")  # alone it is significant
    assert "none (each test alone)" in legend(at) and at.query_params["corr"] == "none"
    at.selectbox(key="url_corr").set_value("bonferroni").run()
    assert board(at).set_index("run").loc["fix6", "full"].endswith("=") and "Bonferroni" in legend(at)
    assert board(at).set_index("run").loc["fix6", "vs baseline"] == "0▲ 0▼ 11="


def test_downloads_are_the_shown_table(app_env, downloads):
    at = run_page(PAGE, {"ws": str(app_env), "metric": "MRR", "corr": "bonferroni"})
    assert_clean(at)
    assert [b.proto.label for b in at.get("download_button")] == ["⬇ CSV", "⬇ LaTeX", "⬇ Markdown", "⬇ PNG", "⬇ SVG",
                                                                   "⬇ PDF", "⬇ HTML"]  # the table, then the figure
    files = {name.rsplit(".", 1)[1]: fn for name, fn in downloads.items() if name.startswith("leaderboard_")}
    csv = pd.read_csv(io.StringIO(files["csv"]().decode()), keep_default_na=False)
    shown = board(at)
    assert csv["run"].tolist() == shown["run"].tolist() and csv["full"].tolist() == shown["full"].tolist()
    md = files["md"]().decode()
    assert md.startswith("| run | vs baseline |") and "Bonferroni" in md
    tex = files["tex"]().decode()
    assert r"\begin{tabular}" in tex and "Bonferroni" in tex


def test_tags_filter_the_leaderboard(app_env, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(app_env, copy)
    ws = Workspace(copy)
    notes.save(ws, "q0001", ["recheck <b>"], "")
    notes.save(ws, "q0004", ["recheck <b>"], "x", run="overlap", rung="full")
    at = run_page(PAGE, {"ws": str(copy), "detail": "1", "tag": "recheck <b>"})
    assert_clean(at)
    assert at.multiselect(key="url_tag").value == ["recheck <b>"]
    assert board(at).set_index("run").loc["overlap", "full n"] == 2


def test_no_runs_and_bad_workspace(app_env, tmp_path):
    at = run_page(PAGE, {"ws": str(tmp_path / "gone")})
    assert not at.exception and "no EMB-S workspace" in at.error[0].value.replace("\\", "")  # shown escaped
