"""Two runs compared per rung: the paired difference with its interval and p-value, and per-query wins/losses.

The inputs are ``metrics.paired_test`` results, one row per rung; nothing here computes a metric.
"""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from emb_s_core.figures import style


def deltas(tests: pd.DataFrame, run_a: str, run_b: str, metric: str, *, caption: str = "",
           title: str | None = None) -> go.Figure:
    """Δ = mean(metric_a − metric_b) over paired queries per rung, 95% interval as error bars, p on hover."""
    t = tests.dropna(subset=["delta"])
    fig = go.Figure()
    fig.add_hline(y=0, line=dict(color="#888888", dash="dot"))
    fig.add_trace(go.Scatter(
        x=t["rung"], y=t["delta"], mode="markers", marker=dict(size=10, color=style.OKABE_ITO[0]),
        error_y=dict(type="data", symmetric=False, array=(t["ci_high"] - t["delta"]).to_numpy(),
                     arrayminus=(t["delta"] - t["ci_low"]).to_numpy(), thickness=1.5),
        customdata=t[["p_value", "n", "ci_low", "ci_high"]].to_numpy(), name="Δ",
        hovertemplate=("rung %{x}<br>Δ = %{y:.3f}<br>95% CI [%{customdata[2]:.3f}, %{customdata[3]:.3f}]"
                       "<br>p = %{customdata[0]:.4f}<br>n = %{customdata[1]}<extra></extra>")))
    fig.update_xaxes(title_text="rung", type="category", categoryorder="array",
                     categoryarray=list(tests["rung"]), tickangle=-45)
    fig.update_yaxes(title_text=f"Δ {metric} ({run_a} − {run_b})")
    return style.apply(fig, title or f"{run_a} vs {run_b}: paired difference in {metric}", caption)


def win_loss(tests: pd.DataFrame, run_a: str, run_b: str, *, caption: str = "", title: str | None = None
             ) -> go.Figure:
    """Stacked per-query counts per rung: queries where A scores higher, ties, B higher."""
    fig = go.Figure()
    for col, name, color in (("wins", f"{run_a} better", style.OKABE_ITO[2]), ("ties", "tie", "#BBBBBB"),
                             ("losses", f"{run_b} better", style.OKABE_ITO[3])):
        fig.add_trace(go.Bar(x=tests["rung"], y=tests[col], name=name, marker_color=color,
                             hovertemplate=f"rung %{{x}}<br>{name}: %{{y}} queries<extra></extra>"))
    fig.update_layout(barmode="stack")
    fig.update_xaxes(title_text="rung", type="category", tickangle=-45)
    fig.update_yaxes(title_text="queries (count)")
    return style.apply(fig, title or f"Per-query wins and losses: {run_a} vs {run_b}", caption)
