"""The run × rung heatmap (Overview page, ``emb-s figure heatmap``).

Cells show the aggregate of one metric with its ``n`` and 95% interval on hover. A cell with no results is
"not run"; a cell whose every query was "does not fit" (a long-context model whose window the rung exceeds) says so:
neither is ever drawn as a zero. A cell the aggregate marks ``small`` prints its n under the value; one marked
``thin`` (fewer queries than ``metrics.THIN_N``) is drawn grey, its value and n printed, and the caption says so.
"""
from __future__ import annotations

import math

import pandas as pd
import plotly.graph_objects as go

from emb_s_core import metrics
from emb_s_core.figures import style
from emb_s_core.schema import CELL_DOES_NOT_FIT, CELL_NOT_RUN, CELL_OK

def _fmt(v: float) -> str:
    return "" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.3f}"


def heatmap(agg: pd.DataFrame, states: pd.DataFrame, metric: str, runs: list[str], rungs: list[str], *,
            x: str = "rung", caption: str = "", title: str | None = None) -> go.Figure:
    """Heatmap of ``metric`` for ``runs`` (rows) × ``rungs`` (columns, in ladder order).

    ``agg`` is the long form of ``metrics.aggregate`` (run, <x>, metric, value, n, ci_low, ci_high); ``states`` comes
    from ``analysis.views.cell_states``.
    """
    a = agg[agg["metric"] == metric].set_index(["run", x])
    st = states.set_index(["run", x])
    z, text, custom, blank, cells = [], [], [], [], []
    greyed = 0
    for run in runs:
        zr, tr, cr, br, nr = [], [], [], [], []
        for rung in rungs:
            state = st["state"].get((run, rung), CELL_NOT_RUN)
            row = a.loc[(run, rung)] if (run, rung) in a.index else None
            value = float(row["value"]) if row is not None else float("nan")
            n = int(row["n"]) if row is not None and not pd.isna(row["n"]) else 0
            lo = float(row["ci_low"]) if row is not None else float("nan")
            hi = float(row["ci_high"]) if row is not None else float("nan")
            thin = bool(row.get("thin", False)) if row is not None else False
            if state != CELL_OK:
                value = float("nan")
                label = state
            elif math.isnan(value):
                label = "n/a (n = 0)"
            else:
                label = _fmt(value)
            if thin and state == CELL_OK and not math.isnan(value):
                greyed += 1
                value = float("nan")  # greyed: drawn on the grey layer with its value and n, not coloured
            small = state == CELL_OK and label != "n/a (n = 0)" and bool(row.get("small", False))
            zr.append(value)
            tr.append(label)  # the hover's value; the cell adds its n where small
            nr.append(f"{label}<br>n = {n}" if small else label)
            method = str(row.get("ci_method", "") or "") if row is not None else ""
            cr.append([n, _fmt(lo), _fmt(hi), state, method or "—"])
            br.append(1.0 if math.isnan(value) else float("nan"))
        z.append(zr)
        text.append(tr)
        custom.append(cr)
        blank.append(br)
        cells.append(nr)
    shown = [[t if not math.isnan(val) else "" for t, val in zip(tr, zr)] for tr, zr in zip(cells, z)]
    fig = go.Figure()
    fig.add_trace(go.Heatmap(  # grey cells under the ones without a value, labelled with their state
        z=blank, x=rungs, y=runs, colorscale=[[0, "#DDDDDD"], [1, "#DDDDDD"]], showscale=False,
        text=[["<br>".join(t.rsplit(" ", 1)) if t in (CELL_NOT_RUN, CELL_DOES_NOT_FIT) else t for t in tr]
              for tr in cells], customdata=custom,
        texttemplate="%{text}", textfont=dict(size=12, color="#444444"), hoverinfo="skip", xgap=2, ygap=2))
    fig.add_trace(go.Heatmap(
        z=z, x=rungs, y=runs, zmin=0.0, zmax=1.0, text=shown, texttemplate="%{text}", textfont=dict(size=12),
        customdata=custom, xgap=2, ygap=2, hoverinfo="skip", **style.sequential(metric)))
    # invisible markers on the cell centres: heatmaps cannot be selected by a click, points can (the dashboard
    # opens a cell's failures on click); they carry the hover text so the heatmap's own hover is not needed
    hover = (f"run %{{y}}<br>{x} %{{x}}<br>{metric} = %{{customdata[5]}}<br>n = %{{customdata[0]}}"
             "<br>95% CI [%{customdata[1]}, %{customdata[2]}] (%{customdata[4]})<br>%{customdata[3]}<extra></extra>")
    fig.add_trace(go.Scatter(
        x=[c for _ in runs for c in rungs], y=[r for r in runs for _ in rungs], mode="markers",
        marker=dict(symbol="square", size=28, opacity=0), selected=dict(marker=dict(opacity=0)),
        unselected=dict(marker=dict(opacity=0)), showlegend=False, name="cells",
        customdata=[c + [t] for cr, tr in zip(custom, text) for c, t in zip(cr, tr)], hovertemplate=hover))
    fig.update_layout(clickmode="event+select", dragmode=False, meta=dict(rows=len(runs)))  # rows: for export sizes
    fig.update_xaxes(title_text=f"{x} (searchable pool size in tokens)", type="category", tickangle=-45)
    fig.update_yaxes(title_text="run", type="category", autorange="reversed")
    if "small" in a.columns and a["small"].astype(bool).any():
        caption = "; ".join(c for c in (caption, (f"grey: fewer than {metrics.THIN_N} queries" if greyed else "")
                                        + (", " if greyed else "") + f"n printed where under {metrics.SMALL_N}") if c)
    height = max(360, 120 + 48 * len(runs) + 60)
    width = max(700, 180 + 64 * len(rungs))
    return style.apply(fig, title or f"{style.metric_label(metric)} across the ladder", caption, height=height,
                       width=width)
