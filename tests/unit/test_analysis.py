"""The analysis surface (views, report, mixing, audit, access_use, drilldown) on a real small workspace (native
bank, real ladder, stored runs with known rankings) and on hand-made frames whose answers are known."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from emb_s_core import bank, ladder, metrics, runs, schema
from emb_s_core.analysis import access_use, audit, drilldown, mixing, report, views
from emb_s_core.errors import EmbSError
from emb_s_core.store import Workspace
from tests.unit.test_ladder import make_bank


@pytest.fixture(scope="module")
def ws(tmp_path_factory) -> Workspace:
    """Runs: ``oracle`` (gold first), ``worst`` (gold never retrieved, hard negatives first), ``llm`` (does not fit
    above 8K), ``partial`` (the first rung only)."""
    root = tmp_path_factory.mktemp("analysis")
    bank.import_path(root / "ws", "native", make_bank(root / "bank", n_docs=150, n_queries=24))
    w = Workspace(root / "ws")
    lad = ladder.build(w, ladder.LadderOptions(base="8K", domain_sizes=("8K", "16K"), shared_size="24K"))
    qs = bank.queries(w).set_index("qid")
    for name in ("oracle", "worst", "llm", "partial"):
        runs.create_run(w, name, "localize" if name == "llm" else "retriever", name, {"k": 20})
    for i, rung in enumerate(lad.rungs):
        rows: dict[str, list] = {"oracle": [], "worst": [], "llm": [], "partial": []}
        for qid in rung.qids:
            gold = [int(d) for d in qs.loc[qid, "ref_ids"]]
            negs = [int(d) for d in qs.loc[qid, "hard_negative_ids"]]
            others = [int(d) for d in rung.doc_ids if d not in gold and d not in negs]
            rows["oracle"].append({"rung": rung.name, "qid": qid, "doc_ids": gold + others[:10]})
            rows["worst"].append({"rung": rung.name, "qid": qid, "doc_ids": negs + others[:10]})
            fits = rung.n_tokens <= 8192
            rows["llm"].append({"rung": rung.name, "qid": qid, "doc_ids": gold if fits else [],
                                "status": schema.OK if fits else schema.DOES_NOT_FIT})
            if i == 0:
                rows["partial"].append({"rung": rung.name, "qid": qid, "doc_ids": gold})
        for name, batch in rows.items():
            if batch:
                runs.save_results(w, name, batch)
    return w


# ------------------------------------------------------------------------------------------- metrics catalogue
def test_metric_catalogue_names_columns_and_direction():
    sr = metrics.metric("SR@10")
    assert (sr.k, sr.column, sr.higher_is_better) == (10, "SR@10", True)
    assert "top-10" in sr.label
    hn = metrics.metric("HN-intrusion")
    assert (hn.k, hn.column, hn.higher_is_better) == (None, "hn_intrusion", False)
    assert metrics.metric("hn_intrusion").name == "HN-intrusion"
    assert metrics.metric_name("FR@K", 5) == "FR@5" and metrics.metric_name("MRR", 5) == "MRR"
    names = metrics.metric_names()
    assert len(names) == 2 * len(metrics.KS) + 4 and names[0] == "SR@1" and names[-1] == "HN-intrusion"
    for bad in ("SR@7", "SR@", "R@5", "recall", "SR@K"):
        with pytest.raises(EmbSError, match="unknown metric"):
            metrics.metric(bad)


def test_every_catalogued_metric_is_a_per_query_column(ws):
    pq = views.per_query(ws, ["oracle"])
    assert set(m.column for m in map(metrics.metric, metrics.metric_names())) <= set(pq.columns)


# ------------------------------------------------------------------------------------------- views
def test_per_query_filters_runs_and_pools_scales(ws):
    pq = views.per_query(ws, ["oracle", "partial"])
    assert set(pq["run"]) == {"oracle", "partial"}
    assert (pq["scale"] == pq["rung"].str.split("/").str[0]).all()
    assert (pq.loc[pq["run"] == "oracle", "SR@1"].dropna() > 0).all()
    empty = views.per_query(Workspace(ws.path), ["no-such-run"])
    assert empty.empty and list(empty.columns) == views.PER_QUERY_BASE


def test_filter_rows_and_columns(ws):
    pq = views.per_query(ws)
    multi = views.filter_rows(pq, sources="multi")
    assert len(multi) and multi["multi_source"].all()
    single = views.filter_rows(pq, sources="single")
    assert len(single) + len(multi) == len(pq)
    one = views.filter_rows(pq, domains=[pq["domain"].iloc[0]])
    assert set(one["domain"]) == {pq["domain"].iloc[0]}
    with pytest.raises(EmbSError, match="unknown source filter"):
        views.filter_rows(pq, sources="both")
    lad = ladder.load(ws)
    assert views.columns(lad, pq, "rung") == lad.names
    scales = views.columns(lad, pq, "scale")
    assert scales == list(dict.fromkeys(views.scale_of(n) for n in lad.names)) and len(scales) < len(lad.names)
    with pytest.raises(EmbSError, match="unknown column kind"):
        views.columns(lad, pq, "domain")


def test_overview_states_and_table_never_turn_missing_into_zero(ws):
    lad = ladder.load(ws)
    pq = views.per_query(ws)
    names = ["oracle", "llm", "partial"]
    agg, states, cols = views.overview(pq, lad, "SR@10", "rung", names)
    assert cols == lad.names
    st = states.set_index(["run", "rung"])["state"]
    big = lad.names[-1]
    assert st[("oracle", big)] == schema.CELL_OK
    assert st[("llm", big)] == schema.CELL_DOES_NOT_FIT
    assert st[("partial", big)] == schema.CELL_NOT_RUN and st[("partial", lad.names[0])] == schema.CELL_OK
    n_missing, kinds = views.unscored(states)
    assert kinds == sorted([schema.CELL_DOES_NOT_FIT, schema.CELL_NOT_RUN])
    assert n_missing == int((states["state"] != schema.CELL_OK).sum()) > 0
    table = views.overview_table(agg, states, "SR@10", "rung", names).set_index(["run", "rung"])
    assert len(table) == len(names) * len(cols)
    assert table.loc[("oracle", big), "SR@10"] == 1.0
    assert np.isnan(table.loc[("partial", big), "SR@10"]) and np.isnan(table.loc[("llm", big), "SR@10"])


def test_cell_state_error_when_every_query_failed():
    pq = pd.DataFrame({"run": ["a", "a"], "rung": ["r", "r"], "qid": ["q1", "q2"],
                       "status": [schema.ERROR, schema.DOES_NOT_FIT]})
    states = views.cell_states(pq, ["a"], ["r"])
    assert states["state"].tolist() == [schema.CELL_ERROR] and states["n_ok"].tolist() == [0]


def test_figure_entry_checks_its_inputs(ws):
    with pytest.raises(EmbSError, match="no run named nope"):
        views.figure(ws, "heatmap", run_names=["nope"])
    with pytest.raises(EmbSError, match="unknown figure"):
        views.figure(ws, "pie")
    with pytest.raises(EmbSError, match="unknown metric"):
        views.figure(ws, "heatmap", "SR@3")
    fig = views.figure(ws, "curves", "HN-intrusion", run_names=["oracle", "worst"], x="rung")
    assert "K = " not in fig.layout.title.subtitle.text  # HN-intrusion has no cut-off
    mix = views.figure(ws, "mixing", run_names=["oracle"])
    assert "rungs:" in mix.layout.title.subtitle.text and len(mix.data) == len(mixing.rung_pair(ladder.load(ws)))


def test_figure_needs_runs(tmp_path):
    bank.import_path(tmp_path / "ws", "native", make_bank(tmp_path / "bank", n_docs=30, n_queries=4))
    empty = Workspace(tmp_path / "ws")
    ladder.build(empty, ladder.LadderOptions(base="8K", domain_sizes=("8K",), shared_size="16K"))
    with pytest.raises(EmbSError, match="has no runs") as exc:
        views.figure(empty, "heatmap")
    assert f"emb-s eval --workspace {empty.path} --retriever bm25" in str(exc.value)  # the real path


# ------------------------------------------------------------------------------------------- report
def test_compare_on_a_given_frame_equals_the_workspace_one(ws):
    pq = views.per_query(ws)
    direct = report.compare(ws, "oracle", "worst", "SR@10", n_resamples=500)
    given = report.compare(ws, "oracle", "worst", "SR@10", n_resamples=500, per_query_df=pq)
    pd.testing.assert_frame_equal(direct, given)
    assert list(direct["rung"]) == ladder.load(ws).names and (direct["delta"] == 1.0).all()
    assert set(report.PAIRED_COLUMNS) <= set(direct.columns)
    with pytest.raises(EmbSError, match="has no results for both runs"):
        report.compare(ws, "oracle", "partial", rungs=[ladder.load(ws).names[-1]])


def test_ranked_rungs_and_side_by_side_follow_the_metric_direction(ws):
    pq = views.per_query(ws)
    order = ladder.load(ws).names
    common, only = report.ranked_rungs(pq, "oracle", "llm", order)
    assert common == [r for r in order if ladder.load(ws).rung(r).n_tokens <= 8192]
    assert only == [r for r in order if r not in common]
    rung = order[0]
    a_better, b_better = report.side_by_side(pq, "oracle", "worst", rung, "SR@10")
    assert len(a_better) == pq[(pq["run"] == "oracle") & (pq["rung"] == rung)]["qid"].nunique() and b_better.empty
    # HN-intrusion: lower is better, so the oracle (no intrusion) is the better one where worst intrudes
    hn_a, hn_b = report.side_by_side(pq, "oracle", "worst", rung, "HN-intrusion",
                                     texts=bank.queries(ws).set_index("qid")["text"])
    assert len(hn_a) > 0 and hn_b.empty and (hn_a["oracle"] < hn_a["worst"]).all()
    assert list(hn_a.columns) == ["qid", "text", "oracle", "worst"]
    none_a, none_b = report.side_by_side(pq, "oracle", "partial", order[-1], "SR@10")
    assert none_a.empty and none_b.empty
    with pytest.raises(EmbSError, match="unknown metric"):
        report.side_by_side(pq, "oracle", "worst", rung, "SR@3")


# ------------------------------------------------------------------------------------------- mixing
def test_count_sources_and_summary():
    res = pd.DataFrame({"run": ["a", "a", "a"], "rung": ["r", "r", "big"], "qid": ["q1", "q2", "q1"],
                        "doc_ids": [[1, 2, 3], [1, 1, 4], [3]], "status": [schema.OK, schema.OK, schema.ERROR]})
    src = pd.Series({1: "x", 2: "y", 3: "y", 4: "z"})
    dist = mixing.count_sources(res, src, k=2)
    assert dist.set_index("qid")["n_sources"].to_dict() == {"q1": 2, "q2": 1}  # top-2 only; the error row is out
    assert mixing.n_queries(dist) == 2
    summ = mixing.summary(dist)
    assert summ.to_dict("records") == [{"rung": "r", "queries": 2, "mean": 1.5, "median": 1.5, "max": 2}]
    assert mixing.summary(dist.iloc[0:0]).empty


def test_rung_pair_and_workspace_sources(ws):
    lad = ladder.load(ws)
    pair = mixing.rung_pair(lad)
    assert pair[0] == next(r.name for r in lad.rungs if r.kind == "shared") and pair[-1] == lad.names[-1]
    dist = mixing.distinct_sources(ws, run_names=["oracle"], rungs=pair)
    assert set(dist["rung"]) == set(pair) and dist["n_sources"].between(1, 2).all()  # the bank has two sources


# ------------------------------------------------------------------------------------------- audit, access/use
def test_audit_select_and_candidates():
    t = pd.DataFrame({"qid": ["q1", "q1", "Q2"], "query": ["Paris capital", "Paris capital", None],
                      "verdict": ["Conflict", "Hard Negative", "error"], "domain": ["h", "h", "m"],
                      "rank": [2, 1, 1], "ref_ids": [[1, 2], [1, 2], np.nan]})
    assert len(audit.select(t)) == 3
    assert audit.select(t, verdicts=["Conflict"])["rank"].tolist() == [2]
    assert audit.select(t, domains=["m"])["qid"].tolist() == ["Q2"]
    assert audit.select(t, search="PARIS")["qid"].tolist() == ["q1", "q1"]
    assert audit.select(t, search="q2")["qid"].tolist() == ["Q2"]  # qid match, case-insensitive
    rows, gold = audit.candidates(t, "q1")
    assert rows["rank"].tolist() == [1, 2] and gold == [1, 2]
    assert audit.candidates(t, "Q2")[1] == []  # the query is in neither table


def test_audit_table_without_verdicts_is_empty(ws):
    assert audit.table(ws).empty and audit.last_applied(ws) is None


def test_access_use_wide_table():
    summ = pd.DataFrame({"rung": ["r1"] * 4, "quadrant": ["accessed_good", "use_failure", "unaccessed_good",
                                                          "access_failure"],
                         "n": [3, 1, 0, 2], "n_classified": [6] * 4, "n_excluded": [1] * 4})
    wide = access_use.wide(summ, ["rung"])
    assert wide.to_dict("records") == [{"rung": "r1", "accessed_good": 3, "use_failure": 1, "unaccessed_good": 0,
                                        "access_failure": 2, "n_classified": 6, "n_excluded": 1}]
    assert access_use.wide(summ.iloc[0:0], ["rung"]).empty
    parts = access_use.caption_parts(pd.DataFrame({"rung": ["b", "a"], "quadrant": ["use_failure", None]}),
                                     "reference", 10, 1.0, 4)
    assert parts["rungs"] == ["a", "b"] and parts["n"] == 1 and "score ≥ 4" in parts["extra"]


# ------------------------------------------------------------------------------------------- drilldown
def test_failures_use_the_metric_direction(ws):
    pq = views.per_query(ws)
    rung = ladder.load(ws).names[0]
    assert drilldown.failures(pq, "oracle", rung, "SR@10").empty
    worst = drilldown.failures(pq, "worst", rung, "SR@10")
    assert len(worst) == pq[(pq["run"] == "worst") & (pq["rung"] == rung)]["qid"].nunique()
    intr = drilldown.failures(pq, "worst", rung, "HN-intrusion")
    assert len(intr) and (intr["hn_intrusion"] == 1.0).all()
    assert drilldown.failures(pq, "oracle", rung, "HN-intrusion").empty
    assert drilldown.failures(pq, "llm", ladder.load(ws).names[-1], "SR@10").empty  # does not fit: not a failure
    scale = views.scale_of(rung)
    assert len(drilldown.failures(pq, "worst", scale, "SR@10", x="scale")) >= len(worst)
    with pytest.raises(EmbSError, match="unknown metric"):
        drilldown.failures(pq, "worst", rung, "SR@3")


def test_failures_worst_first():
    pq = pd.DataFrame({"run": ["a"] * 3, "rung": ["r"] * 3, "qid": ["q1", "q2", "q3"], "status": ["ok"] * 3,
                       "MRR": [0.5, 0.2, 1.0]})
    assert drilldown.failures(pq, "a", "r", "MRR")["qid"].tolist() == ["q2", "q1"]


def test_find_queries_exact_id_first():
    qs = pd.DataFrame({"qid": ["q10", "q1", "x"], "text": ["about q1 things", "Paris", "Berlin"],
                       "answer": ["a", "b", "Q1 answer"]})
    assert drilldown.find_queries(qs, "q1")["qid"].tolist() == ["q1", "q10", "x"]
    assert drilldown.find_queries(qs, "  ").empty and drilldown.find_queries(qs, "nothing").empty


# ------------------------------------------------------------------------------------------- kept queries
def test_kept_summary_names_the_base_that_keeps_every_query(tmp_path):
    from emb_s_core.analysis import kept

    bank.import_path(tmp_path / "ws", "native", make_bank(tmp_path / "bank", n_docs=120, n_queries=30))
    w = Workspace(tmp_path / "ws")
    small = ladder.build(w, ladder.LadderOptions(base="4K", domain_sizes=("4K",), shared_size="16K", reserve=256))
    summary = kept.table(w, small)
    assert summary["queries"].sum() == 30 and (summary["kept"] + summary["dropped"] == summary["queries"]).all()
    assert summary["dropped"].sum() == (~small.kept["kept"].astype(bool)).sum() > 0
    note = kept.dropped_note(summary, "4K", w.path)
    need = max(summary["base_full_coverage"], key=lambda s: int(s[:-1]))
    assert int(need[:-1]) > 4  # a base larger than the one that dropped them
    assert note and f"--base {need}`" in note and f"{summary['dropped'].sum()} of 30 queries" in note
    assert f"emb-s domains label --workspace {w.path}" in note and "DIR" not in note  # the real workspace path
    big = ladder.build(w, ladder.LadderOptions(base=need, domain_sizes=("4K",), shared_size="2M", reserve=256))
    again = kept.table(w, big)
    assert again["dropped"].sum() == 0 and kept.dropped_note(again, need) is None
    assert min(r.composition["hard_negative_coverage"]["min"] for r in big.rungs if r.kind == "domain") == 1.0
    assert any("below the" in m for m in big.messages)  # the 4K domain size is left out
    assert kept.base_needed(1000, 24, 1024) == 1024 and kept.base_needed(1001, 24, 1024) == 2048


# ------------------------------------------------------------------------------------------- run state
def test_run_states_complete_partial_empty(ws, tmp_path):
    from emb_s_core.analysis import run_state

    lad = ladder.load(ws)
    stored = runs.load_results(ws)
    table = run_state.states(stored, lad, ["oracle", "llm", "partial", "never"]).set_index("run")
    expected = sum(len(r.qids) for r in lad.rungs)
    assert table.loc["oracle", "state"] == schema.RUN_COMPLETE and table.loc["oracle", "cells"] == expected
    assert table.loc["llm", "state"] == schema.RUN_COMPLETE  # does-not-fit cells were attempted: they count
    part = table.loc["partial"]
    assert part["state"] == schema.RUN_PARTIAL and part["cells"] == len(lad.rungs[0].qids) and part["rungs"] == 1
    n = len(lad.rungs[0].qids)
    assert part["missing"] == expected - n
    assert part["label"] == (f"INCOMPLETE: {n:,} of {expected:,} (rung, query) results, {expected - n:,} missing; "
                             f"1 of {len(lad.rungs)} rungs have any")
    assert table.loc["never", "state"] == schema.RUN_EMPTY and table.loc["never", "cells"] == 0
    assert run_state.empty_runs(table.reset_index(), ["oracle", "never"]) == ["never"]
    assert set(run_state.not_complete(table.reset_index())["run"]) == {"partial", "never"}
    # rows outside the ladder (a rung since removed) do not make a run complete
    extra = pd.concat([stored[stored["run"] == "partial"].assign(rung="gone")], ignore_index=True)
    assert run_state.states(extra, lad, ["partial"])["state"].tolist() == [schema.RUN_EMPTY]
    # the workspace entry reads the registered runs
    whole = run_state.for_workspace(ws).set_index("run")["state"]
    assert whole.to_dict() == {"oracle": "complete", "worst": "complete", "llm": "complete", "partial": "partial"}
    annotated = run_state.annotate(runs.list_runs(ws), run_state.for_workspace(ws))
    assert list(annotated.columns) == ["run", "kind", "system", "created_at", "state"]


def test_run_states_expect_the_rungs_a_run_was_asked_for(ws):
    """Expected cells follow the run's recorded rungs (``config["ladder"]``, an external file's one ``rung``); an error
    row is a missing result, a does-not-fit row is a result."""
    from emb_s_core.analysis import run_state

    lad = ladder.load(ws)
    stored = runs.load_results(ws)
    first = lad.rungs[0]
    asked = {"partial": {"ladder": {first.name: first.membership_hash}}, "oracle": {"rung": first.name},
             "llm": {"ladder": {r.name: r.membership_hash for r in lad.rungs}}}
    table = run_state.states(stored, lad, ["partial", "oracle", "llm"], asked).set_index("run")
    assert table.loc["partial", "state"] == schema.RUN_COMPLETE  # asked for the first rung only, and has it
    assert table.loc["oracle", "expected"] == len(first.qids) and table.loc["oracle", "state"] == schema.RUN_COMPLETE
    errored = stored.copy()
    hit = (errored["run"] == "llm") & (errored["rung"] == first.name) & (errored["qid"] == first.qids[0])
    errored.loc[hit, "status"] = schema.ERROR
    row = run_state.states(errored, lad, ["llm"], asked).iloc[0]
    assert row["state"] == schema.RUN_PARTIAL and row["missing"] == 1
    assert run_state.notes(run_state.states(errored, lad, ["llm"], asked)) == [
        f"run 'llm' is {row['label']} — its scores cover only the results it has; rerunning the same command "
        "resumes it"]
    assert run_state.caption_mark(run_state.states(errored, lad, ["llm"], asked)) == (
        f"INCOMPLETE: llm {row['cells']:,} of {row['expected']:,} results")


def test_common_queries_per_column():
    """Runs side by side keep, per column, the queries every run with rows there has; a run absent from a column does
    not shrink the others; the note names what was left out."""
    from emb_s_core.analysis import common

    pq = pd.DataFrame({"run": ["a"] * 5 + ["b"] * 3 + ["c"],
                       "scale": ["64K"] * 3 + ["1M"] * 2 + ["64K"] * 2 + ["1M"] + ["1M"],
                       "qid": ["q1", "q2", "q3", "q1", "q2", "q1", "q2", "q1", "q1"]})
    kept, left = common.restrict(pq, "scale")
    assert sorted(map(tuple, kept[["run", "scale", "qid"]].to_numpy().tolist())) == [
        ("a", "1M", "q1"), ("a", "64K", "q1"), ("a", "64K", "q2"), ("b", "1M", "q1"), ("b", "64K", "q1"),
        ("b", "64K", "q2"), ("c", "1M", "q1")]
    assert left.to_dict("records") == [{"column": "64K", "run": "b", "queries": 3, "common": 2, "missing": 1},
                                       {"column": "1M", "run": "b", "queries": 2, "common": 1, "missing": 1},
                                       {"column": "1M", "run": "c", "queries": 2, "common": 1, "missing": 1}]
    assert common.note(left, "scale") == (
        "Compared over the queries every run has in each scale; where a run lacks some, only the common ones count: "
        "64K: 2 of 3 queries (1 missing from b); 1M: 1 of 2 queries (1 missing from b, 1 missing from c)")
    kept, left = common.restrict(pq, "scale", ["a"])  # one run: nothing to compare, nothing left out
    assert len(kept) == 5 and left.empty and common.note(left) is None
    # an error row is a missing result; a does-not-fit row is a result
    with_status = pq.assign(status=[schema.OK] * 5 + [schema.ERROR, schema.DOES_NOT_FIT, schema.OK, schema.OK])
    kept, left = common.restrict(with_status, "scale")
    assert sorted(kept.loc[kept["scale"] == "64K", "qid"].unique()) == ["q2"]
    assert left[left["column"] == "64K"].to_dict("records") == [
        {"column": "64K", "run": "b", "queries": 3, "common": 1, "missing": 2}]


def test_bank_summary_and_document_columns():
    from emb_s_core.analysis import bank_summary

    info = {"tokens_per_domain": {"law": 900, "math": 100}, "queries_per_domain": {"law": 3},
            "sources": [{"source": "s", "sha256": "x" * 64, "path": "/tmp/f", "documents": 4}],
            "documents_per_source": {"s": 4}}
    assert bank_summary.domains(info).to_dict("records") == [{"domain": "law", "text tokens": 900, "queries": 3},
                                                             {"domain": "math", "text tokens": 100, "queries": 0}]
    assert list(bank_summary.sources(info).columns) == ["source", "documents"]
    shown = bank_summary.sources({**info, "sources": [
        {"source": "s", "documents": 4, "skipped": "{}", "details": {"scales": ["64K", "1M"], "matched": 12345}},
        {"source": "t", "documents": 1, "skipped": '{"row without context": 1204}', "details": None}]})
    assert shown["skipped"].tolist() == ["none", "row without context: 1,204"]  # never a raw {}
    assert shown["details"].tolist() == ["scales: 64K, 1M; matched: 12,345", ""]
    assert bank_summary.sources({**info, "sources": []}).to_dict("records") == [{"source": "s", "documents": 4}]
    docs = pd.DataFrame({"title": ["a", "b"], "source": ["x", "y"], "domain": ["d", "e"]},
                        index=pd.Index([5, 9], name="doc_id"))
    ranked = pd.DataFrame({"rank": [1, 2], "doc_id": [9, 77], "score": [0.9, 0.1]})
    out = drilldown.with_documents(ranked, docs)
    assert out["title"].tolist()[0] == "b" and pd.isna(out["title"].iloc[1]) and len(out) == 2


def test_evaluated_queries_of_the_built_ladder_else_the_official_one():
    """Home's "Queries": a release evaluated on its published scales only has no built ladder, and its official
    ladder's kept queries are the evaluated ones (it showed 0)."""
    from emb_s_core.analysis import kept

    def lad(rows):
        return ladder.Ladder([], pd.DataFrame(rows, columns=["qid", "domain", "kept", "reason", "ladder"]), {})

    official = [("a", "d", True, "", "official"), ("b", "d", False, "gold missing", "official"),
                ("c", "d", True, "", "official")]
    built = [("a", "d", True, "", "built"), ("b", "d", True, "", None)]
    assert kept.n_evaluated(lad(official)) == 2
    assert kept.n_evaluated(lad(built + official)) == 2 == kept.n_evaluated(lad(built))
    assert kept.n_evaluated(lad([("a", "d", True, "", "benign")])) == 0
    assert kept.n_evaluated(None) is None
