"""Static export of cell grids as vector art: every ``go.Heatmap`` trace becomes filled rectangles (layout shapes),
a text layer and a colour bar.

Why: plotly.js paints heatmap traces as a bitmap, so a PDF of the Overview heatmap or the leaderboard carried its
cells as a 257×274 px raster that blurs in a paper. The dashboard keeps the heatmap (it is interactive there);
``export.figure_to`` passes every PNG/SVG/PDF through :func:`vector_cells` so the file holds rectangles and text.
"""
from __future__ import annotations

import math
from typing import Any

import plotly.graph_objects as go
from plotly.colors import get_colorscale, sample_colorscale, unlabel_rgb

CELL_TEXT_MIN = 5.0  # px: cell labels that would be smaller than this are left out (the colour still tells)


def _scale(trace: go.Heatmap) -> list:
    cs = trace.colorscale
    scale = get_colorscale(cs) if isinstance(cs, str) else [list(p) for p in cs]
    if trace.reversescale:
        scale = [[1 - pos, color] for pos, color in reversed(scale)]
    return scale


def _luminance(rgb: str) -> float:
    if rgb.startswith("#"):
        h = rgb.lstrip("#")
        r, g, b = (int(h[i:i + 2], 16) for i in (0, 2, 4))
    else:
        r, g, b = unlabel_rgb(rgb)[:3]
    return (0.299 * r + 0.587 * g + 0.114 * b) / 255


def _finite(v: Any) -> bool:
    return v is not None and not (isinstance(v, float) and math.isnan(v))


def _order(axis, values: list) -> list:
    """The axis' category order (its categoryarray, else the order the first heatmap gives)."""
    given = list(axis.categoryarray) if axis.categoryarray is not None else []
    return given + [v for v in dict.fromkeys(values) if v not in given]


def vector_cells(fig: go.Figure) -> go.Figure:
    """A copy of ``fig`` whose heatmap traces are drawn as rectangles (one shape per finite cell, coloured by the
    trace's colour scale and range), their ``text`` as a text trace and their colour bar on an invisible marker
    trace. Figures without a heatmap come back unchanged (as a copy)."""
    out = go.Figure(fig)
    heatmaps = [t for t in out.data if isinstance(t, go.Heatmap)]
    if not heatmaps:
        return out
    first = heatmaps[0]
    xs = _order(out.layout.xaxis, list(first.x))
    ys = _order(out.layout.yaxis, list(first.y))
    out.update_xaxes(categoryorder="array", categoryarray=xs, type="category")
    out.update_yaxes(categoryorder="array", categoryarray=ys, type="category")
    width = out.layout.width or 700
    base_font = (out.layout.font.size or 14) if out.layout.font else 14
    # the plot area is what the run labels (about 0.55 em per character) and the colour bar leave of the width
    labels_px = max((len(str(y)) for y in ys), default=0) * base_font * 0.55 + 3 * base_font
    cell_px = max(1.0, (width - labels_px - 7 * base_font) / max(1, len(xs)))
    kept = [t for t in out.data if not isinstance(t, go.Heatmap)]
    shapes, extra = list(out.layout.shapes or []), []
    for trace in heatmaps:
        scale = _scale(trace)
        z = [list(row) for row in trace.z]
        finite = [v for row in z for v in row if _finite(v)]
        lo = trace.zmin if trace.zmin is not None else (min(finite) if finite else 0.0)
        hi = trace.zmax if trace.zmax is not None else (max(finite) if finite else 1.0)
        text = [list(row) for row in trace.text] if trace.text is not None else None
        size = float(trace.textfont.size or base_font) if trace.textfont else float(base_font)
        size = min(size, cell_px / 3.2)  # "0.951" is about 3 em wide: a narrow column gets smaller labels
        tx, ty, tt, tc = [], [], [], []
        for i, y in enumerate(trace.y):
            for j, x in enumerate(trace.x):
                v = z[i][j]
                if not _finite(v):
                    continue
                t = 0.0 if hi == lo else min(1.0, max(0.0, (float(v) - lo) / (hi - lo)))
                color = sample_colorscale(scale, [t], colortype="rgb")[0]
                xi, yi = xs.index(x), ys.index(y)
                shapes.append(dict(type="rect", xref="x", yref="y", x0=xi - 0.5, x1=xi + 0.5, y0=yi - 0.5,
                                   y1=yi + 0.5, fillcolor=color, opacity=1, line=dict(color="white", width=min(2.0, cell_px / 12)),
                                   layer="between"))
                label = text[i][j] if text is not None else None
                if label:
                    tx.append(x)
                    ty.append(y)
                    tt.append(label)
                    fixed = trace.textfont.color if trace.textfont else None
                    tc.append(fixed or ("#111111" if _luminance(color) > 0.5 else "#FFFFFF"))
        if tt and size >= CELL_TEXT_MIN:
            extra.append(go.Scatter(x=tx, y=ty, text=tt, mode="text", textfont=dict(size=size, color=tc),
                                    hoverinfo="skip", showlegend=False, name="cell labels"))
        if trace.showscale is not False and finite:
            extra.append(go.Scatter(
                x=[xs[0]], y=[ys[0]], mode="markers", hoverinfo="skip", showlegend=False, name="colour scale",
                marker=dict(size=1, opacity=0, color=[lo], cmin=lo, cmax=hi, colorscale=scale, showscale=True,
                            colorbar=trace.colorbar.to_plotly_json())))
    out.data = ()
    for t in kept + extra:
        out.add_trace(t)
    out.update_layout(shapes=shapes, plot_bgcolor="white")
    return out
