"""EMB-S release import: one scale folder (index or text references, unmatched references, strict records), the
release root (scales deduplicated and their membership kept, qar splits, unknown keys kept), every bad input with a
one-line error that leaves the workspace as it was, and a pickle that tries to run code is refused without running
it."""
from __future__ import annotations

import json
import os
import pickle
import shutil
from pathlib import Path

import pytest

from emb_s_core import bank
from emb_s_core.cli import main
from emb_s_core.errors import EmbSError
from emb_s_core.schema import DocumentStream
from emb_s_core.sources import emb_s_release, read_bank
from emb_s_core.store import Workspace
from tests.conftest import assert_import_fails, native_bank
from tests.release_mock import SCALES, write_release

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
    docs = list(b.documents)  # streamed: the corpus files are read again
    assert [d.text for d in docs] == REFS
    assert [(q.qid, q.ref_ids) for q in b.queries] == [("emb-s-0", [0]), ("emb-s-1", [1, 2]), ("emb-s-2", [1])]
    q0 = b.queries[0]
    assert (q0.domain, q0.task_type, q0.answer) == ("medical", "fact", "Aspirin")
    assert docs[0].domain == "medical" and docs[1].domain is None
    assert b.skipped == {"reference matching no document": 3, "query without a matching reference": 1}
    assert "data.pkl record 2 (emb-s-2): reference matches no document (no document has this text): " \
           "'A text that is not there.'" in b.notes
    assert any("(emb-s-2)" in n and "index 99 outside scale all's 3 references" in n for n in b.notes)
    assert b.queries[1].extra == {"extra": {"ignored": True}, "scale": "all"}


def test_old_protocol_with_sets_and_tuples(tmp_path):
    data = [{"query": "q?", "answer": "a", "reference_list": (0, 1), "tags": {"x", "y"}}]
    b = read_bank("emb-s-release", release(tmp_path / "rel", data=data, protocol=0))
    assert b.queries[0].ref_ids == [0, 1]
    assert b.queries[0].extra["tags"] == ["x", "y"]
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
    folder = release(tmp_path / "f", data=[{"query": "q", "answer": ["a"], "reference_list": [0]}])
    assert_import_fails(tmp_path, "emb-s-release", folder, r"data.pkl record 0: field 'answer': expected a string or "
                                                           r"a number, found list")
    folder = release(tmp_path / "e", data=[{"query": "q", "answer": "a", "reference_list": "Aspirin thins blood."}])
    assert_import_fails(tmp_path, "emb-s-release", folder, r"data.pkl record 0: field 'reference_list': expected a "
                                                           r"list, found string")


# ------------------------------------------------------------------------------------------ the release root
def test_root_import_dedups_scales_and_keeps_membership(tmp_path):
    root = write_release(tmp_path / "release")
    report = bank.import_path(tmp_path / "ws", "emb-s-release", root)
    ws = Workspace(tmp_path / "ws")
    docs = bank.documents(ws).sort_values("doc_id")
    assert report.n_documents == len(docs) == 30  # 12 + 20 + 30 references, nested: 30 distinct texts
    assert docs["text"].tolist() == SCALES["512K"]  # ids: first appearance walking 64K, 128K, 512K
    sets = bank.doc_sets(ws)
    assert {s: sorted(g["doc_id"]) for s, g in sets.groupby("set")} == {
        "64K": list(range(12)), "128K": list(range(20)), "512K": list(range(30))}
    assert sets.groupby("set")["set_order"].first().to_dict() == {"64K": 0, "128K": 1, "512K": 2}
    qs = bank.queries(ws).set_index("qid")
    assert sorted(qs.index) == ["q-two", "test-1", "test-3", "test-5"]  # test-4 has no matching reference
    assert qs.loc["test-1", "ref_ids"].tolist() == [0]  # matched after whitespace normalization
    assert qs.loc["q-two", "ref_ids"].tolist() == [1, 2] and qs.loc["test-1", "domain"] == "pharma"
    extra = bank.query_extra(ws)
    assert extra["test-1"] == {"difficulty": "easy", "source_ids": [3, 4], "split": "test"}
    assert report.skipped == {"reference matching no document": 2, "query without a matching reference": 1}
    assert "qar/test.jsonl line 4 (test-4): reference matches no document (no document has this text): " \
           "'Nothing like this exists.'" in report.notes


