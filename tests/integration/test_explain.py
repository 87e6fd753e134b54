"""Displacement attribution on a constructed case: every cause produced once and attributed right; the CLI agrees."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from emb_s_core import bank, ladder, runs
from emb_s_core.analysis import explain
from emb_s_core.cli import main
from emb_s_core.errors import EmbSError
from emb_s_core.store import Workspace
from tests.conftest import write_jsonl

# documents: 1 gold, 2 the hard negative, 3 and 4 old members of r, 5 new law, 6 new math, 7 new law of source s2
DOMAIN = {1: "law", 2: "law", 3: "law", 4: "law", 5: "law", 6: "math", 7: "law", 8: "math"}
SMALL, BIG = [1, 2, 3, 4, 8], [1, 2, 3, 4, 5, 6, 7, 8]
# query -> (ranked list on r, ranked list on r'), k = 2; gold is always document 1
LISTS = {
    "qa": ([1, 3], [2, 3, 1]),   # the hard negative took the place
    "qb": ([1, 3], [5, 3, 1]),   # new, same domain
    "qc": ([1, 3], [6, 3, 1]),   # new, other domain
    "qd": ([1, 3], [7, 3]),      # new, other source (gold beyond the stored list: rank 0)
    "qe": ([1, 3], [4, 3, 1]),   # already in r: the gold fell below an old member
    "qf": ([1, 3], [5, 6, 1]),   # two displacers: half same domain, half other domain
    "qg": ([1, 3], [1, 5]),      # gold kept: not displaced
}


@pytest.fixture()
def ws(tmp_path):
    docs = [{"doc_id": d, "text": f"document {d}", "domain": dom, "source": "s2" if d == 7 else "s1"}
            for d, dom in DOMAIN.items()]
    qs = [{"qid": q, "text": f"question {q}", "answer": "x", "ref_ids": [1],
           "hard_negative_ids": [2] if q == "qa" else [], "domain": "law"} for q in LISTS]
    write_jsonl(tmp_path / "bank" / "documents.jsonl", docs)
    write_jsonl(tmp_path / "bank" / "queries.jsonl", qs)
    bank.import_path(tmp_path / "ws", "native", tmp_path / "bank", source="s1")
    return hand_run(Workspace(tmp_path / "ws"), SMALL, BIG, LISTS)


def hand_run(ws: Workspace, small: list[int], big: list[int], lists: dict) -> Workspace:
    """Two hand-made nested rungs r ⊂ r2 holding ``lists``' queries, and the run "hand" ranking them as given."""
    d, q = bank.documents(ws), bank.queries(ws)
    rungs = [ladder.make_rung("r", "shared", None, None, None, small, list(lists), d, q),
             ladder.make_rung("r2", "global", None, None, None, big, list(lists), d, q)]
    rungs[1].order = 1
    kept = pd.DataFrame({"qid": list(lists), "domain": "law", "kept": True, "reason": ""})
    ladder.store(ws, ladder.Ladder(rungs, kept, {}), ladder.bank_state(ws))
    runs.create_run(ws, "hand", "retriever", "hand", {"k": 3})
    runs.save_results(ws, "hand", [{"rung": rung, "qid": qid, "doc_ids": pair[i]}
                                   for qid, pair in lists.items() for i, rung in enumerate(["r", "r2"])])
    return ws


def test_every_cause_is_attributed_right(ws):
    out = explain.explain(ws, "hand", "r", "r2", k=2)
    shown = out["displaced"].set_index("qid")
    assert list(shown.index) == ["qa", "qb", "qc", "qd", "qe", "qf"] and out["queries"] == 7
    assert shown.loc["qa", "causes"] == [explain.HARD_NEGATIVE]
    assert shown.loc["qb", "causes"] == [explain.SAME_DOMAIN]
    assert shown.loc["qc", "causes"] == [explain.OTHER_DOMAIN]
    assert shown.loc["qd", "causes"] == [explain.OTHER_SOURCE]
    assert shown.loc["qe", "causes"] == [explain.ALREADY_IN]
    assert shown.loc["qf", "displacers"] == [5, 6]
    assert shown.loc["qf", "causes"] == [explain.SAME_DOMAIN, explain.OTHER_DOMAIN]
    assert shown.loc["qd", "gold_ranks_to"] == [0] and shown.loc["qa", "gold_ranks_to"] == [3]
    shares = out["breakdown"].set_index("cause")
    assert shares["share"].sum() == pytest.approx(1.0) and set(shares["n"]) == {6}
    assert shares.loc[explain.SAME_DOMAIN, "share"] == pytest.approx(1.5 / 6)
    assert shares.loc[explain.OTHER_DOMAIN, "queries"] == 2
    assert shares.loc[explain.HARD_NEGATIVE, "share"] == pytest.approx(1 / 6)
    assert "qg" not in set(explain.explain(ws, "hand", "r", "r2", k=1)["displaced"]["qid"])  # gold first on both


