"""The Overview's two figures (heatmap, degradation curves) from ``analysis.illusion.overview``: the one builder the
Overview page and ``emb-s figure heatmap|curves`` both call, so a question gets one figure whichever surface asks.

Why one builder: the CLI once drew its own variant (the twin's rungs as more columns, each line running from ``full``
into ``benign:64K``); here the twin is always the ``<run> · benign`` rows / dashed curves beside its ladder.
"""
from __future__ import annotations

import plotly.graph_objects as go

from emb_s_core import metrics
from emb_s_core.figures import curves, heatmap, style

KINDS = ("heatmap", "curves")


def caption(view: dict, metric: str, x: str, bank: str, n_queries: int, filtered: bool = False) -> str:
    """The caption line both surfaces print under the Overview's figures (``x``: rung or scale columns)."""
    return style.caption(bank, view["columns"], metrics.metric(metric).k, n_queries,
                         extra="filtered" if filtered else None, unit=x)


def thresholds(view: dict, metric: str, x: str) -> dict[str, tuple[float, str]] | None:
    """Each run's effective-scale threshold line (SR@10 over pooled scales only: that is what it is defined on)."""
    eff = view["effective"]
    if metric != "SR@10" or x != "scale" or not len(eff):
        return None
    return {r.run: (r.threshold, f"{r.run}: effective scale {r.effective}") for r in eff.itertuples()}


def figure(kind: str, view: dict, metric: str, x: str, *, caption_text: str = "", title: str | None = None
           ) -> go.Figure:
    """``kind`` (heatmap or curves) of ``metric`` over the view's rows (each run, then its ``· benign`` twin row)
    and columns (the view's ladder, rungs or pooled scales)."""
    if kind == "heatmap":
        return heatmap.heatmap(view["agg"], view["states"], metric, view["rows"], view["columns"], x=x,
                               caption=caption_text, title=title)
    if kind == "curves":
        return curves.curves(view["agg"], view["states"], metric, view["rows"], view["columns"], x=x,
                             caption=caption_text, title=title, twins=view["twins"],
                             thresholds=thresholds(view, metric, x))
    raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
