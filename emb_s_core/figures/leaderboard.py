"""The leaderboard as a figure (Leaderboard page, papers): runs × rungs coloured by the metric, each cell labelled
with its value and mark (▲ better / ▼ worse / = no difference than the baseline), and on hover its n, bootstrap
interval, difference to the baseline and corrected p-value. Cells without a score are grey, never a zero. Run and
rung names are made literal by style.apply (plotly renders tags in labels and hover text): they show as written."""
from __future__ import annotations

import math

import pandas as pd
import plotly.graph_objects as go

from emb_s_core.figures import style

MARKS = {"better": "▲", "worse": "▼", "no difference": "=", "baseline": "", "not tested": "?"}


def _fmt(v: object, digits: int = 3) -> str:
    return "–" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{float(v):.{digits}f}"


def leaderboard(cells: pd.DataFrame, runs: list[str], columns: list[str], metric: str, baseline: str, *,
                x: str = "rung", caption: str = "", title: str | None = None) -> go.Figure:
    """``cells`` is ``Leaderboard.cells`` (run, <x>, value, n, ci_low, ci_high, delta, p_adjusted, verdict);
    ``runs`` in the order to draw (top to bottom), ``columns`` in ladder order."""
    c = cells.set_index(["run", x])
    z, text, hover, blank = [], [], [], []
    for run in runs:
        zr, tr, hr, br = [], [], [], []
        for col in columns:
            row = c.loc[(run, col)] if (run, col) in c.index else None
            value = float(row["value"]) if row is not None and not pd.isna(row["value"]) else float("nan")
            verdict = row["verdict"] if row is not None else "not tested"
            zr.append(value)
            br.append(1.0 if math.isnan(value) else float("nan"))
            tr.append("no score" if math.isnan(value) else f"{value:.3f} {MARKS.get(verdict, '')}".strip())
            n = int(row["n"]) if row is not None else 0
            compared = row is not None and run != baseline
            hr.append([run, col, f"{metric} = {_fmt(value)} (n = {n})",
                       f"95% CI [{_fmt(row['ci_low'] if row is not None else None)}, "
                       f"{_fmt(row['ci_high'] if row is not None else None)}]",
                       f"Δ vs {baseline} = {_fmt(row['delta'])}" if compared else "",
                       f"corrected p = {_fmt(row['p_adjusted'], 4)}" if compared else "", verdict])
        z.append(zr)
        text.append(tr)
        hover.append(hr)
        blank.append(br)
    xs, ys = list(columns), list(runs)  # style.apply makes them literal
    fig = go.Figure()
    fig.add_trace(go.Heatmap(z=blank, x=xs, y=ys, colorscale=[[0, "#DDDDDD"], [1, "#DDDDDD"]],
                             showscale=False, hoverinfo="skip", xgap=2, ygap=2))
    fig.add_trace(go.Heatmap(
        z=z, x=xs, y=ys, zmin=0.0, zmax=1.0, text=text,
        texttemplate="%{text}", textfont=dict(size=12), customdata=hover,
        hovertemplate="%{customdata[0]} at %{customdata[1]}<br>%{customdata[2]}<br>%{customdata[3]}<br>%{customdata[4]}"
                      "<br>%{customdata[5]}<br>%{customdata[6]}<extra></extra>",
        xgap=2, ygap=2, **style.sequential(metric)))
    fig.update_xaxes(title_text=f"{x} (searchable pool size in tokens)", type="category", tickangle=-45)
    fig.update_yaxes(title_text="run", type="category", autorange="reversed")
    fig.update_layout(meta=dict(rows=len(runs)))  # rows: export sizes keep room for them (figures.layout)
    height = max(360, 120 + 48 * len(runs) + 60)
    width = max(700, 180 + 80 * len(columns))
    return style.apply(fig, title or f"{style.metric_label(metric)}: runs against {baseline}", caption,
                       height=height, width=width)
