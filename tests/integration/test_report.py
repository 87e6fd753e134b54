"""Scores from a real workspace (native bank + ladder + stored runs): report rows, compare, and the CLI."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from emb_s_core import bank, ladder, metrics, runs
from emb_s_core.analysis import report, views
from emb_s_core.cli import main
from emb_s_core.errors import EmbSError
from emb_s_core.store import Workspace
from tests.unit.test_ladder import DOMAINS, make_bank

@pytest.fixture(scope="module")
def ws(tmp_path_factory):
    root = tmp_path_factory.mktemp("report")
    bank.import_path(root / "ws", "native", make_bank(root / "bank", n_docs=150, n_queries=24))
    w = Workspace(root / "ws")
    # queries kept by their gold alone (hn_share=0): the 8K pools keep enough queries per rung for the paired tests
    lad = ladder.build(w, ladder.LadderOptions(base="8K", domain_sizes=("8K", "16K"), shared_size="24K", hn_share=0.0))
    qs = bank.queries(w).set_index("qid")
    rng = np.random.default_rng(0)
    for name in ("oracle", "shuffle", "llm"):
        runs.create_run(w, name, "retriever" if name != "llm" else "localize", name, {"k": 20})
    for rung in lad.rungs:
        rows = {"oracle": [], "shuffle": [], "llm": []}
        for qid in rung.qids:
            gold = list(qs.loc[qid, "ref_ids"])
            others = [int(d) for d in rng.permutation(rung.doc_ids) if d not in gold]
            rows["oracle"].append({"rung": rung.name, "qid": qid, "doc_ids": gold + others[:19]})
            rows["shuffle"].append({"rung": rung.name, "qid": qid,
                                    "doc_ids": [int(d) for d in rng.permutation(rung.doc_ids)[:20]]})
            fits = rung.n_tokens <= 16384
            rows["llm"].append({"rung": rung.name, "qid": qid, "doc_ids": others[:2] + gold if fits else [],
                                "scores": None, "status": runs.OK if fits else runs.DOES_NOT_FIT,
                                "detail": None if fits else {"tokens": rung.n_tokens}})
        for name, batch in rows.items():
            runs.save_results(w, name, batch)
    return w


def test_report_rows_every_run_and_rung_in_ladder_order(ws):
    lad = ladder.load(ws)
    df = report.rows(ws, metric_names=["SR@10", "FR@10", "R@1"], n_boot=200)
    assert list(df.columns[:7]) == report.REPORT_COLUMNS
    assert list(dict.fromkeys(df["run"])) == ["oracle", "shuffle", "llm"]
    oracle = df[(df["run"] == "oracle") & (df["metric"] == "SR@10")]
    assert list(oracle["rung"]) == lad.names
    assert (oracle["value"] == 1.0).all()
    assert (oracle["n"].to_numpy() == [len(r.qids) for r in lad.rungs]).all()
    llm = df[(df["run"] == "llm") & (df["metric"] == "SR@10")].set_index("rung")
    for r in lad.rungs:  # a rung that does not fit is NaN with n = 0, never a zero
        if r.n_tokens > 16384:
            assert np.isnan(llm.loc[r.name, "value"]) and llm.loc[r.name, "n"] == 0
            assert llm.loc[r.name, "n_does_not_fit"] == len(r.qids)
        else:
            assert llm.loc[r.name, "value"] == 1.0
    r1 = df[(df["run"] == "llm") & (df["metric"] == "R@1")].dropna(subset=["value"])
    assert (r1["value"] == 0.0).all()  # gold placed after two distractors


def test_breakdown_by_domain_adds_up(ws):
    df = report.rows(ws, runs=["shuffle"], metric_names=["SR@10"], by=["domain"], n_boot=0)
    whole = report.rows(ws, runs=["shuffle"], metric_names=["SR@10"], n_boot=0)
    shared = whole[whole["rung"] == "24K"].iloc[0]
    parts = df[df["rung"] == "24K"]
    assert set(parts["domain"]) == set(DOMAINS) and parts["n"].sum() == shared["n"]
    assert (parts["value"] * parts["n"]).sum() / parts["n"].sum() == pytest.approx(shared["value"])


def test_compare_per_rung(ws):
    cmp = report.compare(ws, "oracle", "shuffle", metric="SR@10", n_resamples=2000)
    assert list(cmp["rung"]) == ladder.load(ws).names
    assert (cmp["delta"] > 0).all() and (cmp["losses"] == 0).all()
    big = cmp[cmp["n"] >= 12]
    assert len(big) and (big["p_value"] < 0.01).all()
    with pytest.raises(EmbSError, match="no results for run 'nope'"):
        report.compare(ws, "oracle", "nope")


def test_workspace_per_query_matches_direct_call(ws):
    pq = views.per_query(ws, ["oracle"])
    direct = metrics.per_query(runs.load_results(ws, ["oracle"]), bank.with_gold_source(ws, bank.queries(ws)))
    pd.testing.assert_frame_equal(pq.drop(columns="scale"), direct)
    assert (pq["scale"] == pq["rung"].str.split("/").str[0]).all()
    assert (pq["gold_ranks"].map(lambda r: r == list(range(1, len(r) + 1)))).all()


def test_cli_report_formats_and_out(ws, tmp_path, capsys):
    version = ws.version
    assert main(["report", "-w", str(ws.path), "--metrics", "SR@10,HN-intrusion", "--format", "csv",
                 "--n-boot", "100"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("run,rung,metric,value,n,ci_low,ci_high")
    assert len(lines) == 1 + 3 * len(ladder.load(ws).names) * 2
    assert main(["report", "-w", str(ws.path), "--metrics", "FR@10", "--by", "domain", "--n-boot", "0",
                 "--out", str(tmp_path / "t.tex")]) == 0
    tex = (tmp_path / "t.tex").read_text()
    assert r"\toprule" in tex and r"8K/law" in tex and r"FR@10" in tex
    assert main(["report", "-w", str(ws.path), "--runs", "llm", "--metrics", "SR@10", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert any(r["value"] is None and r["n"] == 0 for r in rows)
    assert main(["compare", "-w", str(ws.path), "oracle", "shuffle", "--metric", "MRR"]) == 0
    out = capsys.readouterr().out
    assert "p_value" in out and "randomization" in out
    assert ws.version == Workspace(ws.path).version == version


@pytest.mark.parametrize("argv, message", [
    (["report", "--metrics", "SR@7"], "unknown metric 'SR@7'"),
    (["report", "--by", "colour"], "cannot break down by 'colour'"),
    (["report", "--runs", "ghost"], "no results for run(s) ghost"),
    (["report", "--out", "x.xlsx"], "cannot tell the table format"),
    (["compare", "oracle", "ghost"], "no results for run 'ghost'"),
    (["compare", "oracle", "shuffle", "--rungs", "9M"], "rung '9M' has no results for both runs"),
])
def test_cli_errors_are_one_line_and_change_nothing(ws, capsys, argv, message):
    version = ws.version
    assert main([argv[0], "-w", str(ws.path), *argv[1:]]) == 2
    err = capsys.readouterr().err
    assert message in err and err.startswith("emb-s: error:") and "Fix:" in err
    assert Workspace(ws.path).version == version


def test_report_on_workspace_without_results(tmp_path, capsys):
    root = tmp_path
    bank.import_path(root / "ws", "native", make_bank(root / "bank", n_docs=20, n_queries=2))
    assert main(["report", "-w", str(root / "ws")]) == 2
    assert "no results in the workspace" in capsys.readouterr().err


def test_hn_intrusion_by_provenance(ws, capsys):
    """Dataset distractors and collision-verified hard negatives are reported apart."""
    hn = bank.hard_negatives(ws)
    assert len(hn) and set(hn["provenance"]) == {"dataset"}  # native import: the dataset's own lists
    every = report.rows(ws, runs=["shuffle"], metric_names=["HN-intrusion"], n_boot=0)
    same = report.rows(ws, runs=["shuffle"], metric_names=["HN-intrusion"], n_boot=0, hn_provenance=["dataset"])
    none = report.rows(ws, runs=["shuffle"], metric_names=["HN-intrusion"], n_boot=0, hn_provenance=["collision"])
    assert every["value"].tolist() == same["value"].tolist()
    assert every["n"].sum() > 0 and none["n"].sum() == 0  # no collision-verified hard negative: nothing to intrude
    with pytest.raises(EmbSError, match="unknown hard-negative provenance 'guessed'"):
        report.rows(ws, metric_names=["HN-intrusion"], n_boot=0, hn_provenance=["guessed"])
    assert main(["report", "-w", str(ws.path), "--metrics", "HN-intrusion", "--hn-provenance", "collision",
                 "--n-boot", "0", "--format", "csv"]) == 0


def test_undefined_metrics_are_left_out_but_cells_that_could_not_run_stay():
    agg = pd.DataFrame({"run": ["a", "a", "b"], "rung": ["r", "r", "r"], "metric": ["R@1", "SR@10", "R@1"],
                        "value": [np.nan, 0.5, np.nan], "n": [0, 4, 0], "ci_low": np.nan, "ci_high": np.nan,
                        "n_ok": [4, 4, 0], "n_does_not_fit": [0, 0, 4], "n_error": 0})
    kept = report.drop_undefined(agg)
    assert kept[["run", "metric"]].values.tolist() == [["a", "SR@10"], ["b", "R@1"]]


def test_wide_report_and_cli(ws, capsys):
    lad = ladder.load(ws)
    long = report.rows(ws, metric_names=["SR@10", "MRR"], n_boot=0)
    wide = report.wide(long, lad.names)
    assert list(wide.columns) == ["run", "metric", *lad.names]
    assert len(wide) == 3 * 2 and wide.set_index(["run", "metric"]).loc[("oracle", "SR@10")].eq(1.0).all()
    llm = wide.set_index(["run", "metric"]).loc[("llm", "MRR")]
    assert llm.isna().any() and llm.notna().any()  # does-not-fit rungs are blank, never 0
    assert main(["report", "-w", str(ws.path), "--metrics", "SR@10", "--wide", "--format", "csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "run,metric," + ",".join(lad.names) and len(lines) == 1 + 3


def test_info_names_both_token_counts(ws, capsys):
    """`emb-s info` shows text tokens (title + text) and, with a ladder, the serialized tokens its rungs count
    (plus a [DocID] header per document): two figures, each named, never one word for both."""
    summary = bank.info(ws)
    full = [r for r in ladder.load(ws).rungs if r.n_documents == summary["documents"]][-1]
    assert main(["info", "--workspace", str(ws.path)]) == 0
    out = capsys.readouterr().out
    assert f"text tokens {summary['tokens']:,}" in out
    assert f"serialized tokens {full.n_tokens:,} (the full rung)" in out and full.n_tokens > summary["tokens"]
    assert "[DocID=<id>] header" in out and " tokens " not in out.replace("text tokens", "").replace(
        "serialized tokens", "")
