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
    cells = [[format_value(v, c, digits) for c, v in zip(df.columns, row)] for row in df.itertuples(index=False)]
    numeric = [pd.api.types.is_numeric_dtype(df[c]) and not pd.api.types.is_bool_dtype(df[c]) for c in df.columns]
    if fmt == "markdown":
        text = _markdown([str(c) for c in df.columns], cells, numeric)
        return text + (f"\n{_markdown_escape(note)}\n" if note else "")
    text = _latex([str(c) for c in df.columns], cells, numeric)
    return latex_fragment(text + (f"\n{latex_escape(note)}\n" if note else ""))


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
    """``text`` as ASCII LaTeX that plain pdflatex typesets verbatim: its special characters escaped, ``< > |``
    (which OT1 fonts print as other glyphs) as text macros, the symbols reports use (≥ ≤ ▲ ▼ α Δ – …) as macros,
    accented letters as accent commands, and anything else as ``[U+XXXX]``, never a raw byte pdflatex stops on."""
    out = []
    prev = ""
    for ch in text:
        if ch in _LATEX_SPECIAL:
            out.append(_LATEX_SPECIAL[ch])
        elif ch == "-" and prev == "-":  # "--" would typeset as an en dash
            out.append("{}-")
        elif ch.isascii():
            out.append(" " if ch in "\t\r\n" or not ch.isprintable() else ch)
        else:
            out.append(_latex_unicode(ch))
        prev = ch
    return "".join(out)


# symbols the tables and notes use, as macros of the LaTeX kernel (no package needed); ▲ ▼ go through \EmbSup /
# \EmbSdown, which latex_fragment defines (amssymb's filled triangles when the document loads it)
_LATEX_SPECIAL.update({"<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}"})
_LATEX_SYMBOLS = {
    "≥": r"$\geq$", "≤": r"$\leq$", "≠": r"$\neq$", "≈": r"$\approx$", "±": r"$\pm$", "×": r"$\times$",
    "÷": r"$\div$", "−": r"$-$", "→": r"$\rightarrow$", "←": r"$\leftarrow$", "↔": r"$\leftrightarrow$",
    "↑": r"$\uparrow$", "↓": r"$\downarrow$", "↳": r"$\hookrightarrow$", "⇒": r"$\Rightarrow$", "∞": r"$\infty$",
    "√": r"$\surd$", "∈": r"$\in$", "∉": r"$\notin$", "⊂": r"$\subset$", "⊆": r"$\subseteq$", "∪": r"$\cup$",
    "∩": r"$\cap$", "∑": r"$\sum$", "∆": r"$\Delta$", "µ": r"$\mu$", "·": r"$\cdot$", "∙": r"$\cdot$",
    "★": r"$\star$", "▲": r"\EmbSup{}", "▼": r"\EmbSdown{}", "△": r"$\bigtriangleup$", "▽": r"$\bigtriangledown$",
    "–": "--", "—": "---", "…": r"\ldots{}", "‘": "`", "’": "'", "‚": ",", "“": "``", "”": "''", "„": ",,",
    "«": r"$\ll$", "»": r"$\gg$", "•": r"\textbullet{}", "°": r"\textdegree{}",
    "§": r"\S{}", "¶": r"\P{}", "©": r"\copyright{}", "®": r"\textregistered{}", "™": r"\texttrademark{}",
    "€": r"\texteuro{}", "£": r"\pounds{}", "¢": r"\textcent{}", "¥": r"\textyen{}", "‰": r"\textperthousand{}",
    "\u00a0": "~", "\u2009": r"\,", "\u202f": r"\,", "\u200b": "", "ß": r"\ss{}", "æ": r"\ae{}", "Æ": r"\AE{}",
    "ø": r"\o{}", "Ø": r"\O{}", "œ": r"\oe{}", "Œ": r"\OE{}", "ł": r"\l{}", "Ł": r"\L{}", "ı": r"\i{}",
    "¿": r"?`", "¡": r"!`", "✓": "yes", "✗": "no",
}
# combining marks → the accent command that OT1 (pdflatex's default encoding) has
_LATEX_ACCENTS = {"\u0300": "`", "\u0301": "'", "\u0302": "^", "\u0303": "~", "\u0304": "=", "\u0306": "u",
                  "\u0307": ".", "\u0308": '"', "\u030a": "r", "\u030b": "H", "\u030c": "v", "\u0327": "c"}
