"""LoCoMo import: one document per session, evidence turns -> session documents, adversarial and broken evidence."""
from __future__ import annotations

import json

from emb_s_core import bank
from emb_s_core.sources import read_bank
from emb_s_core.store import Workspace
from tests.conftest import assert_import_fails


def conversation(qa: list[dict], sample: str = "conv-1") -> dict:
    return {
        "sample_id": sample,
        "conversation": {
            "speaker_a": "Ann", "speaker_b": "Bo",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "I went to the support group."},
                          {"speaker": "Bo", "dia_id": "D1:2", "text": "Nice!", "blip_caption": "a photo of a dog"}],
            "session_2_date_time": "2:00 pm on 9 May, 2023",
            "session_2": [{"speaker": "Bo", "dia_id": "D2:1", "text": "I paint."},
                          {"speaker": "Ann", "dia_id": "D2:2", "text": "I run."},
                          {"speaker": "Bo", "dia_id": "D2:5", "text": "Cool."}],
        },
        "qa": qa,
        "event_summary": {},
    }


QA = [
    {"question": "When did Ann go?", "answer": "7 May 2023", "evidence": ["D1:1"], "category": 2},
    {"question": "What do they do?", "answer": "paint, run", "evidence": ["D2:1", "D2:2", "D1:2"], "category": 1},
    {"question": "Combined ids?", "answer": 2023, "evidence": ["D2:1; D1:1", "D2:05"], "category": 4},
    {"question": "Adversarial?", "adversarial_answer": "x", "evidence": ["D1:1"], "category": 5},
    {"question": "No evidence?", "answer": "y", "evidence": [], "category": 3},
    {"question": "Broken id?", "answer": "z", "evidence": ["D:1:1", "D9:1"], "category": 3},
]


def test_read(tmp_path):
    path = tmp_path / "locomo10.json"
    path.write_text(json.dumps([conversation(QA)]))
    b = read_bank("locomo", path)
    assert [d.title for d in b.documents] == ["conv-1 session 1 (1:56 pm on 8 May, 2023)",
                                              "conv-1 session 2 (2:00 pm on 9 May, 2023)"]
    assert b.documents[0].text == "Ann: I went to the support group.\nBo: Nice! [image: a photo of a dog]"
    q = {x.qid: x for x in b.queries}
    assert list(q) == ["conv-1:q0", "conv-1:q1", "conv-1:q2"]
    assert (q["conv-1:q0"].ref_ids, q["conv-1:q0"].task_type) == ([0], "temporal")
    assert (q["conv-1:q1"].ref_ids, q["conv-1:q1"].task_type) == ([1, 0], "multi-hop")
    assert (q["conv-1:q2"].ref_ids, q["conv-1:q2"].answer) == ([1, 0], "2023")  # "D2:05" is turn D2:5
    assert all(x.hard_negative_ids == [] for x in b.queries)
    assert b.skipped == {"question without an answer (adversarial category 5)": 1,
                         "question without usable evidence": 2, "evidence id matching no dialog turn": 2}
    assert any("qa[5]" in n and "'D9:1'" in n for n in b.notes)


def test_import_with_domain(tmp_path):
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([conversation(QA), conversation(QA[:1], "conv-2")]))
    report = bank.import_path(tmp_path / "ws", "locomo", path, domain="dialogue")
    assert (report.n_documents, report.n_queries) == (4, 4)
    docs = bank.documents(Workspace(tmp_path / "ws"))
    assert set(docs["domain"]) == {"dialogue"}


def test_bad_files(tmp_path):
    path = tmp_path / "a.json"
    path.write_text('[{"sample_id": "c", "qa": []')
    assert_import_fails(tmp_path, "locomo", path, r"a.json line 1: malformed JSON")
    path.write_text(json.dumps({"sample_id": "c"}))
    assert_import_fails(tmp_path, "locomo", path, r"expected a JSON array of conversations")
    path.write_text(json.dumps([{"sample_id": "c", "qa": []}]))
    assert_import_fails(tmp_path, "locomo", path, r"a.json record 1 \(c\): missing field 'conversation'")
    bad_turn = conversation(QA)
    bad_turn["conversation"]["session_2"][1] = {"dia_id": "D2:2", "text": "no speaker"}
    path.write_text(json.dumps([bad_turn]))
    assert_import_fails(tmp_path, "locomo", path, r"a.json record 1 \(conv-1\) session_2 turn 1: missing field 'speaker'")
    bad_q = conversation([{"answer": "a", "evidence": ["D1:1"]}])
    path.write_text(json.dumps([bad_q]))
    assert_import_fails(tmp_path, "locomo", path, r"a.json record 1 \(conv-1\) qa\[0\]: missing field 'question'")
