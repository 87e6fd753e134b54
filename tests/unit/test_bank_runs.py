"""bank and runs on a real tiny workspace: the reads pages and analysis build on (queries with their gold counts,
documents by id, token counts, info), and the run registry (create / resume / conflict / delete) with results that
keep their status and never lose a finished cell."""
from __future__ import annotations

import pytest

from emb_s_core import bank, runs, schema
from emb_s_core.errors import EmbSError
from emb_s_core.store import Workspace
from tests.conftest import native_bank


@pytest.fixture
def ws(tmp_path) -> Workspace:
    bank.import_path(tmp_path / "ws", "native", native_bank(tmp_path / "bank"))
    return Workspace(tmp_path / "ws")


def test_bank_reads(ws):
    qs = bank.queries(ws).set_index("qid")
    assert qs.loc["q1", "n_gold"] == 1 and not qs.loc["q1", "multi_source"]
    assert qs.loc["q2", "n_gold"] == 2 and qs.loc["q2", "multi_source"]
    got = bank.documents_by_id(ws, [3, 1, 1, 99])
    assert sorted(got) == [1, 3] and got[3]["title"] == "Berlin" and "capital of Germany" in got[3]["text"]
    assert bank.documents_by_id(ws, []) == {}
    tok = bank.token_counts(ws)
    assert set(tok.index) == {1, 2, 3, 4} and (tok > 0).all()
    info = bank.info(ws)
    assert info["documents"] == 4 and info["queries"] == 2 and info["tokens"] == int(tok.sum())
    assert bank.majority_domain(["law", "math", "law"]) == "law"
    assert bank.majority_domain(["math", "law"]) == "law"  # a tie goes to the first in sorted order
    assert bank.majority_domain([]) == schema.UNKNOWN_DOMAIN


def test_run_registry_resume_conflict_delete(ws):
    assert runs.list_runs(ws).empty and runs.get_run(ws, "a") is None
    runs.create_run(ws, "a", "retriever", "bm25", {"k": 10})
    assert runs.create_run(ws, "a", "retriever", "bm25", {"k": 10}) == "a"  # same config: a resume
    with pytest.raises(EmbSError, match="already exists with another configuration"):
        runs.create_run(ws, "a", "retriever", "bm25", {"k": 20})
    assert runs.get_run(ws, "a")["config"] == {"k": 10} and len(runs.list_runs(ws)) == 1
    runs.save_results(ws, "a", [{"rung": "r", "qid": "q1", "doc_ids": [1, 2]},
                                {"rung": "r", "qid": "q2", "doc_ids": [], "status": schema.DOES_NOT_FIT}])
    res = runs.load_results(ws, runs=["a"]).set_index("qid")
    assert res.loc["q1", "status"] == schema.OK and list(res.loc["q1", "doc_ids"]) == [1, 2]
    assert res.loc["q2", "status"] == schema.DOES_NOT_FIT and len(res.loc["q2", "doc_ids"]) == 0
    assert runs.finished(ws, "a") == {("r", "q1"), ("r", "q2")}
    assert runs.save_results(ws, "a", []) == 0
    runs.delete_run(ws, "a")
    assert runs.get_run(ws, "a") is None and runs.load_results(ws, runs=["a"]).empty
    with pytest.raises(EmbSError, match="no run named 'a'"):
        runs.delete_run(ws, "a")