def test_shares_sum_to_one_when_the_longer_rungs_list_is_shorter_than_k(ws):
    """A retriever that returns fewer than K documents on r′: a gold that left the list with no document taking its
    place still weighs 1 (``gold's own score``), so the shares sum to 1 (they summed to 8/9 before)."""
    runs.create_run(ws, "short", "retriever", "short", {"k": 3})
    lists = {"qa": ([1, 3], [3]), "qb": ([1, 3], [5]), "qc": ([1, 3], [6, 3])}  # qa: no displacer at all
    runs.save_results(ws, "short", [{"rung": rung, "qid": qid, "doc_ids": pair[i]}
                                    for qid, pair in lists.items() for i, rung in enumerate(["r", "r2"])])
    out = explain.explain(ws, "short", "r", "r2", k=2)
    shown = out["displaced"].set_index("qid")
    assert shown.loc["qa", "displacers"] == [] and shown.loc["qa", "causes"] == [explain.OWN_SCORE]
    shares = out["breakdown"].set_index("cause")
    assert shares["share"].sum() == pytest.approx(1.0) and set(shares["n"]) == {3}
    assert shares.loc[explain.OWN_SCORE, "share"] == pytest.approx(1 / 3)
    assert shares.loc[explain.SAME_DOMAIN, "share"] == pytest.approx(1 / 3)


