"""Access-vs-use figure: quadrant shares across rungs, stacked (bars by default, or areas).

Input is :func:`emb_s_core.diagnose.summary` output (long form: x column, quadrant, n, share, n_classified); the
builder only draws. Colours are fixed per quadrant so figures from different runs compare at a glance: the two
"answered well" quadrants are blue shades, use failures orange, access failures red.
"""
from __future__ import annotations

import pandas as pd

from emb_s_core.diagnose import LABELS, QUADRANTS

COLORS = {
    "accessed_good": "#1f5fa8",
    "unaccessed_good": "#8fb6e0",
    "use_failure": "#f28e2b",
    "access_failure": "#c8312b",
}
STACK_ORDER = ("accessed_good", "unaccessed_good", "use_failure", "access_failure")


def quadrant_shares(summary: pd.DataFrame, x: str = "rung", kind: str = "bar", title: str | None = None):
    """Stacked quadrant shares per ``x`` value (in the order they appear); hover shows n and n classified."""
    import plotly.graph_objects as go

    if kind not in ("bar", "area"):
        raise ValueError(f"kind must be 'bar' or 'area', got {kind!r}")
    assert set(STACK_ORDER) == set(QUADRANTS)
    xs = list(dict.fromkeys(summary[x].astype(str))) if len(summary) else []
    fig = go.Figure()
    for quadrant in STACK_ORDER:
        part = summary[summary["quadrant"] == quadrant].copy()
        part[x] = part[x].astype(str)
        part = part.set_index(x).reindex(xs)
        custom = list(zip(part["n"].fillna(0).astype(int), part["n_classified"].fillna(0).astype(int)))
        hover = "%{x}<br>" + LABELS[quadrant] + ": %{y:.1%} (%{customdata[0]} of %{customdata[1]})<extra></extra>"
        if kind == "bar":
            fig.add_trace(go.Bar(x=xs, y=part["share"], name=LABELS[quadrant], marker_color=COLORS[quadrant],
                                 customdata=custom, hovertemplate=hover))
        else:
            fig.add_trace(go.Scatter(x=xs, y=part["share"], name=LABELS[quadrant], mode="lines",
                                     stackgroup="shares", line={"color": COLORS[quadrant], "width": 0.5},
                                     customdata=custom, hovertemplate=hover))
    fig.update_layout(barmode="stack", title=title or "Access vs use: quadrant shares",
                      xaxis_title=x, yaxis={"title": "share of classified queries", "tickformat": ".0%",
                                            "range": [0, 1]},
                      legend={"orientation": "h", "y": -0.25}, template="simple_white")
    return fig
