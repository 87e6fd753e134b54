"""Every input a user can get wrong is one clear line (exit 2) and leaves the workspace as it was (issue 10 §2).

Each case here once gave a traceback or was accepted wrongly; the message must name file, line/record, field, what
was found and what was expected, or the limit and how to raise it.
"""
from __future__ import annotations

import json
import os
import pickle
from pathlib import Path

import pytest

from emb_s_core import bank
from emb_s_core.cli import main
from emb_s_core.errors import EmbSError
from tests.conftest import assert_import_fails, native_bank, write_jsonl
from tests.import_cases import CASES, set_path


def _bad(tmp_path: Path, name: str, index: int, path: tuple, value) -> Path:
    return CASES[name].write(tmp_path / f"in-{name}", lambda recs: set_path(recs, index, path, value))


def _raw(tmp_path: Path, name: str, raw: bytes) -> Path:
    """The valid input of ``name`` with ``raw`` bytes appended to its first data file."""
    target = CASES[name].write(tmp_path / f"raw-{name}")
    first = target / ("documents.jsonl" if name == "native" else "corpus.jsonl") if target.is_dir() else target
    first.write_bytes(first.read_bytes() + raw)
    return target


@pytest.mark.parametrize("name", ["native", "2wiki", "musique", "hotpotqa", "beir"])
def test_invalid_utf8_names_file_and_line(tmp_path, name):
    path = _raw(tmp_path, name, b'{"x": "caf\xe9"}\n')
    assert_import_fails(tmp_path, CASES[name].fmt, path, r"line \d+: invalid UTF-8 \(byte 11 of the line is 0xe9\)")


def test_invalid_utf8_in_one_json_array_file(tmp_path):
    path = CASES["locomo"].write(tmp_path / "l")
    path.write_bytes(path.read_bytes().replace(b"Nice!", b"Nic\xe9!"))
    assert_import_fails(tmp_path, "locomo", path, r"locomo10.json line 1: invalid UTF-8 \(byte 0xe9\)")


def test_binary_data_is_named(tmp_path):
    path = _raw(tmp_path, "native", b"\x00\x01\x02PK\x03\x04\n")
    assert_import_fails(tmp_path, "native", path, r"documents.jsonl line 3: binary data \(a NUL byte at byte 1\)")


WRONG_TYPES = [
    ("hotpotqa", 0, ("type",), ["bridge"], r"field 'type': expected a string, found list \['bridge'\]"),
    ("hotpotqa", 0, ("context", 0, 0), 7, r"context entry \[7, \["),
    ("hotpotqa", 0, ("context", 0, 0), ["Film", "X"], r"context entry \[\['Film', 'X'\]"),
    ("hotpotqa-ircot", 0, ("contexts", 0, "title"), 12, r"contexts\[0\]: field 'title': expected a string, found integer 12"),
    ("hotpotqa-ircot", 0, ("contexts", 0, "title"), ["a"], r"field 'title': expected a string, found list"),
    ("2wiki", 0, ("type",), {"k": 1}, r"field 'type': expected a string, found object \{'k': 1\}"),
    ("native", 0, ("title",), 5, r"documents.jsonl line 1: field 'title': expected a string, found integer 5"),
    ("native", 1, ("domain",), ["geo"], r"documents.jsonl line 2: field 'domain': expected a string, found list"),
    ("emb-s-release", 0, ("type",), ["fact"], r"data.pkl record 0: field 'type': expected a string, "
     r"found list"),
    ("locomo", 0, ("qa", 0, "category"), [2], r"qa\[0\]: field 'category': expected an integer category 1-5, found list"),
    ("native", 0, ("doc_id",), 2**70, r"documents.jsonl line 1: integer 1180591620717411303424 is outside the 64-bit"),
    ("native", 2, ("ref_ids",), [2**70], r"queries.jsonl line 1: integer 1180591620717411303424 is outside the 64-bit"),
]


