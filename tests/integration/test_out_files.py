"""Every ``--out`` of every command writes its file and keeps the table off stdout (issue 31 §5: `report --illusion
--out FILE` printed to stdout and wrote nothing)."""
from __future__ import annotations

import json

import pytest

from emb_s_core import bank, evaluate, twin
from emb_s_core.cli import main
from testkit.retrieval_bank import copy_workspace, template


@pytest.fixture(scope="module")
def ws(tmp_path_factory):
    ws = copy_workspace(template(tmp_path_factory), tmp_path_factory.mktemp("out") / "ws")
    twin.build(ws, top_n=3)
    evaluate.evaluate(ws, "bm25", name="bm25", k=5, ladder="both")
    evaluate.evaluate(ws, "dense:minilm-l3", name="dense", k=5)
    qid = bank.queries(ws)["qid"].iloc[0]
    assert main(["notes", "add", qid, "--tag", "look", "--text", "a note", "--workspace", str(ws.path)]) == 0
    return ws


def _commands(w: str, rung: str) -> dict[str, list[str]]:
    """Every command with an --out, keyed by the file name it writes (the suffix picks the format)."""
    return {
        "report.csv": ["report", "-w", w, "--metrics", "SR@10", "--n-boot", "20"],
        "report.md": ["report", "-w", w, "--metrics", "SR@10", "--n-boot", "20"],
        "wide.csv": ["report", "-w", w, "--metrics", "SR@10", "--wide"],
        "paper.tex": ["report", "-w", w, "--paper-table"],
        "illusion.json": ["report", "-w", w, "--illusion", "--n-boot", "50"],
        "illusion.md": ["report", "-w", w, "--illusion", "--n-boot", "50"],
        "illusion.tex": ["report", "-w", w, "--illusion", "--n-boot", "50"],
        "illusion.csv": ["report", "-w", w, "--illusion", "--n-boot", "50"],
        "board.md": ["leaderboard", "-w", w, "--baseline", "bm25", "--n-boot", "20", "--n-resamples", "200"],
        "heatmap.html": ["figure", "heatmap", "-w", w],
        "cases.csv": ["cases", "export", "-w", w, "--run", "bm25", "--rung", rung],
        "notes.json": ["notes", "export", "-w", w],
    }


def test_every_out_writes_its_file_and_prints_no_table(ws, tmp_path, capsys):
    for name, args in _commands(str(ws.path), "full").items():
        path = tmp_path / name
        capsys.readouterr()
        assert main([*args, "--out", str(path)]) == 0, name
        out, err = capsys.readouterr()
        assert path.is_file() and path.stat().st_size > 0, name
        assert "|" not in out and "," not in out.replace(", ", ""), (name, out[:300])  # no table on stdout
        assert str(path) in err or name.endswith(".html") or name.startswith(("cases", "notes")), (name, err)
    gap = json.loads((tmp_path / "illusion.json").read_text(encoding="utf-8"))
    assert gap["gap"] and gap["references"]["retrievers"] == ["bm25"] and gap["effective_scale"]
    md = (tmp_path / "illusion.md").read_text(encoding="utf-8")
    assert "illusion gap" in md and "benign twin references" in md and "effective scale" in md
    csv = (tmp_path / "illusion.csv").read_text(encoding="utf-8").splitlines()
    assert csv[0].startswith("run,rung,metric,benign,adversarial,gap") and "twin references" in csv[0]
    assert "\\begin{tabular}" in (tmp_path / "illusion.tex").read_text(encoding="utf-8")


def test_out_into_a_missing_folder_is_a_clear_error(ws, tmp_path, capsys):
    assert main(["report", "-w", str(ws.path), "--illusion", "--n-boot", "20",
                 "--out", str(tmp_path / "nope" / "x.json")]) == 2
    err = capsys.readouterr().err.strip()
    assert "the output folder does not exist" in err and len(err.splitlines()) == 1
