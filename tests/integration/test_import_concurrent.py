"""Two imports of the same files into one workspace at the same time give one source, not the bank twice (the
"already imported" check and the write hold the writer lock together)."""
from __future__ import annotations

import subprocess
import sys

from emb_s_core import bank
from emb_s_core.store import Workspace
from tests.conftest import REPO
from tests.release_mock import write_release


def test_concurrent_imports_of_one_release(tmp_path):
    root = write_release(tmp_path / "release")
    ws_dir = tmp_path / "ws"
    Workspace(ws_dir, create=True)
    cmd = [sys.executable, "-m", "emb_s_core.cli", "import", "--format", "emb-s-release", str(root),
           "--workspace", str(ws_dir)]
    procs = [subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [e for _, e in outs]
    ws = Workspace(ws_dir)
    assert len(ws.read_pandas("sources")) == 1
    docs = bank.documents(ws, ["doc_id"])
    assert len(docs) == docs["doc_id"].nunique() == 30
    assert sum("already in the workspace" in o for o, _ in outs) == 1
