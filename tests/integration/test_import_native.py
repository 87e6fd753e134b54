"""Native import: good bank, idempotent re-import, and every bad input leaves the workspace unchanged."""
from __future__ import annotations

import json

import pytest

from emb_s_core import bank
from emb_s_core.cli import main
from emb_s_core.errors import EmbSError
from emb_s_core.store import Workspace
from tests.conftest import native_bank, write_jsonl


def test_import_and_info(tmp_path, capsys):
    folder = native_bank(tmp_path / "bank")
    ws_dir = tmp_path / "ws"
    assert main(["import", "--format", "native", str(folder), "--workspace", str(ws_dir)]) == 0
    assert main(["info", "--workspace", str(ws_dir), "--json"]) == 0
    out = json.loads(capsys.readouterr().out.split("\n", 1)[1])
    assert out["documents"] == 4 and out["queries"] == 2
    assert out["single_source_queries"] == 1 and out["multi_source_queries"] == 1
    assert out["queries_per_domain"] == {"history": 2}
    docs = bank.documents(Workspace(ws_dir))
    assert docs["doc_id"].tolist() == [1, 2, 3, 4]  # native ids are kept
    assert (docs["n_tokens"] > 0).all()


def test_reimport_is_idempotent(tmp_path, capsys):
    folder = native_bank(tmp_path / "bank")
    ws_dir = tmp_path / "ws"
    bank.import_path(ws_dir, "native", folder)
    ws = Workspace(ws_dir)
    version = ws.version
    report = bank.import_path(ws, "native", folder)
    assert report.already_imported
    assert Workspace(ws_dir).version == version
    assert len(bank.documents(ws)) == 4


GOOD_DOC = {"doc_id": 1, "text": "a"}
GOOD_Q = {"qid": "q", "text": "t", "answer": "a", "ref_ids": [1]}

BAD_INPUTS = [
    ("malformed JSON", [json.dumps(GOOD_DOC), '{"doc_id": 2, "text": '], [GOOD_Q], r"documents.jsonl line 2: malformed JSON"),
    ("duplicate doc id", [GOOD_DOC, {"doc_id": 1, "text": "b"}], [GOOD_Q], r"documents.jsonl line 2: duplicate doc_id 1"),
    ("unknown gold id", [GOOD_DOC], [dict(GOOD_Q, ref_ids=[7])], r"queries.jsonl line 1: .*gold \(ref_ids\) document id\(s\) \[7\]"),
    ("unknown hard negative", [GOOD_DOC], [dict(GOOD_Q, hard_negative_ids=[8])], r"queries.jsonl line 1: .*hard-negative document id\(s\) \[8\]"),
    ("empty RefList", [GOOD_DOC], [dict(GOOD_Q, ref_ids=[])], r"queries.jsonl line 1: .*empty RefList"),
    ("gold and hard negative", [GOOD_DOC], [dict(GOOD_Q, hard_negative_ids=[1])], r"queries.jsonl line 1: .*both as gold and as hard negative"),
    ("string doc id", [{"doc_id": "x1", "text": "a"}], [GOOD_Q], r"documents.jsonl line 1: field 'doc_id': expected an integer, found string 'x1'"),
    ("missing text", [{"doc_id": 1}], [GOOD_Q], r"documents.jsonl line 1: missing field 'text'"),
]


@pytest.mark.parametrize("case,docs,queries,message", BAD_INPUTS, ids=[c[0] for c in BAD_INPUTS])
def test_bad_input_is_named_and_loses_nothing(tmp_path, capsys, case, docs, queries, message):
    ws_dir = tmp_path / "ws"
    bank.import_path(ws_dir, "native", native_bank(tmp_path / "good"))
    before = Workspace(ws_dir)
    version, n_docs = before.version, len(bank.documents(before))

    bad = tmp_path / "bad"
    write_jsonl(bad / "documents.jsonl", docs)
    write_jsonl(bad / "queries.jsonl", queries)
    with pytest.raises(EmbSError, match=message):
        bank.import_path(ws_dir, "native", bad, source="bad")
    # the CLI says the same on stderr with a non-zero exit
    assert main(["import", "-f", "native", str(bad), "--source", "bad", "-w", str(ws_dir)]) == 2
    assert "emb-s: error:" in capsys.readouterr().err
    after = Workspace(ws_dir)
    assert after.version == version
    assert len(bank.documents(after)) == n_docs