def test_documents_stream_from_the_files_in_two_passes(tmp_path):
    """The reader keeps keys, not texts: the documents are read again from the corpus files as they are written, with
    --domain applied; a corpus file changed between the two passes fails the import and writes nothing."""
    root = write_release(tmp_path / "release")
    b = read_bank("emb-s-release", root, domain="clinic")
    assert isinstance(b.documents, DocumentStream) and len(b.documents) == 30
    docs = list(b.documents)
    assert [d.doc_id for d in docs] == list(range(30)) and [d.text for d in docs] == SCALES["512K"]
    assert {d.domain for d in docs} == {"pharma", "clinic"}  # gold keeps its record's category, the rest --domain
    bank.import_path(tmp_path / "ws", "native", native_bank(tmp_path / "n"))
    ws = Workspace(tmp_path / "ws")
    before = ws.version
    (root / "data" / "512K" / "unique_reference.pkl").write_bytes(pickle.dumps(SCALES["512K"][:-1]))
    with pytest.raises(EmbSError, match=r"data/512K/unique_reference.pkl changed during the import"):
        bank.add_bank(ws, b, fmt="emb-s-release", path=root, sha256="0" * 64)
    ws.refresh()
    assert ws.version == before and len(bank.documents(ws)) == 4


def test_info_json_reports_the_release(tmp_path, capsys):
    root = write_release(tmp_path / "release")
    assert main(["import", "--format", "emb-s-release", str(root), "--workspace", str(tmp_path / "ws")]) == 0
    out = capsys.readouterr().out
    assert "scales: 64K (12 documents), 128K (20 documents), 512K (30 documents)" in out
    assert "references matched 5, unmatched 2" in out
    assert main(["info", "--workspace", str(tmp_path / "ws")]) == 0
    assert "scales: 64K (12 documents), 128K (20 documents), 512K (30 documents)" in capsys.readouterr().out
    assert main(["info", "--json", "--workspace", str(tmp_path / "ws")]) == 0
    details = json.loads(capsys.readouterr().out)["sources"][0]["details"]
    assert [s["scale"] for s in details["scales"]] == ["64K", "128K", "512K"]
    assert details["splits_found"] == ["test", "train_sft"] and details["queries_from"] == "qar (test)"
    assert (details["matched_references"], details["unmatched_references"]) == (5, 2)
    assert [u["qid"] for u in details["unmatched_named"]] == ["test-3", "test-4"]
    assert details["keys_found"]["difficulty"] == 1 and details["keys_found"]["query"] == 5
    assert "answer_aliases" not in details["keys_found"]  # the mock's records have none (validation fills it in)


def test_splits(tmp_path):
    root = write_release(tmp_path / "release")
    b = read_bank("emb-s-release", root, split="train_sft")
    assert [q.qid for q in b.queries] == ["train_sft-1"] and b.queries[0].ref_ids == [5]
    b = read_bank("emb-s-release", root, split="all")
    assert len(b.queries) == 5 and {q.extra["split"] for q in b.queries} == {"test", "train_sft"}
    assert_import_fails(tmp_path, "emb-s-release", root, r"no qar/dev.jsonl in .*Fix: choose --split from: test, "
                                                         r"train_sft, all", split="dev")
    with pytest.raises(EmbSError, match=r"--split applies to --format emb-s-release only"):
        read_bank("native", root, split="test")


def test_root_without_qar_reads_every_scales_records(tmp_path):
    root = write_release(tmp_path / "release", with_qar=False)
    b = read_bank("emb-s-release", root)
    assert b.details["queries_from"] == "data.pkl"
    by_qid = {q.qid: q.ref_ids for q in b.queries}
    assert by_qid == {"64K-1": [1], "64K-2": [2], "128K-1": [1], "128K-2": [2], "512K-1": [1], "512K-2": [2]}
    # the same query without an id in two scales is read once
    for label in ("64K", "128K"):
        (root / "data" / label / "data.pkl").write_bytes(pickle.dumps(
            [{"query": "Same  question?", "answer": "a", "reference_list": [3]}]))
    b = read_bank("emb-s-release", root)
    assert [q.qid for q in b.queries if q.text.startswith("Same")] == ["emb-s-64K-0"]
    assert b.details["duplicate_queries"] == 1


