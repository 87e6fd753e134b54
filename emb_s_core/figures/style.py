"""Publication style shared by every figure: one look on screen, in the CLI's files and in a paper.

Why one module: a reader comparing two exported figures should see the same fonts, the same colour for the same run
and the same caption line (bank, rung(s), K, n), whoever drew them.
"""
from __future__ import annotations

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


def colors(names: Iterable[str]) -> dict[str, str]:
    """A stable colour per name (runs, rungs): the order given decides, wrapping after eight."""
    return {n: OKABE_ITO[i % len(OKABE_ITO)] for i, n in enumerate(names)}


def caption(bank: str | None = None, rungs: str | Iterable[str] | None = None, k: int | str | None = None,
            n: int | str | None = None, extra: str | None = None) -> str:
    """The caption line every figure carries: ``bank · rung(s) · K · n`` (missing parts left out)."""
    parts = []
    if bank:
        parts.append(f"bank: {bank}")
    if rungs is not None:
        names = [rungs] if isinstance(rungs, str) else list(rungs)
        shown = ", ".join(names) if len(names) <= 4 else f"{names[0]} … {names[-1]} ({len(names)} rungs)"
        parts.append(f"rung{'s' if len(names) > 1 else ''}: {shown}")
    if k is not None:
        parts.append(f"K = {k}")
    if n is not None:
        parts.append(f"n = {n:,} queries" if isinstance(n, int) else f"n = {n}")
    if extra:
        parts.append(extra)
    return " · ".join(parts)


def apply(fig: go.Figure, title: str, caption_text: str = "", *, height: int | None = None,
          width: int | None = None) -> go.Figure:
    """Title, fonts, white background, and the caption line as the subtitle (never overlapping tick labels)."""
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
