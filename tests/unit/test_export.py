"""Tables to CSV / JSON / Markdown / LaTeX: escaping, missing values, format from the file suffix."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from emb_s_core import export
from emb_s_core.errors import EmbSError

DF = pd.DataFrame({"run": ["bm25_v1", "dense&co"], "rung": ["64K/law", "full"], "metric": ["SR@10", "FR@10"],
                   "value": [0.123456, np.nan], "n": [10, 0]})


def test_csv_and_json_keep_precision_and_nan():
    csv = export.table_to(DF, "csv")
    assert csv.splitlines()[1] == "bm25_v1,64K/law,SR@10,0.123456,10"
    assert csv.splitlines()[2].endswith("FR@10,,0")
    rows = json.loads(export.table_to(DF, "json"))
    assert rows[0]["value"] == 0.123456 and rows[1]["value"] is None and rows[1]["n"] == 0


def test_markdown_alignment_and_rounding():
    md = export.table_to(DF, "markdown").splitlines()
    assert md[0] == "| run | rung | metric | value | n |"
    assert md[1] == "|---|---|---|---:|---:|"
    assert md[2] == "| bm25_v1 | 64K/law | SR@10 | 0.1235 | 10 |"
    assert md[3] == "| dense&co | full | FR@10 | – | 0 |"


def test_latex_escapes_special_characters():
    tex = export.table_to(DF, "latex")
    assert r"bm25\_v1" in tex and r"dense\&co" in tex and r"\begin{tabular}{lllrr}" in tex
    assert r"0.1235 & 10 \\" in tex and r"-- & 0 \\" in tex
    assert export.latex_escape(r"50% of $x_1$ {a}~^\ #") == (
        r"50\% of \$x\_1\$ \{a\}\textasciitilde{}\textasciicircum{}\textbackslash{} \#")


def test_write_table_format_from_suffix(tmp_path):
    for suffix, marker in ((".csv", "run,rung"), (".md", "| run |"), (".tex", r"\toprule"), (".json", '"run"')):
        path = export.write_table(DF, tmp_path / f"t{suffix}")
        assert marker in path.read_text()
    with pytest.raises(EmbSError, match="cannot tell the table format"):
        export.write_table(DF, tmp_path / "t.xlsx")
    with pytest.raises(EmbSError, match="output folder does not exist"):
        export.write_table(DF, tmp_path / "nope" / "t.csv")
    with pytest.raises(EmbSError, match="unknown table format 'html'"):
        export.table_to(DF, "html")
    assert not list(tmp_path.glob("*.tmp"))


def test_counts_are_integers_even_in_float_columns():
    df = pd.DataFrame({"run": ["a", "b"], "value": [1.0, 0.5], "n": [310.0, np.nan], "n_ok": [3.0, 4.0],
                       "ci_low": [0.1, np.nan]})
    csv = export.table_to(df, "csv").splitlines()
    assert csv[1] == "a,1.0,310,3,0.1" and csv[2] == "b,0.5,,4,"
    tex = export.table_to(df, "latex")
    assert "a & 1.0000 & 310 & 3 & 0.1000" in tex and "310.0" not in tex
    assert '"n": 310' in export.table_to(df, "json") and '"n": null' in export.table_to(df, "json")
    odd = pd.DataFrame({"n": [1.5]})  # not a whole number: left as it is
    assert export.table_to(odd, "csv").splitlines()[1] == "1.5"
