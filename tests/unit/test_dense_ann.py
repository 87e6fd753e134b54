"""Approximate dense search is opt-in per run and never silent: an ANN run stores its recall@10 against exact
scoring per rung, the figure is what its results really are, and the runs listing shows it."""
from __future__ import annotations

import json

import numpy as np
import pytest

from emb_s_core import evaluate, ladder, runs
from emb_s_core.cli import main
from emb_s_core.errors import EmbSError
from emb_s_core.retrievers import ann
from testkit.retrieval_bank import copy_workspace, template

SPEC = "dense:minilm-l3"
CHUNK = 16  # ~1,300 chunk vectors: enough to train a small IVF-PQ index


@pytest.fixture(scope="module")
def ws(tmp_path_factory):
    return copy_workspace(template(tmp_path_factory), tmp_path_factory.mktemp("ann") / "ws")


def top10(ws, run: str) -> dict[tuple[str, str], list[int]]:
    res = runs.load_results(ws, runs=[run])
    return {(r, q): list(ids[:10]) for r, q, ids in zip(res["rung"], res["qid"], res["doc_ids"])}


def test_an_ann_run_carries_its_measured_recall(ws):
    exact = evaluate.evaluate(ws, SPEC, k=10, chunk_size=CHUNK)
    approx = evaluate.evaluate(ws, SPEC, k=10, chunk_size=CHUNK, ann="ivf_pq", ann_exact_below=0, ann_depth=10,
                               ann_nprobes=1, ann_refine_factor=1, ann_recall_sample=8)
    assert approx == f"{SPEC}@chunk{CHUNK}@ann-ivf_pq@k10" and approx != exact
    ws.refresh()
    config = runs.get_run(ws, approx)["config"]["retriever"]
    assert config["ann"]["index"] == "ivf_pq" and "ann" not in runs.get_run(ws, exact)["config"]["retriever"]
    stored = runs.measurements(ws, approx)[approx]
    lad = ladder.load(ws)
    assert set(stored["ann_recall@10"]) == set(lad.names)
    assert set(stored["ann_scoring"].values()) == {"ann"}
    # the stored figure is the overlap of this run's own top-10 with the exact run's, on the seeded sample
    exact_lists, approx_lists = top10(ws, exact), top10(ws, approx)
    for r in lad.rungs:
        sample = ann.sample(list(r.qids), 8, 0)
        assert stored["ann_recall_queries"][r.name] == len(sample)
        want = np.mean([len(set(exact_lists[r.name, q]) & set(approx_lists[r.name, q])) / 10 for q in sample])
        assert stored["ann_recall@10"][r.name] == pytest.approx(want, abs=1e-4)
    # PQ scores of one probe's partition, no exact re-scoring: documents are lost (with 2 probes, 40 candidates and
    # 10x refine, an index trained well by chance lost none, and this failed now and then)
    assert min(stored["ann_recall@10"].values()) < 1.0
    assert not runs.measurements(ws, exact)


def test_small_rungs_are_scored_exactly_and_the_listing_says_approximate(ws, capsys):
    name = evaluate.evaluate(ws, SPEC, name="ann-mixed", k=10, chunk_size=CHUNK, ann="ivf_pq",
                             ann_exact_below=100, ann_recall_sample=5)
    ws.refresh()
    stored = runs.measurements(ws, name)[name]
    lad = ladder.load(ws)
    for r in lad.rungs:
        assert stored["ann_scoring"][r.name] == ("exact" if r.n_documents <= 100 else "ann")
        if r.n_documents <= 100:
            assert stored["ann_recall@10"][r.name] == 1.0
    assert main(["runs", "list", "--workspace", str(ws.path), "--json"]) == 0
    listed = {row["run"]: row for row in json.loads(capsys.readouterr().out)}
    assert listed[name]["approximate"].startswith("ANN: recall@10 vs exact min")
    assert listed[name]["measurements"]["ann_recall@10"] == stored["ann_recall@10"]
    assert all(row["approximate"] == "" for run, row in listed.items() if "ann" not in run)
    runs.delete_run(ws, name)
    assert not runs.measurements(ws, name)


def test_bad_ann_options_are_errors_before_anything_is_written(ws, capsys):
    version = ws.version
    with pytest.raises(EmbSError, match="unknown ANN index"):
        evaluate.evaluate(ws, SPEC, ann="lsh")
    assert main(["eval", "--workspace", str(ws.path), "-r", SPEC, "--ann", "ivf_pq", "--ann-depth", "0"]) == 2
    assert "ANN depth must be at least 1" in capsys.readouterr().err
    ws.refresh()
    assert ws.version == version


def test_report_says_a_run_is_approximate(ws, capsys):
    name = evaluate.evaluate(ws, SPEC, name="ann-report", k=10, chunk_size=CHUNK, ann="ivf_pq",
                             ann_exact_below=0, ann_recall_sample=4)
    exact = evaluate.evaluate(ws, SPEC, k=10, chunk_size=CHUNK)
    assert main(["report", "--workspace", str(ws.path), "--runs", f"{name},{exact}", "--metrics", "SR@10",
                 "--n-boot", "0"]) == 0
    out = capsys.readouterr().out
    assert f"note: run {name!r} is approximate — ANN: recall@10 vs exact min" in out
    assert f"note: run {exact!r}" not in out
