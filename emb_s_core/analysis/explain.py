"""What displaced the gold: for one run and two nested rungs r ⊂ r′, why each lost gold left the top-K.

A query is *displaced* when a gold document in its top-K on r is not in its top-K on r′. What took the place are the
*displacers*: the documents of the r′ top-K that were not in the r top-K. Each displacer gets one cause, in this
order:

1. ``hard negative``     — one of the query's hard negatives (near misses of the bank);
2. ``new, other source`` — new in r′ (not a member of r), from another source than the query;
3. ``new, same domain``  — new in r′, from the query's own domain;
4. ``new, other domain`` — new in r′, from another domain;
5. ``already in r``      — a member of r that was below the gold there: the ranking among the old documents moved
   (BM25's statistics belong to the rung, so the gold's own score can drop; dense scores never do).

A displaced query weighs 1, split equally over its displacers, so a cell's cause shares sum to 1 over its n
displaced queries.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from emb_s_core import bank, ladder, runs
from emb_s_core.errors import EmbSError
from emb_s_core.store import Workspace

HARD_NEGATIVE = "hard negative"
OTHER_SOURCE = "new, other source"
SAME_DOMAIN = "new, same domain"
OTHER_DOMAIN = "new, other domain"
ALREADY_IN = "already in r"
CAUSES = (HARD_NEGATIVE, OTHER_SOURCE, SAME_DOMAIN, OTHER_DOMAIN, ALREADY_IN)
DEFAULT_K = 10


def _check(ws: Workspace, run: str, rung_from: str, rung_to: str, k: int) -> tuple[ladder.Rung, ladder.Rung]:
    if k < 1:
        raise EmbSError(f"k must be at least 1 (got {k})", fix="pass --k 10.")
    if runs.get_run(ws, run) is None:
        raise EmbSError(f"no run named {run!r}", fix="see `emb-s runs list` for the runs in this workspace.")
    kinds = list(dict.fromkeys([ladder.kind_of(rung_from), ladder.kind_of(rung_to)]))
    lad = ladder.load(ws, allow_stale=True, kind=tuple(kinds))
    small, big = lad.rung(rung_from), lad.rung(rung_to)
    if not np.isin(small.doc_ids, big.doc_ids).all():
        raise EmbSError(f"rung {rung_from} is not contained in {rung_to}: displacement needs nested rungs",
                        fix="pick a larger rung of the same chain (64K/d ⊂ 128K/d ⊂ 256K/d ⊂ 512K ⊂ 1M ⊂ … ⊂ full).")
    return small, big


def displacements(ws: Workspace, run: str, rung_from: str, rung_to: str, k: int = DEFAULT_K) -> pd.DataFrame:
    """One row per displaced query: qid, domain, lost (gold ids that left the top-K), displacers (doc ids, in r′
    rank order), causes (one per displacer), gold_ranks_to (rank of each lost gold on r′ within the stored list, 0
    when beyond it)."""
    small, _ = _check(ws, run, rung_from, rung_to, k)
    res = runs.load_results(ws, runs=[run], rungs=[rung_from, rung_to])
    res = res[res["status"].fillna(runs.OK) == runs.OK]
    if not (res["rung"] == rung_from).any() or not (res["rung"] == rung_to).any():
        raise EmbSError(f"run {run!r} has no results on both {rung_from} and {rung_to}",
                        fix=f"evaluate it there (`emb-s eval -r SPEC --name {run}`).")
    lists = res.pivot(index="qid", columns="rung", values="doc_ids").dropna()
    qs = bank.queries(ws).set_index("qid")
    docs = bank.documents(ws, ["doc_id", "domain", "source"]).set_index("doc_id")
    members = set(small.doc_ids.tolist())
    rows = []
    for qid, a, b in zip(lists.index, lists[rung_from], lists[rung_to]):
        top_a, top_b = [int(d) for d in a[:k]], [int(d) for d in b[:k]]
        gold = {int(g) for g in qs.at[qid, "ref_ids"]}
        lost = [g for g in top_a if g in gold and g not in top_b]
        if not lost:
            continue
        negatives = {int(h) for h in qs.at[qid, "hard_negative_ids"]}
        seen = set(top_a)
        displacers = [d for d in top_b if d not in seen]
        causes = [_cause(d, negatives, members, docs, qs.at[qid, "domain"], qs.at[qid, "source"])
                  for d in displacers]
        full_b = [int(d) for d in b]
        rows.append({"qid": qid, "domain": qs.at[qid, "domain"], "lost": lost, "displacers": displacers,
                     "causes": causes, "gold_ranks_to": [full_b.index(g) + 1 if g in full_b else 0 for g in lost]})
    return pd.DataFrame(rows, columns=["qid", "domain", "lost", "displacers", "causes", "gold_ranks_to"])


def _cause(doc: int, negatives: set[int], members: set[int], docs: pd.DataFrame, domain, source) -> str:
    if doc in negatives:
        return HARD_NEGATIVE
    if doc in members:
        return ALREADY_IN
    if docs.at[doc, "source"] != source:
        return OTHER_SOURCE
    return SAME_DOMAIN if docs.at[doc, "domain"] == domain else OTHER_DOMAIN


def breakdown(displaced: pd.DataFrame) -> pd.DataFrame:
    """Cause shares of one cell: cause, share (of the n displaced queries, each split over its displacers),
    queries (how many displaced queries have that cause at least once), n."""
    n = len(displaced)
    weight = dict.fromkeys(CAUSES, 0.0)
    touched = dict.fromkeys(CAUSES, 0)
    for causes in displaced["causes"]:
        for c in causes:
            weight[c] += 1.0 / len(causes)
        for c in set(causes):
            touched[c] += 1
    return pd.DataFrame({"cause": list(CAUSES), "share": [weight[c] / n if n else 0.0 for c in CAUSES],
                         "queries": [touched[c] for c in CAUSES], "n": n})


def explain(ws: Workspace, run: str, rung_from: str, rung_to: str, k: int = DEFAULT_K) -> dict:
    """Everything ``emb-s explain`` and the dashboard show for one cell: the breakdown, the displaced queries and
    how many queries the two rungs share."""
    displaced = displacements(ws, run, rung_from, rung_to, k)
    shared = runs.load_results(ws, runs=[run], rungs=[rung_from, rung_to]).groupby("qid").size()
    return {"run": run, "from": rung_from, "to": rung_to, "k": k, "queries": int((shared == 2).sum()),
            "displaced": displaced, "breakdown": breakdown(displaced)}


def larger_rungs(lad: ladder.Ladder, rung: str) -> list[str]:
    """The rungs of ``lad`` of the same ladder kind that contain ``rung`` (what it can be compared with), in ladder
    order (a twin rung with per-query pools stores its built rung's membership: it is no larger rung of it)."""
    this = lad.rung(rung)
    small = set(this.doc_ids.tolist())
    return [r.name for r in lad.rungs
            if r.name != rung and r.ladder == this.ladder and small <= set(r.doc_ids.tolist())]
