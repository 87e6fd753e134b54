"""`emb-s history`: every committed version listed with the tables it changed; an old version's bank summary."""
from __future__ import annotations

from emb_s_core import bank
from emb_s_core.cli import main
from emb_s_core.store import Workspace
from tests.conftest import native_bank


def test_history_lists_versions_and_reads_an_old_bank(tmp_path, capsys):
    bank.import_path(tmp_path / "ws", "native", native_bank(tmp_path / "b1"))
    first = Workspace(tmp_path / "ws").version
    docs = [{"doc_id": 50, "text": "Tides follow the moon.", "domain": "science"}]
    qs = [{"qid": "t1", "text": "What do tides follow?", "answer": "the moon", "ref_ids": [50]}]
    bank.import_path(tmp_path / "ws", "native", native_bank(tmp_path / "b2", docs, qs), source="more")
    assert main(["history", "-w", str(tmp_path / "ws")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in out[2:]] == ["0", "1", "2"]
    assert "documents, hard_negative_provenance, queries, sources" in out[3]
    assert main(["history", "-w", str(tmp_path / "ws"), "--version", str(first)]) == 0
    old = capsys.readouterr().out
    assert "4 documents, 2 queries" in old and "science" not in old
    assert main(["history", "-w", str(tmp_path / "ws"), "--version", "9"]) == 2
    assert "no recorded version 9" in capsys.readouterr().err
