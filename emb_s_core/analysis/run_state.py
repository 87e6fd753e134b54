"""Whether each run is complete, incomplete or empty: computed once here, read by every surface that shows a run
(``runs list``, Home, Overview, Compare, Leaderboard, the report, the paper table, the illusion gap, figure captions).

Why: a run that crashed or was interrupted used to look whole (the issue's hybrid showed 728 of 812 results with no
word, its means beside complete runs' over other queries). A run's expected cells are the (rung, query) pairs of the
rungs it was asked for: the ladder rungs it recorded when it started (``config["ladder"]``: the kinds ``eval
--ladder`` named, both ladders for ``--ladder both``), or the one rung an external file was imported for, each with
its kept queries. A stored row counts unless its status is error (an error is a missing result; a rerun retries it);
"does not fit" is a result (the model's window, never a zero).
"""
from __future__ import annotations

import json
from typing import Mapping, Sequence

import pandas as pd

from emb_s_core import ladder as ladder_mod
from emb_s_core import runs
from emb_s_core.schema import ERROR, RUN_COMPLETE, RUN_EMPTY, RUN_PARTIAL
from emb_s_core.store import Workspace

COLUMNS = ["run", "state", "cells", "expected", "missing", "rungs", "rungs_total", "label", "settings"]
INCOMPLETE = "INCOMPLETE"  # the mark every surface shows beside a run with missing results


def expected_cells(lad: ladder_mod.Ladder | None, rungs: Sequence[str] | None = None) -> pd.DataFrame:
    """(rung, qid) of every cell the ladder evaluates (of ``rungs`` only, when given)."""
    if lad is None:
        return pd.DataFrame(columns=["rung", "qid"])
    wanted = None if rungs is None else set(rungs)
    return pd.DataFrame([(r.name, q) for r in lad.rungs if wanted is None or r.name in wanted for q in r.qids],
                        columns=["rung", "qid"])


def asked_rungs(config: Mapping | None, lad: ladder_mod.Ladder, stored_rungs: Sequence[str] = ()) -> list[str]:
    """The rungs of ``lad`` a run was asked for: an external file imported for one rung, that rung; else the rungs it
    recorded (``config["ladder"]``) that the ladder still has; a run without that record, the rungs of the ladder
    kinds it has results on (the built ladder when it has none)."""
    config = config or {}
    if config.get("rung") and config["rung"] in lad.names:
        return [config["rung"]]
    recorded = config.get("ladder")
    if isinstance(recorded, Mapping) and recorded:
        return [n for n in lad.names if n in recorded]
    kinds = {ladder_mod.kind_of(r) for r in stored_rungs} or {ladder_mod.BUILT}
    return [r.name for r in lad.rungs if r.ladder in kinds]


def states(stored: pd.DataFrame, lad: ladder_mod.Ladder | None, run_names: list[str],
           configs: Mapping[str, Mapping] | None = None) -> pd.DataFrame:
    """One row per run in ``run_names``: state, results stored of expected, how many missing, rungs with any result
    of the rungs asked, and a label ("complete", "INCOMPLETE: 728 of 812 (rung, query) results, 84 missing",
    "empty: no results yet").

    ``stored`` has run, rung, qid and optionally status (the shape of ``runs.load_results``, extra columns
    ignored); ``configs`` (run → stored config) says which rungs each run was asked for (:func:`asked_rungs`);
    without it, every rung of ``lad``. Without a ladder, a run with results is complete and one without is empty."""
    rows = []
    if len(stored) and "status" in stored:
        stored = stored[stored["status"] != ERROR]
    for run in run_names:
        mine = stored.loc[stored["run"] == run, ["rung", "qid"]].drop_duplicates() if len(stored) else stored
        if lad is not None:
            asked = (asked_rungs(configs.get(run), lad, list(dict.fromkeys(mine["rung"]))) if configs is not None
                     else lad.names)
            want = expected_cells(lad, asked)
            if len(mine):
                mine = mine.merge(want, on=["rung", "qid"], how="inner")
            total, rungs_total = len(want), len(asked)
        else:
            total, rungs_total = len(mine), 0
        n = len(mine)
        n_rungs = int(mine["rung"].nunique()) if n else 0
        if n == 0:
            state, label = RUN_EMPTY, "empty: no results yet"
        elif n >= total:
            state, label = RUN_COMPLETE, RUN_COMPLETE
        else:
            state = RUN_PARTIAL
            label = f"{INCOMPLETE}: {n:,} of {total:,} (rung, query) results, {total - n:,} missing" + (
                f"; {n_rungs} of {rungs_total} rungs have any" if n_rungs < rungs_total else "")
        rows.append({"run": run, "state": state, "cells": n, "expected": total, "missing": max(total - n, 0),
                     "rungs": n_rungs, "rungs_total": rungs_total, "label": label,
                     "settings": runs.prompt_summary((configs or {}).get(run))})
    return pd.DataFrame(rows, columns=COLUMNS)


