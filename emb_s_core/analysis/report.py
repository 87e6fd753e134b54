"""The workspace's score table and run comparisons: what ``emb-s report`` / ``emb-s compare`` print and export.

Both read stored results once through :func:`views.per_query`, so the CLI and the dashboard show the same numbers
(the Compare page passes its cached, filtered per-query frame to the same functions). Rungs are listed in ladder order
(64K/d … full) when the workspace has a ladder.
"""
from __future__ import annotations

import json
from typing import Sequence

import pandas as pd

from emb_s_core import metrics
from emb_s_core.analysis import views
from emb_s_core.errors import EmbSError
from emb_s_core.schema import OK
from emb_s_core.store import Workspace

REPORT_COLUMNS = ["run", "rung", "metric", "value", "n", "ci_low", "ci_high"]
PAIRED_COLUMNS = ["rung", "delta", "ci_low", "ci_high", "p_value", "n", "wins", "losses", "ties"]


def rows(ws: Workspace, runs: Sequence[str] | None = None, metric_names: Sequence[str] | None = None,
         by: Sequence[str] = (), n_boot: int = 1000, seed: int = 0,
         per_query_df: pd.DataFrame | None = None, keep_undefined: bool = False,
         hn_provenance: Sequence[str] | None = None) -> pd.DataFrame:
    """One row per (run, rung, [*by], metric): value, n, ci_low, ci_high, then the status counts.

    ``by`` adds breakdown columns (domain, task_type, source, multi_source, tag) after the rung. Rows of a metric that
    no query of the group defines (R@1 on a bank without single-source queries: value NaN, n = 0, yet rankings
    exist) are left out unless ``keep_undefined``; a cell that could not run (does not fit, error) stays.
    ``hn_provenance`` counts only hard negatives of those provenances (``collision``-verified, ``dataset``
    distractors, ``synthetic``) in HN-intrusion and the hard-negative ranks.
    """
    pq = per_query_df if per_query_df is not None else _per_query(ws, runs, hn_provenance)
    if "tag" in by:  # the tags of notes on cases; a query with two tags counts in both groups
        from emb_s_core import notes

        pq = notes.by_tag(pq, notes.load(ws))
    keys = ["run", "rung", *[b for b in by if b not in ("run", "rung")]]
    agg = metrics.aggregate(pq, by=keys, metrics=metric_names, n_boot=n_boot, seed=seed)
    if not keep_undefined:
        agg = drop_undefined(agg)
    return _in_ladder_order(ws, agg, keys)


def drop_undefined(agg: pd.DataFrame) -> pd.DataFrame:
    """``agg`` without the rows whose metric is defined for none of the group's ranked queries (n = 0, n_ok > 0)."""
    if agg.empty:
        return agg
    return agg[~((agg["n"] == 0) & (agg["n_ok"] > 0))].reset_index(drop=True)


def wide(table: pd.DataFrame, rung_order: Sequence[str] | None = None) -> pd.DataFrame:
    """The long report as a run × rung table: one row per (run, [breakdown], metric), one column per rung (in
    ``rung_order``, else as they appear) holding the value; a rung the run has no value on is blank."""
    if table.empty:
        return pd.DataFrame(columns=["run", "metric"])
    index = [c for c in table.columns if c not in ("rung", "value", "ci_method") and c not in REPORT_COLUMNS[3:]
             and not c.startswith("n_")]
    index = ["run", *[c for c in index if c not in ("run", "metric")], "metric"]
    out = table.pivot_table(index=index, columns="rung", values="value", aggfunc="first", sort=False, dropna=False)
    order = [r for r in (rung_order or list(dict.fromkeys(table["rung"]))) if r in out.columns]
    out = out[order].reset_index()
    out.columns.name = None
    return out


