"""The figure builders draw what they are given: states and values from hand-made frames, never a missing cell as
a zero, the house style (title clear of the edge, caption line, legend), and metric labels from the catalogue."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from emb_s_core import schema
from emb_s_core.analysis import composition, views
from emb_s_core.figures import compare, curves, heatmap, ladder, mixing, style

RUNS, RUNGS = ["a", "b"], ["r1", "r2"]


def _inputs():
    pq = pd.DataFrame({"run": ["a", "a", "b"], "rung": ["r1", "r2", "r1"], "qid": ["q", "q", "q"],
                       "status": [schema.OK, schema.DOES_NOT_FIT, schema.OK]})
    agg = pd.DataFrame({"run": ["a", "b"], "rung": ["r1", "r1"], "metric": ["SR@10"] * 2, "value": [0.25, 0.75],
                        "n": [4, 4], "ci_low": [0.1, 0.5], "ci_high": [0.4, 0.9]})
    return agg, views.cell_states(pq, RUNS, RUNGS)


def test_heatmap_labels_missing_cells_with_their_state():
    agg, states = _inputs()
    fig = heatmap.heatmap(agg, states, "SR@10", RUNS, RUNGS, caption="bank: t")
    grey, values = fig.data[0], fig.data[1]
    assert values.z[0][0] == 0.25 and values.z[1][0] == 0.75
    assert math.isnan(values.z[0][1]) and math.isnan(values.z[1][1])
    assert grey.text[0][1] == "does not<br>fit" and grey.text[1][1] == "not<br>run"
    assert fig.layout.title.text.startswith("SR@10 (share of gold found in top-10)")
    assert fig.layout.title.subtitle.text == "bank: t"


def test_curves_leave_gaps_where_there_is_no_score():
    agg, states = _inputs()
    fig = curves.curves(agg, states, "SR@10", RUNS, RUNGS)
    lines = [t for t in fig.data if t.mode and "markers" in t.mode]
    assert [list(t.y) for t in lines] == [[0.25, None], [0.75, None]]


def test_curves_draw_thin_points_hollow_and_say_so():
    """A point over fewer than metrics.THIN_N queries is hollow, as the heatmap greys its cell; the caption says so,
    and a figure without one says nothing."""
    from emb_s_core import metrics

    agg, states = _inputs()  # n = 4 on both ok cells: thin
    fig = curves.curves(agg, states, "SR@10", RUNS, RUNGS, caption="bank: t")
    lines = [t for t in fig.data if t.mode and "markers" in t.mode]
    assert [list(t.marker.symbol) for t in lines] == [["circle-open", "circle"]] * 2  # r2: no score, no point
    assert fig.layout.title.subtitle.text == f"bank: t; hollow points: fewer than {metrics.THIN_N} queries"
    wide = curves.curves(agg.assign(n=50), states, "SR@10", RUNS, RUNGS, caption="bank: t")
    assert [list(t.marker.symbol) for t in wide.data if t.mode and "markers" in t.mode] == [["circle", "circle"]] * 2
    assert wide.layout.title.subtitle.text == "bank: t"


def test_mixing_shares_per_rung():
    dist = pd.DataFrame({"run": ["a"] * 4, "rung": ["r1", "r1", "r1", "r2"], "qid": ["q1", "q2", "q3", "q1"],
                         "n_sources": [1, 1, 2, 3]})
    fig = mixing.mixing(dist, "a", RUNGS, k=10)
    assert [t.name for t in fig.data] == ["r1 (n = 3)", "r2 (n = 1)"]
    assert np.allclose(fig.data[0].y, [2 / 3, 1 / 3, 0]) and np.allclose(fig.data[1].y, [0, 0, 1])
    assert list(fig.data[0].x) == [1, 2, 3]


def test_composition_has_a_legend_even_for_one_group():
    class R:
        name, composition = "64K", {"documents_per_domain": {"law": 3}, "tokens_per_domain": {"law": 900}}

    table = composition.table([R()])
    assert table.to_dict("records")[0] == {"rung": "64K", "by": "domain", "group": "law", "documents": 3,
                                           "tokens": 900}
    fig = ladder.composition(table, ["64K"], by="domain")
    assert fig.layout.showlegend is True and fig.layout.legend.title.text == "domain"
    assert list(fig.data[0].y) == [900]


def test_compare_figures_draw_the_tests_they_get():
    tests = pd.DataFrame({"rung": ["r1", "r2"], "delta": [0.2, np.nan], "ci_low": [0.1, np.nan],
                          "ci_high": [0.3, np.nan], "p_value": [0.01, np.nan], "n": [10, 0], "wins": [4, 0],
                          "losses": [1, 0], "ties": [5, 0]})
    d = compare.deltas(tests, "a", "b", "SR@10")
    assert list(d.data[0].x) == ["r1"] and np.allclose(d.data[0].error_y.array, [0.1])
    wl = compare.win_loss(tests, "a", "b")
    assert [list(t.y) for t in wl.data] == [[4, 0], [5, 0], [1, 0]]


def test_style_title_padding_caption_and_labels():
    import plotly.graph_objects as go

    fig = style.apply(go.Figure(), "T", style.caption("bank", ["64K", "128K"], 10, 1234, extra="filtered"))
    assert fig.layout.title.pad.l == style.TITLE_PAD > 0 and fig.layout.title.xanchor == "left"
    assert fig.layout.title.subtitle.text == "bank: bank · rungs: 64K, 128K · K = 10 · n = 1,234 queries · filtered"
    assert style.metric_label("HN-intrusion") == "hard-negative intrusion rate"
    assert style.metric_label("FR@5").startswith("FR@5 (all gold in top-5")
    assert style.metric_label("custom") == "custom"
    assert style.colors(["x", "y"]) == {"x": style.OKABE_ITO[0], "y": style.OKABE_ITO[1]}


def test_thin_cells_are_greyed_with_their_n_and_small_cells_print_it():
    """Issue 31 §5: the engine marks cells by n (views.overview: thin below metrics.THIN_N, small below SMALL_N);
    the heatmap greys thin cells (value and n on the grey layer, not coloured), prints n in small ones, says so in
    its caption, and names each cell's interval in its hover (Wilson for a binary metric)."""
    from emb_s_core import metrics

    qs = pd.DataFrame({"qid": [f"q{i}" for i in range(40)], "ref_ids": [[1]] * 40, "hard_negative_ids": [[]] * 40})
    sizes = {"r1": 3, "r2": 20}  # run a: 3 queries on r1 (thin), 20 on r2 (small)
    res = pd.DataFrame([{"run": "a", "rung": rung, "qid": f"q{i}", "doc_ids": [1] if i % 2 else [2]}
                        for rung, n in sizes.items() for i in range(n)])
    pq = metrics.per_query(res, qs)
    agg, states, cols = views.overview(pq, None, "SR@10", "rung", ["a"])
    marks = agg.set_index("rung")
    assert bool(marks.loc["r1", "thin"]) and not bool(marks.loc["r2", "thin"]) and bool(marks.loc["r2", "small"])
    assert set(agg["ci_method"]) == {metrics.WILSON}  # single-gold SR@10 is binary
    fig = heatmap.heatmap(agg, states, "SR@10", ["a"], cols, caption="bank: t")
    grey, values = fig.data[0], fig.data[1]
    at = cols.index("r1")
    assert math.isnan(values.z[0][at]) and grey.z[0][at] == 1.0 and grey.text[0][at] == "0.333<br>n = 3"
    assert values.z[0][cols.index("r2")] == 0.5 and values.text[0][cols.index("r2")] == "0.500<br>n = 20"
    assert f"grey: fewer than {metrics.THIN_N} queries" in fig.layout.title.subtitle.text
    assert list(fig.data[2].customdata[at])[4:] == ["wilson", "0.333"] and "(%{customdata[4]})" in \
        fig.data[2].hovertemplate
