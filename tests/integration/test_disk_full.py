"""A full disk during import or eval, injected where the workspace writes (ENOSPC as the OS raises it, and lance's
RuntimeError form): one line naming the workspace, the free space and that finished work is kept; nothing half
written; the rerun after space is freed resumes. And a new folder an import was killed in can be imported into."""
from __future__ import annotations

import errno
import json
import sqlite3

import pytest

from emb_s_core import bank, evaluate, ladder, runs
from emb_s_core.cli import main
from emb_s_core.errors import EmbSError
from emb_s_core.store import HISTORY, LOCK_FILE, MANIFEST, Workspace, is_disk_full
from tests.conftest import native_bank
from testkit.retrieval_bank import copy_workspace, template

LANCE_FULL = RuntimeError("lance error: LanceError(IO): Generic LocalFileSystem error: Unable to copy file: "
                          "No space left on device (os error 28), /home/build/lance/src/io.rs:120:27")
OS_FULL = OSError(errno.ENOSPC, "No space left on device")


def _fail_writes(monkeypatch, table: str, after: int, error: BaseException) -> dict:
    """Make the workspace's ``after``-th and later writes to ``table`` raise ``error`` (the disk filled up)."""
    real = Workspace.write
    calls = {"n": 0}

    def write(self, name, data, **kw):
        if name == table:
            calls["n"] += 1
            if calls["n"] > after:
                raise error
        return real(self, name, data, **kw)

    monkeypatch.setattr(Workspace, "write", write)
    return calls


def _error_line(capsys) -> str:
    """The command's one error line (the last on stderr, after any progress bar), checked to be the only one."""
    err = capsys.readouterr().err
    lines = [line for line in err.replace("\r", "\n").splitlines() if line.strip()]
    assert sum("emb-s:" in line for line in lines) == 1 and lines[-1].startswith("emb-s: error: ")
    assert "Traceback" not in err
    return lines[-1]


def _assert_one_disk_line(text: str, ws_path) -> None:
    assert f"the disk holding the workspace {ws_path} is full (" in text and " MiB free)" in text
    assert "everything finished before it is kept" in text and "rerun the same command" in text
    assert "Traceback" not in text and "lance error" not in text


@pytest.mark.parametrize("error", [OS_FULL, LANCE_FULL], ids=["ENOSPC", "lance"])
def test_import_on_a_full_disk_is_one_line_and_leaves_the_workspace_as_it_was(tmp_path, capsys, monkeypatch, error):
    ws_path = tmp_path / "ws"
    bank.import_path(ws_path, "native", native_bank(tmp_path / "first"))
    before = Workspace(ws_path)
    version, n_docs = before.version, before.read("documents").num_rows
    second = native_bank(tmp_path / "second", docs=[{"doc_id": 10, "text": "Rome is the capital of Italy."}],
                         queries=[{"qid": "r1", "text": "Capital of Italy?", "answer": "Rome", "ref_ids": [10]}])
    _fail_writes(monkeypatch, "documents", 0, error)
    assert main(["import", str(second), "-f", "native", "-w", str(ws_path), "--source", "second"]) == 2
    _assert_one_disk_line(_error_line(capsys), ws_path.resolve())
    monkeypatch.undo()
    after = Workspace(ws_path)
    assert after.version == version and after.read("documents").num_rows == n_docs
    bank.import_path(ws_path, "native", second, source="second")  # space freed: the same import goes through
    assert Workspace(ws_path).read("documents").num_rows == n_docs + 1


def test_an_import_into_a_new_folder_on_a_full_disk_leaves_no_folder(tmp_path, monkeypatch):
    _fail_writes(monkeypatch, "documents", 0, LANCE_FULL)
    with pytest.raises(EmbSError) as caught:
        bank.import_path(tmp_path / "new" / "ws", "native", native_bank(tmp_path / "bank"))
    _assert_one_disk_line(str(caught.value), (tmp_path / "new" / "ws").absolute())
    assert not (tmp_path / "new").exists()


@pytest.mark.parametrize("error", [OS_FULL, LANCE_FULL], ids=["ENOSPC", "lance"])
def test_eval_on_a_full_disk_keeps_its_finished_batches_and_resumes(tmp_path_factory, tmp_path, capsys,
                                                                    monkeypatch, error):
    ws = copy_workspace(template(tmp_path_factory), tmp_path / "ws")
    _fail_writes(monkeypatch, "results", 2, error)  # two batches land, the third finds the disk full
    assert main(["eval", "-w", str(ws.path), "-r", "bm25", "--name", "full", "--k", "8", "--batch", "4"]) == 2
    _assert_one_disk_line(_error_line(capsys), ws.path)
    monkeypatch.undo()
    ws.refresh()
    kept = runs.finished(ws, "full")
    total = sum(len(r.qids) for r in ladder.load(ws).rungs)
    assert 0 < len(kept) < total and len(kept) == len(runs.load_results(ws, runs=["full"]))
    evaluate.evaluate(ws, "bm25", name="full", k=8, batch_size=4)  # space freed: it resumes
    evaluate.evaluate(ws, "bm25", name="clean", k=8)
    a = runs.load_results(ws, runs=["full"]).sort_values(["rung", "qid"]).reset_index(drop=True)
    b = runs.load_results(ws, runs=["clean"]).sort_values(["rung", "qid"]).reset_index(drop=True)
    assert len(a) == len(b) == total and (a["doc_ids"].map(list) == b["doc_ids"].map(list)).all()


