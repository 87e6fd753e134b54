"""``emb-s leaderboard`` and ``emb-s notes`` on a real small workspace (bank, ladder, five stored runs)."""
from __future__ import annotations

import io
import json

import pandas as pd
import pytest

from emb_s_core.cli import main
from emb_s_core.store import Workspace
from testkit.dashboard_factory import build_workspace


@pytest.fixture(scope="module")
def ws_dir(tmp_path_factory):
    return build_workspace(tmp_path_factory.mktemp("lbcli"), n_queries=18, n_docs=150)


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_text_table_with_the_correction_under_it(ws_dir, capsys):
    code, out, _ = run(capsys, "leaderboard", "-w", ws_dir, "--baseline", "overlap", "--metric", "MRR",
                       "--n-boot", "50", "--n-resamples", "500")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split()[:2] == ["run", "vs"] and "full" in lines[0]
    assert lines[-1].startswith("Cells: mean MRR") and "Holm (step-down" in lines[-1]
    assert "baseline overlap" in lines[-1]
    body = {ln.split()[0]: ln for ln in lines[2:7]}
    assert set(body) == {"overlap", "overlap-idf", "overlap-idf2", "longctx", "partial"}
    assert "baseline" in body["overlap"] and "–" in body["longctx"]  # does not fit: no score, never a zero


def test_csv_json_markdown_latex(ws_dir, capsys, tmp_path):
    code, out, err = run(capsys, "leaderboard", "-w", ws_dir, "--baseline", "overlap-idf", "--correction",
                         "bonferroni", "--format", "csv", "--long", "--n-boot", "20", "--n-resamples", "200")
    assert code == 0 and "Bonferroni" in err
    df = pd.read_csv(io.StringIO(out))
    assert {"run", "scale", "p_value", "p_adjusted", "verdict"} <= set(df.columns)
    tested = df.dropna(subset=["p_value"])
    m = len(tested)
    assert (tested["p_adjusted"] >= tested["p_value"] - 1e-12).all()
    assert (tested["p_adjusted"].round(12) == (tested["p_value"] * m).clip(upper=1).round(12)).all()
    code, out, _ = run(capsys, "leaderboard", "-w", ws_dir, "--baseline", "overlap", "--format", "markdown",
                       "--correction", "none", "--n-boot", "20", "--n-resamples", "200")
    assert out.startswith("| run | vs baseline |") and "none (each test alone)" in out
    code, _, err = run(capsys, "leaderboard", "-w", ws_dir, "--baseline", "overlap", "--out", tmp_path / "lb.tex",
                       "--n-boot", "20", "--n-resamples", "200", "--runs", "overlap,partial")
    tex = (tmp_path / "lb.tex").read_text()
    assert code == 0 and r"\begin{tabular}" in tex and "Holm" in tex and "wrote 2 rows" in err
    code, out, _ = run(capsys, "leaderboard", "-w", ws_dir, "--baseline", "overlap", "--format", "json",
                       "--sort", "full", "--ascending", "--n-boot", "20", "--n-resamples", "200")
    rows = json.loads(out)
    values = [float(r["full"].split()[0]) for r in rows if r["full"] != "–"]
    assert values == sorted(values) and len(values) == 4 and rows[-1]["run"] == "longctx"  # no score: last


