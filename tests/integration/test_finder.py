"""The finder ("fine at the base, lost at scale") against rows computed here, independently, from the stored rankings
of a real demo workspace with its benign twin; its CLI; and the drill-down's pieces it feeds (rank columns with the
twin's per-query pools, the reading view)."""
from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from emb_s_core import bank, evaluate, ladder, runs, twin
from emb_s_core.analysis import drilldown, finder, views
from emb_s_core.cli import main
from emb_s_core.errors import EmbSError
from emb_s_core.store import Workspace

pytestmark = pytest.mark.timeout(180)


def _success(ids: list[int], gold: list[int], negatives: list[int], metric: str) -> bool | None:
    """The metric at its best value, from the ranked list alone (None where the metric is not defined)."""
    pos = {d: i + 1 for i, d in enumerate(ids)}
    if metric == "R@1":
        return None if len(gold) != 1 else bool(ids) and ids[0] == gold[0]
    if metric == "MRR":
        return bool(ids) and ids[0] in gold
    if metric.startswith("SR@"):
        k = int(metric[3:])
        return all(pos.get(g, 10**9) <= k for g in gold)
    if metric == "HN-intrusion":
        if not negatives:
            return None
        first_hn = min((pos[h] for h in negatives if h in pos), default=None)
        last_gold = max(pos.get(g, 10**9) for g in gold)
        return not (first_hn is not None and first_hn < last_gold)
    raise AssertionError(metric)


def _expected(ws: Workspace, run: str, small: str, large: str, metric: str, direction: str) -> list[dict]:
    """The finder's rows recomputed from ``runs.load_results`` and the bank: plain loops, no analysis code."""
    res = runs.load_results(ws, runs=[run])
    qs = bank.queries(ws).set_index("qid")
    docs = bank.documents(ws, ["doc_id", "domain", "source"]).set_index("doc_id")
    lad = ladder.load_all(ws)
    deltas = twin.deltas(ws)
    lists: dict[str, dict[str, list[int]]] = {}
    for rung, qid, ids in zip(res["rung"], res["qid"], res["doc_ids"]):
        side = small if rung == small or rung.split("/")[0] == small else large if rung == large else None
        if side is not None:
            lists.setdefault(qid, {})[side] = (rung, [int(d) for d in ids])
    cut = {"R@1": 1, "MRR": 1, "HN-intrusion": None}.get(metric, int(metric.split("@")[1]) if "@" in metric else None)
    rows = []
    for qid, by_side in lists.items():
        if len(by_side) != 2:
            continue
        (ra, la), (_, lb) = by_side[small], by_side[large]
        gold = list(dict.fromkeys(int(g) for g in qs.at[qid, "ref_ids"]))
        negs = [int(h) for h in qs.at[qid, "hard_negative_ids"]]
        sa, sb = _success(la, gold, negs, metric), _success(lb, gold, negs, metric)
        if sa is None or sb is None or not ((sa and not sb) if direction == finder.LOST else (sb and not sa)):
            continue
        rank = {g: (la.index(g) + 1 if g in la else len(la) + 1, lb.index(g) + 1 if g in lb else len(lb) + 1)
                for g in gold}
        fell = {g: rank[g][1] - rank[g][0] for g in gold}
        if cut is None:
            candidates = gold
        elif direction == finder.LOST:
            candidates = [g for g in gold if rank[g][0] <= cut < rank[g][1]] or gold
        else:
            candidates = [g for g in gold if rank[g][1] <= cut < rank[g][0]] or gold
        g = max(candidates, key=lambda d: fell[d] if direction == finder.LOST else -fell[d])
        here, there = (lb, la) if direction == finder.LOST else (la, lb)
        above_there = there[:there.index(g)] if g in there else there
        above_here = here[:here.index(g)] if g in here else here
        over = [d for d in above_here if d not in above_there and d not in gold]
        within = [d for d in over if cut is None or here.index(d) < cut] or over
        other = next((d for d in within if d in negs), within[0] if within else None)
        row = {"qid": qid, "gold": g, "gold_rank_small": la.index(g) + 1 if g in la else None,
               "gold_rank_large": lb.index(g) + 1 if g in lb else None, "fell": fell[g], "other": other,
               "other_rank": here.index(other) + 1 if other is not None else None}
        if other is not None:
            d = docs.loc[other]
            gold_sources = {docs.at[x, "source"] for x in gold if x in docs.index} or {qs.at[qid, "source"]}
            row["other_relation"] = ("hard negative" if other in negs else "other source"
                                     if d["source"] not in gold_sources else "same domain"
                                     if d["domain"] == qs.at[qid, "domain"] else "other domain")
            if direction == finder.LOST:
                pool = set(lad.rung(ra).doc_ids.tolist())
                removed, added = deltas.get(ra, {}).get(qid, (np.empty(0), np.empty(0)))
                pool = (pool - set(removed.tolist())) | set(added.tolist())
                row["other_new"] = other not in pool
        rows.append(row)
    rows.sort(key=lambda r: (-r["fell"] if direction == finder.LOST else r["fell"], r["qid"]))
    return rows


