"""Degradation curves: one line per run across the ladder, with the 95% interval as a band (Wilson for binary cells, else bootstrap).

Cells that are not ok (not run, does not fit) leave a gap in the line rather than dropping to zero. A point averaging
fewer than ``metrics.THIN_N`` queries is drawn hollow and the caption says so, as the heatmap greys that cell: its
mean moves with one query.
"""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go

from emb_s_core import metrics
from emb_s_core.figures import style
from emb_s_core.schema import CELL_OK


def _rgba(hex_color: str, alpha: float) -> str:
    h = hex_color.lstrip("#")
    return f"rgba({int(h[0:2], 16)},{int(h[2:4], 16)},{int(h[4:6], 16)},{alpha})"


def curves(agg: pd.DataFrame, states: pd.DataFrame, metric: str, runs: list[str], rungs: list[str], *,
           x: str = "rung", caption: str = "", title: str | None = None, twins: dict[str, str] | None = None,
           thresholds: dict[str, tuple[float, str]] | None = None) -> go.Figure:
    """``metric`` per run over ``rungs`` (ladder order); ``states`` from ``analysis.views.cell_states``.

    ``twins`` (row name → its run): benign-twin rows, drawn dashed in their run's colour (adversarial solid).
    ``thresholds`` (run → (value, label)): a dotted horizontal line per run, e.g. the effective-scale threshold.
    """
    twins = twins or {}
    a = agg[agg["metric"] == metric].set_index(["run", x])
    st = states.set_index(["run", x])["state"]
    palette = style.colors([r for r in runs if r not in twins])
    palette.update({t: palette[r] for t, r in twins.items() if r in palette})
    fig = go.Figure()
    any_thin = False
    for run, (value, label) in (thresholds or {}).items():
        if run in palette:
            fig.add_trace(go.Scatter(x=[rungs[0], rungs[-1]], y=[value, value], mode="lines", name=label,
                                     legendgroup=run, line=dict(color=palette[run], width=1, dash="dot"),
                                     hovertemplate=f"{label}<extra></extra>"))
    for run in runs:
        vals, lo, hi, ns = [], [], [], []
        for rung in rungs:
            ok = st.get((run, rung)) == CELL_OK and (run, rung) in a.index
            row = a.loc[(run, rung)] if ok else None
            vals.append(float(row["value"]) if ok else None)
            lo.append(float(row["ci_low"]) if ok else None)
            hi.append(float(row["ci_high"]) if ok else None)
            ns.append(int(row["n"]) if ok else 0)
        thin = [0 < n < metrics.THIN_N for n in ns]
        any_thin |= any(thin)
        color = palette[run]
        fig.add_trace(go.Scatter(x=rungs, y=hi, mode="lines", line=dict(width=0), hoverinfo="skip",
                                 showlegend=False, legendgroup=run, connectgaps=False))
        fig.add_trace(go.Scatter(x=rungs, y=lo, mode="lines", line=dict(width=0), fill="tonexty",
                                 fillcolor=_rgba(color, 0.18), hoverinfo="skip", showlegend=False,
                                 legendgroup=run, connectgaps=False))
        fig.add_trace(go.Scatter(
            x=rungs, y=vals, mode="lines+markers", name=run, legendgroup=run,
            line=dict(color=color, width=2.5, dash="dash" if run in twins else "solid"),
            marker=dict(size=8, symbol=["circle-open" if t else "circle" for t in thin]), connectgaps=False,
            customdata=list(zip(ns, lo, hi)),
            hovertemplate=(f"{style.text(run)}<br>{x} %{{x}}<br>{metric} = %{{y:.3f}}<br>n = %{{customdata[0]}}"
                           "<br>95% CI [%{customdata[1]:.3f}, %{customdata[2]:.3f}]<extra></extra>")))
    fig.update_xaxes(title_text=f"{x} (searchable pool size in tokens)", type="category",
                     categoryorder="array", categoryarray=rungs, tickangle=-45)
    fig.update_yaxes(title_text=style.metric_label(metric), range=[0, 1.02])
    if any_thin:
        caption = "; ".join(c for c in (caption, f"hollow points: fewer than {metrics.THIN_N} queries") if c)
    return style.apply(fig, title or f"{metric} as the pool grows (band: 95% interval, Wilson for binary cells)", caption)
