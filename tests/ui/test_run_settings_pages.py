"""Issue 32: a run's model prompts (and half precision) are part of the run, so every view that shows the run says
them: Overview, Compare, Leaderboard (its legend), the drill-down, and the CLI's compare, leaderboard and paper
table. The run is the dashboard workspace's ``overlap`` with a stored configuration that names prompts, as a run of
an E5 model with its prefixes stores it; a run without prompts gets no line."""
from __future__ import annotations

import json
import shutil

import pyarrow as pa
import pytest

from emb_s_core import runs
from emb_s_core.store import Workspace
from test_dashboard_pages import assert_clean, run_page
from test_partial_pages import texts

pytestmark = pytest.mark.timeout(180)

LINE = "run 'overlap' ran its model with query 'query: ', document 'passage: ' (preset e5)"


@pytest.fixture
def prompted(dash_ws, monkeypatch, tmp_path):
    """A copy of the dashboard workspace whose run ``overlap`` stored e5's prompts in its configuration."""
    monkeypatch.setenv("EMB_S_DATA", str(tmp_path))
    shutil.copytree(dash_ws, tmp_path / "p")
    ws = Workspace(tmp_path / "p")
    table = ws.read("runs")
    rows = table.to_pylist()
    for row in rows:
        if row["run"] == "overlap":
            cfg = json.loads(row["config"])
            cfg.setdefault("retriever", {}).update(query_prompt="query: ", document_prompt="passage: ", prompt_source="preset e5")
            row["config"] = json.dumps(cfg)
    with ws.transaction():
        ws.write("runs", pa.Table.from_pylist(rows, schema=table.schema), mode="overwrite")
    assert runs.prompt_summary(runs.get_run(Workspace(ws.path), "overlap")["config"]).startswith("query 'query: '")
    return tmp_path / "p"


@pytest.mark.parametrize("page, params", [
    ("2_Overview.py", {"runs": "overlap,overlap-idf"}),
    ("4_Compare.py", {"a": "overlap", "b": "overlap-idf", "x": "rung"}),
    ("8_Leaderboard.py", {"runs": "overlap,overlap-idf", "base": "overlap-idf"}),
    ("3_Query_drilldown.py", {"run": "overlap"}),
])
def test_pages_say_how_the_run_ran_its_model(prompted, page, params):
    at = run_page(page, {"ws": str(prompted), **params})
    assert_clean(at)
    shown = texts(at)
    assert LINE in shown, shown[:2000]
    assert "run 'overlap-idf' ran its model" not in shown


def test_cli_outputs_say_it_too(prompted, capsys):
    from emb_s_core.cli import main

    ws = str(prompted)
    for argv in (["compare", "overlap", "overlap-idf", "-w", ws], ["leaderboard", "-w", ws],
                 ["report", "-w", ws, "--paper-table"]):
        capsys.readouterr()
        assert main(argv) == 0, argv
        out = capsys.readouterr()
        assert LINE in out.out + out.err, (argv, (out.out + out.err)[-1500:])