@pytest.mark.parametrize("name,index,path,value,message", WRONG_TYPES, ids=[f"{c[0]}-{c[2]}" for c in WRONG_TYPES])
def test_wrong_type_never_reaches_arrow_or_a_set(tmp_path, name, index, path, value, message):
    assert_import_fails(tmp_path, CASES[name].fmt, _bad(tmp_path, name, index, path, value), message)


STRING_FOR_LIST = [
    ("hotpotqa-ircot", 0, ("answers_objects", 0, "spans"), "Chief", r"field 'spans': expected a list, found string"),
    ("native", 2, ("answer_aliases",), "xyz", r"field 'answer_aliases': expected a list, found string 'xyz'"),
    ("musique", 0, ("answer_aliases",), "xyz", r"field 'answer_aliases': expected a list, found string 'xyz'"),
    ("native", 2, ("ref_ids",), "1", r"field 'ref_ids': expected a list, found string '1'"),
    ("locomo", 0, ("qa", 0, "evidence"), "D1:1", r"field 'evidence': expected a list, found string 'D1:1'"),
]


@pytest.mark.parametrize("name,index,path,value,message", STRING_FOR_LIST, ids=[c[0] for c in STRING_FOR_LIST])
def test_string_where_a_list_is_expected_is_an_error_not_iterated(tmp_path, name, index, path, value, message):
    assert_import_fails(tmp_path, CASES[name].fmt, _bad(tmp_path, name, index, path, value), message)


def test_deep_json_is_a_clear_error(tmp_path):
    deep = "[" * 100_000 + "]" * 100_000
    folder = native_bank(tmp_path / "n")
    (folder / "queries.jsonl").write_text('{"qid": "q1", "text": "t", "answer": "a", "ref_ids": ' + deep + "}\n")
    assert_import_fails(tmp_path, "native", folder, r"queries.jsonl line 1: JSON nested deeper than 200 levels "
                                                    r"\(limit json_depth\)")
    locomo = tmp_path / "locomo.json"
    locomo.write_text(deep)
    assert_import_fails(tmp_path, "locomo", locomo, "JSON nested deeper than 200 levels.*EMB_S_MAX_JSON_DEPTH")


def test_empty_input_is_an_error_not_a_new_version(tmp_path):
    empty = tmp_path / "hotpot.json"
    empty.write_text("")
    assert_import_fails(tmp_path, "hotpotqa", empty, r"no records in .*hotpot.json")
    (tmp_path / "blank.jsonl").write_text("\n\n")
    assert_import_fails(tmp_path, "musique", tmp_path / "blank.jsonl", r"no records in .*blank.jsonl")
    (tmp_path / "array.json").write_text("[]")
    assert_import_fails(tmp_path, "2wiki", tmp_path / "array.json", r"no records in .*array.json")


def test_fifo_symlink_loop_and_folder_get_their_own_words(tmp_path):
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    assert_import_fails(tmp_path, "hotpotqa", fifo, r"import path is a FIFO \(named pipe\), not a regular file")
    loop = tmp_path / "loop.jsonl"
    loop.symlink_to(tmp_path / "loop2.jsonl")
    (tmp_path / "loop2.jsonl").symlink_to(loop)
    assert_import_fails(tmp_path, "musique", loop, "is a symbolic link loop")
    dangling = tmp_path / "dangling.jsonl"
    dangling.symlink_to(tmp_path / "nowhere.jsonl")
    assert_import_fails(tmp_path, "musique", dangling, "is a broken symbolic link")
    folder = native_bank(tmp_path / "n")
    (folder / "documents.jsonl").unlink()
    (folder / "documents.jsonl").mkdir()
    assert_import_fails(tmp_path, "native", folder, r"native documents file is a folder, expected a file")
    fifo_docs = native_bank(tmp_path / "f")
    (fifo_docs / "queries.jsonl").unlink()
    os.mkfifo(fifo_docs / "queries.jsonl")
    assert_import_fails(tmp_path, "native", fifo_docs, r"native queries file is a FIFO")


