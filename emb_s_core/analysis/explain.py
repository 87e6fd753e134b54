"""What displaced the gold: for one run and two nested rungs r ⊂ r′, why each lost gold left the top-K.

A query is *displaced* when a gold document in its top-K on r is not in its top-K on r′. What took the place are the
*displacers*: the documents of the r′ top-K that were not in the r top-K. Each displacer gets one cause, in this
order:

1. ``hard negative``     — one of the query's hard negatives (near misses of the bank);
2. ``new, other source`` — new in r′ (not a member of r), from a source none of the query's gold documents has (a
   query's source is that of its gold, never the import's name: a native bank's documents carry their own);
3. ``new, same domain``  — new in r′, from the query's own domain;
4. ``new, other domain`` — new in r′, from another domain;
5. ``already in r``      — a member of r that was below the gold there: the ranking among the old documents moved
   (BM25's statistics belong to the rung, so the gold's own score can drop; dense scores never do).

A displaced query weighs 1, split equally over its displacers, so a cell's cause shares sum to 1 over its n
displaced queries. A query whose r′ list is shorter than K and holds no new document lost its gold to nothing: its
weight goes to ``gold's own score`` (the gold fell out of the list, e.g. its score dropped to the retriever's cut).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from emb_s_core import bank, ladder, metrics, runs
from emb_s_core.analysis import views
from emb_s_core.errors import EmbSError
from emb_s_core.store import Workspace

HARD_NEGATIVE = "hard negative"
OTHER_SOURCE = "new, other source"
SAME_DOMAIN = "new, same domain"
OTHER_DOMAIN = "new, other domain"
ALREADY_IN = "already in r"
OWN_SCORE = "gold's own score"  # no document took the gold's place (the r′ list is shorter than K)
CAUSES = (HARD_NEGATIVE, OTHER_SOURCE, SAME_DOMAIN, OTHER_DOMAIN, ALREADY_IN, OWN_SCORE)
#: what a document is to a query, whether or not it is new in the larger rung (the finder shows it beside "new")
OTHER_SOURCE_DOC, SAME_DOMAIN_DOC, OTHER_DOMAIN_DOC = "other source", "same domain", "other domain"
RELATIONS = (HARD_NEGATIVE, OTHER_SOURCE_DOC, SAME_DOMAIN_DOC, OTHER_DOMAIN_DOC)
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
    rank order), causes (one per displacer; ``[OWN_SCORE]`` when there is none), gold_ranks_to (rank of each lost gold on r′ within the stored list, 0
    when beyond it)."""
    small, _ = _check(ws, run, rung_from, rung_to, k)
    res = runs.load_results(ws, runs=[run], rungs=[rung_from, rung_to])
    res = res[res["status"].fillna(runs.OK) == runs.OK]
    if not (res["rung"] == rung_from).any() or not (res["rung"] == rung_to).any():
        raise EmbSError(f"run {run!r} has no results on both {rung_from} and {rung_to}",
                        fix=f"evaluate it there (`emb-s eval -r SPEC --name {run}`).")
    lists = res.pivot(index="qid", columns="rung", values="doc_ids").dropna()
    qs = bank.queries(ws)
    qs["gold_sources"] = bank.gold_sources(ws, qs)
    qs = qs.set_index("qid")
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
        causes = [_cause(d, negatives, members, docs, qs.at[qid, "domain"], set(qs.at[qid, "gold_sources"]))
                  for d in displacers] or [OWN_SCORE]  # one cause per displacer; none: the query still weighs 1
        full_b = [int(d) for d in b]
        rows.append({"qid": qid, "domain": qs.at[qid, "domain"], "lost": lost, "displacers": displacers,
                     "causes": causes, "gold_ranks_to": [full_b.index(g) + 1 if g in full_b else 0 for g in lost]})
    return pd.DataFrame(rows, columns=["qid", "domain", "lost", "displacers", "causes", "gold_ranks_to"])