def configs_of(run_table: pd.DataFrame) -> dict[str, dict]:
    """run → its stored configuration (the ``runs`` table's JSON column)."""
    if "config" not in run_table:
        return {}
    return {r: json.loads(c) if isinstance(c, str) else (c or {}) for r, c in zip(run_table["run"],
                                                                              run_table["config"])}


def for_workspace(ws: Workspace) -> pd.DataFrame:
    """:func:`states` of every registered run of ``ws`` against the rungs each was asked for (reads only run, rung,
    qid and status of the results)."""
    listed = runs.list_runs(ws)
    stored = (ws.read_pandas("results", ["run", "rung", "qid", "status"]) if ws.has_table("results")
              else pd.DataFrame(columns=["run", "rung", "qid", "status"]))
    lad = ladder_mod.load_all(ws, allow_stale=True)
    return states(stored, lad, listed["run"].tolist(), configs_of(listed))


def not_complete(table: pd.DataFrame) -> pd.DataFrame:
    """The rows of runs that are incomplete or empty."""
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


def marks(table: pd.DataFrame | None, run_names: Sequence[str] | None = None) -> dict[str, str]:
    """run → its label, for the runs of ``run_names`` (all) that are not complete: what tables put beside the run."""
    if table is None or not len(table):
        return {}
    rows = not_complete(table)
    if run_names is not None:
        rows = rows[rows["run"].isin(list(run_names))]
    return dict(zip(rows["run"], rows["label"]))


def notes(table: pd.DataFrame | None, run_names: Sequence[str] | None = None) -> list[str]:
    """One line per run of ``run_names`` (all) with missing results: "run 'hybrid' is INCOMPLETE: 728 of 812 …",
    printed under every table and figure that shows it."""
    return [note_line(run, label) for run, label in marks(table, run_names).items()]


def settings(table: pd.DataFrame | None, run_names: Sequence[str] | None = None) -> dict[str, str]:
    """run → how its model was run, for the runs of ``run_names`` (all) whose model took prompts, an instruction or
    half precision (:func:`runs.prompt_summary`): a run without them measures another model, so every view that
    shows the run says so."""
    if table is None or not len(table) or "settings" not in table:
        return {}
    rows = table[table["settings"].fillna("").astype(bool)]
    if run_names is not None:
        rows = rows.set_index("run").reindex([r for r in run_names if r in set(rows["run"])]).reset_index()
    return dict(zip(rows["run"], rows["settings"]))


def settings_line(run: str, summary: str) -> str:
    return f"run {run!r} ran its model with {summary}"


def run_notes(table: pd.DataFrame | None, run_names: Sequence[str] | None = None) -> list[str]:
    """:func:`notes` (the runs with missing results), then one line per run of ``run_names`` whose model took
    prompts or half precision: what a text output prints under anything that shows those runs."""
    return [*notes(table, run_names), *(settings_line(r, s) for r, s in settings(table, run_names).items())]


def note_line(run: str, label: str) -> str:
    """The line for one run that is not complete, from its label."""
    state = label if label.startswith(INCOMPLETE) else f"{INCOMPLETE} ({label})"
    return f"run {run!r} is {state} — its scores cover only the results it has; rerunning the same command resumes it"


def caption_mark(table: pd.DataFrame | None, run_names: Sequence[str] | None = None) -> str | None:
    """A figure caption's part naming the incomplete runs shown ("INCOMPLETE: hybrid 728 of 812 results"), or None."""
    if table is None or not len(table):
        return None
    rows = not_complete(table)
    if run_names is not None:
        rows = rows[rows["run"].isin(list(run_names))]
    if not len(rows):
        return None
    return f"{INCOMPLETE}: " + "; ".join(f"{r.run} {r.cells:,} of {r.expected:,} results" for r in rows.itertuples())
