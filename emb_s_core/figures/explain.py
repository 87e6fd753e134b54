"""What displaced the gold between two rungs: the cause shares of one cell as horizontal bars.

The input is ``analysis.explain.breakdown`` (cause, share, queries, n); nothing here computes.
"""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from emb_s_core.figures import style


def causes(breakdown: pd.DataFrame, run: str, rung_from: str, rung_to: str, k: int, *, caption: str = "",
           title: str | None = None) -> go.Figure:
    """Share of the displaced queries per cause (each query split over its displacers), n on hover."""
    fig = go.Figure(go.Bar(
        x=breakdown["share"], y=breakdown["cause"], orientation="h",
        marker_color=[style.OKABE_ITO[i % len(style.OKABE_ITO)] for i in range(len(breakdown))],
        customdata=breakdown[["queries", "n"]].to_numpy(),
        hovertemplate="%{y}<br>share %{x:.1%}<br>%{customdata[0]} of %{customdata[1]} displaced queries"
                      "<extra></extra>"))
    fig.update_xaxes(title_text="share of the displaced queries", range=[0, 1], tickformat=".0%")
    fig.update_yaxes(type="category", autorange="reversed")
    n = int(breakdown["n"].iloc[0]) if len(breakdown) else 0
    return style.apply(fig, title or f"{run}: what pushed the gold out of the top-{k}, {rung_from} → {rung_to} "
                                      f"(n = {n})", caption, height=360)
