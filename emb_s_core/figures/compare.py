"""Two runs compared per rung: the paired difference with its interval and p-value, and per-query wins/losses.

The inputs are ``metrics.paired_test`` results, one row per rung; nothing here computes a metric.
"""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from emb_s_core.figures import style


def deltas(tests: pd.DataFrame, run_a: str, run_b: str, metric: str, *, caption: str = "",
           title: str | None = None, x: str = "rung") -> go.Figure:
    """Δ = mean(metric_a − metric_b) over paired queries per column, 95% interval as error bars, p on hover.

    With ``ladder`` / ``column`` (``analysis.report.compare_by``) the benign twin is a second series of hollow
    markers beside its ladder's point on the same column, not more columns; ``x`` names the columns (rung or
    scale)."""
    name = x if x in tests else "rung"  # the column holding the full names (analysis.report.compare_by names it x)
    t = tests.dropna(subset=["delta"])
    if "ladder" not in t:
        t = t.assign(ladder="built", column=t[name])
    columns = list(dict.fromkeys(tests["column"] if "column" in tests else tests[name]))
    fig = go.Figure()
    fig.add_hline(y=0, line=dict(color="#888888", dash="dot"))
    series = list(dict.fromkeys(t["ladder"]))
    for i, kind in enumerate(series):
        part = t[t["ladder"] == kind]
        twin = kind == "benign"
        fig.add_trace(go.Scatter(
            x=part["column"], y=part["delta"], mode="markers", name="benign twin" if twin else f"{kind} ladder",
            marker=dict(size=10, color=style.OKABE_ITO[i % len(style.OKABE_ITO)],
                        symbol="circle-open" if twin else "circle", line=dict(width=2)),
            error_y=dict(type="data", symmetric=False, array=(part["ci_high"] - part["delta"]).to_numpy(),
                         arrayminus=(part["delta"] - part["ci_low"]).to_numpy(), thickness=1.5),
            customdata=part[["p_value", "n", "ci_low", "ci_high", name]].to_numpy(),
            hovertemplate=(f"{x} %{{customdata[4]}}<br>Δ = %{{y:.3f}}<br>95% CI [%{{customdata[2]:.3f}}, "
                           "%{customdata[3]:.3f}]<br>p = %{customdata[0]:.4g}<br>n = %{customdata[1]}"
                           "<extra></extra>")))
    if len(series) > 1:  # the twin's point sits just right of its ladder's, on the same column
        fig.update_layout(scattermode="group", scattergap=0.6)
    fig.update_xaxes(title_text=x, type="category", categoryorder="array", categoryarray=columns,
                     tickangle=-45 if len(columns) > 8 else 0)
    fig.update_yaxes(title_text=f"Δ {metric} ({run_a} − {run_b})")
    return style.apply(fig, title or f"{run_a} vs {run_b}: paired difference in {metric}", caption)


def win_loss(tests: pd.DataFrame, run_a: str, run_b: str, *, caption: str = "", title: str | None = None,
             x: str = "rung") -> go.Figure:
    """Stacked per-query counts per column (``x``: rung or scale): queries where A scores higher, ties, B higher;
    the benign twin's columns (``ladder`` = benign) are named ``<column> · benign``."""
    if "ladder" in tests:
        tests = tests.assign(rung=[c if k != "benign" else f"{c} · benign"
                                   for c, k in zip(tests["column"], tests["ladder"])])
    elif x in tests:
        tests = tests.assign(rung=tests[x])
    fig = go.Figure()
    for col, name, color in (("wins", f"{run_a} better", style.OKABE_ITO[2]), ("ties", "tie", "#BBBBBB"),
                             ("losses", f"{run_b} better", style.OKABE_ITO[3])):
        fig.add_trace(go.Bar(x=tests["rung"], y=tests[col], name=name, marker_color=color,
                             hovertemplate=f"{x} %{{x}}<br>{name}: %{{y}} queries<extra></extra>"))
    fig.update_layout(barmode="stack")
    fig.update_xaxes(title_text=x, type="category", tickangle=-45)
    fig.update_yaxes(title_text="queries (count)")
    return style.apply(fig, title or f"Per-query wins and losses: {run_a} vs {run_b}", caption)
