"""Ids, sizes and links from hostile inputs (issue 33 §2, §3): each is refused before anything is written, in one line
naming what, where and what to do, with the workspace unchanged and the work bounded.

The one rule for ids and names (README, "Ids and names"): NFC-normalized; no control or format character (newline,
U+2028, a bidi override); a query id holds no whitespace (a TREC run cannot carry it); a domain is trimmed, its
blanks collapsed and lower-cased, so ``Law``, ``law`` and ``law `` are one domain."""
from __future__ import annotations

import json
import re
import pickle
import resource
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from emb_s_core import bank, runs
from emb_s_core.cli import main
from emb_s_core.errors import EmbSError
from emb_s_core.sources import validate
from emb_s_core.store import Workspace
from tests.conftest import assert_import_fails, native_bank, write_jsonl
from tests.import_cases import HOTPOT
from tests.integration.test_import_beir import TEST, beir
from tests.release_mock import write_release
from testkit.retrieval_bank import copy_workspace, template

BIG = 2**63 - 3


def _big_id_workspace(tmp_path: Path) -> Workspace:
    docs = [{"doc_id": BIG, "text": "A document with the largest id.", "domain": "history"}]
    queries = [{"qid": "big", "text": "Which document?", "answer": "it", "ref_ids": [BIG]}]
    bank.import_path(tmp_path / "ws-before", "native", native_bank(tmp_path / "big", docs, queries))
    return Workspace(tmp_path / "ws-before")