def test_cli_agrees_with_the_engine(ws, capsys):
    assert main(["explain", "--workspace", str(ws.path), "--run", "hand", "--from", "r", "--to", "r2", "--k", "2",
                 "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    engine = explain.explain(ws, "hand", "r", "r2", k=2)
    assert printed["breakdown"] == engine["breakdown"].to_dict("records")
    assert [r["qid"] for r in printed["displaced"]] == list(engine["displaced"]["qid"])
    assert main(["explain", "--workspace", str(ws.path), "--run", "hand", "--from", "r", "--to", "r2",
                 "--k", "2"]) == 0
    text = capsys.readouterr().out
    assert "6 of 7 queries lost a gold document" in text and "7(new, other source)" in text


def test_bad_requests(ws, capsys):
    with pytest.raises(EmbSError, match="not contained in"):
        explain.explain(ws, "hand", "r2", "r")
    with pytest.raises(EmbSError, match="no run named 'nope'"):
        explain.explain(ws, "nope", "r", "r2")
    with pytest.raises(EmbSError, match="no rung named 'x'"):
        explain.explain(ws, "hand", "x", "r2")
    with pytest.raises(EmbSError, match="k must be at least 1"):
        explain.explain(ws, "hand", "r", "r2", k=0)
    assert main(["explain", "--workspace", str(ws.path), "--run", "hand", "--from", "r2", "--to", "r"]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def one_domain_ladder() -> ladder.Ladder:
    """A one-domain bank's ladder: 64K/wiki, 128K/wiki and the shared rung hold the same documents."""
    import numpy as np

    members = {"64K/wiki": 3, "128K/wiki": 3, "shared": 3, "1M": 6, "full": 10}
    rungs = [ladder.Rung(name, "domain" if "/" in name else "global", None, None, None,
                         np.arange(1, n + 1, dtype=np.int64), ["q1", "q2"], 100 * n, str(n), order=i)
             for i, (name, n) in enumerate(members.items())]
    return ladder.Ladder(rungs, pd.DataFrame(), {})


def test_default_pair_is_the_largest_drop_between_different_rungs():
    lad = one_domain_ladder()
    assert explain.larger_rungs(lad, "64K/wiki") == ["1M", "full"]  # the equal 128K/wiki and shared left out
    assert explain.larger_rungs(lad, "full") == []
    assert explain.adjacent_pairs(lad) == [("64K/wiki", "1M"), ("128K/wiki", "1M"), ("shared", "1M"), ("1M", "full")]
    sr = {"a": {"64K/wiki": 1.0, "128K/wiki": 1.0, "shared": 1.0, "1M": 0.5, "full": 0.25},   # falls most at 1M
          "b": {"64K/wiki": 1.0, "128K/wiki": 1.0, "shared": 1.0, "1M": 0.9, "full": 0.1}}    # falls most at full
    pq = pd.DataFrame([{"run": run, "rung": rung, "qid": q, "status": "ok", "SR@10": v, "SR@5": 1.0}
                       for run, by in sr.items() for rung, v in by.items() for q in ("q1", "q2")])
    assert explain.largest_drop(pq, lad, "a", 10) == ("64K/wiki", "1M")
    assert explain.largest_drop(pq, lad, "b", 10) == ("1M", "full")
    assert explain.largest_drop(pq, lad, "b", 7) == ("64K/wiki", "1M")  # SR@5 (the cut-off at or below 7): no drop
    assert explain.largest_drop(pq, lad, "nobody", 10) == ("64K/wiki", "1M")  # no results: the first real pair


def test_a_querys_source_is_its_golds_on_a_native_bank_with_document_sources(tmp_path):
    """A native bank imported under one name whose documents carry their own sources (wiki, news, forum): a query's
    source is that of its gold (issue 31 §3), so a new document of the gold's source and domain is "new, same
    domain", never "new, other source" (the import's name is no document's source); a query whose gold spans two
    sources has both; ``report --by source`` groups by the same definition."""
    source_of = {1: "wiki", 2: "news", 3: "wiki", 4: "wiki", 5: "wiki", 6: "news", 7: "forum", 8: "wiki"}
    docs = [{"doc_id": d, "text": f"document {d}", "domain": "law", "source": s} for d, s in source_of.items()]
    lists = {"qw": ([1, 3], [5, 3, 1]),   # gold from wiki, a new wiki document: same domain
             "qn": ([2, 3], [7, 3, 2]),   # gold from news, a new forum document: other source
             "qm": ([1, 2], [6, 1, 2])}   # gold from wiki and news: a new news document is the gold's source
    refs = {"qw": [1], "qn": [2], "qm": [1, 2]}
    qs = [{"qid": q, "text": f"question {q}", "answer": "x", "ref_ids": refs[q], "hard_negative_ids": [],
           "domain": "law"} for q in lists]
    write_jsonl(tmp_path / "bank" / "documents.jsonl", docs)
    write_jsonl(tmp_path / "bank" / "queries.jsonl", qs)
    bank.import_path(tmp_path / "ws", "native", tmp_path / "bank", source="my-import")
    ws = Workspace(tmp_path / "ws")
    assert set(bank.queries(ws)["source"]) == {"my-import"}  # what the query records: the import's name
    assert bank.gold_sources(ws, bank.queries(ws)) == [("wiki",), ("news",), ("news", "wiki")]
    hand_run(ws, [1, 2, 3, 4, 8], sorted(source_of), lists)
    shown = explain.explain(ws, "hand", "r", "r2", k=2)["displaced"].set_index("qid")
    assert shown.loc["qw", "causes"] == [explain.SAME_DOMAIN]
    assert shown.loc["qn", "causes"] == [explain.OTHER_SOURCE]
    assert shown.loc["qm", "causes"] == [explain.SAME_DOMAIN]
    from emb_s_core.analysis import report

    by_source = report.rows(ws, by=["source"], metric_names=["SR@1"], n_boot=10)
    assert set(by_source["source"]) == {"wiki", "news", "news + wiki"}


def test_real_run_on_a_native_bank_whose_documents_carry_their_own_sources(tmp_path_factory, tmp_path):
    """BM25 evaluated on the generated native bank (documents of sources gen-a and gen-b, imported under another
    name) and explained on every adjacent pair: "new, other source" goes only to displacers whose source none of the
    query's gold documents has, and the displacers of the gold's own source get a domain cause (with the import's
    name as the query's source every new displacer read "new, other source"). Every nested pair, k = 1, 3, 5, 10."""
    from emb_s_core import evaluate
    from testkit.retrieval_bank import copy_workspace, template

    ws = copy_workspace(template(tmp_path_factory), tmp_path / "ws")
    assert set(bank.documents(ws, ["source"])["source"]) == {"gen-a", "gen-b"}
    assert not set(bank.queries(ws)["source"]) & {"gen-a", "gen-b"}
    evaluate.evaluate(ws, "bm25", name="bm25", k=10)
    lad = ladder.load(ws)
    qs = bank.queries(ws)
    gold_sources = dict(zip(qs["qid"], map(set, bank.gold_sources(ws, qs))))
    source_of = bank.documents(ws, ["doc_id", "source"]).set_index("doc_id")["source"]
    new_causes = {explain.OTHER_SOURCE, explain.SAME_DOMAIN, explain.OTHER_DOMAIN}
    by_cause: dict[str, int] = {}
    pairs = [(r.name, big) for r in lad.rungs for big in explain.larger_rungs(lad, r.name)]
    for (small, big), k in [(pair, k) for pair in pairs for k in (1, 3, 5, 10)]:
        shown = explain.displacements(ws, "bm25", small, big, k=k)
        for qid, displacers, causes in zip(shown["qid"], shown["displacers"], shown["causes"]):
            for d, cause in zip(displacers, causes):
                if cause in new_causes:
                    assert (cause == explain.OTHER_SOURCE) == (source_of[d] not in gold_sources[qid]), (qid, d)
                    by_cause[cause] = by_cause.get(cause, 0) + 1
    assert by_cause.get(explain.OTHER_SOURCE, 0) and by_cause.get(explain.SAME_DOMAIN, 0) + by_cause.get(
        explain.OTHER_DOMAIN, 0), by_cause
