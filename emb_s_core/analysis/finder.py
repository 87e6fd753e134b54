"""The finder: "fine at the base, lost at scale". For one run, the queries that succeed on a smaller rung and fail
on a larger one (or the reverse), by metric, the ones whose gold fell furthest first, each with the document that
took the gold's place.

Why a module of its own: the failures of a rung mix in queries that already fail at the base, and the HN-intrusion
heatmap is flat by design (near misses are in every rung), so the failures that scale alone causes could only be
found by diffing two case exports. The drill-down's landing view, the Overview heatmap's click and
``emb-s cases lost-at-scale`` show these rows, computed here once.

Definitions, per query scored on both sides (a side is a rung, or a pooled scale: each query's own rung of it):

- *succeeds* / *fails*: the metric at its best value (1; 0 for HN-intrusion) / short of it, the rule of
  ``drilldown.failures``; the metric values are those of ``metrics.per_query``;
- *the gold*: among the query's gold documents, those that crossed the metric's cut-off (K for SR@K / FR@K, 1 for
  R@1 and MRR) the way the query did, else all of them; of these the one that moved furthest. A rank beyond the
  stored list counts as list length + 1 (``fell`` is then a lower bound, and the rank is ``None``);
- *the document that took its place*: lost — a document above the gold on the larger rung that was not above it on
  the smaller one, preferring a hard negative within the cut-off, else the best-ranked such document; gained — a
  document above the gold on the smaller rung that is not above it on the larger one, chosen the same way. Its
  relation to the query is ``explain.relation`` (hard negative, same domain, other domain, a source none of the
  query's gold has), and
  ``other_new`` says whether it is new in the larger rung's pool (a twin rung's pool is the query's own pool).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from emb_s_core import bank, ladder, metrics, runs, twin
from emb_s_core.analysis import drilldown, explain, views
from emb_s_core.errors import EmbSError
from emb_s_core.schema import OK
from emb_s_core.store import Workspace

LOST, GAINED = "lost", "gained"
DIRECTIONS = (LOST, GAINED)
DIRECTION_LABELS = {LOST: "fine at the smaller rung, lost at the larger", GAINED: "missed at the smaller rung, "
                                                                                  "found at the larger"}
COLUMNS = ["qid", "query", "domain", "rung_small", "rung_large", "value_small", "value_large", "gold",
           "gold_rank_small", "gold_rank_large", "fell", "other", "other_rung", "other_rank", "other_relation",
           "other_new", "other_title"]


def sides(lad: ladder.Ladder | None, pq: pd.DataFrame) -> list[str]:
    """The names the finder accepts on either side, in ladder order: every rung, then every pooled scale that is not
    a rung's own name (``64K`` pools the ``64K/<d>`` rungs)."""
    rungs = views.columns(lad, pq, "rung")
    return rungs + [s for s in views.columns(lad, pq, "scale") if s not in rungs]


def defaults(lad: ladder.Ladder | None, pq: pd.DataFrame, large: str | None = None) -> tuple[str | None, str | None]:
    """(smaller, larger) to open on: the view's base scale and its largest rung; with ``large`` given (a heatmap
    cell), the base of ``large``'s own ladder kind (a twin cell opens on the twin's base)."""
    scales = views.columns(lad, pq, "scale")
    if large is None:
        return views.ladder_in_view(scales).base, views.ladder_in_view(views.columns(lad, pq, "rung")).largest
    kind = ladder.kind_of(large)
    same = [s for s in scales if ladder.kind_of(s) == kind]
    return (same[0] if same and same[0] != views.scale_of(large) else None), large


def smaller_than(lad: ladder.Ladder | None, pq: pd.DataFrame, large: str) -> list[str]:
    """The names that can be the smaller side for ``large``: of its ladder kind, of a smaller scale (``64K`` and
    ``64K/law`` are one scale) and, between two domain rungs, of the same domain."""
    level = {s: i for i, s in enumerate(views.columns(lad, pq, "scale"))}
    at = level.get(views.scale_of(large))
    if at is None:
        return []
    domain = large.split("/", 1)[1] if "/" in large else None
    return [n for n in sides(lad, pq) if ladder.kind_of(n) == ladder.kind_of(large)
            and level.get(views.scale_of(n), at) < at
            and (domain is None or "/" not in n or n.split("/", 1)[1] == domain)]


