"""Figure export (PNG/SVG/PDF/HTML through plotly + kaleido + Chromium), ``emb-s figure``, and the pure helpers the
pages draw with (cell states, drill-down markings, escaped word diff)."""
from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pandas as pd
import pytest

from emb_s_core import export, schema
from emb_s_core.analysis import drilldown, views
from emb_s_core.cli import main
from emb_s_core.errors import EmbSError
from emb_s_core.figures import heatmap
from emb_s_core.store import Workspace

needs_browser = pytest.mark.skipif(export.find_browser() is None, reason="no Chrome/Chromium for kaleido")


def _check(fmt: str, data: bytes) -> None:
    if fmt == "png":
        assert data[:8] == b"\x89PNG\r\n\x1a\n"
    elif fmt == "pdf":
        assert data[:5] == b"%PDF-" and b"%%EOF" in data[-64:]
    elif fmt == "svg":
        root = ET.fromstring(data)
        assert root.tag.endswith("svg")
    else:
        text = data.decode("utf-8")
        assert text.lstrip().lower().startswith("<html") or text.lstrip().lower().startswith("<!doctype html")
        assert "plotly" in text.lower()


@pytest.mark.slow
@needs_browser
def test_overview_heatmap_exports_in_every_format(dash_ws, tmp_path):
    fig = views.figure(Workspace(dash_ws), "heatmap", "SR@10", x="rung")
    paths = export.figures_to_files([(fig, tmp_path / f"heat.{fmt}") for fmt in export.FIGURE_FORMATS])
    assert [p.suffix for p in paths] == [".png", ".svg", ".pdf", ".html"]
    for p in paths:
        _check(p.suffix[1:], p.read_bytes())
    svg = (tmp_path / "heat.svg").read_text()
    assert "does not" in svg and ">run<" in svg  # the grey cells say why they have no value
    assert "n = 30 queries" in svg  # the caption line travels with the figure


def test_html_export_needs_no_browser(dash_ws, monkeypatch):
    monkeypatch.setenv("BROWSER_PATH", "")
    monkeypatch.setattr(export.shutil, "which", lambda name: None)
    fig = views.figure(Workspace(dash_ws), "curves", "R@1")
    _check("html", export.figure_to(fig, "html"))
    with pytest.raises(EmbSError, match="needs Chrome or Chromium"):
        export.figure_to(fig, "png")


def test_unknown_format_is_refused(dash_ws, tmp_path):
    fig = views.figure(Workspace(dash_ws), "heatmap", "MRR")
    with pytest.raises(EmbSError, match="unknown figure format 'jpg'"):
        export.figures_to_files([(fig, tmp_path / "a.jpg")])
    assert not list(tmp_path.iterdir())


@pytest.mark.slow
@needs_browser
def test_cli_figure(dash_ws, tmp_path, capsys):
    out = tmp_path / "mix.pdf"
    assert main(["figure", "mixing", "--workspace", str(dash_ws), "--runs", "overlap", "--out", str(out)]) == 0
    _check("pdf", out.read_bytes())
    assert main(["figure", "curves", "--workspace", str(dash_ws), "--metric", "FR@5", "--sources", "multi",
                 "--out", str(tmp_path / "c.html")]) == 0
    _check("html", (tmp_path / "c.html").read_bytes())


def test_cli_figure_errors(dash_ws, tmp_path, capsys):
    version = Workspace(dash_ws).version
    assert main(["figure", "heatmap", "--workspace", str(dash_ws), "--metric", "SR@7",
                 "--out", str(tmp_path / "x.png")]) == 2
    assert "unknown metric 'SR@7'" in capsys.readouterr().err
    assert main(["figure", "heatmap", "--workspace", str(dash_ws), "--runs", "nope",
                 "--out", str(tmp_path / "x.png")]) == 2
    assert "no run named nope" in capsys.readouterr().err
    assert main(["figure", "heatmap", "--workspace", str(tmp_path / "missing"), "--out", str(tmp_path / "x.png")]) == 2
    assert "no EMB-S workspace" in capsys.readouterr().err
    assert main(["figure", "heatmap", "--workspace", str(dash_ws), "--domain", "nowhere",
                 "--out", str(tmp_path / "x.html")]) == 2
    assert "no query matches the filters" in capsys.readouterr().err
    assert not list(tmp_path.glob("x.*"))
    assert Workspace(dash_ws).version == version


