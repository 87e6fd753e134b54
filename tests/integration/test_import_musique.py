"""MuSiQue import: (title, text) dedup with repeated titles, hop task types, aliases, unanswerable rows."""
from __future__ import annotations

from emb_s_core.sources import read_bank
from tests.conftest import assert_import_fails, write_jsonl


def rec(qid: str, paras: list[tuple[str, str, bool]], answerable: bool = True) -> dict:
    return {"id": qid, "question": f"q {qid}?", "answer": "Stanley", "answer_aliases": ["Stanley, ND"],
            "answerable": answerable,
            "paragraphs": [{"idx": i, "title": t, "paragraph_text": x, "is_supporting": s}
                           for i, (t, x, s) in enumerate(paras)]}


def test_read(tmp_path):
    path = write_jsonl(tmp_path / "musique.jsonl", [
        rec("2hop__1_2", [("Port", "Port one.", False), ("County", "County text.", True), ("Town", "Town.", True)]),
        rec("3hop1__3_4_5", [("County", "County text.", True), ("County", "Another county paragraph.", True),
                             ("Town", "Town.", True), ("Port", "Port one.", False)]),
        rec("2hop__9_9", [("X", "x.", True)], answerable=False),
    ])
    b = read_bank("musique", path)
    assert [(d.title, d.text) for d in b.documents] == [("Port", "Port one."), ("County", "County text."),
                                                        ("Town", "Town."), ("County", "Another county paragraph.")]
    q1, q2 = b.queries
    assert (q1.ref_ids, q1.hard_negative_ids, q1.task_type) == ([1, 2], [0], "2hop")
    assert (q2.ref_ids, q2.hard_negative_ids, q2.task_type) == ([1, 3, 2], [0], "3hop1")
    assert q1.answer_aliases == ["Stanley, ND"]
    assert b.skipped == {"unanswerable question (answerable: false)": 1}


def test_bad_records(tmp_path):
    bad = write_jsonl(tmp_path / "a" / "m.jsonl", [rec("2hop__1", [("A", "a", True)]), "[1, 2]"])
    assert_import_fails(tmp_path, "musique", bad, r"m.jsonl line 2: expected a JSON object, got list")
    no_text = rec("2hop__1", [("A", "a", True)])
    no_text["paragraphs"][0].pop("paragraph_text")
    path = write_jsonl(tmp_path / "b" / "m.jsonl", [no_text])
    assert_import_fails(tmp_path, "musique", path, r"m.jsonl line 1 paragraphs\[0\]: missing field 'paragraph_text'")
    no_q = rec("2hop__1", [("A", "a", True)])
    no_q.pop("question")
    path = write_jsonl(tmp_path / "c" / "m.jsonl", [no_q])
    assert_import_fails(tmp_path, "musique", path, r"m.jsonl line 1: missing field 'question'")
    (tmp_path / "empty").mkdir()
    assert_import_fails(tmp_path, "musique", tmp_path / "empty", r"no .jsonl or .json file in")