def _side(pq: pd.DataFrame, name: str) -> str:
    """Which per-query column selects ``name``: its rung, else its pooled scale."""
    return "rung" if name in set(pq["rung"]) else "scale"


def _is_best(values: pd.Series, m: metrics.Metric) -> pd.Series:
    """Succeeded: the metric at its best value (the complement of ``drilldown.failures``'s rule)."""
    return ~drilldown.is_failure(values, m)


def _cut(m: metrics.Metric, n_gold: int) -> int | None:
    """The rank a gold document must reach for the metric to count it: K, 1 for R@1 / MRR, all gold on top for
    nDCG@10; None for HN-intrusion (any gold may decide it)."""
    if m.k is not None:
        return m.k
    if m.name in ("R@1", "MRR"):
        return 1
    if m.name == "nDCG@10":
        return n_gold
    return None


def find(ws: Workspace, run: str, small: str, large: str, metric: str = "SR@10", *, direction: str = LOST,
         per_query_df: pd.DataFrame | None = None, lad: ladder.Ladder | None = None,
         documents: pd.DataFrame | None = None) -> pd.DataFrame:
    """The rows of the module docstring (:data:`COLUMNS`), the gold that moved furthest first, then by qid.

    ``per_query_df`` (``views.per_query``, filtered or not: only its queries are considered), ``lad`` (every kind)
    and ``documents`` (doc_id-indexed title, domain, source) are read from ``ws`` when not given. ``attrs`` carries
    ``n_both`` (queries scored on both sides) and ``n_from`` (of those, how many succeed, for lost, or fail, for
    gained, on the smaller side), so an empty list can say why."""
    if direction not in DIRECTIONS:
        raise EmbSError(f"unknown direction {direction!r}", fix=f"use one of {', '.join(DIRECTIONS)}.")
    m = metrics.metric(metric)
    pq = views.per_query(ws, [run]) if per_query_df is None else per_query_df
    lad = lad if lad is not None else ladder.load_all(ws, allow_stale=True)
    _check(pq, lad, run, small, large)
    if ladder.kind_of(large) == ladder.BENIGN:
        from emb_s_core.evaluate import stale_twin_runs

        if run in stale_twin_runs(ws):  # its lists were ranked in pools the stored twin no longer has
            raise EmbSError(f"run {run!r}'s twin results were made on an earlier benign twin (it was rebuilt since), "
                            "so its twin rungs cannot be compared with the twin's pools now",
                            fix=f"rerun `emb-s eval -w {ws.cli} -r SPEC --name {run} --ladder benign` (it redoes only "
                                "the twin), or compare rungs of the built ladder.")
    mine = pq[(pq["run"] == run) & (pq["status"] == OK)]
    a = mine[mine[_side(mine, small)] == small].drop_duplicates("qid").set_index("qid")
    b = mine[mine[_side(mine, large)] == large].drop_duplicates("qid").set_index("qid")
    both = a.index.intersection(b.index)
    va, vb = a.loc[both, m.column], b.loc[both, m.column]
    defined = va.notna() & vb.notna()
    ok_a, ok_b = _is_best(va, m), _is_best(vb, m)
    start = ok_a if direction == LOST else ~ok_a
    picked = both[(defined & start & (ok_b if direction == GAINED else ~ok_b)).to_numpy()]
    rows = _rows(ws, run, m, direction, list(picked), a, b, lad, documents) if len(picked) else []
    out = pd.DataFrame(rows, columns=COLUMNS)
    if len(out):
        out = out.sort_values(["fell", "qid"], ascending=[direction == GAINED, True], kind="stable")
        out = out.reset_index(drop=True)
        for col in ("gold_rank_small", "gold_rank_large", "other", "other_rank"):
            out[col] = out[col].astype("Int64")
    out.attrs.update(n_both=int(defined.sum()), n_from=int((defined & start).sum()), metric=m.name,
                     direction=direction, small=small, large=large, run=run)
    return out


