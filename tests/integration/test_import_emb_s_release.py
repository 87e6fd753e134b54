"""EMB-S release import: index or text references, unmatched references, strict records, and a pickle that tries
to run code is refused without running it."""
from __future__ import annotations

import os
import pickle
from pathlib import Path

import pytest

from emb_s_core import bank
from emb_s_core.sources import read_bank
from emb_s_core.store import Workspace
from tests.conftest import assert_import_fails

REFS = ["Aspirin thins blood.", "Ibuprofen reduces fever.", "Paracetamol treats pain."]
DATA = [
    {"query": "What thins blood?", "answer": "Aspirin", "reference_list": [0], "domain": "medical", "type": "fact"},
    {"query": "Fever and pain?", "answer": "Ibuprofen, paracetamol",
     "reference_list": ["Ibuprofen reduces fever.", 2, 2], "extra": {"ignored": True}},
    {"query": "Partly broken?", "answer": "x", "reference_list": [1, "A text that is not there.", 99]},
    {"query": "All broken?", "answer": "y", "reference_list": [7]},
]


def release(folder: Path, refs=REFS, data=DATA, protocol: int = pickle.HIGHEST_PROTOCOL) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "unique_reference.pkl").write_bytes(pickle.dumps(refs, protocol=protocol))
    (folder / "data.pkl").write_bytes(pickle.dumps(data, protocol=protocol))
    return folder


def test_read(tmp_path):
    b = read_bank("emb-s-release", release(tmp_path / "rel"))
    assert [d.text for d in b.documents] == REFS
    assert [(q.qid, q.ref_ids) for q in b.queries] == [("emb-s-0", [0]), ("emb-s-1", [1, 2]), ("emb-s-2", [1])]
    q0 = b.queries[0]
    assert (q0.domain, q0.task_type, q0.answer) == ("medical", "fact", "Aspirin")
    assert b.documents[0].domain == "medical" and b.documents[1].domain is None
    assert b.skipped == {"reference matching no document": 3, "record without a matching reference": 1}
    assert any(n.startswith("data.pkl record 2 (emb-s-2): 2 reference(s)") for n in b.notes)


def test_old_protocol_with_sets_and_tuples(tmp_path):
    data = [{"query": "q?", "answer": "a", "reference_list": (0, 1), "tags": {"x", "y"}}]
    b = read_bank("emb-s-release", release(tmp_path / "rel", data=data, protocol=0))
    assert b.queries[0].ref_ids == [0, 1]
    report = bank.import_path(tmp_path / "ws", "emb-s-release", tmp_path / "rel" / "data.pkl")
    assert (report.n_documents, report.n_queries) == (3, 1)
    assert len(bank.documents(Workspace(tmp_path / "ws"))) == 3


class _Exploit:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


@pytest.mark.parametrize("which", ["data.pkl", "unique_reference.pkl"])
def test_malicious_pickle_is_refused_not_run(tmp_path, which):
    marker = tmp_path / "pwned"
    folder = release(tmp_path / "rel")
    payload = [_Exploit(marker)] if which == "unique_reference.pkl" else [dict(DATA[0], answer=_Exploit(marker))]
    (folder / which).write_bytes(pickle.dumps(payload))
    assert_import_fails(tmp_path, "emb-s-release", folder,
                        rf"{which}: pickle refused: refused global (posix|os|nt)\.system")
    assert not marker.exists()


def test_bad_inputs(tmp_path):
    folder = release(tmp_path / "a", data=[{"query": "q", "reference_list": [0]}])
    assert_import_fails(tmp_path, "emb-s-release", folder, r"data.pkl record 0: missing field 'answer'")
    folder = release(tmp_path / "b", refs=["ok", ""])
    assert_import_fails(tmp_path, "emb-s-release", folder, r"unique_reference.pkl record 1: reference 1 is empty")
    folder = release(tmp_path / "c", data={"not": "a list"})
    assert_import_fails(tmp_path, "emb-s-release", folder, r"data.pkl: expected a list, got dict")
    folder = release(tmp_path / "d")
    (folder / "data.pkl").write_bytes(b"\x80\x04garbage")
    assert_import_fails(tmp_path, "emb-s-release", folder, r"data.pkl: cannot read pickle")
    (folder / "data.pkl").unlink()
    assert_import_fails(tmp_path, "emb-s-release", folder, r"EMB-S release file not found: .*data.pkl")
