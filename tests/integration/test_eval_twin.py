"""`eval --ladder both`: one pass over the built ladder and its benign twin (one prepare), exact per-rung results on
the twin too, a run extended to the twin later, and the errors."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from emb_s_core import bank, evaluate, ladder, retrievers, runs, twin
from emb_s_core.cli import main
from emb_s_core.errors import EmbSError
from emb_s_core.retrievers.bm25 import BM25
from testkit.retrieval_bank import copy_workspace, template


@pytest.fixture()
def ws(tmp_path_factory, tmp_path):
    ws = copy_workspace(template(tmp_path_factory), tmp_path / "ws")
    twin.build(ws, top_n=3)
    return ws


def test_ladder_choices(ws):
    assert evaluate.ladder_kinds(ws, "both") == ("built", "benign")
    assert evaluate.ladder_kinds(ws, "benign") == ("benign",)
    assert evaluate.ladder_kinds(ws) == ("built",)
    with pytest.raises(EmbSError, match="unknown ladder 'twin'"):
        evaluate.ladder_kinds(ws, "twin")
    assert evaluate.default_name("bm25", kinds=("built", "benign")) == "bm25"  # the twin joins the built run
    assert evaluate.default_name("bm25", kinds=("official",)) == "bm25@official"


def test_both_in_one_pass_with_exact_twin_results(ws, monkeypatch):
    prepared = []
    original = BM25.prepare
    monkeypatch.setattr(BM25, "prepare", lambda self, *a, **kw: (prepared.append(1), original(self, *a, **kw))[1])
    name = evaluate.evaluate(ws, "bm25", k=5, ladder="both")
    assert len(prepared) == 1  # the twin reuses the built ladder's term-frequency matrix
    built, benign = ladder.load(ws), ladder.load(ws, kind="benign")
    res = runs.load_results(ws, runs=[name])
    assert set(res["rung"]) == set(built.names) | set(benign.names)
    assert runs.get_run(ws, name)["config"]["ladder"] == {r.name: r.membership_hash for r in built.rungs + benign.rungs}
    assert_exact_per_query(ws, res, benign, "bm25", 5)


def assert_exact_per_query(ws, res, benign, spec, k, per_rung=None):
    """Each query's twin ranking (the first ``per_rung`` of each rung's queries with a delta, or all) equals its
    own pool searched alone (BM25: that pool's statistics)."""
    texts = bank.queries(ws).set_index("qid")["text"]
    deltas = twin.deltas(ws)
    checked = 0
    for rung in benign.rungs:
        got = res[res["rung"] == rung.name].set_index("qid")
        mine = deltas.get(rung.name, {})
        for qid in (rung.qids if per_rung is None else [q for q in rung.qids if q in mine][:per_rung]):
            pool = twin.pool(rung.doc_ids, mine.get(qid))
            alone = retrievers.get(spec)
            alone.prepare(ws, pool)
            direct = alone.rank([texts.loc[qid]], {"pool": pool}, k)["pool"]
            np.testing.assert_array_equal(got.loc[qid, "doc_ids"], direct.ids[0], err_msg=f"{rung.name} {qid}")
            checked += not np.array_equal(pool, rung.doc_ids)
    assert checked  # some query's pool differs from the rung's membership: the per-query path was exercised


def test_a_built_run_is_extended_to_the_twin(ws):
    evaluate.evaluate(ws, "bm25", name="r", k=5)
    before = runs.load_results(ws, runs=["r"])
    created = runs.get_run(ws, "r")["created_at"]
    evaluate.evaluate(ws, "bm25", name="r", k=5, ladder="benign")
    after = runs.load_results(ws, runs=["r"])
    benign = ladder.load(ws, kind="benign")
    assert len(after) == len(before) + sum(len(r.qids) for r in benign.rungs)
    assert set(runs.get_run(ws, "r")["config"]["ladder"]) == set(ladder.load(ws).names) | set(benign.names)
    assert runs.get_run(ws, "r")["created_at"] == created
    version = ws.version
    evaluate.evaluate(ws, "bm25", name="r", k=5, ladder="both")  # everything done: nothing written
    assert ws.version == version
    built_rows = after[~after["rung"].str.startswith("benign:")]
    twin.build(ws, top_n=5)  # another twin: the run's twin results are stale, its built results stand
    assert evaluate.stale_twin_runs(ws) == {"r": sorted(benign.names)}
    from emb_s_core.analysis import finder
    from emb_s_core.errors import EmbSError

    with pytest.raises(EmbSError, match="earlier benign twin"):  # the finder refuses the stale twin rungs ...
        finder.find(ws, "r", benign.names[0], benign.names[-1])
    built = ladder.load(ws).names
    finder.find(ws, "r", built[0], built[-1])  # ... and still reads the built ones
    evaluate.evaluate(ws, "bm25", name="r", k=5, ladder="benign")  # redoes only the twin
    finder.find(ws, "r", benign.names[0], benign.names[-1])
    assert evaluate.stale_twin_runs(ws) == {}
    redone = runs.load_results(ws, runs=["r"])
    assert len(redone) == len(after)
    kept = redone[~redone["rung"].str.startswith("benign:")].set_index(["rung", "qid"])
    for row in built_rows.itertuples():  # the built results are the very rows stored before
        np.testing.assert_array_equal(kept.loc[(row.rung, row.qid), "doc_ids"], row.doc_ids)
    assert runs.get_run(ws, "r")["config"]["ladder"] == {r.name: r.membership_hash for r in
                                                         ladder.load(ws).rungs + ladder.load(ws, kind="benign").rungs}
    assert_exact_per_query(ws, redone, ladder.load(ws, kind="benign"), "bm25", 5)
    other = ladder.load(ws)  # the BUILT ladder of another membership still refuses
    other.rungs = [dataclasses.replace(r, doc_ids=r.doc_ids[1:], membership_hash="x") for r in other.rungs]
    ladder.store(ws, other, ladder.bank_state(ws))
    with pytest.raises(EmbSError, match="made on another ladder"):
        evaluate.evaluate(ws, "bm25", name="r", k=5)


def test_cli_eval_both_and_errors(ws, tmp_path_factory, tmp_path, capsys):
    assert main(["eval", "--workspace", str(ws.path), "-r", "bm25", "--k", "5", "--ladder", "both"]) == 0
    assert "results" in capsys.readouterr().out
    bare = copy_workspace(template(tmp_path_factory), tmp_path / "bare")
    version = bare.version
    assert main(["eval", "--workspace", str(bare.path), "-r", "bm25", "--ladder", "benign"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "no benign ladder yet" in err
    assert bare.version == version


def test_report_illusion_prints_the_gap_and_effective_scale(ws, capsys):
    import json

    evaluate.evaluate(ws, "bm25", name="bm25", k=5, ladder="both")
    assert main(["report", "--workspace", str(ws.path), "--illusion", "--format", "json", "--n-boot", "200"]) == 0
    out = json.loads(capsys.readouterr().out)
    rungs = {r["rung"] for r in out["gap"]}
    assert rungs == set(ladder.load(ws).names) and {r["metric"] for r in out["gap"]} == {"SR@10", "FR@10", "R@1"}
    assert all(abs(r["gap"] - (r["benign"] - r["adversarial"])) < 1e-12 for r in out["gap"] if r["n"])
    assert {r["domain"] for r in out["effective_scale"]} >= {"all", "law"}
    assert main(["report", "--workspace", str(ws.path), "--illusion"]) == 0
    assert "illusion gap = benign twin − adversarial ladder" in capsys.readouterr().out


def test_every_gap_row_names_the_twins_references_and_marks_short_rungs_and_own_references(ws, capsys):
    """Issue 31 §4: the references the twin was built with are stored and shown (text and JSON), every gap row
    carries them, a run that is a reference says its gap is partly by construction, and a gap row whose twin rung
    is short says "short" as the fill table does."""
    import json

    from emb_s_core.analysis import illusion, views

    evaluate.evaluate(ws, "bm25", name="bm25", k=5, ladder="both")
    evaluate.evaluate(ws, "dense:minilm-l3", name="dense", k=5, ladder="both")  # not a reference
    assert main(["report", "--workspace", str(ws.path), "--illusion", "--format", "json", "--n-boot", "50"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["references"]["retrievers"] == ["bm25"] and out["references"]["top_n"] == 3
    assert "partly by construction" in out["references"]["note"]
    rows = out["gap"]
    assert {r["twin references"] for r in rows} == {"bm25 (top-3)"}
    assert {r["own reference"] for r in rows if r["run"] == "bm25"} == {illusion.BY_CONSTRUCTION}
    assert {r["own reference"] for r in rows if r["run"] == "dense"} == {""}
    fill = {r.name: r.composition["fill"] for r in ladder.load(ws, kind="benign").rungs}
    for r in rows:
        f = fill[ladder.qualified("benign", r["rung"])]
        assert r["twin fill"] == f and (r["twin short"] == "short") == (f < 1 - twin.FILL_TOLERANCE)
    assert main(["report", "--workspace", str(ws.path), "--illusion", "--n-boot", "50"]) == 0
    text = capsys.readouterr().out
    assert "benign twin references: bm25 (top-3)" in text and "own reference" in text
    # a short twin rung: its gap rows say so (the fill table already did)
    gaps = illusion.gap(views.per_query(ws), n_resamples=100, n_boot=50)
    lad = ladder.load(ws, kind="benign")
    short = lad.rungs[0]
    short.composition["fill"] = 0.5
    marked = illusion.with_gap_context(ws, gaps, lad)
    at = marked["rung"] == ladder.plain_name(short.name)
    assert at.any() and set(marked.loc[at, "twin short"]) == {"short"}
    assert set(marked.loc[~at, "twin short"]) <= {"", "short"}


def test_report_illusion_without_twin_results(tmp_path_factory, tmp_path, capsys):
    bare = copy_workspace(template(tmp_path_factory), tmp_path / "bare")
    evaluate.evaluate(bare, "bm25", name="bm25", k=5)
    assert main(["report", "--workspace", str(bare.path), "--illusion"]) == 2
    assert "--ladder both" in capsys.readouterr().err


@pytest.mark.parametrize("spec", ["dense:minilm-l3", "hybrid:bm25+dense:minilm-l3"])
def test_dense_and_hybrid_mask_each_query_to_its_own_pool(ws, spec):
    name = evaluate.evaluate(ws, spec, k=5, ladder="benign")
    assert_exact_per_query(ws, runs.load_results(ws, runs=[name]), ladder.load(ws, kind="benign"), spec, 5,
                           per_rung=2)