def _plain(v):
    return None if v is None or (not isinstance(v, (list, str)) and pd.isna(v)) else (
        v if isinstance(v, str) else int(v) if not isinstance(v, (bool, np.bool_)) else bool(v))


@pytest.fixture(scope="module")
def twin_bank(tmp_path_factory) -> Path:
    """The retrieval tests' generated bank with its twin and bm25 on both (K = 20): documents new in the larger rungs
    take the gold's place there, on the built ladder and on the twin's per-query pools alike."""
    from testkit.retrieval_bank import copy_workspace, template

    ws = copy_workspace(template(tmp_path_factory), tmp_path_factory.mktemp("finder") / "ws")
    twin.build(ws, top_n=3)
    evaluate.evaluate(ws, "bm25", name="bm25", k=20, ladder="both")
    return Path(ws.path)


CASES = [("demo", "64K", "512K", "R@1", finder.LOST, 3), ("demo", "64K", "512K", "R@1", finder.GAINED, 5),
         ("demo", "64K", "512K", "SR@1", finder.LOST, 3), ("demo", "64K", "512K", "HN-intrusion", finder.LOST, 2),
         ("demo", "64K", "512K", "HN-intrusion", finder.GAINED, 3),
         ("demo", "64K/law", "512K", "R@1", finder.GAINED, 2), ("demo", "64K/history", "512K", "MRR", finder.LOST, 1),
         ("bank", "2K", "full", "SR@10", finder.LOST, 4), ("bank", "2K", "6K", "SR@5", finder.LOST, 2),
         ("bank", "benign:2K", "benign:full", "SR@10", finder.LOST, 5),
         ("bank", "3K", "full", "SR@10", finder.LOST, 1)]


@pytest.mark.parametrize("which,small,large,metric,direction,n", CASES)
def test_finder_rows_equal_rows_computed_from_the_stored_rankings(demo_twin_ws, twin_bank, which, small, large,
                                                                  metric, direction, n):
    ws = Workspace(demo_twin_ws if which == "demo" else twin_bank)
    got = finder.find(ws, "bm25", small, large, metric, direction=direction)
    want = _expected(ws, "bm25", small, large, metric, direction)
    assert len(want) == n  # the case has the rows it was chosen for: the comparison below means something
    keys = list(want[0])
    assert [{k: _plain(r[k]) for k in keys if k in r} for r in got.to_dict("records")] == \
        [{k: _plain(v) for k, v in w.items()} for w in want]
    assert got.attrs["n_both"] > 0 and got.attrs["metric"] == metric


