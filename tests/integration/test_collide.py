"""Collision testing: candidates outside the RefList, each verdict path through litellm's mock_response, --apply
as a new workspace version (old version intact, ladder stale), resumption, and the bad inputs."""
from __future__ import annotations

import pandas as pd
import pytest

from emb_s_core import bank, collide, ladder
from emb_s_core.errors import EmbSError
from emb_s_core.store import Workspace
from tests.conftest import native_bank


MODEL = "gpt-4o-mini"  # known to litellm's bundled model map; every call is answered by mock_response

DOCS = [
    {"doc_id": 1, "title": "Paris", "text": "Paris has been the capital of France since 987.", "domain": "history"},
    {"doc_id": 2, "title": "Paris", "text": "Paris was briefly replaced as capital of France by Versailles in 1789.",
     "domain": "history"},
    {"doc_id": 3, "title": "Berlin", "text": "Berlin is the capital of Germany since reunification in 1990.",
     "domain": "history"},
    {"doc_id": 4, "title": "Bonn", "text": "Bonn was the capital of West Germany until 1990.", "domain": "history"},
    {"doc_id": 5, "title": "Aspirin", "text": "Aspirin irreversibly inhibits the COX-1 enzyme in platelets.",
     "domain": "medical"},
    {"doc_id": 6, "title": "Ibuprofen", "text": "Ibuprofen is a reversible inhibitor of COX enzymes.",
     "domain": "medical"},
    {"doc_id": 7, "title": "Euler", "text": "Euler's identity links e, i, pi, one and zero.", "domain": "math"},
    {"doc_id": 8, "title": "Gauss", "text": "Gauss summed the integers from 1 to 100 as a schoolboy.",
     "domain": "math"},
]
QUERIES = [
    {"qid": "qa", "text": "Since when is Paris the capital of France?", "answer": "987", "ref_ids": [1],
     "domain": "history"},
    {"qid": "qb", "text": "Which city is the capital of Germany?", "answer": "Berlin", "ref_ids": [3],
     "domain": "history"},
    {"qid": "qc", "text": "Which enzyme does aspirin inhibit?", "answer": "COX-1", "ref_ids": [5],
     "domain": "medical"},
    {"qid": "qd", "text": "What does Euler's identity link?", "answer": "e, i, pi, 1 and 0", "ref_ids": [7],
     "domain": "math"},
]


def gateway(ws, reply: str):
    from emb_s_core import llm

    return llm.Gateway.for_workspace(ws, MODEL, max_tokens=64, params={"mock_response": reply})


@pytest.fixture
def ws(tmp_path):
    bank.import_path(tmp_path / "ws", "native", native_bank(tmp_path / "bank", DOCS, QUERIES))
    w = Workspace(tmp_path / "ws")
    ladder.build(w, ladder.LadderOptions(base="2K", domain_sizes=("2K",), reserve=64))
    return Workspace(tmp_path / "ws")


def test_parse_verdict_is_strict():
    assert collide.parse_verdict("Label: Hard Negative\nRationale: another year.") == ("Hard Negative",
                                                                                      "another year.")
    assert collide.parse_verdict("**Label:** false-negative\nRationale: says 987") == ("False Negative", "says 987")
    assert collide.parse_verdict("conflict\nIt names another date.")[0] == "Conflict"
    for bad in ["", "Hard", "The candidate is a Hard Negative.", "Label: maybe\nRationale: x",
                "Label: Conflict\nLabel: Hard Negative", "Label: Hard Negative or Conflict"]:
        assert collide.parse_verdict(bad)[0] is None, bad


def test_candidates_exclude_the_reflist_and_are_ranked(ws):
    cands = collide.candidates(ws, "dense:minilm-l6", k=3)
    assert set(cands["qid"]) == {"qa", "qb", "qc", "qd"}
    refs = {q["qid"]: set(q["ref_ids"]) for q in QUERIES}
    assert not any(int(d) in refs[q] for q, d in zip(cands["qid"], cands["doc_id"]))
    for _, g in cands.groupby("qid"):
        assert list(g["rank"]) == [1, 2, 3]
        assert list(g["similarity"]) == sorted(g["similarity"], reverse=True)
    # the nearest non-reference document of the Paris question is the other Paris document
    assert int(cands[(cands["qid"] == "qa") & (cands["rank"] == 1)]["doc_id"].iloc[0]) == 2
    assert len(collide.candidates(ws, "dense:minilm-l6", k=50, limit=1)) == len(DOCS) - 1


