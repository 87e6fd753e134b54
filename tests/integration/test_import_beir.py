"""BEIR import: folder or qrels file, split choice, gold = score > 0, skipped queries and rows, bad lines."""
from __future__ import annotations

from pathlib import Path

from emb_s_core import bank
from emb_s_core.sources import read_bank
from emb_s_core.store import Workspace
from tests.conftest import assert_import_fails, write_jsonl

CORPUS = [{"_id": "d1", "title": "Aspirin", "text": "Aspirin thins blood."},
          {"_id": "d2", "title": "Ibuprofen", "text": "Ibuprofen reduces fever."},
          {"_id": "d3", "title": "", "text": "Paracetamol is an analgesic."},
          {"_id": "d4", "title": "", "text": ""}]
QUERIES = [{"_id": "q1", "text": "what thins blood"}, {"_id": "q2", "text": "fever and pain"},
           {"_id": "q3", "text": "unjudged query"}]


def beir(folder: Path, qrels: dict[str, str], corpus=CORPUS, queries=QUERIES) -> Path:
    write_jsonl(folder / "corpus.jsonl", corpus)
    write_jsonl(folder / "queries.jsonl", queries)
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    for split, body in qrels.items():
        (folder / "qrels" / f"{split}.tsv").write_text("query-id\tcorpus-id\tscore\n" + body)
    return folder


TEST = "q1\td1\t1\nq1\td2\t0\nq2\td2\t2\nq2\td3\t1\nq2\td9\t1\nq7\td1\t1\n"


def test_read_folder(tmp_path):
    b = read_bank("beir", beir(tmp_path / "scifact", {"test": TEST, "train": "q3\td1\t1\n"}))
    docs = list(b.documents)  # streamed: corpus.jsonl is read again
    assert [(d.doc_id, d.text) for d in docs] == [(0, "Aspirin thins blood."), (1, "Ibuprofen reduces fever."),
                                                  (2, "Paracetamol is an analgesic.")]
    assert docs[2].title is None
    assert [(q.qid, q.ref_ids, q.answer) for q in b.queries] == [("q1", [0], ""), ("q2", [1, 2], "")]
    assert b.skipped == {"empty document": 1, "qrels row naming a corpus id not in corpus.jsonl": 1,
                         "query without gold in qrels/test": 1, "qrels query id not in queries.jsonl": 1}


def test_split_file_and_workspace(tmp_path):
    folder = beir(tmp_path / "nq", {"test": TEST, "train": "q3\td1\t1\n"})
    b = read_bank("beir", folder / "qrels" / "train.tsv")
    assert [(q.qid, q.ref_ids) for q in b.queries] == [("q3", [0])] and b.notes == ["qrels split: train"]
    report = bank.import_path(tmp_path / "ws", "beir", folder)
    assert (report.n_documents, report.n_queries) == (3, 2)
    qs = bank.queries(Workspace(tmp_path / "ws"))
    assert qs["task_type"].tolist() == ["single-source", "multi-source"]


def test_bad_inputs(tmp_path):
    several = beir(tmp_path / "a", {"train": TEST, "dev": TEST})
    assert_import_fails(tmp_path, "beir", several, r"several qrels splits \(dev, train\) and no 'test'")
    bad_score = beir(tmp_path / "b", {"test": "q1\td1\thigh\n"})
    assert_import_fails(tmp_path, "beir", bad_score, r"test.tsv line 2: score 'high' is not a number")
    bad_cols = beir(tmp_path / "c", {"test": "q1 d1 1\n"})
    assert_import_fails(tmp_path, "beir", bad_cols, r"test.tsv line 2: expected 3 tab-separated columns")
    bad_json = beir(tmp_path / "d", {"test": TEST}, corpus=CORPUS + ['{"_id": "d5", '])
    assert_import_fails(tmp_path, "beir", bad_json, r"corpus.jsonl line 5: malformed JSON")
    dup = beir(tmp_path / "e", {"test": TEST}, corpus=CORPUS + [CORPUS[0]])
    assert_import_fails(tmp_path, "beir", dup, r"corpus.jsonl line 5: duplicate corpus _id 'd1' \(first at corpus.jsonl line 1\)")
    no_queries = beir(tmp_path / "f", {"test": TEST})
    (no_queries / "queries.jsonl").unlink()
    assert_import_fails(tmp_path, "beir", no_queries, r"BEIR queries.jsonl not found")
    (tmp_path / "g").mkdir()
    assert_import_fails(tmp_path, "beir", tmp_path / "g", r"no qrels/<split>.tsv in")
    assert_import_fails(tmp_path, "beir", tmp_path / "a" / "corpus.jsonl", r"corpus.jsonl is not a qrels .tsv file")


def test_corpus_streams_and_a_changed_corpus_writes_nothing(tmp_path):
    import pytest

    from emb_s_core.errors import EmbSError

    folder = beir(tmp_path / "scifact", {"test": TEST})
    b = read_bank("beir", folder)
    corpus = folder / "corpus.jsonl"
    corpus.write_text("\n".join(corpus.read_text().splitlines()[1:]) + "\n")  # an entry gone between the passes
    ws = Workspace(tmp_path / "ws", create=True)
    with pytest.raises(EmbSError, match="documents read the second time"):
        bank.add_bank(ws, b, fmt="beir", path=folder, sha256="0" * 64)
    ws.refresh()
    assert ws.version == 0 and not ws.has_table("documents")
