"""Export for papers and spreadsheets: tables to CSV / JSON / Markdown / LaTeX; figures to PNG / SVG / PDF / HTML.

Tables are written by hand rather than through ``DataFrame.to_markdown`` / ``Styler.to_latex`` so that no optional
dependency (tabulate, jinja2) decides whether a report can be written, and so LaTeX escaping is ours to test.
"""
from __future__ import annotations

import json
import math
import os
import re
import shutil
import time
import warnings
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator

import numpy as np
import pandas as pd

from emb_s_core.errors import EmbSError

TABLE_FORMATS = ("csv", "json", "markdown", "latex")
_SUFFIX_FORMAT = {".csv": "csv", ".json": "json", ".md": "markdown", ".markdown": "markdown", ".tex": "latex",
                  ".latex": "latex"}
_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                  "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


# counts are written as integers even when a join or a missing cell made their column float (310, not 310.0)
COUNT_COLUMNS = frozenset({"wins", "losses", "ties", "documents", "tokens", "queries", "cells", "expected", "rungs",
                           "rungs_total", "kept", "dropped", "calls", "budget"})


def _is_count(name: object) -> bool:
    name = str(name)
    return name == "n" or name.startswith("n_") or name in COUNT_COLUMNS


#: first characters that make a spreadsheet read a cell as a formula (OWASP "CSV injection")
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def csv_cell(value: Any) -> Any:
    """A text cell a spreadsheet would run as a formula (``=HYPERLINK(…)``, ``@SUM(…)``, ``-2+3``) with a ``'``
    in front, as OWASP advises; numbers and other text unchanged. :func:`csv_uncell` undoes it on import."""
    if isinstance(value, str) and value.startswith(FORMULA_START) and not _NUMBER.fullmatch(value):
        return "'" + value
    return value


def csv_uncell(value: Any) -> Any:
    """The text :func:`csv_cell` escaped, as it was."""
    if isinstance(value, str) and value[:1] == "'" and value[1:2] and value[1] in "".join(FORMULA_START):
        return value[1:]
    return value


def csv_frame(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with every text cell passed through :func:`csv_cell` (numeric columns untouched), for ``to_csv``."""
    out = df.copy()
    for column in out.columns:
        if out[column].dtype == object or pd.api.types.is_string_dtype(out[column]):
            out[column] = out[column].map(csv_cell)
    out.columns = [csv_cell(str(c)) for c in out.columns]
    return out


def _counts_as_integers(df: pd.DataFrame) -> pd.DataFrame:
    """Float count columns whose values are all whole numbers become nullable integers (missing stays missing)."""
    out = df
    for col in df.columns:
        s = df[col]
        if _is_count(col) and pd.api.types.is_float_dtype(s) and bool(((s.dropna() % 1) == 0).all()):
            if out is df:
                out = df.copy()
            out[col] = s.astype("Int64")
    return out


# ------------------------------------------------------------------------------------------- tables
def table_to(df: pd.DataFrame, fmt: str, digits: int = 4, note: str | None = None) -> str:
    """``df`` as text in ``fmt`` (csv, json, markdown, latex). Floats keep full precision in csv/json and are
    rounded to ``digits`` decimals in the typeset formats; counts (``n``, ``n_*``, wins, documents, ...) are
    integers; NaN is empty (csv), null (json) or an en dash. ``note`` (e.g. which test and correction marked the
    cells) is printed under a Markdown or LaTeX table, escaped; csv and json stay machine-readable, so the caller
    shows it elsewhere."""
    fmt = _check_format(fmt)
    df = _counts_as_integers(df)
    if fmt == "csv":
        return csv_frame(df).to_csv(index=False)
    if fmt == "json":
        records = [{k: _json_value(v) for k, v in row.items()} for row in df.to_dict("records")]
        return json.dumps(records, indent=2, ensure_ascii=False) + "\n"
    cells = [[_cell(v, digits) for v in row] for row in df.itertuples(index=False)]
    numeric = [pd.api.types.is_numeric_dtype(df[c]) and not pd.api.types.is_bool_dtype(df[c]) for c in df.columns]
    if fmt == "markdown":
        text = _markdown([str(c) for c in df.columns], cells, numeric)
        return text + (f"\n{_markdown_escape(note)}\n" if note else "")
    text = _latex([str(c) for c in df.columns], cells, numeric)
    return text + (f"\n{latex_escape(note)}\n" if note else "")


def table_format(path: str | Path, fmt: str | None = None) -> str:
    """``fmt``, or else the format named by the file's suffix (.csv .json .md .tex)."""
    if fmt is not None:
        return _check_format(fmt)
    path = Path(path)
    found = _SUFFIX_FORMAT.get(path.suffix.lower())
    if found is None:
        raise EmbSError(f"cannot tell the table format from the file name {path.name!r}",
                        where=str(path), fix="end it in .csv, .json, .md or .tex, or pass --format.")
    return found


def write_table(df: pd.DataFrame, path: str | Path, fmt: str | None = None, digits: int = 4,
                note: str | None = None) -> Path:
    """Write ``df`` to ``path``; the format comes from ``fmt`` or else the suffix (.csv .json .md .tex)."""
    path = Path(path)
    text = table_to(df, table_format(path, fmt), digits, note)
    if not path.parent.is_dir():
        raise EmbSError("the output folder does not exist", where=str(path.parent), fix="create it first.")
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)  # never a half-written table
    return path