def test_limits_name_themselves_and_how_to_raise_them(tmp_path, monkeypatch):
    folder = native_bank(tmp_path / "n")
    bank.import_path(tmp_path / "ws-before", "native", native_bank(tmp_path / "native-good"))
    monkeypatch.setenv("EMB_S_MAX_RECORD_BYTES", "100")
    assert_import_fails(tmp_path, "native", folder, r"documents.jsonl line 1: a record \(line\) longer than the limit "
                                                    r"record_bytes = 100 Fix: .*export EMB_S_MAX_RECORD_BYTES=400")
    monkeypatch.delenv("EMB_S_MAX_RECORD_BYTES")
    monkeypatch.setenv("EMB_S_MAX_REFERENCES", "1")
    assert_import_fails(tmp_path, "native", folder, r"queries.jsonl line 2 field 'ref_ids': 2 exceeds the limit "
                                                    r"references_per_query = 1 .*EMB_S_MAX_REFERENCES=")
    monkeypatch.setenv("EMB_S_MAX_REFERENCES", "lots")
    with pytest.raises(EmbSError, match="EMB_S_MAX_REFERENCES='lots' is not an integer"):
        bank.import_path(tmp_path / "other", "native", folder)


def test_failed_import_into_a_new_path_leaves_nothing(tmp_path, monkeypatch):
    bad = _bad(tmp_path, "native", 0, ("title",), 5)
    target = tmp_path / "new" / "ws"
    with pytest.raises(EmbSError):
        bank.import_path(target, "native", bad)
    assert not (tmp_path / "new").exists()

    def broken(*args, **kwargs):  # a failure after the workspace folder was created (e.g. disk full)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(bank, "_write_documents", broken)
    with pytest.raises(EmbSError, match="the disk holding the workspace .* is full"):
        bank.import_path(target, "native", native_bank(tmp_path / "good"))
    assert not (tmp_path / "new").exists()


def test_cli_one_line_exit_2_for_a_workspace_that_is_a_file(tmp_path, capsys):
    file_ws = tmp_path / "passwd"
    file_ws.write_text("root:x:0:0")
    code = main(["import", str(native_bank(tmp_path / "n")), "--format", "native", "--workspace", str(file_ws)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "is a file, not a folder" in err[0]
    assert file_ws.read_text() == "root:x:0:0"


def test_release_record_types_are_checked_where_they_are_read(tmp_path):
    """The release reader names the field as the file spells it (``type``), before the bank-level gate."""
    folder = tmp_path / "rel"
    folder.mkdir()
    (folder / "unique_reference.pkl").write_bytes(pickle.dumps(["A text."]))
    (folder / "data.pkl").write_bytes(pickle.dumps([{"query": "q?", "answer": "a", "reference_list": [0],
                                                     "type": {"x": 1}}]))
    assert_import_fails(tmp_path, "emb-s-release", folder,
                        r"data.pkl record 0: field 'type': expected a string, found object")


def test_valid_scalars_still_import(tmp_path):
    """Numbers as answers and as aliases are documented scalars, written as text (nothing else is coerced)."""
    folder = native_bank(tmp_path / "n", queries=[{"qid": 7, "text": "Year?", "answer": 987, "ref_ids": [1],
                                                   "answer_aliases": [987.5, "nine eight seven"]}])
    report = bank.import_path(tmp_path / "ws", "native", folder)
    from emb_s_core.store import Workspace

    q = bank.queries(Workspace(tmp_path / "ws")).iloc[0]
    assert report.n_queries == 1 and (q.qid, q.answer, list(q.answer_aliases)) == ("7", "987", ["987.5",
                                                                                                "nine eight seven"])
    write_jsonl(tmp_path / "x.jsonl", [json.loads("{}")])


def test_default_record_limit_stops_a_huge_line_before_any_work(tmp_path):
    folder = native_bank(tmp_path / "n")
    with open(folder / "documents.jsonl", "ab") as fh:  # 17 MiB without a space or newline: read 16 MiB, stop
        fh.write(b'{"doc_id": 9, "text": "' + b"x" * (17 << 20) + b'"}\n')
    assert_import_fails(tmp_path, "native", folder, r"documents.jsonl line 5: a record \(line\) longer than the "
                                                    r"limit record_bytes = 16,777,216")