def _check(pq: pd.DataFrame, lad: ladder.Ladder | None, run: str, small: str, large: str) -> None:
    if pq.empty or run not in set(pq["run"]):
        raise EmbSError(f"no results for run {run!r}", fix="see `emb-s runs list` for the runs in this workspace.")
    names = sides(lad, pq)
    for name in (small, large):
        if name not in names:
            raise EmbSError(f"no rung or scale named {name!r}",
                            fix=f"use one of: {', '.join(names[:30])}{' …' if len(names) > 30 else ''}.")
    if ladder.kind_of(small) != ladder.kind_of(large):
        raise EmbSError(f"{small} and {large} belong to different ladders ({ladder.kind_of(small)} and "
                        f"{ladder.kind_of(large)}): the twin is the ladder's companion, not its continuation",
                        fix="compare two rungs of the same ladder (e.g. 64K and full, or benign:64K and "
                            "benign:full).")
    if small not in smaller_than(lad, pq, large):
        raise EmbSError(f"{small} is not a smaller rung than {large}",
                        fix="pass the smaller rung with --from and the larger with --to.")


def _rank(ids: list[int], doc: int) -> int | None:
    try:
        return ids.index(doc) + 1
    except ValueError:
        return None


def _rows(ws: Workspace, run: str, m: metrics.Metric, direction: str, qids: list[str], a: pd.DataFrame,
          b: pd.DataFrame, lad: ladder.Ladder | None, documents: pd.DataFrame | None) -> list[dict]:
    rung_a, rung_b = a.loc[qids, "rung"], b.loc[qids, "rung"]
    wanted = sorted(set(rung_a) | set(rung_b))
    res = runs.load_results(ws, runs=[run], rungs=wanted)
    lists = {(r, q): [int(d) for d in ids] for r, q, ids in zip(res["rung"], res["qid"], res["doc_ids"])}
    qs = bank.queries(ws)
    qs = qs.assign(gold_sources=bank.gold_sources(ws, qs)).set_index("qid")
    docs = documents if documents is not None else bank.documents(
        ws, ["doc_id", "title", "domain", "source"]).set_index("doc_id")
    rungs = {r.name: r for r in lad.rungs} if lad is not None else {}
    deltas = twin.deltas(ws, [r for r in set(rung_a) if ladder.kind_of(r) == ladder.BENIGN])
    rows = []
    for qid in qids:
        ra, rb = rung_a[qid], rung_b[qid]
        la, lb = lists.get((ra, qid), []), lists.get((rb, qid), [])
        gold = list(dict.fromkeys(int(g) for g in qs.at[qid, "ref_ids"]))
        negatives = {int(h) for h in (qs.at[qid, "hard_negative_ids"] if qs.at[qid, "hard_negative_ids"] is not None
                                      else [])}
        inf_a, inf_b = len(la) + 1, len(lb) + 1
        ranks = {g: (_rank(la, g), _rank(lb, g)) for g in gold}
        cut = _cut(m, len(gold))

        def crossed(g: int) -> bool:
            x, y = ranks[g][0] or inf_a, ranks[g][1] or inf_b
            return cut is None or ((x <= cut < y) if direction == LOST else (y <= cut < x))

        moved = {g: (ranks[g][1] or inf_b) - (ranks[g][0] or inf_a) for g in gold}
        pool = [g for g in gold if crossed(g)] or gold
        g = max(pool, key=lambda d: moved[d] if direction == LOST else -moved[d])
        here, there = (lb, la) if direction == LOST else (la, lb)  # the list the other document outranks it in
        pos_here, pos_there = _rank(here, g), _rank(there, g)
        above_there = set(there[:(pos_there or len(there) + 1) - 1])
        over = [d for d in here[:(pos_here or len(here) + 1) - 1] if d not in above_there and d not in gold]
        within = [d for d in over if cut is None or here.index(d) + 1 <= cut] or over
        other = next((d for d in within if d in negatives), within[0] if within else None)
        row = {"qid": qid, "query": qs.at[qid, "text"], "domain": qs.at[qid, "domain"], "rung_small": ra,
               "rung_large": rb, "value_small": float(a.at[qid, m.column]), "value_large": float(b.at[qid, m.column]),
               "gold": g, "gold_rank_small": ranks[g][0], "gold_rank_large": ranks[g][1], "fell": moved[g],
               "other": other, "other_rung": (rb if direction == LOST else ra) if other is not None else None,
               "other_rank": _rank(here, other) if other is not None else None, "other_relation": None,
               "other_new": None, "other_title": None}
        if other is not None:
            row["other_relation"] = explain.relation(other, negatives, docs, qs.at[qid, "domain"],
                                                     set(qs.at[qid, "gold_sources"]))
            if direction == LOST and ra in rungs:
                members = twin.pool(np.sort(rungs[ra].doc_ids), deltas.get(ra, {}).get(qid))
                row["other_new"] = not bool(twin.member(members, np.asarray([other]))[0])
            title = docs["title"].get(other) if "title" in docs else None
            row["other_title"] = "" if title is None or pd.isna(title) else str(title)
        rows.append(row)
    return rows


