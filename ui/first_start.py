"""The demo build of a fresh machine: one background job of the server process (:mod:`ui.jobs`), started when the
server starts (:mod:`ui.serve`) and, failing that, when Home renders; the same job either way.

Why here: a user who runs ``scripts/run.sh`` and opens the page minutes later should find results there, not a build
that starts with the first visit. ``EMB_S_DEMO_TOKENS`` sets a smaller bank and ``EMB_S_DEMO_RETRIEVERS``
(comma-separated specs) other retrievers, for tests and quick looks; the defaults are the demo's own.
"""
from __future__ import annotations

import os
from pathlib import Path

from emb_s_core import demo
from ui import data, jobs


def demo_dir() -> Path:
    return data.data_dir() / "demo"


def demo_retrievers() -> tuple[str, ...]:
    return tuple(s.strip() for s in os.environ.get("EMB_S_DEMO_RETRIEVERS", "").split(",") if s.strip()) \
        or demo.DEMO_RETRIEVERS


def start_demo() -> jobs.Job:
    """Start (or find) the background build of the demo workspace (``emb_s_core.demo``; resumable)."""
    tokens = int(os.environ["EMB_S_DEMO_TOKENS"]) if os.environ.get("EMB_S_DEMO_TOKENS") else None
    path, retrievers = demo_dir(), demo_retrievers()
    return jobs.start(str(path), lambda progress: demo.build(path, tokens=tokens, progress=progress,
                                                             retrievers=retrievers))


def is_fresh() -> bool:
    """No workspace under the data folder yet: what the demo is built for."""
    return not data.list_workspaces()


def start_if_fresh() -> jobs.Job | None:
    """The demo build when the data folder has no workspace, else None (an existing one is never touched)."""
    return start_demo() if is_fresh() else None