def compare(ws: Workspace, run_a: str, run_b: str, metric: str = "SR@10", rungs: Sequence[str] | None = None,
            n_resamples: int = 10000, seed: int = 0, per_query_df: pd.DataFrame | None = None) -> pd.DataFrame:
    """The paired test of ``run_a`` against ``run_b`` on every rung both were evaluated on (or ``rungs``), one row
    per rung in ladder order (the columns of ``metrics.paired_test``).

    ``per_query_df``: an already scored (e.g. filtered) per-query frame to test on instead of the workspace's."""
    pq = per_query_df if per_query_df is not None else _per_query(ws, [run_a, run_b])
    for run in (run_a, run_b):
        if not (pq["run"] == run).any():
            raise EmbSError(f"no results for run {run!r}", where=str(ws.path),
                            fix=f"see `emb-s report --workspace {ws.cli}` for the runs with results.")
    shared = set(pq.loc[pq["run"] == run_a, "rung"]) & set(pq.loc[pq["run"] == run_b, "rung"])
    if rungs is not None:
        unknown = [r for r in rungs if r not in shared]
        if unknown:
            raise EmbSError(f"rung {unknown[0]!r} has no results for both runs",
                            fix=f"use one of: {', '.join(sorted(shared)) or '(none)'}.")
        shared = set(rungs)
    if not shared:
        raise EmbSError(f"runs {run_a!r} and {run_b!r} share no rung", fix="evaluate both on the same ladder.")
    tests = [metrics.paired_test(pq, run_a, run_b, rung, metric, n_resamples=n_resamples, seed=seed)
             for rung in shared]
    return _in_ladder_order(ws, pd.DataFrame(tests), ["rung"])


def pooled(per_query_df: pd.DataFrame, x: str = "rung", twin: bool = True) -> pd.DataFrame:
    """``per_query_df`` with its ``rung`` column holding the columns a view compares: every rung (``x="rung"``) or
    the Overview's pooled scales (``x="scale"``: ``views.scale_of``, domain rungs of one size together, each query
    on its own domain's rung); ``twin=False`` leaves the benign twin's rows out."""
    from emb_s_core import ladder

    if x not in ("rung", "scale"):
        raise EmbSError(f"unknown column kind {x!r}", fix="use rung or scale.")
    pq = per_query_df
    if not twin and len(pq):
        pq = pq[(pq["rung"].map(ladder.kind_of) != ladder.BENIGN).to_numpy()]
    return pq.assign(rung=pq["scale"]) if x == "scale" and len(pq) else pq


def compare_by(ws: Workspace, run_a: str, run_b: str, metric: str, columns: Sequence[str] | None, x: str = "rung",
               twin: bool = True, per_query_df: pd.DataFrame | None = None, n_resamples: int = 10000,
               seed: int = 0) -> pd.DataFrame:
    """:func:`compare` over a view's ``columns`` (rungs or pooled scales, see :func:`pooled`; in the order given;
    None: every one both runs have, in ladder order),
    with ``ladder`` (built, official or benign) and ``column`` (the name within its ladder: ``benign:64K`` → ``64K``)
    so a figure can draw the twin beside its ladder on the same axis instead of as more columns. The first column is
    named ``x`` (``rung`` or ``scale``): pooled scales are titled as what they are."""
    from emb_s_core import ladder

    raw = per_query_df if per_query_df is not None else _per_query(ws, [run_a, run_b])
    pq = pooled(raw, x, twin)
    if columns is None:  # every column both have, in ladder order (none: compare says why)
        shared = set(pq.loc[pq["run"] == run_a, "rung"]) & set(pq.loc[pq["run"] == run_b, "rung"])
        order = views.columns(ladder.load_all(ws), raw, x)
        columns = [c for c in order if c in shared] + sorted(shared - set(order)) or None
    tests = compare(ws, run_a, run_b, metric, rungs=list(columns) if columns else None, n_resamples=n_resamples,
                    seed=seed, per_query_df=pq)
    order = {c: i for i, c in enumerate(columns)}
    tests = tests.sort_values("rung", key=lambda s: s.map(order), kind="stable").reset_index(drop=True)
    tests.insert(1, "ladder", tests["rung"].map(ladder.kind_of))
    tests.insert(2, "column", tests["rung"].map(ladder.plain_name))
    return tests.rename(columns={"rung": x})


def left_out_metrics(kept: pd.DataFrame, every: pd.DataFrame) -> list[str]:
    """One note per metric of ``every`` (rows with ``keep_undefined``) that ``kept`` lost entirely: no query of any
    cell defines it, e.g. R@1 on a bank without single-source queries."""
    gone = [m for m in dict.fromkeys(every["metric"]) if m not in set(kept["metric"])] if len(every) else []
    return [f"{m} left out: it counts {metrics.metric(m).family.population} only, and no cell has one "
            "(--keep-undefined lists it)" for m in gone]


