"""Figures to PNG / SVG / PDF / interactive HTML (table export, ``table_to``, comes with the metrics part).

Static export goes through plotly + kaleido 1.x, which drives a headless Chrome. Starting that browser costs about a
second per call, so :func:`figures_to_files` and :func:`session` keep one kaleido server for a whole batch. Kaleido
finds the browser through ``BROWSER_PATH``; when unset we point it at Debian's ``chromium`` if present.
"""
from __future__ import annotations

import os
import shutil
import warnings
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Iterator

from emb_s_core.errors import EmbSError

FIGURE_FORMATS = ("png", "svg", "pdf", "html")
MIME = {"png": "image/png", "svg": "image/svg+xml", "pdf": "application/pdf", "html": "text/html",
        "csv": "text/csv", "tex": "application/x-tex"}
_CHROME_CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")


def find_browser() -> str | None:
    """The Chrome kaleido will use: ``BROWSER_PATH`` if set, else the first Chrome/Chromium on PATH."""
    if os.environ.get("BROWSER_PATH"):
        return os.environ["BROWSER_PATH"]
    for name in _CHROME_CANDIDATES:
        path = shutil.which(name)
        if path:
            return path
    return None


def _require_browser() -> None:
    path = find_browser()
    if not path:
        raise EmbSError("static figure export (PNG/SVG/PDF) needs Chrome or Chromium, and none was found",
                        fix="install it (`apt-get install -y chromium`) or set BROWSER_PATH; HTML export works "
                            "without it.")
    os.environ.setdefault("BROWSER_PATH", path)


def _check_format(fmt: str, allowed: tuple[str, ...], what: str) -> str:
    fmt = fmt.lower().lstrip(".")
    if fmt == "latex":
        fmt = "tex"
    if fmt not in allowed:
        raise EmbSError(f"unknown {what} format {fmt!r}", fix=f"use one of: {', '.join(allowed)}.")
    return fmt


def figure_to(fig, fmt: str, *, scale: float = 2.0) -> bytes:
    """One figure as bytes in ``fmt`` (png, svg, pdf, html). HTML is self-contained (plotly.js inlined: offline)."""
    fmt = _check_format(fmt, FIGURE_FORMATS, "figure")
    if fmt == "html":
        return fig.to_html(full_html=True, include_plotlyjs=True).encode("utf-8")
    _require_browser()
    try:
        with warnings.catch_warnings():  # plotly warns that its per-call options are unused inside a session
            warnings.filterwarnings("ignore", message="The kopts argument is ignored")
            return fig.to_image(format=fmt, scale=scale if fmt == "png" else 1.0)
    except EmbSError:
        raise
    except Exception as exc:  # kaleido/browser failures surface as a user-fixable message
        raise EmbSError(f"static export to {fmt.upper()} failed: {exc}",
                        fix="check that Chromium starts (`chromium --headless --version`) or export as HTML.") from exc


@contextmanager
def session() -> Iterator[None]:
    """Keep one kaleido browser running for every static export inside the block (batching)."""
    _require_browser()
    import kaleido

    kaleido.start_sync_server(silence_warnings=True)
    try:
        yield
    finally:
        kaleido.stop_sync_server(silence_warnings=True)


def figures_to_files(items: Iterable[tuple[object, str | Path]]) -> list[Path]:
    """Write many (figure, path) pairs; the format comes from each path's suffix; one browser for the batch."""
    items = [(fig, Path(p)) for fig, p in items]
    for _, p in items:
        _check_format(p.suffix, FIGURE_FORMATS, "figure")
    static = [it for it in items if it[1].suffix.lower() != ".html"]
    written: list[Path] = []

    def write_all() -> None:
        for fig, p in items:
            p.parent.mkdir(parents=True, exist_ok=True)
            data = figure_to(fig, p.suffix)
            tmp = p.with_name(p.name + ".part")
            tmp.write_bytes(data)
            tmp.replace(p)
            written.append(p)

    if static:
        with session():
            write_all()
    else:
        write_all()
    return written