def test_documents_new_in_the_larger_pool_are_named_new(twin_bank):
    ws = Workspace(twin_bank)
    rows = finder.find(ws, "bm25", "benign:2K", "benign:full", "SR@10")
    assert rows["other_new"].all()  # what took the gold's place was not in the query's own smaller twin pool
    assert all(" · new" in t for t in finder.readable(rows)["took its place"])


def test_the_demo_has_rows_both_ways_so_the_comparison_means_something(demo_twin_ws):
    ws = Workspace(demo_twin_ws)
    lost = finder.find(ws, "bm25", "64K", "512K", "R@1")
    gained = finder.find(ws, "bm25", "64K", "512K", "R@1", direction=finder.GAINED)
    assert len(lost) >= 2 and len(gained) >= 2 and not set(lost["qid"]) & set(gained["qid"])
    assert lost["fell"].is_monotonic_decreasing and (lost["fell"] > 0).all()
    assert (gained["fell"] < 0).all() and gained["fell"].is_monotonic_increasing
    assert (lost["gold_rank_small"] == 1).all() and (lost["other_rank"] == 1).all()  # R@1: the new first document
    assert set(lost["other_relation"]) <= {"hard negative", "same domain", "other domain", "other source"}
    assert finder.summary(lost).startswith(f"{len(lost)} of the ")


def test_defaults_are_the_view_ladder_never_the_twin(demo_twin_ws):
    ws = Workspace(demo_twin_ws)
    pq = views.per_query(ws)
    lad = ladder.load_all(ws)
    assert lad.names[-1] == "benign:512K"  # the twin's rungs follow the built ones: the last is never a default
    # (the 64K demo's largest rung is 512K: its full rung would hold the same documents, so it is not built)
    assert finder.defaults(lad, pq) == ("64K", "512K")
    assert finder.defaults(lad, pq, "benign:512K") == ("benign:64K", "benign:512K")
    assert "benign:64K" not in finder.smaller_than(lad, pq, "512K")
    with pytest.raises(EmbSError, match="different ladders"):
        finder.find(ws, "bm25", "64K", "benign:512K", "SR@10")
    with pytest.raises(EmbSError, match="not a smaller rung"):
        finder.find(ws, "bm25", "512K", "64K", "SR@10")
    with pytest.raises(EmbSError, match="no rung or scale named"):
        finder.find(ws, "bm25", "3K", "512K", "SR@10")


def test_cli_lost_at_scale_prints_the_same_rows(demo_twin_ws, tmp_path, capsys):
    ws = Workspace(demo_twin_ws)
    with pytest.raises(SystemExit) as done:
        main(["cases", "lost-at-scale", "--help"])
    assert done.value.code == 0 and "took its place" in " ".join(capsys.readouterr().out.split())
    out = tmp_path / "lost.csv"
    assert main(["cases", "lost-at-scale", "-w", str(demo_twin_ws), "--run", "bm25", "--metric", "R@1",
                 "--format", "csv", "--out", str(out)]) == 0
    rows = list(csv.DictReader(io.StringIO(out.read_text(encoding="utf-8"))))
    want = finder.readable(finder.find(ws, "bm25", "64K", "512K", "R@1"))
    assert [r["qid"] for r in rows] == want["qid"].tolist()
    assert [r["took its place"] for r in rows] == want["took its place"].tolist()
    assert "fail at 512K" in capsys.readouterr().err
    assert main(["cases", "lost-at-scale", "-w", str(demo_twin_ws), "--run", "bm25", "--metric", "R@1",
                 "--gained", "--format", "markdown"]) == 0
    text = capsys.readouterr().out
    gained = finder.find(ws, "bm25", "64K", "512K", "R@1", direction=finder.GAINED)
    assert text.startswith("| qid |") and "outranked it at 64K" in text and all(q in text for q in gained["qid"])
    assert main(["cases", "lost-at-scale", "-w", str(demo_twin_ws), "--run", "bm25", "--from", "64K",
                 "--to", "benign:512K"]) == 2
    err = capsys.readouterr().err
    assert "different ladders" in err and "Traceback" not in err
    assert main(["cases", "lost-at-scale", "-w", str(demo_twin_ws), "--run", "nope"]) == 2
    assert "no results for run 'nope'" in capsys.readouterr().err


