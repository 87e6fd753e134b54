"""A copy of the dashboard test workspace with real live-capable runs (BM25 and the offline ONNX MiniLM-L3, whose
vectors ``eval`` caches), for the what-if box: its tests and the browser test share it."""
from __future__ import annotations

import shutil
from pathlib import Path

from emb_s_core import evaluate
from emb_s_core.store import Workspace

SPECS = ("bm25", "dense:minilm-l3")


def build(source: Path, folder: Path) -> Path:
    """``source`` (a dashboard workspace) copied to ``folder`` and evaluated with :data:`SPECS` at K = 10."""
    shutil.copytree(source, folder, symlinks=True)
    ws = Workspace(folder)
    for spec in SPECS:
        evaluate.evaluate(ws, spec, name=spec.replace(":", "-"), k=10)
    return folder