def test_missing_file_and_unknown_format(tmp_path, capsys):
    ws_dir = tmp_path / "ws"
    with pytest.raises(EmbSError, match="path not found"):
        bank.import_path(ws_dir, "native", tmp_path / "nope")
    with pytest.raises(EmbSError, match="unknown import format 'xml'"):
        bank.import_path(ws_dir, "xml", native_bank(tmp_path / "b"))
    assert not ws_dir.exists()  # nothing created for a failed import
    (tmp_path / "half").mkdir()
    write_jsonl(tmp_path / "half" / "documents.jsonl", [GOOD_DOC])
    with pytest.raises(EmbSError, match="queries.jsonl .* not found"):
        bank.import_path(ws_dir, "native", tmp_path / "half")


def test_id_clash_with_existing_workspace(tmp_path):
    ws_dir = tmp_path / "ws"
    bank.import_path(ws_dir, "native", native_bank(tmp_path / "a"))
    other = native_bank(tmp_path / "b", docs=[{"doc_id": 3, "text": "x"}],
                        queries=[{"qid": "z", "text": "t", "answer": "a", "ref_ids": [3]}])
    with pytest.raises(EmbSError, match="doc_id 3 .* already exists in the workspace"):
        bank.import_path(ws_dir, "native", other, source="other")
    assert Workspace(ws_dir).version == 1


def test_id_clash_names_the_line(tmp_path):
    bank.import_path(tmp_path / "ws", "native", native_bank(tmp_path / "a"))
    other = native_bank(tmp_path / "b", docs=[{"doc_id": 90, "text": "x"}, {"doc_id": 2, "text": "y"}],
                        queries=[{"qid": "z", "text": "t", "answer": "a", "ref_ids": [90]}])
    with pytest.raises(EmbSError, match=r"documents.jsonl line 2: doc_id 2 \(1 ids in all\) already exists"):
        bank.import_path(tmp_path / "ws", "native", other, source="other")


@pytest.mark.parametrize("change", ["a row removed", "an id changed"])
def test_documents_stream_and_a_file_changed_between_the_passes_writes_nothing(tmp_path, change):
    """Rows are checked in a first pass and streamed into the workspace in a second (no list of every text); a
    documents file edited in between fails the import and the workspace stays as it was."""
    from emb_s_core.schema import DocumentStream
    from emb_s_core.sources import read_bank

    folder = native_bank(tmp_path / "n")
    b = read_bank("native", folder, domain="fallback")
    assert isinstance(b.documents, DocumentStream) and b.documents.ids.tolist() == [1, 2, 3, 4]
    assert [(d.doc_id, d.domain) for d in b.documents] == [(1, "history"), (2, "history"), (3, "history"),
                                                          (4, "math")]
    rows = [json.loads(x) for x in (folder / "documents.jsonl").read_text().splitlines()]
    if change == "a row removed":
        rows = rows[:-1]
    else:
        rows[1]["doc_id"] = 77
    write_jsonl(folder / "documents.jsonl", rows)
    ws = Workspace(tmp_path / "ws", create=True)
    with pytest.raises(EmbSError, match="read (differently )?the second time"):
        bank.add_bank(ws, b, fmt="native", path=folder, sha256="0" * 64)
    ws.refresh()
    assert ws.version == 0 and not ws.has_table("documents")


def test_parquet_documents_stream_in_batches(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = tmp_path / "pq"
    folder.mkdir()
    n = 10_000  # more than one Parquet read batch
    pq.write_table(pa.table({"doc_id": list(range(n)), "text": [f"document {i}" for i in range(n)]}),
                   folder / "documents.parquet", row_group_size=3_000)
    write_jsonl(folder / "queries.jsonl", [{"qid": "q", "text": "t", "answer": "a", "ref_ids": [n - 1]}])
    report = bank.import_path(tmp_path / "ws", "native", folder)
    docs = bank.documents(Workspace(tmp_path / "ws")).sort_values("doc_id")
    assert report.n_documents == n and docs["text"].tolist() == [f"document {i}" for i in range(n)]
