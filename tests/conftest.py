"""Shared fixtures: offline environment, temp workspaces, the shared real datasets (skipped when absent)."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from testkit import write_jsonl  # noqa: F401 (the tests import it from here)

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("EMB_S_SHARED_DATA", REPO.parent / "shared" / "data"))


def built_once(tmp_path_factory, name: str, build):
    """``build(folder)`` once per test run, even with pytest-xdist workers (each worker has its own session): the
    first worker builds under a file lock in the run's shared temp folder and records the JSON result; the others
    wait for it and read it. For read-only fixtures that cost minutes (a model load, LLM-judged runs)."""
    import json

    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return build(tmp_path_factory.mktemp(name))
    from filelock import FileLock

    root = tmp_path_factory.getbasetemp().parent  # one folder per run, above every worker's own
    done = root / f"{name}.json"
    with FileLock(str(root / f"{name}.lock")):
        if not done.is_file():
            folder = root / name
            shutil.rmtree(folder, ignore_errors=True)  # what an interrupted build (a timeout) left
            folder.mkdir()
            done.write_text(json.dumps(build(folder), default=str), encoding="utf-8")
        return json.loads(done.read_text(encoding="utf-8"))


@pytest.fixture
def shared_data() -> Path:
    """../shared/data, or skip: the real datasets are never copied into the repository."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared datasets not found at {SHARED_DATA}")
    return SHARED_DATA


def native_bank(folder: Path, docs: list[dict] | None = None, queries: list[dict] | None = None) -> Path:
    """A small valid native bank (or the given rows) written to ``folder``."""
    if docs is None:
        docs = [
            {"doc_id": 1, "title": "Paris", "text": "Paris has been the capital of France since 987.", "domain": "history"},
            {"doc_id": 2, "title": "Paris", "text": "Paris was briefly the capital of France in 1870.", "domain": "history"},
            {"doc_id": 3, "title": "Berlin", "text": "Berlin is the capital of Germany.", "domain": "history"},
            {"doc_id": 4, "title": "Euler", "text": "Euler's identity links e, i and pi.", "domain": "math"},
        ]
    if queries is None:
        queries = [
            {"qid": "q1", "text": "Since when is Paris the capital of France?", "answer": "987",
             "ref_ids": [1], "hard_negative_ids": [2], "domain": "history", "task_type": "fact"},
            {"qid": "q2", "text": "Name the capitals of France and Germany.", "answer": "Paris and Berlin",
             "ref_ids": [1, 3], "domain": "history", "task_type": "comparison"},
        ]
    write_jsonl(folder / "documents.jsonl", docs)
    write_jsonl(folder / "queries.jsonl", queries)
    return folder


def assert_import_fails(tmp_path: Path, fmt: str, path: Path, message: str, **kwargs) -> None:
    """Importing ``path`` into a workspace that already holds a bank raises EmbSError matching ``message``,
    and leaves the workspace exactly as it was (same version, same documents)."""
    from emb_s_core import bank
    from emb_s_core.errors import EmbSError
    from emb_s_core.store import Workspace

    ws_dir = tmp_path / "ws-before"
    if not ws_dir.exists():
        bank.import_path(ws_dir, "native", native_bank(tmp_path / "native-good"))
    before = Workspace(ws_dir)
    version, n_docs = before.version, len(bank.documents(before))
    with pytest.raises(EmbSError, match=message):
        bank.import_path(ws_dir, fmt, path, source=f"bad-{fmt}", **kwargs)
    after = Workspace(ws_dir)
    assert after.version == version
    assert len(bank.documents(after)) == n_docs


@pytest.fixture(scope="session")
def demo_twin_ws(tmp_path_factory) -> Path:
    """The demo bank at 64K tokens, its ladder, its benign twin and bm25 on both (about 3 s): a workspace shaped like
    the one a fresh machine shows, for the finder, the drill-down and the browser walk. Read-only."""
    from emb_s_core import demo

    def build(folder: Path) -> str:
        demo.build(folder / "demo", tokens=64 * 1024, retrievers=("bm25",))
        return str(folder / "demo")

    return Path(built_once(tmp_path_factory, "demo_twin", build))