def bank_notes(ws: Workspace, runs: Sequence[str] | None = None) -> list[str]:
    """Runs made on an earlier bank version and the retired queries left out of their scores (one line each)."""
    from emb_s_core import provenance, runs as runs_mod

    results = runs_mod.load_results(ws, runs=list(runs) if runs is not None else None)
    left = provenance.left_out(ws, results[["run", "qid"]] if len(results) else results)
    stored = runs_mod.list_runs(ws)
    if runs is not None:
        stored = stored[stored["run"].isin(list(runs))]
    configs = {r: json.loads(c) for r, c in zip(stored["run"], stored["config"])}
    return provenance.notes(left, provenance.earlier_bank(ws, configs, left))


def ranked_rungs(per_query_df: pd.DataFrame, run_a: str, run_b: str, order: Sequence[str]
                 ) -> tuple[list[str], list[str]]:
    """(rungs where both runs have rankings, rungs where only one has), each in ``order``."""
    ok = per_query_df[per_query_df["status"] == OK]
    ran_a = set(ok.loc[ok["run"] == run_a, "rung"])
    ran_b = set(ok.loc[ok["run"] == run_b, "rung"])
    return [r for r in order if r in ran_a & ran_b], [r for r in order if r in ran_a ^ ran_b]


def side_by_side(per_query_df: pd.DataFrame, run_a: str, run_b: str, rung: str, metric: str,
                 texts: pd.Series | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(queries where A is better, queries where B is better) on ``rung``: qid, [text], the metric of A and of B.

    Only queries both runs scored; "better" follows the metric's direction in the catalogue (lower is better for
    HN-intrusion). ``texts`` (qid → query text) adds the ``text`` column."""
    m = metrics.metric(metric)
    here = per_query_df[(per_query_df["rung"] == rung) & per_query_df["run"].isin([run_a, run_b])]
    side = here.pivot_table(index="qid", columns="run", values=m.column, aggfunc="first")
    if run_a not in side or run_b not in side:
        side = pd.DataFrame(columns=[run_a, run_b], index=pd.Index([], name="qid"), dtype=float)
    side = side[[run_a, run_b]].dropna()
    side.columns.name = None
    gain = (side[run_a] - side[run_b]) * (1 if m.higher_is_better else -1)
    parts = [side[gain > 0].reset_index(), side[gain < 0].reset_index()]
    if texts is not None:
        for part in parts:
            part.insert(1, "text", part["qid"].map(texts))
    return parts[0], parts[1]


def _per_query(ws: Workspace, runs: Sequence[str] | None, hn_provenance: Sequence[str] | None = None
               ) -> pd.DataFrame:
    pq = views.per_query(ws, runs, hn_provenance=hn_provenance)
    if pq.empty:
        what = "no results" if runs is None else f"no results for run(s) {', '.join(runs)}"
        raise EmbSError(f"{what} in the workspace", where=str(ws.path),
                        fix=f"evaluate a retriever first (`emb-s eval --workspace {ws.cli} --retriever bm25`) or import a "
                            f"run file (`emb-s runs import --workspace {ws.cli} --name NAME FILE`).")
    return pq


def _in_ladder_order(ws: Workspace, df: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Sort by run (as stored), then rung in ladder order, keeping the metric order within a cell."""
    from emb_s_core import ladder

    lad = ladder.load_all(ws)
    order = {name: i for i, name in enumerate(lad.names)} if lad is not None else {}
    df = df.copy()
    df["_rung"] = df["rung"].map(lambda r: order.get(r, len(order)))
    sort = [k if k != "rung" else "_rung" for k in keys if k != "run"]
    if "run" in df and "run" in keys:
        df["_run"] = pd.Categorical(df["run"], categories=list(dict.fromkeys(df["run"])), ordered=True)
        sort = ["_run", *sort]
    df = df.sort_values(sort + (["rung"] if "rung" in keys else []), kind="stable")
    return df.drop(columns=[c for c in ("_rung", "_run") if c in df]).reset_index(drop=True)