def relation(doc: int, negatives: set[int], docs: pd.DataFrame, domain, sources: set) -> str:
    """What ``doc`` is to a query (one of :data:`RELATIONS`): one of its hard negatives, else a document of a source
    none of the query's gold documents has (``sources``, ``bank.gold_sources``), else of its own domain or of another
    one. ``docs`` is indexed by doc_id."""
    if doc in negatives:
        return HARD_NEGATIVE
    if docs.at[doc, "source"] not in sources:
        return OTHER_SOURCE_DOC
    return SAME_DOMAIN_DOC if docs.at[doc, "domain"] == domain else OTHER_DOMAIN_DOC


_NEW = {OTHER_SOURCE_DOC: OTHER_SOURCE, SAME_DOMAIN_DOC: SAME_DOMAIN, OTHER_DOMAIN_DOC: OTHER_DOMAIN}


def _cause(doc: int, negatives: set[int], members: set[int], docs: pd.DataFrame, domain, sources: set) -> str:
    """The displacement cause: a hard negative, else "already in r" for a member of the smaller rung, else the
    document's :func:`relation` as new in r′."""
    kind = relation(doc, negatives, docs, domain, sources)
    if kind == HARD_NEGATIVE:
        return HARD_NEGATIVE
    return ALREADY_IN if doc in members else _NEW[kind]


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
    """The rungs of ``lad`` of the same ladder kind that strictly contain ``rung`` (what it can be compared with), in
    ladder order. A rung holding the same documents (``128K/d`` on a one-domain bank is its ``shared`` rung) is left
    out: nothing can move between two equal pools; so is another kind's rung (a twin rung with per-query pools stores
    its built rung's membership: it is no larger rung of it)."""
    small = lad.rung(rung)
    members = small.doc_ids
    return [r.name for r in lad.rungs if r.ladder == small.ladder and r.n_documents > small.n_documents
            and np.isin(members, r.doc_ids).all()]


def adjacent_pairs(lad: ladder.Ladder) -> list[tuple[str, str]]:
    """(r, r′) for every rung r that some rung strictly contains, r′ the smallest such rung (the next step up)."""
    pairs = []
    for r in lad.rungs:
        larger = larger_rungs(lad, r.name)
        if larger:
            pairs.append((r.name, min(larger, key=lambda name: lad.rung(name).n_documents)))
    return pairs


def largest_drop(pq: pd.DataFrame, lad: ladder.Ladder, run: str, k: int = DEFAULT_K) -> tuple[str, str] | None:
    """The adjacent pair (r, r′) on which ``run``'s SR@k falls most, over the queries scored on both (``pq`` from
    ``views.per_query``; SR at the nearest stored cut-off at or below k); ties go to the earlier pair in ladder
    order. The first adjacent pair when no pair has results on both rungs; None when the ladder has no pair. Only
    pairs of the view's ladder (``views.ladder_in_view``: built, else official) are candidates; the twin's pairs are
    there to pick, never the default."""
    mine_rungs = set(views.ladder_in_view(lad).rungs)
    pairs = [p for p in adjacent_pairs(lad) if p[0] in mine_rungs] or adjacent_pairs(lad)
    if not pairs:
        return None
    column = f"SR@{max([c for c in metrics.KS if c <= k] or [metrics.KS[0]])}"
    mine = pq[(pq["run"] == run) & pq["status"].fillna(runs.OK).eq(runs.OK)] if len(pq) else pq
    if mine.empty or column not in mine.columns:
        return pairs[0]
    table = mine.pivot_table(index="qid", columns="rung", values=column, aggfunc="first")
    best, best_drop = pairs[0], -np.inf
    for small, big in pairs:
        if small not in table.columns or big not in table.columns:
            continue
        both = table[[small, big]].dropna()
        if both.empty:
            continue
        drop = float(both[small].mean() - both[big].mean())
        if drop > best_drop:
            best, best_drop = (small, big), drop
    return best
