"""What every format shares: the FORMATS registry, --domain, unknown formats, progress output of big files."""
from __future__ import annotations

import pytest

from emb_s_core import bank
from emb_s_core.cli import main
from emb_s_core.errors import EmbSError
from emb_s_core.sources import FORMATS, read_bank
from emb_s_core.sources._io import iter_jsonl
from emb_s_core.store import Workspace
from tests.conftest import assert_import_fails, native_bank, write_jsonl


def test_registry_names():
    assert set(FORMATS) >= {"native", "beir", "hotpotqa", "musique", "2wiki", "locomo", "emb-s-release"}


def test_unknown_format(tmp_path, capsys):
    folder = native_bank(tmp_path / "b")
    with pytest.raises(EmbSError, match=r"unknown import format 'squad'.*Fix: use one of: 2wiki, beir"):
        read_bank("squad", folder)
    with pytest.raises(SystemExit) as exc:
        main(["import", "-f", "squad", str(folder), "-w", str(tmp_path / "ws")])
    assert exc.value.code == 2 and "invalid choice: 'squad'" in capsys.readouterr().err
    assert not (tmp_path / "ws").exists()


def test_domain_fills_only_missing(tmp_path, capsys):
    docs = [{"doc_id": 1, "text": "a", "domain": "math"}, {"doc_id": 2, "text": "b"}]
    queries = [{"qid": "q1", "text": "t", "answer": "a", "ref_ids": [1]},
               {"qid": "q2", "text": "t", "answer": "a", "ref_ids": [2], "domain": "law"}]
    folder = native_bank(tmp_path / "b", docs, queries)
    assert main(["import", "-f", "native", str(folder), "-w", str(tmp_path / "ws"), "--domain", "science"]) == 0
    ws = Workspace(tmp_path / "ws")
    assert bank.documents(ws).set_index("doc_id")["domain"].to_dict() == {1: "math", 2: "science"}
    assert bank.queries(ws).set_index("qid")["domain"].to_dict() == {"q1": "science", "q2": "law"}


def test_empty_domain_is_refused(tmp_path):
    assert_import_fails(tmp_path, "native", native_bank(tmp_path / "b"), r"--domain is empty", domain=" ")


def test_progress_bar_for_big_files(tmp_path, capsys, monkeypatch):
    import emb_s_core.sources._io as io_mod

    path = write_jsonl(tmp_path / "x.jsonl", [{"i": i} for i in range(50)])
    monkeypatch.setattr(io_mod, "PROGRESS_BYTES", 10)
    assert len(list(iter_jsonl(path))) == 50
    assert "reading x.jsonl" in capsys.readouterr().err
