"""The paper's Figure 4: how many distinct sources a query's top-10 draws from, at the shared rung versus the
largest rung. A retriever that stays inside the query's own source at 512K but mixes sources at full scale is being
pulled away by cross-source interference.
"""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from emb_s_core.figures import style


def mixing(dist: pd.DataFrame, run: str, rungs: list[str], *, k: int = 10, caption: str = "",
           title: str | None = None) -> go.Figure:
    """Grouped bars: share of queries (y) whose top-``k`` spans 1, 2, … distinct sources (x), one colour per rung.

    ``dist`` is the frame of ``analysis.mixing.distinct_sources`` (run, rung, qid, n_sources)."""
    d = dist[(dist["run"] == run) & dist["rung"].isin(rungs)]
    palette = style.colors(rungs)
    top = int(d["n_sources"].max()) if len(d) else 1
    xs = list(range(1, max(top, 1) + 1))
    fig = go.Figure()
    for rung in rungs:
        counts = d[d["rung"] == rung]["n_sources"].value_counts()
        n = int(counts.sum())
        share = [float(counts.get(x, 0)) / n if n else 0.0 for x in xs]
        fig.add_trace(go.Bar(x=xs, y=share, name=f"{rung} (n = {n:,})", marker_color=palette[rung],
                             customdata=[int(counts.get(x, 0)) for x in xs],
                             hovertemplate=(f"{rung}<br>%{{x}} distinct sources<br>%{{y:.1%}} of queries "
                                            "(%{customdata})<extra></extra>")))
    fig.update_layout(barmode="group")
    fig.update_xaxes(title_text=f"distinct sources in the top-{k} (count)", dtick=1)
    fig.update_yaxes(title_text="share of queries", tickformat=".0%")
    return style.apply(fig, title or f"Source mixing in the top-{k}: {run}", caption)