_GREEK_LOOKALIKES = {"ALPHA": "A", "BETA": "B", "EPSILON": "E", "ZETA": "Z", "ETA": "H", "IOTA": "I", "KAPPA": "K",
                     "MU": "M", "NU": "N", "OMICRON": "O", "RHO": "P", "TAU": "T", "CHI": "X"}
_GREEK_CAPITALS = {"GAMMA", "DELTA", "THETA", "LAMBDA", "XI", "PI", "SIGMA", "UPSILON", "PHI", "PSI", "OMEGA"}


def _latex_unicode(ch: str) -> str:
    """One non-ASCII character as ASCII LaTeX (see :func:`latex_escape`)."""
    import unicodedata

    if ch in _LATEX_SYMBOLS:
        return _LATEX_SYMBOLS[ch]
    name = unicodedata.name(ch, "")
    if name.startswith("GREEK ") and " LETTER " in name and "WITH" not in name:
        letter = name.rsplit(" LETTER ", 1)[1].replace("LAMDA", "LAMBDA").replace("FINAL SIGMA", "VARSIGMA")
        if "SMALL" in name:
            return "o" if letter == "OMICRON" else rf"$\{letter.lower()}$"
        if letter in _GREEK_CAPITALS:
            return rf"$\{letter.capitalize()}$"
        return _GREEK_LOOKALIKES.get(letter, f"[U+{ord(ch):04X}]")  # capitals that look like Latin ones
    parts = unicodedata.normalize("NFD", ch)
    if len(parts) > 1 and parts[0].isascii():
        base = {"i": r"\i{}", "j": r"\j{}"}.get(parts[0], parts[0])
        for mark in parts[1:]:
            accent = _LATEX_ACCENTS.get(mark)
            if accent is not None:
                base = f"\\{accent}{{{base}}}"
        return base
    compat = unicodedata.normalize("NFKC", ch)  # full-width letters, ligatures, superscripts
    if compat != ch and compat.isascii():
        return latex_escape(compat)
    return f"[U+{ord(ch):04X}]"


# definitions a table fragment carries for what it uses, so it compiles in any document: booktabs rules fall back
# to plain ones, the better / worse marks to kernel triangles (amssymb's filled ones when the document loads it)
_LATEX_DEFINITIONS = {
    r"\toprule": r"\providecommand{\toprule}{\hline}",
    r"\midrule": r"\providecommand{\midrule}{\hline}",
    r"\bottomrule": r"\providecommand{\bottomrule}{\hline}",
    r"\cmidrule": r"\ifdefined\cmidrule\else\def\cmidrule(#1)#2{\cline{#2}}\fi",
    r"\EmbSup": r"\providecommand{\EmbSup}{\ensuremath{\ifdefined\blacktriangle\blacktriangle\else\bigtriangleup\fi}}",
    r"\EmbSdown": r"\providecommand{\EmbSdown}{\ensuremath{\ifdefined\blacktriangledown\blacktriangledown"
                  r"\else\bigtriangledown\fi}}",
}


def latex_fragment(body: str) -> str:
    """``body`` preceded by the definitions of the macros it uses that a bare document lacks (booktabs rules, the
    ▲ ▼ marks): the fragment compiles with plain pdflatex, and with booktabs / amssymb loaded it uses them."""
    head = [definition for macro, definition in _LATEX_DEFINITIONS.items() if macro in body]
    note = "% EMB-S export: compiles with plain pdflatex; uses booktabs and amssymb when the document loads them"
    return "\n".join([note, *head, body]) if head else body


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


