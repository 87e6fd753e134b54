"""Export for papers and spreadsheets: tables to CSV / JSON / Markdown / LaTeX (figure export lives here too).

Tables are written by hand rather than through ``DataFrame.to_markdown`` / ``Styler.to_latex`` so that no optional
dependency (tabulate, jinja2) decides whether a report can be written, and so LaTeX escaping is ours to test.
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from emb_s_core.errors import EmbSError

TABLE_FORMATS = ("csv", "json", "markdown", "latex")
_SUFFIX_FORMAT = {".csv": "csv", ".json": "json", ".md": "markdown", ".markdown": "markdown", ".tex": "latex",
                  ".latex": "latex"}
_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                  "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


# ------------------------------------------------------------------------------------------- tables
def table_to(df: pd.DataFrame, fmt: str, digits: int = 4) -> str:
    """``df`` as text in ``fmt`` (csv, json, markdown, latex). Floats keep full precision in csv/json and are
    rounded to ``digits`` decimals in the typeset formats; NaN is empty (csv), null (json) or an en dash."""
    fmt = _check_format(fmt)
    if fmt == "csv":
        return df.to_csv(index=False)
    if fmt == "json":
        records = [{k: _json_value(v) for k, v in row.items()} for row in df.to_dict("records")]
        return json.dumps(records, indent=2, ensure_ascii=False) + "\n"
    cells = [[_cell(v, digits) for v in row] for row in df.itertuples(index=False)]
    numeric = [pd.api.types.is_numeric_dtype(df[c]) and not pd.api.types.is_bool_dtype(df[c]) for c in df.columns]
    if fmt == "markdown":
        return _markdown([str(c) for c in df.columns], cells, numeric)
    return _latex([str(c) for c in df.columns], cells, numeric)


def write_table(df: pd.DataFrame, path: str | Path, fmt: str | None = None, digits: int = 4) -> Path:
    """Write ``df`` to ``path``; the format comes from ``fmt`` or else the suffix (.csv .json .md .tex)."""
    path = Path(path)
    if fmt is None:
        fmt = _SUFFIX_FORMAT.get(path.suffix.lower())
        if fmt is None:
            raise EmbSError(f"cannot tell the table format from the file name {path.name!r}",
                            where=str(path), fix="end it in .csv, .json, .md or .tex, or pass --format.")
    text = table_to(df, fmt, digits)
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
    if v is None or (isinstance(v, (float, np.floating)) and math.isnan(v)):
        return None
    if isinstance(v, (float, np.floating)):
        return f"{v:.{digits}f}"
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    return str(v)


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
