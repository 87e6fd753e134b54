"""The first start: the server itself starts the demo build, so results exist before anyone opens the page."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from emb_s_core import runs
from emb_s_core.store import Workspace

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _bm25_results(path: Path) -> int:
    """Committed bm25 results of the demo workspace (0 while it or the run does not exist yet)."""
    if not (path / "workspace.json").is_file():
        return 0
    try:
        ws = Workspace(path)
        if "bm25" not in set(runs.list_runs(ws)["run"]):
            return 0
        return len(runs.load_results(ws, runs=["bm25"]))
    except Exception:  # noqa: BLE001 - a table not written yet: look again
        return 0


def test_the_server_builds_the_demo_before_any_browser_visit(tmp_path):
    """``ui.serve`` (what scripts/run.sh runs) on an empty data folder, and no request at all to the server: the
    demo workspace and its bm25 results appear anyway."""
    data = tmp_path / "data"
    env = dict(os.environ, EMB_S_DATA=str(data), HF_HUB_OFFLINE="1", EMB_S_DEMO_TOKENS=str(128 * 1024),
               EMB_S_DEMO_RETRIEVERS="bm25")  # a small bank and bm25 only: the property, not the full demo
    log = tmp_path / "server.log"
    with open(log, "w") as out:
        proc = subprocess.Popen(
            [sys.executable, str(HERE / "serve_dashboard.py"), "--server.port", str(_free_port()),
             "--server.address", "127.0.0.1", "--server.headless", "true", "--browser.gatherUsageStats", "false"],
            cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT)
        try:
            deadline = time.time() + 300
            while time.time() < deadline and proc.poll() is None and not _bm25_results(data / "demo"):
                time.sleep(1.0)
            assert proc.poll() is None, log.read_text()  # still serving
            assert _bm25_results(data / "demo") > 0, log.read_text()
        finally:
            proc.terminate()
            proc.wait(30)
    assert "building the demo workspace in the background" in log.read_text()


def test_the_server_leaves_an_existing_workspace_alone(monkeypatch, tmp_path):
    from ui import first_start, jobs

    (tmp_path / "mine").mkdir()
    Workspace(tmp_path / "mine", create=True)
    monkeypatch.setenv("EMB_S_DATA", str(tmp_path))
    assert not first_start.is_fresh() and first_start.start_if_fresh() is None
    assert jobs.get(str(first_start.demo_dir())) is None and not first_start.demo_dir().exists()


def test_home_shows_the_current_steps_units_rate_eta_and_elapsed(monkeypatch, tmp_path):
    """While the demo builds, Home's status line carries the step's own done/total, rate, ETA and elapsed time
    (ui.jobs' meter), not the whole build's seconds."""
    import threading

    from streamlit.testing.v1 import AppTest

    from ui import first_start, jobs

    monkeypatch.setenv("EMB_S_DATA", str(tmp_path / "data"))
    gate, moved = threading.Event(), threading.Event()

    def work(progress):
        stage = "evaluating dense:minilm-static: embedding 400 documents (m)"
        progress("building the ladder", 1.0)
        for fraction in (0.0, 0.1, 0.2, 0.25):
            progress(stage, fraction)
            time.sleep(0.3)
        moved.set()
        gate.wait(60)

    job = jobs.start(str(first_start.demo_dir()), work)
    try:
        assert moved.wait(30)
        at = AppTest.from_file(str(REPO / "app.py"), default_timeout=60).run()
        assert not at.exception, [e.message for e in at.exception]
        text = " ".join(p.proto.text for p in at.get("progress")).replace("\\", "")
        assert "step 4 of 9" in text and "embedding 400 documents" in text, text  # bank, ladder, bm25, dense
        assert "100 of 400 documents" in text and "documents/s" in text and "left" in text, text
        assert "in this step" in text and "so far" not in text, text
    finally:
        gate.set()
        jobs.wait(job.key, 10)