def test_cell_states_never_turn_missing_into_zero():
    pq = pd.DataFrame({"run": ["a", "a", "b", "b"], "rung": ["r1", "r2", "r1", "r1"], "qid": ["q1", "q1", "q1", "q2"],
                       "status": ["ok", "does_not_fit", "error", "error"]})
    st = views.cell_states(pq, ["a", "b"], ["r1", "r2"]).set_index(["run", "rung"])["state"]
    assert st[("a", "r1")] == "ok" and st[("a", "r2")] == schema.CELL_DOES_NOT_FIT == "does not fit"
    assert st[("b", "r1")] == "error" and st[("b", "r2")] == schema.CELL_NOT_RUN == "not run"
    agg = pd.DataFrame({"run": ["a"], "rung": ["r1"], "metric": ["MRR"], "value": [0.5], "n": [1],
                        "ci_low": [0.5], "ci_high": [0.5]})
    fig = heatmap.heatmap(agg, views.cell_states(pq, ["a", "b"], ["r1", "r2"]), "MRR", ["a", "b"], ["r1", "r2"])
    z = fig.data[1].z
    assert z[0][0] == 0.5 and all(np.isnan(v) for v in (z[0][1], z[1][0], z[1][1]))


def test_outranked_pair_prefers_the_hard_negative():
    assert drilldown.outranked_pair([5, 9, 1, 3], gold=[1], negatives=[9]) == (1, 9)
    assert drilldown.outranked_pair([5, 1], gold=[1], negatives=[9]) == (1, 5)
    assert drilldown.outranked_pair([1, 5], gold=[1], negatives=[5]) is None
    assert drilldown.outranked_pair([5, 6], gold=[1], negatives=[]) == (1, 5)  # gold not retrieved at all


def test_rank_table_and_top_k():
    res = pd.DataFrame({"run": ["a", "a"], "rung": ["big", "small"], "qid": ["q", "q"],
                        "doc_ids": [[7, 1, 2], [1, 7]], "scores": [[3.0, 2.0, 1.0], [2.0, 1.0]],
                        "status": ["ok", "ok"]})
    t = drilldown.rank_table(res, gold=[1], negatives=[7, 8], rung_order=["small", "big"])
    assert list(t.columns) == ["run", "rung", "status", "gold 1", "hard negative 7", "hard negative 8"]
    assert t["rung"].tolist() == ["small", "big"]
    assert t.iloc[1, 3:].tolist() == ["2", "1", drilldown.NOT_IN_LIST]
    assert t.iloc[0, 3:].tolist() == ["1", "2", drilldown.NOT_IN_LIST]
    # with the rungs' pools: a document outside the small rung could not be retrieved there, and says so
    pooled = drilldown.rank_table(res, gold=[1], negatives=[7, 8], rung_order=["small", "big"],
                                  pools={"small": np.array([1, 7]), "big": np.array([1, 2, 7, 8])})
    assert pooled.iloc[0, 3:].tolist() == ["1", "2", drilldown.NOT_IN_POOL]
    assert pooled.iloc[1, 3:].tolist() == ["2", "1", drilldown.NOT_IN_LIST]
    nofit = res.assign(status=["ok", "does_not_fit"], doc_ids=[[7, 1, 2], []])
    blank = drilldown.rank_table(nofit, gold=[1], negatives=[], rung_order=["small", "big"])
    assert blank.set_index("rung").loc["small", "gold 1"] == "" and "Blank" in drilldown.RANK_LEGEND
    docs = pd.DataFrame({"title": ["g", "n", "o"], "source": ["s1", "s2", "s1"], "domain": ["d", "d", "e"]},
                        index=pd.Index([1, 7, 2], name="doc_id"))
    top = drilldown.top_k([7, 1, 2], [3.0, 2.0, 1.0], [1], [7], docs, k=2)
    assert top["mark"].tolist() == ["hard negative", "gold"] and top["source"].tolist() == ["s2", "s1"]
