"""The size a figure is exported at: width, height, font size and whether it carries its title, as presets
(a paper's column, its text width) or numbers; the same options on ``emb-s figure`` and the pages' downloads.

Why: a figure drawn for the screen (700–900 px wide, 14 px text) set in a 3.5 in paper column shrinks its labels to
about 5 pt; exporting it at the column's own width with print-size text keeps them legible. Sizes are CSS pixels,
which kaleido writes to PDF as 0.75 pt each (a 336 px wide figure is a 252 pt = 3.5 in PDF page).
"""
from __future__ import annotations

from dataclasses import dataclass

import plotly.graph_objects as go

from emb_s_core.errors import EmbSError

PT_PER_PX = 0.75
#: preset → (width px, font size px, title): a two-column paper's column (3.5 in; its LaTeX caption replaces the
#: title, which would not fit) and its full text width (7 in), both with 8 pt text
PRESETS = {"screen": (None, None, True), "column": (336, 11, False), "page": (672, 11, True)}
LIMITS = {"width": (150, 4000), "height": (100, 4000), "font_size": (5, 48)}


@dataclass(frozen=True)
class Layout:
    """Export options; ``None`` keeps what the figure has."""

    width: int | None = None
    height: int | None = None
    font_size: float | None = None
    title: bool = True

    @property
    def is_default(self) -> bool:
        return self == Layout()


def layout(preset: str | None = None, *, width: int | None = None, height: int | None = None,
           font_size: float | None = None, title: bool | None = None) -> Layout:
    """A :class:`Layout` from a preset (screen, column, page) with any of its numbers (and ``title``: None keeps
    the preset's) overridden; out-of-range numbers are a message naming the option."""
    if preset is not None and preset not in PRESETS:
        raise EmbSError(f"unknown figure size {preset!r}", fix=f"use one of: {', '.join(PRESETS)}.")
    pw, pf, pt = PRESETS[preset or "screen"]
    out = Layout(width if width is not None else pw, height, font_size if font_size is not None else pf,
                 pt if title is None else title)
    for name, (lo, hi) in LIMITS.items():
        value = getattr(out, name)
        if value is not None and not lo <= value <= hi:
            raise EmbSError(f"figure {name.replace('_', ' ')} {value:g} is out of range",
                            fix=f"pass a {name.replace('_', ' ')} between {lo} and {hi} (pixels; 1 px = 0.75 pt).")
    return out


def _proportional(old_w: int, old_h: int, width: int) -> int:
    """The height at a new width: in proportion, but not below 0.6 × the width (or the old height, if smaller), so a
    wide heatmap of 27 rungs brought to a column keeps room for its rows instead of shrinking to a strip."""
    return round(max(old_h * width / old_w, min(old_h, 0.6 * width)))


#: below this width (px) the legend goes under the plot and long axis titles wrap: a column has no room beside it
NARROW = 500


def _wrap(title: str, room_px: float, font_px: float) -> str:
    """``title`` on two lines (at the space nearest its middle) when it is longer than ``room_px``."""
    if len(title) * font_px * 0.55 <= room_px or " " not in title or "<br>" in title:
        return title
    middle = len(title) // 2
    cut = min((i for i, ch in enumerate(title) if ch == " "), key=lambda i: abs(i - middle))
    return title[:cut] + "<br>" + title[cut + 1:]


def _wrap_categories(fig: go.Figure, room_px: float, font_px: float) -> None:
    """Long category labels of the y axis (run names of a heatmap) on two lines, so the cells keep the width."""
    names = [y for t in fig.data if t.type == "heatmap" and t.y is not None for y in t.y]
    names = list(dict.fromkeys(str(n) for n in names))
    if not names or max(len(n) for n in names) * font_px * 0.55 <= room_px:
        return
    shown = [_wrap(n.replace(" · ", "\u00a0·\u00a0").replace("+", "+ ").replace(":", ": "), room_px, font_px)
             .replace("+ ", "+").replace(": ", ":").replace("\u00a0", " ") for n in names]
    fig.update_yaxes(tickmode="array", tickvals=names, ticktext=shown)


