"""Long steps report from their first second, in honest units: every stage of a real evaluation opens at 0.0 and
ends at 1.0, counted stages parse back into (total, unit), and the CLI draws them in those units."""
from __future__ import annotations

import io

from emb_s_core import evaluate, ladder
from emb_s_core.cli.common import ProgressBars
from emb_s_core.progress import counted, units
from testkit.retrieval_bank import copy_workspace, template


def test_counted_stages_round_trip():
    stage = counted("embedding", 4858, "documents", "st:all-MiniLM-L6-v2")
    assert stage == "embedding 4,858 documents (st:all-MiniLM-L6-v2)" and units(stage) == (4858, "documents")
    assert units(counted("ranking", 3000, "(rung, query) pairs")) == (3000, "(rung, query) pairs")
    assert units("loading dense:minilm-l6") is None and units("ranking") is None
    assert units("evaluating bm25: " + counted("ranking", 12, "(rung, query) pairs")) == (12, "(rung, query) pairs")


def test_every_stage_of_an_evaluation_opens_at_zero_and_closes_at_one(tmp_path_factory, tmp_path):
    ws = copy_workspace(template(tmp_path_factory), tmp_path / "ws")
    events: list[tuple[str, float]] = []
    evaluate.evaluate(ws, "bm25", k=5, batch_size=8, progress=lambda s, f: events.append((s, f)))
    stages = list(dict.fromkeys(s for s, _ in events))
    assert stages[0] == "loading bm25" and stages[1].startswith("indexing ") and stages[2].startswith("ranking ")
    for stage in stages:
        seen = [f for s, f in events if s == stage]
        assert seen[0] == 0.0 and seen[-1] == 1.0 and seen == sorted(seen), stage
    pairs = sum(len(r.qids) for r in ladder.load(ws).rungs)
    assert units(stages[2]) == (pairs, "(rung, query) pairs")
    assert len([f for s, f in events if s == stages[2]]) > 2  # it moves in between, batch by batch


def test_cli_bars_use_the_stage_units(monkeypatch):
    err = io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    import sys

    assert ProgressBars().enabled == sys.stderr.isatty()  # piped: nothing drawn, an error stays one line
    bars = ProgressBars(enabled=True)
    bars("embedding 200 documents (minilm)", 0.0)
    bars("embedding 200 documents (minilm)", 0.5)
    bars("loading x", 1.0)
    bars.close()
    text = err.getvalue()
    assert "100/200" in text and "documents" in text and "loading x" in text and "100/100" in text
