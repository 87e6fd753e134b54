"""Rung composition (Ladder page): what each pool is made of, so a drop in a curve can be traced to what was added."""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from emb_s_core.figures import style


def composition(table: pd.DataFrame, rungs: list[str], *, by: str = "domain", value: str = "tokens",
                caption: str = "", title: str | None = None) -> go.Figure:
    """Stacked bars per rung of ``value`` (tokens or documents) split by ``by`` (domain or source); ``table`` is
    ``analysis.composition.table``."""
    t = table[(table["by"] == by) & table["rung"].isin(rungs)]
    groups = sorted(t["group"].unique())
    palette = style.colors(groups)
    fig = go.Figure()
    for g in groups:
        s = t[t["group"] == g].set_index("rung")[value].reindex(rungs).fillna(0)
        fig.add_trace(go.Bar(x=rungs, y=s.to_numpy(), name=g, marker_color=palette[g],
                             hovertemplate=f"{by} {g}<br>rung %{{x}}<br>%{{y:,}} {value}<extra></extra>"))
    # the legend names the groups even when there is only one (plotly hides a single trace's legend by default)
    fig.update_layout(barmode="stack", showlegend=True, legend_title_text=by)
    fig.update_xaxes(title_text="rung", type="category", categoryorder="array", categoryarray=rungs,
                     tickangle=-45)
    fig.update_yaxes(title_text=f"{value} (count)")
    return style.apply(fig, title or f"Rung composition: {value} per {by}", caption)