def latex_escape(text: str) -> str:
    """Escape LaTeX's special characters so any run, rung or domain name typesets verbatim."""
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in text)


def _check_format(fmt: str) -> str:
    fmt = {"md": "markdown", "tex": "latex"}.get(fmt.lower(), fmt.lower())
    if fmt not in TABLE_FORMATS:
        raise EmbSError(f"unknown table format {fmt!r}", fix=f"use one of {', '.join(TABLE_FORMATS)}.")
    return fmt


def _json_value(v: Any) -> Any:
    if v is pd.NA:
        return None
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return None if math.isnan(v) else float(v)
    if isinstance(v, np.bool_):
        return bool(v)
    if isinstance(v, np.ndarray):
        return v.tolist()
    return v


def _cell(v: Any, digits: int) -> str | None:
    """Text of one typeset cell; None marks a missing value."""
    if v is None or v is pd.NA or (isinstance(v, (float, np.floating)) and math.isnan(v)):
        return None
    if isinstance(v, (float, np.floating)):
        return f"{v:.{digits}f}"
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    return str(v)


def _markdown_escape(text: str) -> str:
    """Markdown's inline markup characters backslash-escaped, so a run or tag name prints as written."""
    return "".join("\\" + ch if ch in "\\`*_{}[]<>|~" else ch for ch in text.replace("\n", " "))


def _markdown(columns: list[str], cells: list[list[str | None]], numeric: list[bool]) -> str:
    def esc(s: str | None) -> str:
        return "–" if s is None else s.replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(esc(c) for c in columns) + " |",
             "|" + "|".join("---:" if n else "---" for n in numeric) + "|"]
    lines += ["| " + " | ".join(esc(c) for c in row) + " |" for row in cells]
    return "\n".join(lines) + "\n"


def _latex(columns: list[str], cells: list[list[str | None]], numeric: list[bool]) -> str:
    def esc(s: str | None) -> str:
        return "--" if s is None else latex_escape(s)

    lines = [r"\begin{tabular}{" + "".join("r" if n else "l" for n in numeric) + "}", r"\toprule",
             " & ".join(esc(c) for c in columns) + r" \\", r"\midrule"]
    lines += [" & ".join(esc(c) for c in row) + r" \\" for row in cells]
    lines += [r"\bottomrule", r"\end{tabular}"]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------------------ figures
# Static export goes through plotly + kaleido 1.x, which drives a headless Chrome. Starting that browser costs about
# a second per call, so figures_to_files and session() keep one kaleido server for a whole batch. Kaleido finds the
# browser through BROWSER_PATH; when unset we point it at the first Chrome/Chromium on PATH.
FIGURE_FORMATS = ("png", "svg", "pdf", "html")
MIME = {"png": "image/png", "svg": "image/svg+xml", "pdf": "application/pdf", "html": "text/html",
        "csv": "text/csv", "latex": "application/x-tex"}
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


def _figure_format(fmt: str) -> str:
    fmt = fmt.lower().lstrip(".")
    if fmt not in FIGURE_FORMATS:
        raise EmbSError(f"unknown figure format {fmt!r}", fix=f"use one of: {', '.join(FIGURE_FORMATS)}.")
    return fmt


def figure_to(fig, fmt: str, *, scale: float = 2.0) -> bytes:
    """One figure as bytes in ``fmt`` (png, svg, pdf, html). HTML is self-contained (plotly.js inlined: offline)."""
    fmt = _figure_format(fmt)
    if fmt == "html":
        return fig.to_html(full_html=True, include_plotlyjs=True).encode("utf-8")
    _require_browser()
    for attempt in range(2):
        try:
            with warnings.catch_warnings():  # plotly warns that its per-call options are unused inside a session
                warnings.filterwarnings("ignore", message="The kopts argument is ignored")
                return fig.to_image(format=fmt, scale=scale if fmt == "png" else 1.0)
        except EmbSError:
            raise
        except Exception as exc:  # kaleido/browser failures surface as a user-fixable message
            # kaleido's page can be asked before its script has loaded ("ReferenceError: kaleido_scopes is not
            # defined", seen on a loaded machine): one more try; a browser that cannot start fails both
            if attempt == 0 and "is not defined" in str(exc):
                time.sleep(0.5)
                continue
            raise EmbSError(f"static export to {fmt.upper()} failed: {exc}",
                            fix="check that Chromium starts (`chromium --headless --version`) or export as HTML."
                            ) from exc
    raise AssertionError("unreachable")


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
        _figure_format(p.suffix)
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