#: columns holding p-values: below 10^-digits they read "< 0.0001", never 0.0000 or 1.455e-11
P_VALUE_COLUMNS = frozenset({"p_value", "p_adjusted", "p", "p-value", "corrected p"})
MISSING = "–"


def format_value(v: Any, column: object = None, digits: int = 4) -> str | None:
    """The one formatter of a table cell for people (Markdown, LaTeX, the dashboard's tables): floats to ``digits``
    decimals (a p-value below 10^-digits as ``< 0.0001``), counts as integers, booleans yes/no; None marks a missing
    value (each format writes its own dash)."""
    if v is None or v is pd.NA or (isinstance(v, (float, np.floating)) and math.isnan(v)):
        return None
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    if isinstance(v, (float, np.floating)):
        if column is not None and _is_count(column) and float(v).is_integer():
            return str(int(v))
        if column in P_VALUE_COLUMNS and 0 <= v < 10 ** -digits:
            return f"< {10 ** -digits:.{digits}f}"
        text = f"{v:.{digits}f}"
        return text[1:] if text.startswith("-") and float(text) == 0 else text  # never "-0.0000"
    return str(v)


def display_frame(df: pd.DataFrame, digits: int = 4) -> pd.DataFrame:
    """``df`` as the dashboard shows it: float columns and columns with missing values written by
    :func:`format_value` (missing as ``–``), other columns as they are, so no table shows ``None``, ``nan`` or
    ``0.00000000001``. Values stay in the analysis frames; this is for display only."""
    out = df.copy()
    for col in df.columns:
        s = df[col]
        if pd.api.types.is_float_dtype(s) or (s.isna().any() and not pd.api.types.is_bool_dtype(s)):
            out[col] = [MISSING if t is None else t for t in (format_value(v, col, digits) for v in s)]
    return out


def _markdown_escape(text: str) -> str:
    """Markdown's inline markup characters backslash-escaped, so a run or tag name prints as written."""
    return "".join("\\" + ch if ch in "\\`*_{}[]<>|~" else ch for ch in text.replace("\n", " "))


def _markdown(columns: list[str], cells: list[list[str | None]], numeric: list[bool]) -> str:
    def esc(s: str | None) -> str:
        return MISSING if s is None else s.replace("|", "\\|").replace("\n", " ")

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


def figure_to(fig, fmt: str, *, scale: float = 2.0, opts=None) -> bytes:
    """One figure as bytes in ``fmt`` (png, svg, pdf, html). HTML is self-contained (plotly.js inlined: offline).

    ``opts`` (``figures.layout.Layout``): width, height, font size and title of the file. Static files draw heatmap
    cells as vector rectangles (``figures.vector``): plotly paints heatmaps as a bitmap, which a paper's PDF must
    not carry."""
    from emb_s_core.figures import layout, vector

    fmt = _figure_format(fmt)
    if opts is not None:
        fig = layout.apply(fig, opts)
    if fmt == "html":
        return fig.to_html(full_html=True, include_plotlyjs=True).encode("utf-8")
    _require_browser()
    fig = vector.vector_cells(fig)
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


def figures_to_files(items: Iterable[tuple[object, str | Path]], opts=None) -> list[Path]:
    """Write many (figure, path) pairs; the format comes from each path's suffix; one browser for the batch;
    ``opts`` (``figures.layout.Layout``) sizes every file."""
    items = [(fig, Path(p)) for fig, p in items]
    for _, p in items:
        _figure_format(p.suffix)
    static = [it for it in items if it[1].suffix.lower() != ".html"]
    written: list[Path] = []

    def write_all() -> None:
        for fig, p in items:
            p.parent.mkdir(parents=True, exist_ok=True)
            data = figure_to(fig, p.suffix, opts=opts)
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
