"""Publication style shared by every figure: one look on screen, in the CLI's files and in a paper.

Why one module: a reader comparing two exported figures should see the same fonts, the same colour for the same run
and the same caption line (bank, rung(s), K, n), whoever drew them.
"""
from __future__ import annotations

import html
from typing import Iterable

import plotly.graph_objects as go

# Okabe & Ito (2008): distinguishable under the common colour-vision deficiencies.
OKABE_ITO = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"]
SEQUENTIAL = "Viridis"  # perceptually uniform and colour-blind safe, for heatmaps
FONT = dict(family="Helvetica, Arial, sans-serif", size=14, color="#222222")
WIDTH, HEIGHT = 900, 520
TITLE_PAD = 16  # pixels between the image's left edge and the title / caption line


def metric_label(metric: str) -> str:
    """Axis title for a metric from the catalogue in ``metrics`` (SR/FR spell out their meaning so a figure stands
    alone); a name the catalogue does not know is shown as it is."""
    from emb_s_core import metrics
    from emb_s_core.errors import EmbSError

    try:
        return metrics.metric(metric).label
    except EmbSError:
        return metric


def higher_is_better(metric: str) -> bool:
    """The metric's direction from the catalogue in ``metrics`` (a name it does not know counts as higher)."""
    from emb_s_core import metrics
    from emb_s_core.errors import EmbSError

    try:
        return metrics.metric(metric).higher_is_better
    except EmbSError:
        return True


def sequential(metric: str) -> dict:
    """Heatmap colour settings for ``metric``: the sequential scale, reversed where lower is better (HN-intrusion),
    so the same colour means "good" on every heatmap; the colour bar's title says which way is better."""
    better = higher_is_better(metric)
    return dict(colorscale=SEQUENTIAL, reversescale=not better,
                colorbar=dict(title=dict(text=text(f"{metric} ({'higher' if better else 'lower'} is better)"),
                                         side="right")))


def colors(names: Iterable[str]) -> dict[str, str]:
    """A stable colour per name (runs, rungs): the order given decides, wrapping after eight."""
    return {n: OKABE_ITO[i % len(OKABE_ITO)] for i, n in enumerate(names)}


def caption(bank: str | None = None, rungs: str | Iterable[str] | None = None, k: int | str | None = None,
            n: int | str | None = None, extra: str | None = None, unit: str = "rung") -> str:
    """The caption line every figure carries: ``bank · rung(s) · K · n`` (missing parts left out); ``unit`` names
    the columns: ``scale`` when domain rungs are pooled."""
    parts = []
    if bank:
        parts.append(f"bank: {bank}")
    if rungs is not None:
        names = [rungs] if isinstance(rungs, str) else list(rungs)
        shown = ", ".join(names) if len(names) <= 4 else f"{names[0]} … {names[-1]} ({len(names)} {unit}s)"
        parts.append(f"{unit}{'s' if len(names) > 1 else ''}: {shown}")
    if k is not None:
        parts.append(f"K = {k}")
    if n is not None:
        parts.append(f"n = {n:,} queries" if isinstance(n, int) else f"n = {n}")
    if extra:
        parts.append(extra)
    return " · ".join(parts)


def text(value: object) -> str:
    """``value`` as plotly text that shows literally: plotly reads <a href>, <b>, <br>... and entities in every label,
    so a run or document name carrying them would become a link or markup in the figure; escape ``& < >``."""
    return html.escape(str(value), quote=False)


def _literal(values):
    """Escape the strings of a trace's x / y / customdata / categoryarray (numbers are left alone)."""
    if values is None or isinstance(values, (str, bytes)):
        return text(values) if isinstance(values, str) else values
    out = []
    for v in values:
        if isinstance(v, str):
            out.append(text(v))
        elif isinstance(v, (list, tuple)) or (hasattr(v, "tolist") and not isinstance(v, (int, float))):
            out.append(_literal(list(v)))
        else:
            out.append(v)
    return out


def text_only(fig: go.Figure) -> go.Figure:
    """Make every data string in the figure literal: trace names, categorical x / y, customdata, the axes' category
    orders and titles, the legend title (hover templates and ``text`` are the builders' own markup; they escape data
    with :func:`text`)."""
    for trace in fig.data:
        if isinstance(getattr(trace, "name", None), str):
            trace.name = text(trace.name)
        for attr in ("x", "y", "customdata", "labels"):
            values = getattr(trace, attr, None) if attr in trace else None
            if values is not None and any(isinstance(v, str) or isinstance(v, (list, tuple)) for v in values):
                setattr(trace, attr, _literal(values))
    for name in fig.layout:
        if not name.startswith(("xaxis", "yaxis")):
            continue
        axis = fig.layout[name]
        if axis.categoryarray is not None:
            axis.categoryarray = _literal(axis.categoryarray)
        if axis.title is not None and isinstance(axis.title.text, str):  # e.g. "Δ SR@10 (run a − run b)"
            axis.title.text = text(axis.title.text)
    if fig.layout.legend.title is not None and isinstance(fig.layout.legend.title.text, str):
        fig.layout.legend.title.text = text(fig.layout.legend.title.text)
    return fig


def apply(fig: go.Figure, title: str, caption_text: str = "", *, height: int | None = None,
          width: int | None = None) -> go.Figure:
    """Title, fonts, white background, and the caption line as the subtitle (never overlapping tick labels).

    Title and caption are plain text (names from the data are escaped here), and so is every data string in the
    traces (:func:`text_only`)."""
    text_only(fig)
    title, caption_text = text(title), text(caption_text)
    fig.update_layout(
        # left-anchored with padding: an exported file's title keeps clear of the image edge
        title=dict(text=title, x=0.0, xanchor="left", pad=dict(l=TITLE_PAD), font=dict(size=18),
                   subtitle=dict(text=caption_text, font=dict(size=12, color="#555555"))),
        font=FONT,
        template="simple_white",
        colorway=OKABE_ITO,
        width=width or WIDTH,
        height=height or HEIGHT,
        margin=dict(l=80, r=30, t=90 if caption_text else 70, b=80),
        legend=dict(font=dict(size=12)),
        hoverlabel=dict(font_size=13),
    )
    return fig