def test_each_verdict_path_and_apply_as_a_new_version(ws, tmp_path):
    replies = {"qa": "Label: Hard Negative\nRationale: it is about 1789, not the capital since 987.",
               "qb": "Label: False Negative\nRationale: it also says Berlin is the capital.",
               "qc": "Label: Conflict\nRationale: it names another enzyme.",
               "qd": "I am not sure what to say."}
    for qid, reply in replies.items():
        report = collide.run(ws, gateway(ws, reply), "dense:minilm-l6", k=1, qids=[qid])
        assert report.labeled_now == 1
    v = collide.verdicts(ws, model=MODEL)
    got = dict(zip(v["qid"], v["label"]))
    assert got["qa"] == "Hard Negative" and got["qb"] == "False Negative" and got["qc"] == "Conflict"
    assert pd.isna(got["qd"]) and v.set_index("qid").at["qd", "status"] == collide.UNPARSEABLE
    assert v.set_index("qid").at["qd", "reply"] == "I am not sure what to say."
    assert collide.counts(v) == {"Conflict": 1, "Hard Negative": 1, "False Negative": 1, "unparseable": 1}
    assert v["prompt_version"].unique().tolist() == ["collide_v1"]
    hn_doc = int(v.set_index("qid").at["qa", "doc_id"])
    fn_doc = int(v.set_index("qid").at["qb", "doc_id"])

    # a rerun resumes: nothing new is labeled
    assert collide.run(ws, gateway(ws, "Label: Conflict"), "dense:minilm-l6", k=1, qids=["qa"]).labeled_now == 0

    before = ws.version
    report = collide.apply(ws)
    assert report.changed and report.version_after == before + 1
    assert (report.hard_negatives_added, report.false_negatives_added, report.retired) == (1, 1, ["qc"])
    assert any("stale" in m for m in report.messages)
    now = bank.queries(Workspace(ws.path)).set_index("qid")
    assert "qc" not in now.index
    assert hn_doc in list(now.at["qa", "hard_negative_ids"])
    prov = bank.hard_negatives(Workspace(ws.path)).set_index(["qid", "doc_id"])["provenance"]
    assert prov.loc[("qa", hn_doc)] == "collision"  # a verified near-miss, told apart from dataset distractors
    assert list(now.at["qb", "ref_ids"]) == [3, fn_doc]
    assert list(now.at["qd", "ref_ids"]) == [7]
    retired = collide.retired_queries(Workspace(ws.path))
    assert retired["qid"].tolist() == ["qc"] and "Conflict with document" in retired["reason"].iloc[0]

    old = bank.queries(Workspace(ws.path, version=before)).set_index("qid")  # the previous bank is intact
    assert "qc" in old.index and list(old.at["qb", "ref_ids"]) == [3]
    assert list(old.at["qa", "hard_negative_ids"]) == []

    with pytest.raises(EmbSError, match="stale"):
        ladder.load(Workspace(ws.path))
    again = collide.apply(Workspace(ws.path))
    assert not again.changed and Workspace(ws.path).version == before + 1


def test_bad_inputs_leave_the_workspace_unchanged(ws):
    version = ws.version
    with pytest.raises(EmbSError, match="needs a dense embedder"):
        collide.candidates(ws, "bm25")
    with pytest.raises(EmbSError, match="k must be at least 1"):
        collide.candidates(ws, "dense:minilm-l6", k=0)
    with pytest.raises(EmbSError, match="unknown qid"):
        collide.run(ws, gateway(ws, "Label: Conflict"), "dense:minilm-l6", qids=["nope"])
    with pytest.raises(EmbSError, match="no collision verdicts"):
        collide.apply(ws)
    with pytest.raises(EmbSError, match="unknown retriever"):
        collide.candidates(ws, "sparse:thing")
    assert Workspace(ws.path).version == version
    assert not Workspace(ws.path).has_table(collide.TABLE)


def test_apply_asks_which_labeler_when_several(ws):
    from emb_s_core import llm

    collide.run(ws, gateway(ws, "Label: Hard Negative"), k=1, qids=["qa"])
    other = llm.Gateway.for_workspace(ws, "gpt-4o", max_tokens=64, params={"mock_response": "Label: Conflict"})
    collide.run(ws, other, k=1, qids=["qa"])
    version = Workspace(ws.path).version
    with pytest.raises(EmbSError, match="several labelers"):
        collide.apply(Workspace(ws.path))
    assert Workspace(ws.path).version == version
    assert collide.apply(Workspace(ws.path), model=MODEL).hard_negatives_added == 1


def test_history_cli_lists_versions_and_reads_an_old_one(ws, capsys):
    from emb_s_core.cli import main

    collide.run(ws, gateway(ws, "Label: Conflict\nRationale: x"), k=1, qids=["qc"])
    before = Workspace(ws.path).version
    collide.apply(Workspace(ws.path))
    assert main(["history", "-w", str(ws.path)]) == 0
    out = capsys.readouterr().out
    assert "collide --apply (gpt-4o-mini)" in out and "retired_queries" in out
    assert main(["history", "-w", str(ws.path), "--version", str(before)]) == 0
    assert "4 queries" in capsys.readouterr().out
    assert main(["history", "-w", str(ws.path), "--version", "99"]) == 2
    assert "no recorded version 99" in capsys.readouterr().err