def test_full_disk_words_of_each_library_are_recognized():
    assert is_disk_full(OS_FULL) and is_disk_full(LANCE_FULL)
    assert is_disk_full(sqlite3.OperationalError("database or disk is full"))
    assert is_disk_full(OSError(errno.EDQUOT, "Disk quota exceeded"))
    wrapped = RuntimeError("commit failed")
    wrapped.__cause__ = OS_FULL
    assert is_disk_full(wrapped)
    assert not is_disk_full(OSError(errno.EACCES, "Permission denied"))
    assert not is_disk_full(RuntimeError("lance error: something else"))


def test_a_creation_killed_before_its_manifest_does_not_block_the_next_import(tmp_path):
    """Killed between the history line and the manifest: the folder holds only the lock file and a version-0
    history; the next import into it proceeds (and a folder with anything else is still refused)."""
    ws_path = tmp_path / "ws"
    ws_path.mkdir()
    (ws_path / LOCK_FILE).write_text("")
    (ws_path / HISTORY).write_text(json.dumps({"format": 1, "version": 0, "tables": {}, "settings": {}}) + "\n")
    report = bank.import_path(ws_path, "native", native_bank(tmp_path / "bank"))
    assert report.n_documents == 4 and Workspace(ws_path).version == 1
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / HISTORY).write_text(json.dumps({"version": 3, "tables": {"documents": 2}}) + "\n")
    with pytest.raises(EmbSError, match="exists and is not an EMB-S workspace"):
        bank.import_path(foreign, "native", native_bank(tmp_path / "bank2"))


def test_an_import_killed_after_creating_the_workspace_does_not_block_the_next(tmp_path, monkeypatch):
    """Killed after version 0 was committed and documents were half written (simulated: the write raises
    KeyboardInterrupt after the table is on disk, as a kill leaves it): the next import into the folder proceeds,
    and the half-written table is not in it."""
    ws_path = tmp_path / "ws"
    Workspace(ws_path, create=True)
    real = Workspace.write

    def write_then_die(self, name, data, **kw):
        real(self, name, data, **kw)
        raise SystemExit("killed")

    monkeypatch.setattr(Workspace, "_rollback_to", lambda self, versions: None)  # a kill runs no rollback
    monkeypatch.setattr(Workspace, "write", write_then_die)
    with pytest.raises(SystemExit):
        bank.import_path(ws_path, "native", native_bank(tmp_path / "bank"))
    monkeypatch.undo()
    assert json.loads((ws_path / MANIFEST).read_text())["version"] == 0 and (ws_path / "lance").exists()
    report = bank.import_path(ws_path, "native", native_bank(tmp_path / "bank"))
    ws = Workspace(ws_path)
    assert report.n_documents == 4 and ws.version == 1 and ws.read("documents").num_rows == 4


def test_a_full_llm_cache_outside_a_transaction_is_one_line_too(tmp_path, capsys, monkeypatch):
    """SQLite's 'database or disk is full' from the reply cache (written outside workspace transactions) reaches the
    CLI as the same one line, not a traceback."""
    from emb_s_core import cli

    def full(args):
        raise sqlite3.OperationalError("database or disk is full")

    ws_path = tmp_path / "ws"
    bank.import_path(ws_path, "native", native_bank(tmp_path / "bank"))
    monkeypatch.setattr(cli, "build_parser", _parser_with(cli.build_parser, full))
    assert main(["eval", "-w", str(ws_path), "-r", "bm25"]) == 2
    _assert_one_disk_line(_error_line(capsys), ws_path.resolve())
    monkeypatch.setattr(cli, "build_parser", _parser_with(cli.build_parser, lambda args: 1 / 0))
    with pytest.raises(ZeroDivisionError):  # any other failure is not dressed up as a full disk
        main(["eval", "-w", str(ws_path), "-r", "bm25"])


def _parser_with(build, func):
    """The CLI's parser with the eval command's handler replaced by ``func``."""
    def patched(argv=None):
        parser = build(argv)
        parser._subparsers._group_actions[0].choices["eval"].set_defaults(func=func)
        return parser
    return patched
