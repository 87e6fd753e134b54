"""evaluate(): per-rung results equal searching each rung on its own, resumes, errors that write nothing, live_query,
and the `emb-s eval` command."""
from __future__ import annotations

import numpy as np
import pytest

from emb_s_core import bank, evaluate, ladder, retrievers, runs
from emb_s_core.cli import main
from emb_s_core.errors import EmbSError
from emb_s_core.store import Workspace
from testkit.retrieval_bank import LADDER, copy_workspace, template


@pytest.fixture(scope="module")
def ws(tmp_path_factory):
    return copy_workspace(template(tmp_path_factory), tmp_path_factory.mktemp("eval") / "ws")


def _direct(ws, spec, rung, k):
    """The same retriever prepared on the rung alone: what masking the big pool must reproduce."""
    r = retrievers.get(spec)
    r.prepare(ws, rung.doc_ids)
    texts = bank.queries(ws).set_index("qid").loc[rung.qids, "text"].tolist()
    return r.rank(texts, {rung.name: rung.doc_ids}, k)[rung.name]


@pytest.mark.parametrize("spec", ["bm25", "dense:minilm-l3"])
def test_ladder_results_equal_per_rung_search(ws, spec):
    name = evaluate.evaluate(ws, spec, k=10, batch_size=7)
    lad = ladder.load(ws)
    res = runs.load_results(ws, runs=[name])
    assert len(res) == sum(len(r.qids) for r in lad.rungs)
    assert (res["status"] == runs.OK).all()
    cfg = runs.get_run(ws, name)["config"]
    assert cfg["k"] == 10 and cfg["ladder"] == {r.name: r.membership_hash for r in lad.rungs}
    for rung in lad.rungs:
        got = res[res["rung"] == rung.name].set_index("qid").loc[rung.qids]
        direct = _direct(ws, spec, rung, 10)
        for i, qid in enumerate(rung.qids):
            assert set(got.loc[qid, "doc_ids"]) <= set(rung.doc_ids.tolist())
            np.testing.assert_array_equal(got.loc[qid, "doc_ids"], direct.ids[i], err_msg=f"{rung.name} {qid}")
            np.testing.assert_allclose(got.loc[qid, "scores"], direct.scores[i], rtol=1e-5, atol=1e-6)


def test_resume_finishes_only_missing_pairs(ws):
    lad = ladder.load(ws)
    first = lad.names[:3]
    evaluate.evaluate(ws, "bm25", name="partial", k=5, rungs=first)
    done = runs.finished(ws, "partial")
    assert {r for r, _ in done} == set(first)
    version = ws.version
    evaluate.evaluate(ws, "bm25", name="partial", k=5)
    assert ws.version > version
    whole = evaluate.evaluate(ws, "bm25", name="whole", k=5)
    a = runs.load_results(ws, runs=["partial"]).sort_values(["rung", "qid"]).reset_index(drop=True)
    b = runs.load_results(ws, runs=[whole]).sort_values(["rung", "qid"]).reset_index(drop=True)
    assert len(a) == len(b) == sum(len(r.qids) for r in lad.rungs)
    for x, y in zip(a["doc_ids"], b["doc_ids"]):
        np.testing.assert_array_equal(x, y)
    version = ws.version
    evaluate.evaluate(ws, "bm25", name="whole", k=5)  # nothing left: nothing written
    assert ws.version == version


def test_bad_requests_write_nothing(ws, tmp_path):
    version, n_runs = ws.version, len(runs.list_runs(ws))
    cases = [
        (dict(spec="nope", k=10), "unknown retriever 'nope'"),
        (dict(spec=f"dense:{tmp_path / 'missing-model'}", k=10), "embedding model .*missing-model.* not found"),
        (dict(spec="bm25", k=0), "k must be at least 1"),
        (dict(spec="bm25", k=10, ladder="official"), "has no official ladder yet"),
        (dict(spec="bm25", k=10, ladder="sideways"), "unknown ladder 'sideways'"),
        (dict(spec="bm25", k=10, rungs=["9G"]), "no rung named '9G'"),
    ]
    for kwargs, message in cases:
        with pytest.raises(EmbSError, match=message):
            evaluate.evaluate(ws, **kwargs)
    assert ws.version == version and len(runs.list_runs(ws)) == n_runs


