"""Long steps report from their first second, in honest units: every stage of a real evaluation opens at 0.0 and
ends at 1.0, counted stages parse back into (total, unit), and the CLI draws them in those units."""
from __future__ import annotations

import io

import pytest

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


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_meter_measures_the_current_step_only():
    from emb_s_core.progress import Meter

    clock = FakeClock()
    meter = Meter(clock)
    clock.now += 500  # an earlier step's time is not this step's
    stage = counted("embedding", 1000, "documents", "minilm")
    assert meter.update(stage, 0.0)
    clock.now += 20  # loading the model: no work done yet, no rate yet
    assert "rate not measured yet" in meter.describe() and "20 s in this step" in meter.describe()
    meter.update(stage, 0.1)
    clock.now += 10
    assert not meter.update(stage, 0.3)  # 200 documents in 10 s
    assert meter.rate() == pytest.approx(0.02) and meter.eta() == pytest.approx(35.0)
    text = meter.describe()
    assert text == "300 of 1,000 documents, 20.0 documents/s, about 35 s left, 30 s in this step", text
    clock.now += 5  # between reports the ETA counts down
    assert meter.eta() == pytest.approx(30.0)
    assert meter.update("ranking 10 (rung, query) pairs", 0.0) and meter.elapsed == 0.0


def test_progress_lines_at_a_steady_interval_with_units_rate_and_eta():
    from emb_s_core.progress import ProgressLines

    clock, lines = FakeClock(), []
    log = ProgressLines(lines.append, interval=10.0, clock=clock)
    stage = counted("embedding", 600, "documents", "minilm")
    log(stage, 0.0)
    clock.now += 3
    log(stage, 0.05)
    assert lines == []  # within the first interval: nothing (an early error stays one line)
    for _ in range(6):  # a silent step: the timer's ticks keep the log alive, one line per interval
        clock.now += 5
        log.tick()
    assert len(lines) == 3 and all(line.startswith("embedding 600 documents (minilm): 30 of 600 documents")
                                   for line in lines)
    log(stage, 0.5)  # 270 more documents: 300 in the 40 s since the first work done
    clock.now += 10
    log(stage, 0.55)
    assert lines[-1] == ("embedding 600 documents (minilm): 330 of 600 documents, 7.5 documents/s, "
                         "about 36 s left, 43 s in this step"), lines[-1]
    n = len(lines)
    log(stage, 1.0)  # a stage that was shown gets its closing line, once
    log.tick()
    clock.now += 60
    log.tick()
    assert len(lines) == n + 1 and "600 of 600 documents" in lines[-1] and "done" in lines[-1]
    log("next step", 0.0)  # the last line is a minute old: the next stage is shown at once, and its end
    log("next step", 0.5)
    log("next step", 1.0)
    assert lines[n + 1:] == ["next step: 0%, rate not measured yet, 0 s in this step", "next step: 100%, done, 0 s in this step"]


def test_cli_prints_progress_lines_when_stderr_is_a_file(tmp_path):
    """A real process whose stderr is a file (``> log 2>&1``, nohup, CI) shows life at a steady interval."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    code = ("import time\nfrom emb_s_core.cli.common import ProgressBars\nbars = ProgressBars()\n"
            "bars('embedding 40 documents (m)', 0.0)\nfor i in range(1, 9):\n    time.sleep(0.3)\n"
            "    bars('embedding 40 documents (m)', i / 10)\ntime.sleep(1.0)\n"  # a silent second: the timer ticks
            "bars('embedding 40 documents (m)', 1.0)\nbars.close()\n")
    log = tmp_path / "log"
    with open(log, "w") as f:
        subprocess.run([sys.executable, "-c", code], cwd=repo, stderr=f, timeout=60, check=True,
                       env=dict(os.environ, PYTHONPATH=str(repo), EMB_S_PROGRESS_INTERVAL="0.5"))
    lines = log.read_text().splitlines()
    assert len(lines) >= 4 and "\r" not in log.read_text(), lines
    assert all(line.startswith("embedding 40 documents (m): ") for line in lines)
    assert "documents/s" in lines[-2] and "left" in lines[-2] and "in this step" in lines[-2]
    assert lines[-1].startswith("embedding 40 documents (m): 40 of 40 documents") and "done" in lines[-1]
