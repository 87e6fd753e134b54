"""Damaged and unwritable workspaces (issue 33 §4): a truncated table data file, a deleted table folder, a table or
cache this process may not write. Each command ends in one line naming the table, what is damaged and the way back
(the last version the store keeps that reads, restored by `emb-s history --restore N`), exit 2, no traceback, the
workspace unchanged; `eval` registers no run it could not store, and the dashboard shows the same line.

Tests run as root, which ignores file modes, so "read-only" is simulated where the store probes or writes."""
from __future__ import annotations

import errno
import hashlib
import shutil
import sqlite3
from pathlib import Path

import pytest

from emb_s_core import runs, store
from emb_s_core.cli import main
from emb_s_core.errors import EmbSError
from emb_s_core.llm.cache import ResponseCache
from emb_s_core.store import Workspace
from testkit.dashboard_factory import build_workspace


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> Path:
    return build_workspace(tmp_path_factory.mktemp("damage"), n_queries=12, n_docs=100)


@pytest.fixture
def ws_dir(template, tmp_path) -> Path:
    return Path(shutil.copytree(template, tmp_path / "ws"))


def _fingerprint(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and p.name != store.LOCK_FILE):
        digest.update(str(path.relative_to(folder)).encode() + path.read_bytes())
    return digest.hexdigest()


def _newest_data_file(ws_dir: Path, table: str) -> Path:
    return max((ws_dir / "lance" / f"{table}.lance" / "data").iterdir(), key=lambda p: p.stat().st_mtime_ns)


def _one_line(capsys, argv: list[str]) -> str:
    capsys.readouterr()
    assert main(argv) == 2, argv
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("emb-s: error: ") and "Traceback" not in err[0], err
    return err[0]


@pytest.mark.parametrize("argv", [["info"], ["ladder", "build"], ["eval", "-r", "bm25", "--k", "5"]])
def test_a_truncated_documents_file_is_one_line_naming_the_table(ws_dir, capsys, argv):
    data = _newest_data_file(ws_dir, "documents")
    with open(data, "r+b") as fh:
        fh.truncate(100)
    before = _fingerprint(ws_dir)
    line = _one_line(capsys, [*argv, "-w", str(ws_dir)])
    assert "table 'documents' of the workspace" in line and "is damaged: it cannot be read" in line, line
    assert "failed to fill whole buffer" in line and "/rustc/" not in line
    assert "no earlier version of that table reads in full" in line  # the bank was written once
    assert _fingerprint(ws_dir) == before


def test_a_truncated_results_file_offers_the_last_good_version_and_restore_works(ws_dir, capsys):
    data = _newest_data_file(ws_dir, "results")
    with open(data, "r+b") as fh:
        fh.truncate(64)
    before = _fingerprint(ws_dir)
    history = Workspace(ws_dir).history()
    good = max(int(e["version"]) for e in history if e["tables"].get("results") == history[-1]["tables"]["results"] - 1)
    for argv in (["runs", "list"], ["report"]):
        line = _one_line(capsys, [*argv, "-w", str(ws_dir)])
        assert "table 'results' of the workspace" in line and "is damaged" in line, line
        assert f"restore version {good}, the newest whose results table reads in full" in line, line
        assert f"`emb-s history --workspace {ws_dir} --restore {good}`" in line, line
    assert _fingerprint(ws_dir) == before
    assert main(["history", "-w", str(ws_dir), "--restore", str(good)]) == 0
    assert main(["runs", "list", "-w", str(ws_dir)]) == 0 and main(["report", "-w", str(ws_dir)]) == 0
    from emb_s_core import damage

    assert damage.damaged_tables(ws_dir) == {}  # readable again: the results batch in the damaged file set aside
    assert Workspace(ws_dir).version == history[-1]["version"] + 1  # a new version; the history keeps the rest


def test_a_deleted_table_folder_is_one_line(ws_dir, capsys):
    shutil.rmtree(ws_dir / "lance" / "rungs.lance")
    line = _one_line(capsys, ["report", "-w", str(ws_dir)])
    assert "table 'rungs' of the workspace" in line and "its folder lance/rungs.lance is missing" in line, line


def _refuse(table: str):
    real = store._probe

    def probe(folder: Path) -> None:
        if f"{table}.lance" in folder.parts:
            raise PermissionError(errno.EACCES, "Permission denied", str(folder))
        real(folder)

    return probe


def test_eval_registers_no_run_it_could_not_store(ws_dir, capsys, monkeypatch):
    monkeypatch.setattr(store, "_probe", _refuse("results"))
    before, version = _fingerprint(ws_dir), Workspace(ws_dir).version
    line = _one_line(capsys, ["eval", "-r", "bm25", "--k", "5", "--name", "fresh", "-w", str(ws_dir)])
    assert "table 'results' of the workspace" in line and "cannot be written: Permission denied" in line, line
    assert "nothing was changed or registered" in line
    ws = Workspace(ws_dir)
    assert ws.version == version and "fresh" not in set(runs.list_runs(ws)["run"]) and _fingerprint(ws_dir) == before
    line = _one_line(capsys, ["runs", "delete", "overlap", "-w", str(ws_dir)])
    assert "table 'results'" in line and "cannot be written" in line
    assert "overlap" in set(runs.list_runs(Workspace(ws_dir))["run"])


def test_a_write_refused_mid_command_is_one_line(ws_dir, capsys, monkeypatch):
    """Past the probe (a disk remounted read-only mid-run): the write's PermissionError is one line too."""
    import lancedb.table

    def refuse(self, *args, **kwargs):
        raise PermissionError(errno.EROFS, "Read-only file system", str(ws_dir / "lance" / "results.lance"))

    monkeypatch.setattr(lancedb.table.LanceTable, "delete", refuse)
    line = _one_line(capsys, ["runs", "delete", "overlap", "-w", str(ws_dir)])
    assert f"the workspace {ws_dir} cannot be written: Read-only file system" in line, line
    assert "overlap" in set(runs.list_runs(Workspace(ws_dir))["run"])


def test_a_read_only_response_cache_is_one_line(tmp_path, monkeypatch):
    cache = ResponseCache(tmp_path / "llm_cache.sqlite")
    cache.put("k1", "m", "kept", 1, 1, 0.0)
    monkeypatch.setattr(ResponseCache, "_connect",
                        lambda self: sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, timeout=30))
    assert cache.get("k1")["text"] == "kept"  # reading still works
    with pytest.raises(EmbSError) as caught:
        cache.put("k2", "m", "new", 1, 1, 0.0)
    message = str(caught.value)
    assert "llm_cache.sqlite: the response cache cannot be written (attempt to write a readonly database)" in message
    assert "replies already cached are kept" in message and "\n" not in message


def test_the_dashboard_shows_the_line_not_a_traceback(ws_dir, monkeypatch):
    from streamlit.testing.v1 import AppTest

    repo = Path(__file__).resolve().parents[2]
    monkeypatch.setenv("EMB_S_DATA", str(ws_dir.parent))
    data = _newest_data_file(ws_dir, "documents")
    with open(data, "r+b") as fh:
        fh.truncate(100)
    for page in (None, "pages/5_Ladder.py"):
        at = AppTest.from_file(str(repo / "app.py"), default_timeout=90)
        at.query_params["ws"] = "ws"
        if page:
            at.switch_page(page)
        at.run()
        assert not at.exception, [e.message for e in at.exception]
        errors = [e.value.replace("\\", "") for e in at.error]
        assert any("table 'documents' of the workspace ws is damaged" in e for e in errors), errors
        assert not any(str(ws_dir.parent) in e for e in errors)