def test_filters_and_tags_narrow_the_queries(ws_dir, capsys):
    base = ["leaderboard", "-w", ws_dir, "--baseline", "overlap", "--format", "json", "--long", "--x", "rung",
            "--n-boot", "10", "--n-resamples", "100"]
    full = json.loads(run(capsys, *base)[1])
    n_full = max(r["n"] for r in full if r["rung"] == "full")
    multi = json.loads(run(capsys, *base, "--sources", "multi")[1])
    assert 0 < max(r["n"] for r in multi if r["rung"] == "full") < n_full
    assert run(capsys, "notes", "add", "q0001", "--tag", "look again", "-w", ws_dir)[0] == 0
    assert run(capsys, "notes", "add", "q0002", "--tag", "look again", "--text", "HN wins",
               "--run", "overlap", "--rung", "full", "-w", ws_dir)[0] == 0
    tagged = json.loads(run(capsys, *base, "--tag", "look again")[1])
    assert max(r["n"] for r in tagged if r["rung"] == "full") == 2
    code, out, _ = run(capsys, "notes", "list", "-w", ws_dir, "--tag", "look again", "--json")
    listed = json.loads(out)
    assert code == 0 and [r["qid"] for r in listed] == ["q0001", "q0002"] and listed[1]["text"] == "HN wins"
    code, out, _ = run(capsys, "notes", "tags", "-w", ws_dir)
    assert "look again" in out and " 2 " in out
    code, _, err = run(capsys, "leaderboard", *base[1:], "--tag", "nobody")
    assert code == 2 and "no query matches the filters" in err


def test_notes_export_and_delete(ws_dir, capsys, tmp_path):
    run(capsys, "notes", "add", "q0003", "--tag", "a", "--tag", "b", "--text", "| pipes | and *stars*", "-w", ws_dir)
    code, _, err = run(capsys, "notes", "export", "-w", ws_dir, "--out", tmp_path / "n.csv", "--tag", "b")
    df = pd.read_csv(tmp_path / "n.csv")
    assert code == 0 and df["qid"].tolist() == ["q0003"] and df["tags"].tolist() == ["a, b"]
    assert df["text"].tolist() == ["| pipes | and *stars*"]
    assert run(capsys, "notes", "delete", "q0003", "-w", ws_dir)[0] == 0
    code, _, err = run(capsys, "notes", "delete", "q0003", "-w", ws_dir)
    assert code == 2 and "no note on case" in err


@pytest.mark.parametrize("argv, message", [
    (["leaderboard", "--baseline", "nobody"], "no run named 'nobody'"),
    (["leaderboard", "--runs", "overlap,nobody"], "no run named 'nobody'"),
    (["leaderboard", "--metric", "SR@K"], "unknown metric 'SR@K'"),
    (["leaderboard", "--sort", "3M"], "cannot sort the leaderboard by '3M'"),
    (["leaderboard", "--alpha", "0"], "strictly between 0 and 1"),
    (["leaderboard", "--out", "board.xlsx"], "cannot tell the table format"),
    (["notes", "add", "nope", "--tag", "x"], "no query 'nope'"),
    (["notes", "add", "q0001", "--tag", "a,b"], "has a comma"),
    (["notes", "add", "q0001"], "nothing to add"),
])
def test_user_errors_are_one_line_and_exit_2(ws_dir, capsys, argv, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    before = Workspace(ws_dir).version
    code, _, err = run(capsys, *argv, "-w", ws_dir, "--n-boot", "5") if argv[0] == "leaderboard" else \
        run(capsys, *argv, "-w", ws_dir)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1
    assert Workspace(ws_dir).version == before


def test_report_by_tag(ws_dir, capsys):
    run(capsys, "notes", "add", "q0004", "--tag", "by-tag-a", "-w", ws_dir)
    run(capsys, "notes", "add", "q0005", "--tag", "by-tag-a", "--tag", "by-tag-b", "--rung", "full", "-w", ws_dir)
    code, out, _ = run(capsys, "report", "-w", ws_dir, "--by", "tag", "--metrics", "MRR", "--runs", "overlap",
                       "--format", "json", "--n-boot", "10")
    rows = [r for r in json.loads(out) if r["rung"] == "full"]
    n = {r["tag"]: r["n"] for r in rows}
    assert code == 0 and n["by-tag-a"] == 2 and n["by-tag-b"] == 1
    assert n["(untagged)"] + sum(v for k, v in n.items() if k != "(untagged)") >= 18
