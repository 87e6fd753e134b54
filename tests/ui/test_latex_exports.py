"""Issue 30 §5: every LaTeX export (tables of every page's downloads, the Leaderboard, the paper's Table 3, ``emb-s
report / compare / leaderboard / notes export``) is ASCII and compiles with plain pdflatex (Debian
texlive-latex-base: no booktabs) where pdflatex is installed; and tables show no raw None or 1e-11 numbers."""
from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from conftest import REPO
from emb_s_core import export
from emb_s_core.cli import main

pytestmark = pytest.mark.timeout(300)
PDFLATEX = shutil.which("pdflatex")
HOSTILE = "≥ ▲ ▼ α Δ – — … é ñ ü ß Ø 日本 ∞ µ « » \\ & % $ # _ { } ~ ^ < > | -- `x` \"q\" \u00a0 \t line\nbreak"


def compiles(tex: str, tmp_path, name: str = "t") -> None:
    """``tex`` is ASCII; where pdflatex exists, it compiles when \\input into a bare article, and into one that
    loads amssymb (whose filled triangles the marks then use)."""
    assert tex.isascii(), [ch for ch in tex if not ch.isascii()][:5]
    if PDFLATEX is None:
        return
    (tmp_path / f"{name}.tex").write_text(tex, encoding="ascii")
    for preamble in ("", r"\usepackage{amssymb}"):
        doc = tmp_path / f"doc_{name}.tex"
        doc.write_text("\\documentclass{article}\n" + preamble + "\n\\begin{document}\n\\input{" + name + "}\n"
                       "\\end{document}\n", encoding="ascii")
        done = subprocess.run([PDFLATEX, "-interaction=nonstopmode", "-halt-on-error", doc.name], cwd=tmp_path,
                              capture_output=True, text=True, timeout=120)
        log = (tmp_path / f"doc_{name}.log").read_text(errors="replace")
        assert done.returncode == 0, log[log.find("\n!"):][:800]


def test_any_text_becomes_ascii_latex_that_compiles(tmp_path):
    df = pd.DataFrame({"run": [HOSTILE, "bm25_v1"], "value": [0.5, np.nan], "p_value": [1.455e-11, 0.5],
                       "n": [10, 0], "ok": [True, False]})
    tex = export.table_to(df, "latex", note=HOSTILE)
    compiles(tex, tmp_path)
    assert r"$\geq$" in tex and r"\EmbSup{}" in tex and r"$\alpha$" in tex and r"\'{e}" in tex
    assert "[U+65E5]" in tex and r"\textless{}" in tex and "-{}-" in tex  # no byte pdflatex stops on
    assert "< 0.0001" not in tex and r"\textless{} 0.0001" in tex  # a p-value below 1e-4, never 0.0000


def test_the_one_formatter():
    f = export.format_value
    assert f(1.455e-11, "p_value") == "< 0.0001" and f(0.03125, "p_value") == "0.0312"
    assert f(None) is None and f(float("nan")) is None and f(pd.NA) is None
    assert f(310.0, "n") == "310" and f(-0.00001, "delta") == "0.0000" and f(True) == "yes"
    shown = export.display_frame(pd.DataFrame({"run": ["a", None], "value": [0.1 + 0.2, np.nan],
                                               "p_value": [1e-11, 0.5], "n": [3, 4]}))
    assert shown["value"].tolist() == ["0.3000", "–"] and shown["run"].tolist() == ["a", "–"]
    assert shown["p_value"].tolist() == ["< 0.0001", "0.5000"] and shown["n"].tolist() == [3, 4]


def _downloads_of(at_downloads: dict, suffix: str) -> dict[str, str]:
    return {name: (call() if callable(call) else call).decode("utf-8")
            for name, call in at_downloads.items() if name and name.endswith(suffix)}


def test_page_latex_downloads_compile(app_env, downloads, tmp_path):
    pages = [("8_Leaderboard.py", {"detail": "1"}), ("2_Overview.py", {"paper": "1", "x": "rung"}),
             ("4_Compare.py", {"a": "overlap", "b": "overlap-idf"})]
    for page, params in pages:
        at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
        at.query_params["ws"] = str(app_env)
        for k, v in params.items():
            at.query_params[k] = v
        at.switch_page(f"pages/{page}")
        at.run()
        assert not at.exception, (page, [e.message for e in at.exception])
        for el in at.dataframe:  # what the tables show: never a raw None / NaN, never 0.00000000001
            for value in el.value.astype(str).to_numpy().ravel():
                assert value not in ("None", "nan", "<NA>") and not (len(value) > 12 and value[:2] in ("0.", "1e")), \
                    (page, value)
    tex = _downloads_of(downloads, ".tex")
    assert {"paper_table.tex"} <= set(tex) and any(n.startswith("leaderboard") for n in tex)
    for i, (name, text) in enumerate(sorted(tex.items())):
        compiles(text, tmp_path, f"d{i}")
    board = next(t for n, t in tex.items() if n.startswith("leaderboard"))
    assert r"\EmbSup" in board or r"\EmbSdown" in board  # the marks survive as macros


def test_cli_latex_exports_compile(dash_ws, tmp_path, capsys):
    ws = str(dash_ws)
    commands = {
        "leaderboard": ["leaderboard", "-w", ws, "--format", "latex", "--n-boot", "50", "--n-resamples", "200"],
        "leaderboard_detail": ["leaderboard", "-w", ws, "--detail", "--x", "rung", "--format", "latex",
                               "--n-boot", "50", "--n-resamples", "200"],
        "report": ["report", "-w", ws, "--format", "latex", "--n-boot", "50", "--metrics", "SR@10,R@1"],
        "report_wide": ["report", "-w", ws, "--wide", "--format", "latex"],
        "compare": ["compare", "-w", ws, "overlap", "overlap-idf", "--format", "latex", "--n-resamples", "200"],
        "paper": ["report", "--paper-table", "-w", ws, "--format", "latex"],
    }
    for name, argv in commands.items():
        capsys.readouterr()
        assert main(argv) == 0, name
        compiles(capsys.readouterr().out, tmp_path, name)
    out = tmp_path / "board.tex"
    assert main(["leaderboard", "-w", ws, "--out", str(out), "--n-boot", "50", "--n-resamples", "200"]) == 0
    compiles(out.read_text(), tmp_path, "board_file")


@pytest.mark.skipif(PDFLATEX is None, reason="pdflatex not installed (apt-get install -y texlive-latex-base)")
def test_pdflatex_is_really_exercised(tmp_path):
    """Where pdflatex exists the compile check is not vacuous: raw Unicode stops it."""
    (tmp_path / "bad.tex").write_text("\\documentclass{article}\\begin{document}\u25b2\\end{document}\n")
    done = subprocess.run([PDFLATEX, "-interaction=nonstopmode", "-halt-on-error", "bad.tex"], cwd=tmp_path,
                          capture_output=True, timeout=120)
    assert done.returncode != 0


def test_notes_export_to_latex_compiles(dash_ws, tmp_path):
    """`emb-s notes export` writes .tex through the same table writer: a note in any script still compiles."""
    copy = tmp_path / "ws"
    shutil.copytree(dash_ws, copy)
    assert main(["notes", "add", "q0000", "--tag", "≥ full_α", "--text", "gold < near miss & 50% — ▲ ñ 日本",
                 "-w", str(copy)]) == 0
    out = tmp_path / "notes.tex"
    assert main(["notes", "export", "-w", str(copy), "--out", str(out)]) == 0
    tex = out.read_text()
    assert r"$\geq$ full\_$\alpha$" in tex
    compiles(tex, tmp_path, "notes")
