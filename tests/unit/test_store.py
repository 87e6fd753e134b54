from __future__ import annotations

import pyarrow as pa
import pytest

from emb_s_core.errors import EmbSError
from emb_s_core.store import Workspace


def test_missing_workspace_is_a_clear_error(tmp_path):
    with pytest.raises(EmbSError, match="no EMB-S workspace"):
        Workspace(tmp_path / "nothing")


def test_refuses_non_empty_foreign_folder(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(EmbSError, match="not an EMB-S workspace"):
        Workspace(tmp_path, create=True)


def test_failed_transaction_leaves_workspace_as_it_was(tmp_path):
    ws = Workspace(tmp_path / "ws", create=True)
    with ws.transaction():
        ws.write("t", pa.table({"a": [1, 2]}))
    version = ws.version
    with pytest.raises(ValueError):
        with ws.transaction():
            ws.write("t", pa.table({"a": [3]}))
            ws.write("new", pa.table({"b": [1]}))
            raise ValueError("boom")
    assert ws.version == version
    assert ws.read("t")["a"].to_pylist() == [1, 2]
    assert not ws.has_table("new")
    assert "new" not in ws.db.list_tables().tables


def test_killed_writer_is_rolled_back_by_next_transaction(tmp_path):
    ws = Workspace(tmp_path / "ws", create=True)
    with ws.transaction():
        ws.write("t", pa.table({"a": [1]}))
    ws.db.open_table("t").add(pa.table({"a": [99]}))  # a write whose process died before committing
    fresh = Workspace(tmp_path / "ws")
    assert fresh.read("t")["a"].to_pylist() == [1]  # readers see the committed snapshot
    with fresh.transaction():
        fresh.write("t", pa.table({"a": [2]}))
    assert sorted(fresh.read("t")["a"].to_pylist()) == [1, 2]
    assert fresh.version == 2


def test_writes_outside_transaction_are_refused(tmp_path):
    ws = Workspace(tmp_path / "ws", create=True)
    with pytest.raises(RuntimeError):
        ws.write("t", pa.table({"a": [1]}))


def test_history_keeps_every_version_readable(tmp_path):
    ws = Workspace(tmp_path / "ws", create=True)
    with ws.transaction():
        ws.write("t", pa.table({"a": [1, 2]}))
        ws.set_setting("note", "first")
    with ws.transaction():
        ws.write("t", pa.table({"a": [3]}), mode="overwrite")
        ws.set_setting("note", "second")
    assert ws.version == 2
    assert [e["version"] for e in ws.history()] == [0, 1, 2]
    old = Workspace(tmp_path / "ws", version=1)
    assert old.read_only and old.version == 1
    assert old.read("t")["a"].to_pylist() == [1, 2]
    assert old.settings["note"] == "first"
    assert not Workspace(tmp_path / "ws", version=0).has_table("t")
    assert Workspace(tmp_path / "ws").read("t")["a"].to_pylist() == [3]


def test_old_version_view_refuses_writes_and_unknown_versions(tmp_path):
    ws = Workspace(tmp_path / "ws", create=True)
    with ws.transaction():
        ws.write("t", pa.table({"a": [1]}))
    old = Workspace(tmp_path / "ws", version=0)
    with pytest.raises(EmbSError, match="read-only at version 0"):
        with old.transaction():
            old.write("t", pa.table({"a": [2]}))
    with pytest.raises(EmbSError, match="no recorded version 7"):
        Workspace(tmp_path / "ws", version=7)
    assert Workspace(tmp_path / "ws").version == 1


def test_history_ignores_a_line_whose_commit_never_happened(tmp_path):
    ws = Workspace(tmp_path / "ws", create=True)
    with ws.transaction():
        ws.write("t", pa.table({"a": [1]}))
    with (tmp_path / "ws" / "history.jsonl").open("a") as fh:  # killed between history append and manifest
        fh.write('{"version": 2, "tables": {"t": 99}, "settings": {}}\n{"vers')
    assert [e["version"] for e in ws.history()] == [0, 1]
    with ws.transaction():
        ws.write("t", pa.table({"a": [2]}))
    assert ws.history()[-1]["tables"]["t"] != 99
    with ws.transaction():
        ws.write("t", pa.table({"a": [3]}))
    assert sorted(Workspace(tmp_path / "ws", version=2).read("t")["a"].to_pylist()) == [1, 2]