@pytest.mark.parametrize("fmt", ["emb-s-release", "hotpotqa", "beir"])
def test_an_import_next_to_a_huge_doc_id_is_refused_before_writing(tmp_path, fmt, capsys):
    ws = _big_id_workspace(tmp_path)
    if fmt == "emb-s-release":
        source = write_release(tmp_path / "release")
    elif fmt == "hotpotqa":
        source = HOTPOT.write(tmp_path / "hotpot")
    else:
        source = beir(tmp_path / "beir", {"test": TEST})
    version = ws.version
    capsys.readouterr()
    assert main(["import", "--format", fmt, str(source), "--workspace", str(ws.path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "past the 64-bit range" in err[0] and f"largest doc id is {BIG:,}" in err[0], err
    assert "Traceback" not in err[0] and "import into a new workspace" in err[0]
    ws.refresh()
    assert ws.version == version and len(bank.documents(ws)) == 1


@pytest.mark.parametrize("docid", ["1_0", "١٠", "１２", "0x10", "1.0", "+"])
def test_trec_doc_ids_are_plain_ascii_decimal(tmp_path_factory, tmp_path, docid, capsys):
    ws = copy_workspace(template(tmp_path_factory), tmp_path / "ws")
    qid = ws.read("queries", columns=["qid"]).column("qid")[0].as_py()
    f = tmp_path / "run.trec"
    f.write_text(f"{qid} Q0 1 1 9.0 sys\n{qid} Q0 {docid} 2 8.0 sys\n", encoding="utf-8")
    version = ws.version
    capsys.readouterr()
    assert main(["runs", "import", str(f), "--name", "ext", "-w", str(ws.path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "run.trec line 2: docid" in err[0] and "is not an integer (plain ASCII decimal digits 0-9)" in err[0], err
    ws.refresh()
    assert ws.version == version and "ext" not in set(runs.list_runs(ws)["run"])


def test_a_trec_run_past_its_line_limit_stops_at_the_limit(tmp_path_factory, tmp_path, monkeypatch, capsys):
    ws = copy_workspace(template(tmp_path_factory), tmp_path / "ws")
    qid = ws.read("queries", columns=["qid"]).column("qid")[0].as_py()
    f = tmp_path / "run.trec"
    f.write_text("".join(f"{qid} Q0 {i} {i} {1.0 / i} sys\n" for i in range(1, 2001)))
    monkeypatch.setenv("EMB_S_MAX_RUN_LINES", "1000")
    capsys.readouterr()
    assert main(["runs", "import", str(f), "--name", "ext", "-w", str(ws.path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "1,001 exceeds the limit run_lines = 1,000" in err[0], err
    assert "stopped reading at line 1,001" in err[0] and "EMB_S_MAX_RUN_LINES" in err[0]


@pytest.mark.parametrize("qid,message", [
    ("q\u2028x", "U+2028 (LINE SEPARATOR)"),
    ("q\u202ex", "U+202E (RIGHT-TO-LEFT OVERRIDE)"),
    ("q\u200bx", "U+200B (ZERO WIDTH SPACE)"),
    ("q x", "holds whitespace at character 2"),
    ("q\u00a0x", "holds whitespace at character 2"),
])
def test_qids_a_run_file_or_a_line_cannot_carry_are_refused(tmp_path, qid, message):
    queries = [{"qid": qid, "text": "Since when?", "answer": "987", "ref_ids": [1]}]
    assert_import_fails(tmp_path, "native", native_bank(tmp_path / "b", queries=queries), re.escape(message))


def test_nfc_and_nfd_spellings_are_one_query_id(tmp_path):
    nfc, nfd = "caf\u00e9", "cafe\u0301"
    queries = [{"qid": nfc, "text": "A?", "answer": "a", "ref_ids": [1]},
               {"qid": nfd, "text": "B?", "answer": "b", "ref_ids": [3]}]
    assert_import_fails(tmp_path, "native", native_bank(tmp_path / "b", queries=queries), "duplicate qid 'café'")
    alone = [{"qid": nfd, "text": "B?", "answer": "b", "ref_ids": [3]}]  # stored in its NFC form
    bank.import_path(tmp_path / "ws2", "native", native_bank(tmp_path / "c", queries=alone))
    assert bank.queries(Workspace(tmp_path / "ws2"))["qid"].tolist() == [nfc]


def test_domains_differing_in_case_or_blanks_are_one_domain(tmp_path):
    docs = [{"doc_id": 1, "text": "Law one.", "domain": "Law"}, {"doc_id": 2, "text": "Law two.", "domain": "law "},
            {"doc_id": 3, "text": "Law three.", "domain": " LAW"}, {"doc_id": 4, "text": "Other.", "domain": "Public  Law"}]
    queries = [{"qid": "q1", "text": "Q?", "answer": "a", "ref_ids": [1], "domain": "law"}]
    bank.import_path(tmp_path / "ws", "native", native_bank(tmp_path / "b", docs, queries))
    ws = Workspace(tmp_path / "ws")
    assert sorted(set(bank.documents(ws)["domain"])) == ["law", "public law"]
    assert bank.queries(ws)["domain"].tolist() == ["law"]


def _release_with(tmp_path: Path, rows: list[dict]) -> Path:
    root = write_release(tmp_path / "release")
    (root / "qar" / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


def test_release_query_ids_naming_two_different_questions_are_refused(tmp_path):
    from tests.release_mock import SCALES

    rows = [{"id": "q1", "query": "Which trial studied aspirin?", "answer": "a", "reference_list": [SCALES["64K"][0]]},
            {"id": "q1", "query": "Something else entirely?", "answer": "b", "reference_list": [SCALES["64K"][1]]}]
    assert_import_fails(tmp_path, "emb-s-release", _release_with(tmp_path, rows),
                        r"query id 'q1' names two different questions .*qar/test.jsonl line 1")


@pytest.mark.parametrize("label,message", [("0K", "scale label '0K' is zero"),
                                           ("99999999999999999999G", "is larger than 64G tokens")])
def test_release_scale_labels_are_range_checked(tmp_path, label, message):
    root = write_release(tmp_path / "release")
    (root / "data" / "64K").rename(root / "data" / label)
    assert_import_fails(tmp_path, "emb-s-release", root, message)


def test_release_links_leaving_the_release_folder_are_refused(tmp_path):
    root = write_release(tmp_path / "release")
    outside = tmp_path / "elsewhere.pkl"
    outside.write_bytes(pickle.dumps(["A text that lives outside the release."]))
    (root / "data" / "64K" / "unique_reference.pkl").unlink()
    (root / "data" / "64K" / "unique_reference.pkl").symlink_to(outside)
    assert_import_fails(tmp_path, "emb-s-release", root,
                        r"data/64K/unique_reference.pkl is a link to a file outside the release folder")


def _queries_parquet(folder: Path) -> None:
    write_jsonl(folder / "queries.jsonl", [{"qid": "q1", "text": "Q?", "answer": "a", "ref_ids": [0]}])


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def test_a_parquet_dictionary_bomb_is_refused_early_in_bounded_memory(tmp_path):
    """One 8 MiB string, dictionary-encoded over 2,000 rows: a ~10 KB file that decodes to 16 GB."""
    folder = tmp_path / "bomb"
    folder.mkdir()
    big = "x" * (8 << 20)
    table = pa.table({"doc_id": pa.array(range(2000), pa.int64()),
                      "text": pa.DictionaryArray.from_arrays(pa.array([0] * 2000, pa.int32()), pa.array([big]))})
    pq.write_table(table, folder / "documents.parquet", compression="zstd")
    del big, table
    _queries_parquet(folder)
    assert (folder / "documents.parquet").stat().st_size < 100_000
    before, start = _peak_mib(), time.monotonic()
    assert_import_fails(tmp_path, "native", folder, "the Parquet file's text passes 67,108,864 bytes by row 256")
    assert time.monotonic() - start < 30 and _peak_mib() - before < 1500  # was 8 GB in 35 s


def test_a_parquet_cell_larger_than_a_record_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("EMB_S_MAX_RECORD_BYTES", str(1 << 20))
    folder = tmp_path / "cell"
    folder.mkdir()
    pq.write_table(pa.table({"doc_id": [0, 1], "text": ["fine", "y" * (3 << 20)]}), folder / "documents.parquet",
                   compression="zstd")
    _queries_parquet(folder)
    assert_import_fails(tmp_path, "native", folder, r"documents.parquet row 2: 3,145,728 exceeds the limit record_bytes")


def test_a_parquet_column_chunk_past_the_expansion_bound_is_refused_from_metadata(tmp_path):
    folder = tmp_path / "chunk"
    folder.mkdir()
    pq.write_table(pa.table({"doc_id": [0], "text": ["z" * (70 << 20)]}), folder / "documents.parquet",
                   compression="zstd", use_dictionary=False)
    _queries_parquet(folder)
    assert (folder / "documents.parquet").stat().st_size < 100_000
    assert_import_fails(tmp_path, "native", folder, r"column 'text' of row group 0 holds 73,4\d\d,\d\d\d bytes "
                                                    "uncompressed")


def test_a_parquet_file_with_two_columns_of_one_name_is_refused(tmp_path):
    folder = tmp_path / "dup"
    folder.mkdir()
    table = pa.Table.from_arrays([pa.array([0]), pa.array(["first"]), pa.array(["second"])],
                                 names=["doc_id", "text", "text"])
    pq.write_table(table, folder / "documents.parquet")
    _queries_parquet(folder)
    assert_import_fails(tmp_path, "native", folder, "the Parquet file has 1 column name.s. twice: 'text'")


def test_the_limit_is_documented():
    assert validate.LIMIT_ENV["run_lines"] == "EMB_S_MAX_RUN_LINES"
    with pytest.raises(EmbSError):
        validate.check_limit("run_lines", validate.limits().run_lines + 1, "x")


def test_a_dictionary_bomb_inside_a_list_column_is_refused_before_decoding(tmp_path):
    """A 4 MiB string repeated 20 times in each row's list: each row is 80 MiB once decoded, the file 4 KB."""
    folder = tmp_path / "nested"
    folder.mkdir()
    values = pa.DictionaryArray.from_arrays(pa.array([0] * 20_000, pa.int32()), pa.array(["x" * (4 << 20)]))
    lists = pa.ListArray.from_arrays(pa.array(range(0, 20_001, 20), pa.int32()), values)
    pq.write_table(pa.table({"doc_id": pa.array(range(1000), pa.int64()), "text": ["ok"] * 1000, "aliases": lists}),
                   folder / "documents.parquet", compression="zstd")
    del values, lists
    _queries_parquet(folder)
    before, start = _peak_mib(), time.monotonic()
    assert_import_fails(tmp_path, "native", folder, "documents.parquet row 1: 83,886,082 exceeds the limit record_bytes")
    assert time.monotonic() - start < 20 and _peak_mib() - before < 500
