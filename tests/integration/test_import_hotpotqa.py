"""HotpotQA import: official and IRCoT layouts, dedup across questions, hard negatives, bad records."""
from __future__ import annotations

import json

from emb_s_core import bank
from emb_s_core.sources import read_bank
from emb_s_core.store import Workspace
from tests.conftest import assert_import_fails, write_jsonl

OFFICIAL = [
    {"_id": "a1", "question": "Where was the director of Film X born?", "answer": "Lyon", "type": "bridge",
     "level": "hard",
     "context": [["Film X", ["Film X is a 1990 film", " directed by Ann Bee."]],
                 ["Ann Bee", ["Ann Bee was born in Lyon."]],
                 ["Film Y", ["Film Y is a 1991 film."]]],
     "supporting_facts": [["Film X", 1], ["Ann Bee", 0]]},
    {"_id": "a2", "question": "Is Film Y older than Film Z?", "answer": "no", "type": "comparison",
     "level": "easy",
     "context": [["Film Y", ["Film Y is a 1991 film."]], ["Film Z", ["Film Z is a 1985 film."]],
                 ["Ann Bee", ["Ann Bee was born in Lyon."]]],
     "supporting_facts": [["Film Y", 0], ["Film Z", 0]]},
]


def ircot(qid: str, gold: list[tuple[str, str]], other: list[tuple[str, str]]) -> dict:
    ctx = [{"id": str(i), "title": t, "paragraph_text": x, "is_supporting": True} for i, (t, x) in enumerate(gold)]
    ctx += [{"id": str(len(ctx) + i), "title": t, "paragraph_text": x, "is_supporting": False}
            for i, (t, x) in enumerate(other)]
    return {"question_id": qid, "question_text": f"question {qid}?", "contexts": ctx,
            "answers_objects": [{"number": "", "date": {}, "spans": ["ans", "answer"]}]}


def test_official_array_file(tmp_path):
    path = tmp_path / "hotpot_dev_distractor_v1.json"
    path.write_text(json.dumps(OFFICIAL))
    b = read_bank("hotpotqa", path)
    assert [d.title for d in b.documents] == ["Film X", "Ann Bee", "Film Y", "Film Z"]  # deduplicated by (title, text)
    assert b.documents[0].text == "Film X is a 1990 film directed by Ann Bee."
    q1, q2 = b.queries
    assert (q1.ref_ids, q1.hard_negative_ids, q1.task_type, q1.answer) == ([0, 1], [2], "bridge", "Lyon")
    assert (q2.ref_ids, q2.hard_negative_ids, q2.task_type) == ([2, 3], [1], "comparison")
    assert b.query_locations["a2"] == "hotpot_dev_distractor_v1.json record 2"


def test_ircot_jsonl_into_workspace(tmp_path):
    path = write_jsonl(tmp_path / "dev.jsonl", [
        ircot("q1", [("A", "alpha"), ("B", "beta")], [("C", "gamma"), ("A", "alpha")]),
        ircot("q2", [("C", "gamma"), ("D", "delta")], [("B", "beta")]),
    ])
    report = bank.import_path(tmp_path / "ws", "hotpotqa", path, domain="wiki")
    assert (report.n_documents, report.n_queries) == (4, 2)
    qs = bank.queries(Workspace(tmp_path / "ws")).set_index("qid")
    assert list(qs.loc["q1", "ref_ids"]) == [0, 1]
    assert list(qs.loc["q1", "hard_negative_ids"]) == [2]  # the repeated gold paragraph is not a negative
    assert list(qs.loc["q2", "answer_aliases"]) == ["answer"] and qs.loc["q2", "answer"] == "ans"
    assert set(bank.documents(Workspace(tmp_path / "ws"))["domain"]) == {"wiki"}
    assert set(qs["domain"]) == {"wiki"}


def test_bad_records(tmp_path):
    bad = write_jsonl(tmp_path / "a" / "dev.jsonl", [ircot("q1", [("A", "a")], []), '{"question_id": "q2", '])
    assert_import_fails(tmp_path, "hotpotqa", bad, r"dev.jsonl line 2: malformed JSON")
    nogold = write_jsonl(tmp_path / "b" / "dev.jsonl", [{"foo": 1}])
    assert_import_fails(tmp_path, "hotpotqa", nogold, r"dev.jsonl line 1: record is neither official HotpotQA")
    broken = dict(OFFICIAL[0], context=[["Film X", "not a list"]])
    path = tmp_path / "c.json"
    path.write_text(json.dumps([broken]))
    assert_import_fails(tmp_path, "hotpotqa", path, r"c.json record 1: context entry .* is not \[title, \[sentences\]\]")
    dup = write_jsonl(tmp_path / "d" / "dev.jsonl", [ircot("q1", [("A", "a")], []), ircot("q1", [("B", "b")], [])])
    assert_import_fails(tmp_path, "hotpotqa", dup, r"dev.jsonl line 2: duplicate question id 'q1' \(first at dev.jsonl line 1\)")
    noans = write_jsonl(tmp_path / "e" / "dev.jsonl", [dict(ircot("q1", [("A", "a")], []), answers_objects=[])])
    assert_import_fails(tmp_path, "hotpotqa", noans, r"line 1: answers_objects holds no answer span")
    assert_import_fails(tmp_path, "hotpotqa", tmp_path / "missing.jsonl", r"path not found")


def test_number_answer(tmp_path):
    rec = dict(ircot("q1", [("A", "a")], []), answers_objects=[{"number": "3", "date": {}, "spans": []}])
    assert read_bank("hotpotqa", write_jsonl(tmp_path / "dev.jsonl", [rec])).queries[0].answer == "3"


def test_question_without_gold_is_skipped(tmp_path):
    path = write_jsonl(tmp_path / "dev.jsonl", [ircot("q1", [("A", "a")], []), ircot("q2", [], [("B", "b")])])
    b = read_bank("hotpotqa", path)
    assert [q.qid for q in b.queries] == ["q1"]
    assert b.skipped == {"question without a supporting paragraph": 1}
    assert len(b.documents) == 2  # its paragraphs still join the corpus as distractors
