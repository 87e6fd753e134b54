"""The paper's Table 3 from stored runs: rows per run with reranking under its base, R@1/SR@10/FR@10 per scale with
domain rungs pooled and n per cell, equal to the report's numbers; Markdown, CSV and booktabs LaTeX; bad requests."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from emb_s_core import bank, ladder, metrics, runs
from emb_s_core.analysis import paper_table, views
from emb_s_core.cli import main
from emb_s_core.errors import EmbSError
from emb_s_core.store import Workspace
from tests.unit.test_ladder import make_bank


@pytest.fixture(scope="module")
def ws(tmp_path_factory):
    root = tmp_path_factory.mktemp("paper")
    bank.import_path(root / "ws", "native", make_bank(root / "bank", n_docs=150, n_queries=24))
    w = Workspace(root / "ws")
    lad = ladder.build(w, ladder.LadderOptions(base="8K", domain_sizes=("8K",), shared_size="24K"))
    qs = bank.queries(w).set_index("qid")
    rng = np.random.default_rng(0)
    systems = {"bm25": "bm25", "dense": "dense:minilm-l6", "bm25+ce": "rerank:/models/ce:bm25"}
    for name, system in systems.items():
        runs.create_run(w, name, "retriever", system, {"k": 20})
    for rung in lad.rungs:
        rows = {n: [] for n in systems}
        for qid in rung.qids:
            gold = list(qs.loc[qid, "ref_ids"])
            others = [int(d) for d in rng.permutation(rung.doc_ids) if d not in gold]
            rows["bm25"].append({"rung": rung.name, "qid": qid, "doc_ids": others[:3] + gold + others[3:19]})
            rows["dense"].append({"rung": rung.name, "qid": qid, "doc_ids": others[:20]})
            rows["bm25+ce"].append({"rung": rung.name, "qid": qid, "doc_ids": gold + others[:19]})
        for name, batch in rows.items():
            runs.save_results(w, name, batch)
    return w


def test_rows_columns_and_values_match_the_report(ws):
    pt = paper_table.build(ws, ["8K", "24K", "full"])
    assert pt.rows["run"].tolist() == ["bm25", "bm25+ce", "dense"]  # the rerank run under its base
    assert pt.rows["label"].tolist() == ["bm25", "  + bm25+ce", "dense"] and pt.rows["base"].tolist()[1] == "bm25"
    assert list(pt.values.columns) == [(s, m) for s in ("8K", "24K", "full") for m in paper_table.METRICS]
    assert pt.n.loc["bm25", ("24K", "SR@10")] == pt.n.loc["bm25", ("8K", "SR@10")] > 0  # 24K: the shared rung
    pq = views.per_query(ws)
    pooled = pq[pq["rung"].str.startswith("8K/")]  # the 8K domain rungs pooled into one column
    agg = metrics.aggregate(pooled, by=("run",), metrics=["R@1", "SR@10", "FR@10"], n_boot=0).set_index(
        ["run", "metric"])
    for run in ("bm25", "dense", "bm25+ce"):
        for m in paper_table.METRICS:
            assert pt.values.loc[run, ("8K", m)] == pytest.approx(100 * agg.loc[(run, m), "value"])
            assert pt.n.loc[run, ("8K", m)] == agg.loc[(run, m), "n"]
    assert pt.values.loc["bm25+ce", ("full", "SR@10")] == 100.0 and pt.values.loc["dense", ("full", "R@1")] == 0.0
    n_single = int((bank.queries(ws)["n_gold"] == 1).sum())
    assert pt.n.loc["bm25", ("8K", "R@1")] <= n_single and pt.n.loc["bm25", ("8K", "FR@10")] > 0


def test_formats(ws):
    pt = paper_table.build(ws, ["8K", "full"])
    md = paper_table.render(pt, "markdown")
    assert md.splitlines()[0] == ("| run | 8K R@1 | 8K SR@10 | 8K FR@10 | full R@1 | full SR@10 | full FR@10 "
                                  "| effective scale |")
    assert "| ↳ bm25+ce |" in md and "- 8K: R@1 n=" in md
    full = ladder.load(ws).rung("full")
    assert f"- full ({ladder.real_size(full.n_tokens)} tokens): R@1 n=" in md  # the real size of a named scale
    tex = paper_table.render(pt, "latex")
    assert r"\toprule" in tex and r"\bottomrule" in tex and r"\cmidrule(lr){2-4}\cmidrule(lr){5-7}" in tex
    assert r"\multicolumn{3}{c}{8K}" in tex and r"\quad + bm25+ce" in tex
    csv = pd.read_csv(__import__("io").StringIO(paper_table.render(pt, "csv")))
    assert list(csv.columns[:4]) == ["run", "base", "8K R@1", "8K R@1 n"] and len(csv) == 3


def test_effective_scale_column_is_the_illusion_module_s(ws):
    """The built ladder's table ends with each run's effective scale, as analysis.illusion computes it."""
    from emb_s_core.analysis import illusion

    pt = paper_table.build(ws, ["8K", "full"])
    eff = illusion.effective_for_ladder(views.per_query(ws), ladder.load(ws), n_boot=200)
    eff = eff[eff["domain"] == "all"].set_index("run")
    for run in pt.rows["run"]:
        e = eff.loc[run]
        assert pt.effective[run] == f"{e['effective']} [{e['ci_low']}, {e['ci_high']}]"
    assert pt.effective["bm25+ce"].startswith("≥ ")  # the gold is first on every rung: it never falls
    assert paper_table.flat(pt)[paper_table.EFFECTIVE_COLUMN].tolist() == pt.effective.tolist()
    assert r"Eff. scale" in paper_table.render(pt, "latex")


def test_cli_and_bad_requests(ws, capsys, tmp_path):
    assert main(["report", "--paper-table", "--rungs", "8K,full", "-w", str(ws.path)]) == 0
    assert "| run | 8K R@1 |" in capsys.readouterr().out
    out = tmp_path / "t3.tex"
    assert main(["report", "--paper-table", "--rungs", "8K", "-w", str(ws.path), "--out", str(out)]) == 0
    assert "\n" + r"\begin{tabular}{lrrrl}" in out.read_text()  # 3 metrics + effective scale (after its \providecommands)
    # no --scales: every scale of the built ladder (it used to ask for 64K/512K/30M/326M and exit 2 on this bank)
    assert main(["report", "--paper-table", "-w", str(ws.path)]) == 0
    header = capsys.readouterr().out.splitlines()[0]
    scales = list(dict.fromkeys(paper_table.column_of(r.name) for r in ladder.load(ws).rungs))
    assert scales[0] == "8K" and scales[-1] == "full" and len(scales) >= 4
    assert header == "| run | " + " | ".join(f"{s} {m}" for s in scales for m in paper_table.METRICS) + \
        " | effective scale |"
    assert main(["report", "--paper-table", "--scales", "512K,30M,326M", "-w", str(ws.path)]) == 2
    assert "no results on the built ladder at any of the scales 512K, 30M, 326M" in capsys.readouterr().err
    with pytest.raises(EmbSError, match="no run named 'nope'"):
        paper_table.build(ws, ["8K"], runs=["nope"])
    assert main(["report", "--paper-table", "--format", "json", "-w", str(ws.path)]) == 2


def test_a_run_on_two_ladders_fills_one_ladder_at_a_time(ws):
    """Official and built rungs of one size never pool: the table reads one ladder kind."""
    lad = ladder.load(ws)
    rung = lad.rung("24K")
    official = ladder.Ladder([ladder.make_rung("official:8K", "scale", None, 8192, None, rung.doc_ids, rung.qids,
                                               _docs(ws), bank.queries(ws))], lad.kept, {}, [])
    ladder.store(ws, official, ladder.bank_state(ws), kind=ladder.OFFICIAL)
    runs.save_results(ws, "dense", [{"rung": "official:8K", "qid": q, "doc_ids": list(bank.queries(ws).set_index(
        "qid").loc[q, "ref_ids"])} for q in rung.qids])
    built = paper_table.build(ws, ["8K"], runs=["dense"])
    on_official = paper_table.build(ws, ["8K"], runs=["dense"], kind="official")
    assert built.values.loc["dense", ("8K", "SR@10")] < 100.0  # the built 8K/<d> rungs only
    assert on_official.values.loc["dense", ("8K", "SR@10")] == 100.0
    assert on_official.n.loc["dense", ("8K", "SR@10")] == len(rung.qids)


def _docs(ws):
    docs = bank.documents(ws, ["doc_id", "domain", "source"])
    return docs.assign(n_tokens=ladder.serialized_tokens(ws).loc[docs["doc_id"]].to_numpy())
