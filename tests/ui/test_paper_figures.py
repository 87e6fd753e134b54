"""Issue 30 §2, §4, §5 figures: the CLI draws the Overview's own figure (the twin as rows / dashed curves beside its
ladder, never more columns; or left out), Compare's forest plot by pooled scale with the twin beside each point,
static exports are vector with the size, font and title asked for, and colours follow the metric's direction."""
from __future__ import annotations

import json
import re

import pytest
from streamlit.testing.v1 import AppTest

from conftest import REPO
from emb_s_core import evaluate, export, twin
from emb_s_core.analysis import report, views
from emb_s_core.cli import main
from emb_s_core.figures import compare, layout, vector
from emb_s_core.store import Workspace

pytestmark = pytest.mark.timeout(300)
needs_browser = pytest.mark.skipif(export.find_browser() is None, reason="no Chrome/Chromium for kaleido")
RUNS = ["bm25", "static"]


@pytest.fixture(scope="module")
def twin_ws(tmp_path_factory):
    """A small bank with its benign twin and two runs evaluated on both ladders."""
    from testkit.retrieval_bank import copy_workspace, template

    ws = copy_workspace(template(tmp_path_factory), tmp_path_factory.mktemp("paper") / "ws")
    twin.build(ws, top_n=3)
    evaluate.evaluate(ws, "bm25", name="bm25", k=5, ladder="both")
    evaluate.evaluate(ws, "dense:minilm-static", name="static", k=5, ladder="both")
    return ws


@pytest.fixture
def env(twin_ws, monkeypatch):
    monkeypatch.setenv("EMB_S_DATA", str(twin_ws.path.parent))
    return twin_ws


def run_page(page: str, params: dict) -> AppTest:
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    for k, v in params.items():
        at.query_params[k] = v
    at.switch_page(f"pages/{page}")
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def _traces(spec: dict) -> list[tuple]:
    """What a figure shows, comparable across surfaces: each trace's kind, name, x, y and z."""
    return [(t.get("type"), t.get("name"), t.get("x"), t.get("y"), t.get("z")) for t in spec["data"]]


@pytest.mark.parametrize("x", ["scale", "rung"])
def test_cli_draws_the_figure_the_overview_draws(env, x):
    at = run_page("2_Overview.py", {"ws": str(env.path), "metric": "SR@K", "k": "10", "x": x})
    page_heat, page_curves = (json.loads(el.proto.spec) for el in at.get("plotly_chart"))
    ws = Workspace(env.path)
    for kind, page in (("heatmap", page_heat), ("curves", page_curves)):
        cli = json.loads(views.figure(ws, kind, "SR@10", x=x).to_json())
        assert _traces(cli) == _traces(page), kind
        assert cli["layout"]["title"] == page["layout"]["title"], kind  # same caption line too
    heat = page_heat["data"][1]
    assert heat["y"] == ["bm25", "bm25 · benign", "static", "static · benign"]
    assert not any(str(c).startswith("benign:") for c in heat["x"])  # the twin is rows, never more columns
    lines = {t["name"]: t for t in page_curves["data"] if t.get("mode") == "lines+markers"}
    assert lines["bm25 · benign"]["line"]["dash"] == "dash" and lines["bm25"]["line"]["dash"] == "solid"
    assert lines["bm25"]["x"] == heat["x"]  # each line runs over its own ladder only, no jump into the twin


def test_the_twin_can_be_left_out_on_both_surfaces(env, tmp_path, capsys):
    ws = Workspace(env.path)
    fig = views.figure(ws, "heatmap", "SR@10", twin=False)
    assert list(fig.data[1].y) == RUNS and not any("benign" in str(c) for c in fig.data[1].x)
    curves = views.figure(ws, "curves", "SR@10", twin=False)
    assert all("benign" not in str(t.name) and not any("benign" in str(c) for c in (t.x or ())) for t in curves.data)
    at = run_page("2_Overview.py", {"ws": str(env.path), "x": "scale"})
    at.toggle(key="twin").set_value(False).run()
    assert _traces(json.loads(at.get("plotly_chart")[0].proto.spec)) == _traces(json.loads(fig.to_json()))
    out = tmp_path / "c.html"
    assert main(["figure", "curves", "-w", str(env.path), "--no-twin", "--out", str(out)]) == 0
    assert "benign" not in out.read_text()
    assert main(["figure", "curves", "-w", str(env.path), "--out", str(out)]) == 0
    assert "bm25 · benign" in out.read_text()


