"""A run killed with SIGKILL (after a committed batch, or in the middle of writing one) resumes on the next evaluate:
finished (rung, qid) pairs are kept and the final results equal an uninterrupted run's."""
from __future__ import annotations

import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from emb_s_core import evaluate, ladder, runs
from emb_s_core.store import Workspace
from testkit.retrieval_bank import REPO, copy_workspace, template

SCRIPT = textwrap.dedent("""
    import os, signal, sys
    from emb_s_core import evaluate
    from emb_s_core.store import Workspace
    mode, path = sys.argv[1], sys.argv[2]
    ws = Workspace(path)
    calls = {"n": 0}
    def progress(stage, fraction):
        if mode == "after-batch" and stage.startswith("ranking") and fraction > 0:
            calls["n"] += 1
            if calls["n"] == 3:
                os.kill(os.getpid(), signal.SIGKILL)
    if mode == "mid-write":
        real = Workspace.write
        def write(self, name, data, **kw):
            real(self, name, data, **kw)
            if name == "results":
                calls["n"] += 1
                if calls["n"] == 4:  # data written, manifest not yet committed
                    os.kill(os.getpid(), signal.SIGKILL)
        Workspace.write = write
    evaluate.evaluate(ws, "bm25", name="killed", k=8, batch_size=4, progress=progress)
    print("finished without being killed")
""")


@pytest.mark.parametrize("mode", ["after-batch", "mid-write"])
def test_sigkill_then_resume_equals_uninterrupted(tmp_path_factory, tmp_path, mode):
    ws = copy_workspace(template(tmp_path_factory), tmp_path / "ws")
    proc = subprocess.run([sys.executable, "-c", SCRIPT, mode, str(ws.path)], cwd=REPO, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == -signal.SIGKILL, proc.stdout + proc.stderr
    ws.refresh()
    partial = runs.finished(ws, "killed")
    lad = ladder.load(ws)
    total = sum(len(r.qids) for r in lad.rungs)
    assert 0 < len(partial) < total
    if mode == "mid-write":
        assert len(partial) == len(runs.load_results(ws, runs=["killed"]))  # the torn batch is not visible
    evaluate.evaluate(ws, "bm25", name="killed", k=8, batch_size=4)
    evaluate.evaluate(ws, "bm25", name="clean", k=8, batch_size=64)
    a = runs.load_results(ws, runs=["killed"]).sort_values(["rung", "qid"]).reset_index(drop=True)
    b = runs.load_results(ws, runs=["clean"]).sort_values(["rung", "qid"]).reset_index(drop=True)
    assert len(a) == len(b) == total
    assert (a[["rung", "qid"]] == b[["rung", "qid"]]).all().all()
    for x, y, sx, sy in zip(a["doc_ids"], b["doc_ids"], a["scores"], b["scores"]):
        np.testing.assert_array_equal(x, y)
        np.testing.assert_allclose(sx, sy, rtol=1e-6)
    raw = Workspace(ws.path).read_pandas("results", where="run = 'killed'")
    assert len(raw) == total  # no duplicate rows left behind by the kill
