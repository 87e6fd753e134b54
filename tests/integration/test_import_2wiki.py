"""2WikiMultihopQA import: rows without context, duplicated title inside one context, gold by title."""
from __future__ import annotations

import pytest

from emb_s_core.errors import EmbSError
from emb_s_core.sources import read_bank
from tests.conftest import assert_import_fails, write_jsonl


def row(qid: str, context: list | None, facts: list, qtype: str = "comparison") -> dict:
    r = {"_id": qid, "type": qtype, "question": f"q {qid}?", "answer": "Free Guy", "supporting_facts": facts}
    if context is not None:
        r["context"] = context
    return r


def test_read(tmp_path):
    ctx = [["Free Guy", ["Free Guy is a 2021 film.", "Directed by Shawn Levy."]],
           ["Shawn Levy", ["Shawn Levy is a director."]],
           ["Free Guy", ["Free Guy is a 2021 film.", "Directed by Shawn Levy."]],  # duplicated title, same text
           ["Other", ["Other film."]]]
    path = write_jsonl(tmp_path / "2wiki.jsonl", [
        row("w1", ctx, [["Free Guy", 0], ["Shawn Levy", 0], ["Free Guy", 1]], "bridge_comparison"),
        row("w2", None, [["Free Guy", 0]]),
        row("w3", [["Other", ["Other film."]], ["New", ["New one."]]], [["New", 0]], "inference"),
    ])
    b = read_bank("2wiki", path)
    assert [d.title for d in b.documents] == ["Free Guy", "Shawn Levy", "Other", "New"]
    assert b.documents[0].text == "Free Guy is a 2021 film. Directed by Shawn Levy."
    w1, w3 = b.queries
    assert (w1.ref_ids, w1.hard_negative_ids, w1.task_type) == ([0, 1], [2], "bridge_comparison")
    assert (w3.ref_ids, w3.hard_negative_ids, w3.task_type) == ([3], [2], "inference")
    assert b.skipped == {"row without context": 1}


def test_gold_title_missing_from_context_is_skipped(tmp_path):
    path = write_jsonl(tmp_path / "2wiki.jsonl", [row("w1", [["A", ["a."]]], [["A", 0], ["Z", 0]]),
                                                  row("w2", [["B", ["b."]]], [["B", 0]])])
    b = read_bank("2wiki", path)
    assert [q.qid for q in b.queries] == ["w2"] and b.skipped == {"supporting title not in the row's context": 1}
    assert "2wiki.jsonl line 1" in b.notes[0] and "'Z'" in b.notes[0]
    only_skipped = write_jsonl(tmp_path / "only.jsonl", [row("w1", [["A", ["a."]]], [["A", 0], ["Z", 0]])])
    with pytest.raises(EmbSError, match=r"no usable query in .*only.jsonl \(1 skipped: supporting title"):
        read_bank("2wiki", only_skipped)


def test_bad_records(tmp_path):
    path = write_jsonl(tmp_path / "a" / "w.jsonl", [row("w1", [["A", ["a."]]], [["A", 0]]),
                                                    row("w2", [["B", ["b."]]], ["B"])])
    assert_import_fails(tmp_path, "2wiki", path, r"w.jsonl line 2: supporting_facts entry 'B' is not \[title")
    path = write_jsonl(tmp_path / "b" / "w.jsonl", [row("w1", [["A", "a."]], [["A", 0]])])
    assert_import_fails(tmp_path, "2wiki", path, r"w.jsonl line 1: context entry")
    path = write_jsonl(tmp_path / "c" / "w.jsonl", [{"type": "x", "context": []}])
    assert_import_fails(tmp_path, "2wiki", path, r"w.jsonl line 1: missing field '_id'")