def _narrow(fig: go.Figure, width: int, font_px: float, height: int, fixed: bool) -> int:
    """Lay out ``fig`` for a narrow page: legend under the plot in rows, long axis titles on two lines. Returns the
    height to add for the legend rows (0 when the height was asked for)."""
    entries = [t for t in fig.data if t.name and t.showlegend is not False and not getattr(t, "showscale", False)]
    for axis, room in (("xaxis", width * 0.5), ("yaxis", height * 0.6)):
        ax = fig.layout[axis]
        if ax.title and isinstance(ax.title.text, str):
            ax.title.text = _wrap(ax.title.text, room, font_px)
    _wrap_categories(fig, width * 0.3, font_px)
    bar_px = 0
    for trace in fig.data:  # a colour bar goes over the plot, horizontal: the cells keep the page's width
        bar = trace.colorbar if "colorbar" in trace else None
        if bar is not None and trace.showscale is not False:
            bar.update(orientation="h", x=0.5, xanchor="center", y=1.02, yanchor="bottom", len=0.9,
                       thickness=min(bar.thickness or 30, 10), title_side="top")
            bar_px = int(font_px * 5)
    fig.update_xaxes(dtick=1) if any(t.type == "heatmap" for t in fig.data) else None  # every column named
    if not entries or fig.layout.showlegend is False:
        return 0 if fixed else bar_px
    per_row = max(1, int(width // (font_px * 16)))
    rows = -(-len(entries) // per_row)
    legend_px = int(rows * font_px * 1.6 + font_px)
    # the legend sits at the bottom of the page, under the axis (rotated ticks and a two-line title need ~7 em)
    fig.update_layout(legend=dict(orientation="h", x=0, xanchor="left", yref="container", y=0, yanchor="bottom",
                                  entrywidth=int(width / per_row) - 10, entrywidthmode="pixels", tracegroupgap=0),
                      margin=dict(b=legend_px + int(font_px * 7)))
    return 0 if fixed else legend_px + bar_px


def apply(fig: go.Figure, opts: Layout) -> go.Figure:
    """A copy of ``fig`` at ``opts``: the width (height scaled with it unless given, see :func:`_proportional`), every
    font scaled from the base size (title, caption, legend, cell labels keep their proportions), margins scaled
    with the font, and without title and caption when ``opts.title`` is False (the paper's caption replaces them)."""
    out = go.Figure(fig)
    if opts.is_default:
        return out
    lay = out.layout
    old_w, old_h = lay.width or 700, lay.height or 450
    width = opts.width or old_w
    base = (lay.font.size if lay.font and lay.font.size else 14)
    ratio = (opts.font_size / base) if opts.font_size else 1.0
    height = opts.height or (_proportional(old_w, old_h, width) if opts.width else old_h)
    rows = (lay.meta or {}).get("rows") if isinstance(lay.meta, dict) else None
    if rows and opts.width and not opts.height:  # a grid of rows (heatmap): each row keeps ~2.6 em, 3.4 em when
        em = opts.font_size or base  # a narrow page wraps its labels on two lines
        height = max(height, round(rows * em * (3.4 if width < NARROW else 2.6) + 10 * em))
    update: dict = {"width": width, "height": max(height, 100)}
    if opts.font_size:
        update["font"] = dict(size=opts.font_size)
        if lay.legend and lay.legend.font and lay.legend.font.size:
            update["legend"] = dict(font=dict(size=lay.legend.font.size * ratio))
        if lay.title and lay.title.font and lay.title.font.size:
            update["title_font_size"] = lay.title.font.size * ratio
        if lay.title and lay.title.subtitle and lay.title.subtitle.font and lay.title.subtitle.font.size:
            update["title_subtitle_font_size"] = lay.title.subtitle.font.size * ratio
        for trace in out.data:
            if "textfont" in trace and trace.textfont and trace.textfont.size:
                trace.textfont.size = trace.textfont.size * ratio
            bar = trace.colorbar if "colorbar" in trace else None
            if bar is not None:  # the colour bar narrows with the text (30 px by default)
                bar.thickness = (bar.thickness or 30) * min(1.0, ratio)
    if width < NARROW:
        height += _narrow(out, width, opts.font_size or base, height, fixed=opts.height is not None)
        update["height"] = max(height, 100)
    m = lay.margin
    margin = {k: getattr(m, k) * (1.0 if k == "b" and width < NARROW else min(1.0, ratio))
              for k in ("l", "r", "t", "b") if getattr(m, k) is not None}
    if not opts.title:
        update["title"] = dict(text="", subtitle=dict(text=""))
        margin["t"] = 20
    if margin:
        update["margin"] = margin
    out.update_layout(**update)
    return out
