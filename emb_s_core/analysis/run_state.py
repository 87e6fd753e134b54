"""Whether each run is complete, partial or empty against the ladder (Home's runs table, Overview, Compare).

Why: an interrupted or empty run used to look like "not run" everywhere; a reader must see that a run stopped at
1,200 of 3,000 cells before reading its curve, and Compare must say which run has no results instead of blaming
the filters. A cell is one (rung, query) of the built ladder; a stored row of any status (ok, does not fit, error)
counts, since it was attempted.
"""
from __future__ import annotations

import pandas as pd

from emb_s_core import ladder as ladder_mod
from emb_s_core import runs
from emb_s_core.schema import RUN_COMPLETE, RUN_EMPTY, RUN_PARTIAL
from emb_s_core.store import Workspace

COLUMNS = ["run", "state", "cells", "expected", "rungs", "rungs_total", "label"]


def expected_cells(lad: ladder_mod.Ladder | None) -> pd.DataFrame:
    """(rung, qid) of every cell the ladder evaluates."""
    if lad is None:
        return pd.DataFrame(columns=["rung", "qid"])
    return pd.DataFrame([(r.name, q) for r in lad.rungs for q in r.qids], columns=["rung", "qid"])


def states(stored: pd.DataFrame, lad: ladder_mod.Ladder | None, run_names: list[str]) -> pd.DataFrame:
    """One row per run in ``run_names``: state, cells stored of expected, rungs with any result of all rungs, and a
    label ("complete", "partial: 1,200 of 3,000 cells, 4 of 12 rungs", "empty: no results yet").

    ``stored`` has run, rung, qid (the shape of ``runs.load_results``, any extra columns ignored). Without a ladder,
    a run with results is complete and one without is empty."""
    want = expected_cells(lad)
    rows = []
    for run in run_names:
        mine = stored.loc[stored["run"] == run, ["rung", "qid"]].drop_duplicates() if len(stored) else stored
        if lad is not None and len(mine):
            mine = mine.merge(want, on=["rung", "qid"], how="inner")
        n, total = len(mine), (len(want) if lad is not None else len(mine))
        n_rungs, rungs_total = (int(mine["rung"].nunique()) if n else 0), (len(lad.rungs) if lad is not None else 0)
        if n == 0:
            state, label = RUN_EMPTY, "empty: no results yet"
        elif n >= total:
            state, label = RUN_COMPLETE, RUN_COMPLETE
        else:
            state = RUN_PARTIAL
            label = f"partial: {n:,} of {total:,} cells, {n_rungs} of {rungs_total} rungs"
        rows.append({"run": run, "state": state, "cells": n, "expected": total, "rungs": n_rungs,
                     "rungs_total": rungs_total, "label": label})
    return pd.DataFrame(rows, columns=COLUMNS)


def for_workspace(ws: Workspace) -> pd.DataFrame:
    """:func:`states` of every registered run of ``ws`` against its built ladder (reads only run, rung, qid)."""
    names = runs.list_runs(ws)["run"].tolist()
    stored = (ws.read_pandas("results", ["run", "rung", "qid"]) if ws.has_table("results")
              else pd.DataFrame(columns=["run", "rung", "qid"]))
    lad = ladder_mod.load(ws, allow_stale=True) if ladder_mod.exists(ws) else None
    return states(stored, lad, names)


def not_complete(table: pd.DataFrame) -> pd.DataFrame:
    """The rows of runs that are partial or empty."""
    return table[table["state"] != RUN_COMPLETE]


def annotate(run_table: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    """The runs table (run, kind, system, created_at) with each run's state label, for Home; with a ``prompts``
    column (:func:`runs.prompt_summary`) when some run's model took query/document prompts."""
    cols = [c for c in ("run", "kind", "system", "created_at") if c in run_table]
    out = run_table[cols].merge(table[["run", "label"]].rename(columns={"label": "state"}), on="run", how="left")
    if "config" in run_table:
        prompts = [runs.prompt_summary(c) for c in run_table["config"]]
        if any(prompts):
            out["prompts"] = out["run"].map(dict(zip(run_table["run"], prompts))).fillna("")
    return out


def empty_runs(table: pd.DataFrame, run_names: list[str]) -> list[str]:
    """Those of ``run_names`` that have no result at all (Compare says so instead of blaming the filters)."""
    state = table.set_index("run")["state"]
    return [r for r in run_names if state.get(r) == RUN_EMPTY]