def test_compare_forest_plot_by_scale_with_the_twin_beside(env):
    at = run_page("4_Compare.py", {"ws": str(env.path), "a": "bm25", "b": "static", "metric": "SR@K", "k": "10"})
    deltas = json.loads(at.get("plotly_chart")[0].proto.spec)
    points = [t for t in deltas["data"] if t.get("mode") == "markers"]
    assert [t["name"] for t in points] == ["built ladder", "benign twin"]
    assert points[0]["x"] == points[1]["x"]  # the twin on its built column: as many labels as scales
    scales = list(dict.fromkeys(views.scale_of(r) for r in _rungs(env)))
    assert points[0]["x"] == scales and len(scales) < len(set(_rungs(env)))
    assert points[1]["marker"]["symbol"] == "circle-open"
    assert deltas["layout"]["xaxis"]["title"]["text"] == "scale"
    table = at.dataframe[0].value
    assert set(table["ladder"]) == {"built", "benign"} and len(table) == 2 * len(scales)
    assert table.columns[0] == "scale" and "rung" not in table.columns  # pooled scales are titled "scale"
    cli = report.compare_by(Workspace(env.path), "bm25", "static", "SR@10", None, x="scale")  # `emb-s compare`
    assert cli["scale"].tolist() == table["scale"].tolist()
    assert [f"{v:.4f}" for v in cli["delta"]] == table["delta"].tolist()  # the page shows it at 4 decimals
    off = run_page("4_Compare.py", {"ws": str(env.path), "a": "bm25", "b": "static", "twin": "0", "x": "rung"})
    points = [t for t in json.loads(off.get("plotly_chart")[0].proto.spec)["data"] if t.get("mode") == "markers"]
    assert [t["name"] for t in points] == ["built ladder"] and points[0]["x"] == _rungs(env)


def test_cli_compare_by_scale_without_the_twin(env, capsys):
    assert main(["compare", "-w", str(env.path), "bm25", "static", "--columns", "scale", "--no-twin",
                 "--format", "csv", "--n-resamples", "200"]) == 0
    out = capsys.readouterr().out.splitlines()
    scales = list(dict.fromkeys(views.scale_of(r) for r in _rungs(env)))
    assert out[0].startswith("scale,") and [line.split(",")[0] for line in out[1:]] == scales


def _rungs(env) -> list[str]:
    from emb_s_core import ladder

    return [r.name for r in ladder.load(Workspace(env.path)).rungs]


def test_deltas_figure_pools_and_labels_columns():
    import pandas as pd

    tests = pd.DataFrame({"rung": ["64K", "full", "benign:64K"], "ladder": ["built", "built", "benign"],
                          "column": ["64K", "full", "64K"], "delta": [0.1, 0.2, 0.05], "ci_low": [0.0, 0.1, 0.0],
                          "ci_high": [0.2, 0.3, 0.1], "p_value": [0.01, 1e-12, 0.5], "n": [10, 10, 10]})
    fig = compare.deltas(tests, "a", "b", "SR@10", x="scale")
    assert list(fig.layout.xaxis.categoryarray) == ["64K", "full"] and fig.layout.xaxis.title.text == "scale"


def test_illusion_report_in_latex_compiles(env, tmp_path, capsys):
    from test_latex_exports import compiles

    capsys.readouterr()
    assert main(["report", "--illusion", "-w", str(env.path), "--format", "latex", "--n-boot", "50"]) == 0
    tex = capsys.readouterr().out
    assert r"$\geq$ full" in tex or "effective scale" in tex
    compiles(tex, tmp_path, "illusion")


def test_heatmap_colours_follow_the_metric_direction(env):
    ws = Workspace(env.path)
    sr = views.figure(ws, "heatmap", "SR@10").data[1]
    hn = views.figure(ws, "heatmap", "HN-intrusion").data[1]
    assert not sr.reversescale and hn.reversescale  # the same colour means "good" on both
    assert "higher is better" in sr.colorbar.title.text and "lower is better" in hn.colorbar.title.text


def test_pooled_scales_are_titled_scale(env):
    ws = Workspace(env.path)
    for kind in ("heatmap", "curves"):
        fig = views.figure(ws, kind, "SR@10", x="scale")
        assert fig.layout.xaxis.title.text.startswith("scale") and "scales:" in fig.layout.title.subtitle.text
        fig = views.figure(ws, kind, "SR@10", x="rung")
        assert fig.layout.xaxis.title.text.startswith("rung") and "rungs:" in fig.layout.title.subtitle.text


def test_vector_cells_replace_every_heatmap_trace(env):
    fig = views.figure(Workspace(env.path), "heatmap", "SR@10", x="rung")
    values = fig.data[1]
    finite = sum(v is not None and v == v for row in values.z for v in row)
    grey = sum(v is not None and v == v for row in fig.data[0].z for v in row)
    out = vector.vector_cells(fig)
    assert not [t for t in out.data if t.type == "heatmap"]
    rects = [s for s in out.layout.shapes if s.type == "rect"]
    assert len(rects) == finite + grey and all(s.opacity == 1 for s in rects)
    labels = [t for tr in out.data if tr.name == "cell labels" for t in tr.text]
    assert {t for row in values.text for t in row if t} <= set(labels) and len(labels) >= finite
    bar = next(t for t in out.data if t.name == "colour scale")
    assert bar.marker.showscale and bar.marker.cmin == 0 and bar.marker.cmax == 1
    assert fig.data[1].type == "heatmap"  # the dashboard's figure itself is untouched