def readable(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows as people read them (CLI table, dashboard, downloads), what decides first and the query's text last:
    ranks as text ("12", or
    ``drilldown.NOT_IN_LIST`` beyond the stored list), "fell by" as text ("≥ 91" when the gold left the list), the
    other document as "doc 40 · hard negative · new"."""
    small = rows.attrs.get("small", "smaller rung")
    large = rows.attrs.get("large", "larger rung")
    direction = rows.attrs.get("direction", LOST)

    def rank(v) -> str:
        return drilldown.NOT_IN_LIST if pd.isna(v) else str(int(v))

    def moved(fell, r_small, r_large) -> str:
        lower = pd.isna(r_large) if direction == LOST else pd.isna(r_small)
        n = abs(int(fell))
        return f"≥ {n}" if lower else str(n)

    def other(row) -> str:
        if pd.isna(row.other):
            return ""
        new = {True: " · new", False: " · already there"}.get(row.other_new, "") if direction == LOST else ""
        return f"doc {int(row.other)} · {row.other_relation}{new}"

    out = pd.DataFrame({
        "qid": rows["qid"], "gold": rows["gold"].astype("int64"),
        f"rank at {small}": [rank(v) for v in rows["gold_rank_small"]],
        f"rank at {large}": [rank(v) for v in rows["gold_rank_large"]],
        "fell by" if direction == LOST else "rose by": [moved(f, s, lg) for f, s, lg in
                                                        zip(rows["fell"], rows["gold_rank_small"],
                                                            rows["gold_rank_large"])],
        ("took its place" if direction == LOST else f"outranked it at {small}"): [other(r) for r in
                                                                                 rows.itertuples()],
        "its rank": [rank(v) if not pd.isna(o) else "" for v, o in zip(rows["other_rank"], rows["other"])],
        "its title": rows["other_title"].fillna(""), "query": rows["query"],
    })
    if (rows["rung_small"] != small).any() or (rows["rung_large"] != large).any():  # pooled scales: whose rungs
        out["rungs"] = [f"{x} → {y}" for x, y in zip(rows["rung_small"], rows["rung_large"])]
    return out


def labels(rows: pd.DataFrame) -> dict[str, str]:
    """qid -> one line naming the row ("q7 · gold 12: 3 → not in list · doc 40 · hard negative · new"), in row order:
    what a picker of the rows shows."""
    table = readable(rows)
    a, b = table.columns[table.columns.get_loc("gold") + 1], table.columns[table.columns.get_loc("gold") + 2]
    other = table.columns[table.columns.get_loc("its rank") - 1]
    return {q: f"{q} · gold {g}: {x} → {y}" + (f" · {o}" if o else "")
            for q, g, x, y, o in zip(table["qid"], table["gold"], table[a], table[b], table[other])}


def summary(rows: pd.DataFrame) -> str:
    """One sentence over the rows: how many of the queries that succeed (fail) on the smaller side fail (succeed)
    on the larger one."""
    a = rows.attrs
    run, m, small, large = a.get("run"), a.get("metric"), a.get("small"), a.get("large")
    best = 0 if m == metrics.HN_INTRUSION else 1
    if a.get("direction", LOST) == LOST:
        return (f"{len(rows):,} of the {a.get('n_from', 0):,} queries {run} gets at {small} ({m} = {best}) fail at "
                f"{large}, of {a.get('n_both', 0):,} scored on both")
    return (f"{len(rows):,} of the {a.get('n_from', 0):,} queries {run} misses at {small} ({m} short of {best}) "
            f"succeed at {large}, of {a.get('n_both', 0):,} scored on both")