def test_k_larger_than_a_rung_is_clamped_and_recorded(ws):
    lad = ladder.load(ws)
    big = max(r.n_documents for r in lad.rungs[:-1]) + 1
    name = evaluate.evaluate(ws, "bm25", name="clamped", k=big)
    cfg = runs.get_run(ws, name)["config"]
    assert cfg["k_per_rung"] == {r.name: r.n_documents for r in lad.rungs if r.n_documents < big}
    assert lad.rungs[-1].name not in cfg["k_per_rung"]
    res = runs.load_results(ws, runs=[name])
    for rung in lad.rungs:
        lengths = res[res["rung"] == rung.name]["doc_ids"].map(len)
        assert (lengths == min(big, rung.n_documents)).all(), rung.name


def test_rebuilt_ladder_needs_a_new_name(tmp_path_factory, tmp_path):
    ws = copy_workspace(template(tmp_path_factory), tmp_path / "ws")
    evaluate.evaluate(ws, "bm25", name="old", k=5, rungs=["full"])
    ladder.build(ws, ladder.LadderOptions(**{**LADDER.__dict__, "seed": 1}))
    version = ws.version
    with pytest.raises(EmbSError, match="made on another ladder.*delete the old run"):
        evaluate.evaluate(ws, "bm25", name="old", k=5)
    assert ws.version == version
    evaluate.evaluate(ws, "bm25", name="new", k=5, rungs=["full"])


def test_live_query_matches_the_run_and_is_cached(ws):
    lad = ladder.load(ws)
    rung = lad.rungs[0]
    qid = rung.qids[0]
    text = bank.queries(ws).set_index("qid").loc[qid, "text"]
    name = evaluate.evaluate(ws, "bm25", name="live-check", k=10, rungs=[rung.name])
    live = evaluate.live_query(ws, "bm25", text, rung.name, k=10)
    assert list(live.columns) == ["rank", "doc_id", "score"] and live["rank"].tolist() == list(range(1, 11))
    stored = runs.load_results(ws, runs=[name]).set_index("qid").loc[qid, "doc_ids"]
    np.testing.assert_array_equal(live["doc_id"].to_numpy(), stored)
    assert evaluate.prepared(ws, "bm25") is evaluate.prepared(ws, "bm25")
    with pytest.raises(EmbSError, match="no rung named"):
        evaluate.live_query(ws, "bm25", text, "nope")
    with pytest.raises(EmbSError, match="question is empty"):
        evaluate.live_query(ws, "bm25", "  ", rung.name)


def test_cli_eval_and_runs_list(ws, capsys):
    assert main(["eval", "-w", str(ws.path), "--retriever", "bm25", "--k", "5", "--rungs", "full", "--name", "cli"]) == 0
    assert "run 'cli': 30 (rung, query) results" in capsys.readouterr().out
    assert main(["runs", "list", "-w", str(ws.path)]) == 0
    assert "cli" in capsys.readouterr().out
    version = Workspace(ws.path).version
    assert main(["eval", "-w", str(ws.path), "--retriever", "bm7"]) == 2
    assert "unknown retriever 'bm7'" in capsys.readouterr().err
    assert main(["runs", "delete", "cli", "-w", str(ws.path)]) == 0
    assert Workspace(ws.path).version == version + 1
    assert main(["runs", "delete", "cli", "-w", str(ws.path)]) == 2


def test_live_dense_query_uses_cached_vectors_only(tmp_path_factory, tmp_path):
    fresh = copy_workspace(template(tmp_path_factory), tmp_path / "ws")
    lad = ladder.load(fresh)
    full = lad.rung("full")
    qid = full.qids[0]
    text = bank.queries(fresh).set_index("qid").loc[qid, "text"]
    version = fresh.version
    with pytest.raises(EmbSError, match=r"dense:minilm-l3 has not been evaluated on this workspace yet: [\d,]+ of") \
            as exc:
        evaluate.live_query(fresh, "dense:minilm-l3", text, "full")
    assert f"emb-s eval --workspace {fresh.path} --retriever dense:minilm-l3" in str(exc.value)  # the real path
    assert Workspace(fresh.path).version == version  # nothing was embedded or written
    with pytest.raises(EmbSError, match="has not been evaluated"):  # a hybrid with a dense part: the same
        evaluate.live_query(fresh, "hybrid:bm25+dense:minilm-l3", text, "full")
    name = evaluate.evaluate(fresh, "dense:minilm-l3", k=10, rungs=["full"])
    live = evaluate.live_query(Workspace(fresh.path), "dense:minilm-l3", text, "full", k=10)
    stored = runs.load_results(Workspace(fresh.path), runs=[name]).set_index("qid").loc[qid, "doc_ids"]
    np.testing.assert_array_equal(live["doc_id"].to_numpy(), stored)
    assert retrievers.get("bm25").uncached(fresh) == 0
