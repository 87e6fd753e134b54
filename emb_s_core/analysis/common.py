"""Comparisons between runs over the queries they all have, and the sentence that says so.

Why: two means side by side over different queries are no comparison (the issue's leaderboard printed hybrid 0.514
beside bm25 0.583 at 64K over 52 and 58 queries; the six queries hybrid lost score 1.0 for bm25). Every table that
puts runs side by side (leaderboard, paper table, the Overview, effective scale, the illusion gap, compare) limits
each column to the queries every run with rows in that column has, through :func:`restrict`, and prints
:func:`note`. A run with no row at all in a column is "not run" there and does not shrink the others; a stored row of
other status than error counts as present (a "does not fit" is a result, never a missing query).
"""
from __future__ import annotations

from typing import Sequence

import pandas as pd

from emb_s_core.schema import ERROR

LEFT_COLUMNS = ["column", "run", "queries", "common", "missing"]


def restrict(pq: pd.DataFrame, x: str, runs: Sequence[str] | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(the rows of ``pq`` (of ``runs``, default all) kept, what was left out).

    Kept: per column ``x`` (rung or scale), the rows of queries that every run with rows in that column has. Left
    out: one row per (column, run) that lacks some query another run has there: column, run, queries (the union of
    the column's queries over its runs), common (those every run has), missing (queries of the union this run
    lacks)."""
    if runs is not None:
        pq = pq[pq["run"].isin(list(runs))]
    if pq.empty:
        return pq, pd.DataFrame(columns=LEFT_COLUMNS)
    stored = pq[pq["status"] != ERROR] if "status" in pq else pq  # an error is a missing result (run_state too)
    present = stored[["run", x, "qid"]].drop_duplicates()
    runs_in = present.groupby(x, observed=True)["run"].nunique()
    per_query = present.groupby([x, "qid"], observed=True)["run"].nunique().rename("n").reset_index()
    per_query["all"] = per_query["n"].to_numpy() == per_query[x].map(runs_in).to_numpy()
    common = per_query[per_query["all"]]
    key = pd.MultiIndex.from_frame(pq[[x, "qid"]])
    kept = pq[key.isin(pd.MultiIndex.from_frame(common[[x, "qid"]]))]
    union = per_query.groupby(x, observed=True).size()
    n_common = common.groupby(x, observed=True).size().reindex(union.index, fill_value=0)
    have = present.groupby([x, "run"], observed=True, sort=False).size().rename("have").reset_index()
    have["queries"] = have[x].map(union).to_numpy()
    have["common"] = have[x].map(n_common).to_numpy()
    have["missing"] = have["queries"] - have["have"]
    left = have[have["common"] < have["queries"]]
    left = left[left["missing"] > 0].rename(columns={x: "column"})
    return kept, left[LEFT_COLUMNS].reset_index(drop=True)


def caption(left: pd.DataFrame, what: str = "column") -> str | None:
    """The short form for a figure's caption: "common queries only (hybrid lacks 6 in 7 scales)", or None."""
    if left is None or left.empty:
        return None
    per_run = left.groupby("run", sort=False).agg(most=("missing", "max"), columns=("column", "nunique"))
    return "common queries only (" + "; ".join(
        f"{run} lacks {int(r.most):,} in {int(r.columns)} {what}{'s' if r.columns > 1 else ''}"
        for run, r in per_run.iterrows()) + ")"


def note(left: pd.DataFrame, what: str = "column", shown: int = 6) -> str | None:
    """The sentence under a comparison: "over the queries every run has in each column; left out where some run
    lacks them: 64K 52 of 58 queries (6 missing from hybrid); …", or None when nothing was left out."""
    if left is None or left.empty:
        return None
    by_text: dict[str, list[str]] = {}  # columns that lost the same queries' counts are named together
    for column, rows in left.groupby("column", sort=False):
        lacking = ", ".join(f"{int(r.missing)} missing from {r.run}" for r in rows.itertuples())
        text = f"{int(rows['common'].iloc[0]):,} of {int(rows['queries'].iloc[0]):,} queries ({lacking})"
        by_text.setdefault(text, []).append(str(column))
    parts = [f"{', '.join(cols)}: {text}" for text, cols in by_text.items()]
    more = f"; … and {len(parts) - shown} more" if len(parts) > shown else ""
    return (f"Compared over the queries every run has in each {what}; where a run lacks some, only the common ones "
            "count: " + "; ".join(parts[:shown]) + more)