def test_no_domain_says_domains_label(tmp_path):
    b = read_bank("emb-s-release", release(tmp_path / "rel", data=[DATA[1]]))
    assert any("need `emb-s domains label`" in n for n in b.notes)


# ------------------------------------------------------------------------------------------ bad inputs
def test_bad_layouts(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert_import_fails(tmp_path, "emb-s-release", empty, r"not an EMB-S release: .* has no data/ or qar/ folder")
    only_qar = write_release(tmp_path / "only-qar")
    shutil.rmtree(only_qar / "data")
    assert_import_fails(tmp_path, "emb-s-release", only_qar, r"has a qar/ folder but no data/ folder")
    missing = write_release(tmp_path / "missing")
    (missing / "data" / "128K" / "data.pkl").unlink()
    assert_import_fails(tmp_path, "emb-s-release", missing, r"scale folder data/128K has no data.pkl")
    odd = write_release(tmp_path / "odd")
    (odd / "data" / "backup").mkdir()
    assert_import_fails(tmp_path, "emb-s-release", odd, r"data/backup is not a scale folder name")


def test_git_lfs_pointer(tmp_path):
    root = write_release(tmp_path / "release")
    (root / "data" / "512K" / "unique_reference.pkl").write_text(
        "version https://git-lfs.github.com/spec/v1\noid sha256:4d7a2146\nsize 1338455040\n")
    assert_import_fails(tmp_path, "emb-s-release", root,
                        r"512K/unique_reference.pkl: this is a Git LFS pointer: run git lfs pull")


def test_mismatched_references(tmp_path):
    root = write_release(tmp_path / "release")
    rows = [{"query": "Q?", "answer": "a", "reference_list": ["Not a document.", 3, None]}]
    (root / "qar" / "test.jsonl").write_text(json.dumps(rows[0]) + "\n")
    b = emb_s_release.read(root)  # the reader itself: read_bank refuses a bank without a usable query
    assert b.queries == [] and b.skipped == {"reference matching no document": 3,
                                             "query without a matching reference": 1}
    assert_import_fails(tmp_path, "emb-s-release", root, r"no usable query in .*\(4 skipped: reference matching no "
                                                         r"document, query without a matching reference\)")
    why = [u["why"] for u in b.details["unmatched_named"]]
    assert why == ["no document has this text", "index 3 with no scale to resolve it", "not a text or an index"]


def test_memo_bomb_fails_fast(tmp_path):
    folder = release(tmp_path / "bomb")
    text = "x" * 4096
    (folder / "unique_reference.pkl").write_bytes(pickle.dumps([text] * 5_000_000))  # 10 MB, 20 G characters
    assert (folder / "unique_reference.pkl").stat().st_size < 20 << 20
    assert_import_fails(tmp_path, "emb-s-release", folder, r"unique_reference.pkl: the pickle expands to more than "
                                                           r"[\d,]+ characters from a [\d,]+-byte file.*memo bomb")
    (folder / "unique_reference.pkl").write_bytes(pickle.dumps(["ab"] * 3_000_000))  # short: under the char limit
    assert_import_fails(tmp_path, "emb-s-release", folder, r"unique_reference.pkl: the pickle repeats one object "
                                                           r"2,999,999 times in 3,000,000 references")
    nested = [[text] * 1000] * 1000  # one list repeated: 1,000,000 references in a few KB
    (folder / "unique_reference.pkl").write_bytes(pickle.dumps(["ok"]))
    (folder / "data.pkl").write_bytes(pickle.dumps([{"query": "q", "answer": "a", "reference_list": nested}]))
    assert_import_fails(tmp_path, "emb-s-release", folder, r"data.pkl: the pickle expands to more than")