def test_rank_columns_say_not_in_pool_for_a_query_s_removed_near_misses_on_twin_rungs(demo_twin_ws):
    ws = Workspace(demo_twin_ws)
    lad = ladder.load_all(ws)
    deltas = twin.deltas(ws)
    qs = bank.queries(ws).set_index("qid")
    qid = next(q for q in qs.index if any(q in per_q and len(per_q[q][0]) for per_q in deltas.values())
               and len(qs.at[q, "hard_negative_ids"]))
    res = runs.load_results(ws, runs=["bm25"])
    res = res[res["qid"] == qid]
    gold, negs = [int(g) for g in qs.at[qid, "ref_ids"]], [int(h) for h in qs.at[qid, "hard_negative_ids"]]
    table = drilldown.rank_columns(res, "bm25", gold, negs, lad.names, drilldown.query_pools(lad, deltas, qid))
    assert table["document"].tolist() == [f"gold {g}" for g in gold] + [f"hard negative {h}" for h in negs]
    twin_cols = [c for c in table.columns if c.startswith("benign:")]
    built_cols = [c for c in table.columns if c != "document" and not c.startswith("benign:")]
    assert built_cols == [n for n in lad.names if n in set(res["rung"]) and not n.startswith("benign:")]
    negatives = table[table["document"].str.startswith("hard negative")]
    removed = {int(d) for r in twin_cols for d in deltas[r][qid][0]} if all(qid in deltas.get(r, {}) for r in
                                                                             twin_cols) else set()
    assert removed & set(negs)  # the twin took this query's near misses out of its pools
    for h in removed & set(negs):
        assert (negatives.set_index("document").loc[f"hard negative {h}", twin_cols] == drilldown.NOT_IN_POOL).all()
    assert not (negatives[built_cols] == drilldown.NOT_IN_POOL).all().all()  # on the built ladder they are there
    assert (table.loc[table["document"].str.startswith("gold"), twin_cols] != drilldown.NOT_IN_POOL).all().all()


def test_reading_marks_query_terms_and_what_one_text_lacks_not_shared_words():
    gold = "In 1995 the bond issue of the Pipe Fund was led by Ada Varn, in Feraiford."
    other = "In 1988 the bond issue of the Pipe Fund was led by Ada Kolm (Feraiford)."
    r = drilldown.reading(gold, other, "Who led the 1995 bond issue of the Pipe Fund?")
    marked = {t: m for t, m in r.left if m}
    assert r.only_left == ["1995", "Varn"] and r.only_right == ["1988", "Kolm"]
    assert marked["1995"] == {drilldown.QUERY, drilldown.ONLY} and marked["Varn"] == {drilldown.ONLY}
    assert marked["bond"] == {drilldown.QUERY} and "Feraiford" not in marked and "Ada" not in marked  # shared
    assert "Feraiford," not in [t for t, _ in r.left] and "(Feraiford)." not in [t for t, _ in r.right]
    assert r.query_in_left == ["led", "1995", "bond", "issue", "pipe", "fund"] and "1995" not in r.query_in_right
    assert "".join(t for t, _ in r.left) == gold  # nothing of the text is lost or reordered
    table = drilldown.reading_table(r)
    assert table.loc[1, "query terms it lacks"] == "1995"
    html = drilldown.reading_html(drilldown.reading("<b>x</b> & 1999", "y", "x").left)
    assert "<b>" not in html and "&lt;b&gt;<mark>x</mark>&lt;/b&gt;" in html and "<ins>1999</ins>" in html
    assert drilldown.reading("The Sun rose. Sun again", "no", "q").only_left == ["Sun"]  # a name mid-sentence
    assert drilldown.reading("Interviews matter. Much more", "no", "q").only_left == []  # sentence starts only
