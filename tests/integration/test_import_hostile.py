"""The last inputs that got through or crashed: each is now one clear error that names where and what, and the
workspace is left exactly as it was (run files: no run; banks: same version, same documents)."""
from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from emb_s_core import runs
from emb_s_core.cli import main
from emb_s_core.errors import EmbSError
from emb_s_core.sources import validate
from emb_s_core.sources.plain_pickle import load_plain_pickle
from emb_s_core.store import Workspace
from tests.conftest import assert_import_fails, native_bank
from tests.import_cases import HOTPOT, LOCOMO, TWOWIKI, set_path
from testkit.retrieval_bank import REPO, copy_workspace, template


@pytest.fixture
def ws(tmp_path_factory, tmp_path):
    return copy_workspace(template(tmp_path_factory), tmp_path / "ws")


def _run_import_fails(ws: Workspace, path: Path, message: str, capsys, name: str = "ext") -> None:
    """`emb-s runs import` exits 2 with one line holding ``message`` and stores nothing."""
    version, names = ws.version, list(runs.list_runs(ws)["name"]) if len(runs.list_runs(ws)) else []
    capsys.readouterr()
    assert main(["runs", "import", str(path), "--name", name, "-w", str(ws.path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("emb-s: error: ") and message in err[0], err
    ws.refresh()
    assert ws.version == version and (list(runs.list_runs(ws)["name"]) if len(runs.list_runs(ws)) else []) == names


def _first_qid(ws: Workspace) -> str:
    return ws.read("queries", columns=["qid"]).column("qid")[0].as_py()


def test_trec_doc_id_beyond_64_bits_is_a_clear_error(ws, tmp_path, capsys):
    qid = _first_qid(ws)
    f = tmp_path / "run.trec"
    f.write_text(f"{qid} Q0 1 1 9.0 sys\n{qid} Q0 {2**70} 2 8.0 sys\n")
    _run_import_fails(ws, f, f"run.trec line 2: docid {2**70} is outside the 64-bit range", capsys)


def test_trec_invalid_utf8_is_a_clear_error(ws, tmp_path, capsys):
    qid = _first_qid(ws)
    f = tmp_path / "run.trec"
    f.write_bytes(f"{qid} Q0 1 1 9.0 sys\n".encode() + b"q\xff Q0 2 2 8.0 sys\n")
    _run_import_fails(ws, f, "run.trec line 2: invalid UTF-8 (byte 2 of the line is 0xff)", capsys)


@pytest.mark.parametrize("fmt", ["trec", "jsonl"])
def test_a_score_float32_cannot_hold_is_rejected(ws, tmp_path, capsys, fmt):
    qid = _first_qid(ws)
    if fmt == "trec":
        f = tmp_path / "run.trec"
        f.write_text(f"{qid} Q0 1 1 1e39 sys\n")
    else:
        f = tmp_path / "run.jsonl"
        f.write_text(json.dumps({"qid": qid, "doc_ids": [1, 2], "scores": [1e39, 1.0]}) + "\n")
    _run_import_fails(ws, f, "score 1e+39 is not finite (scores are stored as 32-bit floats", capsys)


def test_a_run_named_blank_or_with_control_characters_is_refused(ws, tmp_path, capsys):
    qid = _first_qid(ws)
    f = tmp_path / "run.trec"
    f.write_text(f"{qid} Q0 1 1 9.0 sys\n")
    _run_import_fails(ws, f, "run name: field 'name': expected a non-empty string, found string ''", capsys, name="")
    _run_import_fails(ws, f, "holds the control character U+000A", capsys, name="two\nlines")


def test_a_lone_surrogate_in_native_json_is_a_clear_error(tmp_path):
    folder = native_bank(tmp_path / "bad")
    lines = (folder / "queries.jsonl").read_text().splitlines()
    lines[0] = lines[0].replace('"text": "', '"text": "\\ud800 ', 1)
    (folder / "queries.jsonl").write_text("\n".join(lines) + "\n")
    assert_import_fails(tmp_path, "native", folder, r"queries.jsonl line 1: a string: a lone surrogate \\ud800 at "
                                                    r"character 1 is not text")


@pytest.mark.parametrize("qid", ["q\u0000nul", "two\nlines", "tab\there"])
def test_a_qid_with_a_control_character_is_refused(tmp_path, qid):
    queries = [{"qid": qid, "text": "Capital of France?", "answer": "Paris", "ref_ids": [1]}]
    folder = native_bank(tmp_path / "bad", queries=queries)
    assert_import_fails(tmp_path, "native", folder, r"queries.jsonl line 1: field 'qid': .* holds the control "
                                                    r"character U\+00")


def test_more_than_eight_domains_are_refused_in_one_bank_and_across_imports(tmp_path):
    docs = [{"doc_id": i, "text": f"Document {i}.", "domain": f"domain{i}"} for i in range(9)]
    queries = [{"qid": "q", "text": "Which?", "answer": "x", "ref_ids": [0]}]
    assert_import_fails(tmp_path, "native", native_bank(tmp_path / "nine", docs, queries),
                        r"9 domains \('domain0', .*\): a bank holds at most 8")
    # the workspace already has 'history' and 'math': seven more make nine
    seven = [{"doc_id": 100 + i, "text": f"Document {i}.", "domain": f"new{i}"} for i in range(7)]
    assert_import_fails(tmp_path, "native", native_bank(tmp_path / "seven", seven,
                                                        [{**queries[0], "ref_ids": [100]}]),
                        r"the workspace .* with .*seven: 9 domains")


def test_documents_in_both_jsonl_and_parquet_are_ambiguous(tmp_path):
    folder = native_bank(tmp_path / "both")
    pd.read_json(folder / "documents.jsonl", lines=True).to_parquet(folder / "documents.parquet")
    assert_import_fails(tmp_path, "native", folder, "both documents.jsonl and documents.parquet are in .*ambiguous")


def test_duplicate_gold_ids_and_blank_documents_are_refused(tmp_path):
    dup = native_bank(tmp_path / "dup", queries=[{"qid": "q", "text": "?", "answer": "x", "ref_ids": [1, 1]}])
    assert_import_fails(tmp_path, "native", dup, r"queries.jsonl line 1: field 'ref_ids': id 1 is listed twice")
    for i, text in enumerate(["", "  \n\t "]):
        docs = [{"doc_id": 1, "text": "Paris is in France."}, {"doc_id": 2, "text": text}]
        folder = native_bank(tmp_path / f"blank{i}", docs, [{"qid": "q", "text": "?", "answer": "x",
                                                              "ref_ids": [2]}])
        assert_import_fails(tmp_path, "native", folder, r"documents.jsonl line 2: field 'text': expected non-empty "
                                                        "text")


@pytest.mark.parametrize("case", [HOTPOT, TWOWIKI], ids=["hotpotqa", "2wiki"])
def test_a_supporting_fact_sentence_index_out_of_range_is_refused(tmp_path, case):
    path = case.write(tmp_path / "in", lambda recs: set_path(recs, 0, ("supporting_facts", 0, 1), 7))
    assert_import_fails(tmp_path, case.fmt, path, r"sentence index 7 is out of range \(the paragraph .* in context "
                                                  r"has \d+; indices count from 0\)")


def test_a_locomo_turn_whose_text_is_a_number_is_refused(tmp_path):
    path = LOCOMO.write(tmp_path / "in", lambda recs: set_path(recs, 0, ("conversation", "session_1", 0, "text"),
                                                               12345))
    assert_import_fails(tmp_path, "locomo", path, r"field 'text': expected a string, found integer 12345")


def test_a_pickle_hash_bomb_is_refused_before_it_is_hashed(tmp_path):
    """Nested pairs shared through the memo: 300 bytes whose dict key would take 2^40 steps to hash."""
    blob = bytearray(b"\x80\x04}K\x01K\x02\x86\x940")  # PROTO 4, {}, (1, 2) memoized and popped
    for i in range(40):
        blob += b"h" + bytes([i]) + b"h" + bytes([i]) + b"\x86\x940"  # (t_i, t_i) memoized and popped
    blob += b"h\x28K\x01s."  # {t_40: 1}
    path = tmp_path / "data.pkl"
    path.write_bytes(bytes(blob))
    start = time.monotonic()
    with pytest.raises(EmbSError, match="a dict key or set member nests more than 10,000 elements .*hash bomb"):
        load_plain_pickle(path)
    assert time.monotonic() - start < 5
    small = {(1, (2, 3)): [1, 2], "s": {4, 5}, "f": frozenset({(6, 7)})}  # plain keys still load
    path.write_bytes(pickle.dumps(small, protocol=4))
    assert load_plain_pickle(path) == small
    path.write_bytes(pickle.dumps(small, protocol=0))
    assert load_plain_pickle(path) == small


def test_every_writing_command_takes_no_wait(tmp_path_factory, tmp_path, capsys):
    """`notes add --no-wait` (and delete, cases import, embed) fail at once naming the holder while a real process
    holds the writer lock, and change nothing."""
    ws = copy_workspace(template(tmp_path_factory), tmp_path / "ws")
    hold = ("import sys, time\nfrom emb_s_core.store import Workspace\nws = Workspace(sys.argv[1])\n"
            "with ws.writer():\n    print('held', flush=True)\n    time.sleep(60)\n")
    holder = subprocess.Popen([sys.executable, "-c", hold, str(ws.path)], cwd=REPO, stdout=subprocess.PIPE,
                              text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        assert holder.stdout.readline().strip() == "held"
        version = ws.version
        for argv in (["notes", "add", "q00", "--text", "typed while busy"], ["notes", "add", "q01", "--tag", "t"]):
            capsys.readouterr()
            start = time.monotonic()
            code = main([*argv, "-w", str(ws.path), "--no-wait"])
            err = capsys.readouterr().err
            assert code == 2 and time.monotonic() - start < 10, err
            assert f"pid {holder.pid}" in err and "Traceback" not in err
        ws.refresh()
        assert ws.version == version
    finally:
        holder.kill()
        holder.wait()
    for argv in (["notes", "delete", "q00"], ["cases", "import", "x.csv", "--tag", "t"],
                 ["embed", "-r", "dense:minilm-l6"]):
        with pytest.raises(SystemExit) as parsed:  # only --help exits: the flag itself is known
            main([*argv, "-w", str(ws.path), "--no-wait", "--help"])
        assert parsed.value.code == 0 and "--no-wait" in capsys.readouterr().out


def test_validate_names_and_scores_directly():
    assert validate.check_score(3.4e38, "f") == 3.4e38
    with pytest.raises(EmbSError, match="score inf is not finite"):
        validate.check_score(float("inf"), "f")
    with pytest.raises(EmbSError, match="U\\+0000"):
        validate.check_name("a\x00b", "run name")
    assert validate.check_identifier("q-ünïcode ✓", "f", "qid") == "q-ünïcode ✓"
    with pytest.raises(EmbSError, match="lone surrogate"):
        validate.text_field({"t": "ok \udc80"}, "t", "f")