def test_layout_presets_and_limits():
    import plotly.graph_objects as go

    from emb_s_core.errors import EmbSError

    fig = go.Figure(go.Scatter(x=[1], y=[1]), layout=dict(width=900, height=520, font=dict(size=14),
                                                          title=dict(text="t", font=dict(size=18))))
    col = layout.apply(fig, layout.layout("column"))
    assert col.layout.width == 336 and col.layout.height == round(0.6 * 336)  # 520 × 336 / 900 would be 194
    wide = go.Figure(layout=dict(width=1908, height=468))  # a heatmap of 27 rungs: rows keep their room
    assert layout.apply(wide, layout.layout("column")).layout.height == round(0.6 * 336)
    assert layout.apply(wide, layout.layout(width=3816)).layout.height == 936  # in proportion when larger
    assert col.layout.font.size == 11 and col.layout.title.text == ""  # the LaTeX caption replaces it
    titled = layout.apply(fig, layout.layout("column", title=True, height=300, font_size=9))
    assert titled.layout.title.text == "t" and titled.layout.height == 300
    assert titled.layout.title.font.size == pytest.approx(18 * 9 / 14)
    assert layout.apply(fig, layout.layout()).layout.width == 900
    named = go.Figure([go.Scatter(x=[1], y=[1], name=f"run {i}") for i in range(4)],
                      layout=dict(width=900, height=520, yaxis_title="SR@10 (share of gold found in top-10)"))
    narrow = layout.apply(named, layout.layout("column"))
    assert narrow.layout.legend.orientation == "h" and narrow.layout.height > round(0.6 * 336)  # legend rows below
    assert "<br>" in narrow.layout.yaxis.title.text  # a long axis title wraps instead of running off the page
    assert layout.apply(named, layout.layout("page")).layout.legend.orientation is None
    grid = go.Figure(go.Heatmap(z=[[0.5]] * 6, x=["64K"], y=[f"hybrid:bm25+dense:minilm-static {i}" for i in range(6)],
                                colorbar=dict(title=dict(text="SR@10"))), layout=dict(width=900, meta=dict(rows=6)))
    col = layout.apply(grid, layout.layout("column"))
    assert col.layout.height >= 6 * 11 * 3.4  # each row keeps room for a two-line label
    assert col.data[0].colorbar.orientation == "h" and all("<br>" in t for t in col.layout.yaxis.ticktext)
    with pytest.raises(EmbSError, match="figure width 20 is out of range"):
        layout.layout(width=20)


def test_cli_size_options_are_checked_before_any_work(env, tmp_path, capsys):
    assert main(["figure", "heatmap", "-w", str(env.path), "--width", "10", "--out", str(tmp_path / "h.pdf")]) == 2
    assert "figure width 10 is out of range" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


@pytest.mark.slow
@needs_browser
def test_heatmap_pdf_is_vector_at_the_size_asked(env, tmp_path):
    out = tmp_path / "h.pdf"
    assert main(["figure", "heatmap", "-w", str(env.path), "--metric", "HN-intrusion", "--size", "column",
                 "--out", str(out), str(tmp_path / "h.svg")]) == 0
    data = out.read_bytes()
    assert data[:5] == b"%PDF-"
    assert not re.search(rb"/Subtype\s*/Image", data)  # no raster anywhere: cells, labels and colour bar are vector
    box = [float(v) for v in re.search(rb"/MediaBox\s*\[([^\]]*)\]", data).group(1).split()]
    assert box[2] - box[0] == pytest.approx(336 * layout.PT_PER_PX, abs=1)  # 3.5 in: a paper column
    svg = (tmp_path / "h.svg").read_text()
    assert "<image" not in svg
    # the leaderboard figure goes through the same export
    from emb_s_core.analysis import leaderboard
    from emb_s_core.figures import leaderboard as board_figure

    board = leaderboard.for_workspace(Workspace(env.path), "SR@10", "bm25", n_boot=50, n_resamples=200)
    fig = board_figure.leaderboard(board.cells, RUNS, board.columns, "SR@10", "bm25", x="scale")
    assert not re.search(rb"/Subtype\s*/Image", export.figure_to(fig, "pdf", opts=layout.layout("page")))


def test_page_export_size_controls_reach_the_downloaded_file(env, downloads):
    at = run_page("2_Overview.py", {"ws": str(env.path), "x": "scale"})
    at.selectbox(key="fig_heat_size").set_value("column")
    at.number_input(key="fig_heat_font").set_value(9)
    at.run()
    assert not at.exception and not at.error
    html = downloads["heatmap_SR_10.html"]().decode("utf-8")
    assert '"width":336' in html and '"size":9' in html  # the column preset, the font asked for
    assert "across the ladder" not in html  # no title on a column figure: the LaTeX caption replaces it
    curves = downloads["curves_SR_10.html"]().decode("utf-8")
    assert '"width":336' not in curves and "as the pool grows" in curves  # each figure has its own controls
    at.number_input(key="fig_heat_w").set_value(20).run()  # out of range: said, the page stays
    assert not at.exception and any("out of range" in e.value for e in at.error)
