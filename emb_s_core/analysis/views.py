"""The inputs of the dashboard's figures, shared with ``emb-s figure`` so both draw the same thing.

Why a module: the Overview page and the CLI must pick the same columns (rungs or pooled scales, in ladder order),
apply the same filters and call the same metrics functions; pages add caching on top, nothing else.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from emb_s_core import bank, ladder, metrics, runs
from emb_s_core.errors import EmbSError
from emb_s_core.schema import CELL_DOES_NOT_FIT, CELL_ERROR, CELL_NOT_RUN, CELL_OK, DOES_NOT_FIT, OK
from emb_s_core.store import Workspace

SOURCES = ("all", "single", "multi")
PER_QUERY_BASE = ["run", "rung", "qid", "status", "scale", "domain", "task_type", "multi_source"]


def scale_of(rung: str) -> str:
    """``64K/history`` → ``64K``: domain rungs of one size pooled into one scale; shared rungs keep their name."""
    return rung.split("/", 1)[0]


@dataclass(frozen=True)
class LadderInView:
    """The ladder a view is about (DESIGN §2): the built ladder, else the official one. The benign twin is its
    companion, drawn beside it and never continuing it, so no default (largest rung, sort column, rung pair) is ever
    a twin rung. Built from names in ladder order, rungs or pooled scales alike (``benign:64K`` is the twin's)."""

    kind: str | None  # ladder.BUILT, ladder.OFFICIAL, or None when no name belongs to either
    rungs: tuple[str, ...]  # that ladder's names, in the order given
    companion: tuple[str, ...]  # the benign twin's names, in the order given
    searchable: tuple[str, ...]  # every name but the twin's: pools a typed question can be searched in

    @property
    def largest(self) -> str | None:
        """The view's largest rung (or scale): what a page opens on when it must pick one."""
        return self.rungs[-1] if self.rungs else None

    @property
    def base(self) -> str | None:
        """The view's smallest rung (or scale)."""
        return self.rungs[0] if self.rungs else None


def kind_in_view(kinds: Iterable[str]) -> str | None:
    """Which of the ladder kinds present a view is about: built, else official; None when only the twin (or
    nothing) is there."""
    present = set(kinds)
    return next((k for k in (ladder.BUILT, ladder.OFFICIAL) if k in present), None)


def ladder_in_view(names: Iterable[str] | ladder.Ladder | None) -> LadderInView:
    """The :class:`LadderInView` of rung (or scale) names in ladder order, or of a loaded ladder (all its kinds)."""
    if isinstance(names, ladder.Ladder):
        names = names.names
    names = list(dict.fromkeys(names or []))
    kinds = [ladder.kind_of(n) for n in names]
    kind = kind_in_view(kinds)
    return LadderInView(kind, tuple(n for n, k in zip(names, kinds) if k == kind),
                        tuple(n for n, k in zip(names, kinds) if k == ladder.BENIGN),
                        tuple(n for n, k in zip(names, kinds) if k != ladder.BENIGN))


def default_rung(names: Sequence[str]) -> str | None:
    """The name a widget offering ``names`` (ladder order) opens on: the view's largest rung; only when every name is
    the twin's (nothing else to offer) the last of them; None for no names."""
    names = list(names)
    return ladder_in_view(names).largest or (names[-1] if names else None)


def per_query(ws: Workspace, run_names: Sequence[str] | None = None,
              hn_provenance: Sequence[str] | None = None) -> pd.DataFrame:
    """``metrics.per_query`` over the stored results (all runs, or ``run_names``) and the bank's queries, plus
    ``scale`` (domain rungs of one size pooled). The one workspace-level entry: report, compare and the dashboard
    all score through it. ``hn_provenance`` keeps only hard negatives of those provenances (HN-intrusion by it).
    Results of queries the bank no longer holds are left out (:mod:`emb_s_core.provenance` counts and names them)."""
    res = runs.load_results(ws, runs=list(run_names) if run_names is not None else None)
    if res.empty:
        return pd.DataFrame(columns=PER_QUERY_BASE)
    qs = bank.with_gold_source(ws, bank.queries(ws))  # a query's source is its gold's (issue 31 §3)
    if hn_provenance is not None:
        qs = bank.with_hard_negatives_of(ws, qs, list(hn_provenance))
    pq = metrics.per_query(res[res["qid"].isin(qs["qid"])], qs)
    pq["scale"] = pq["rung"].map(scale_of)
    return pq


def filter_rows(pq: pd.DataFrame, domains=(), tasks=(), sources: str = "all") -> pd.DataFrame:
    """Rows of the given domains / task types / single- or multi-source queries (empty selection = all)."""
    if sources not in SOURCES:
        raise EmbSError(f"unknown source filter {sources!r}", fix="use all, single or multi.")
    mask = np.ones(len(pq), dtype=bool)
    if domains:
        mask &= pq["domain"].isin(list(domains)).to_numpy()
    if tasks:
        mask &= pq["task_type"].isin(list(tasks)).to_numpy()
    if sources != "all":
        multi = pq["multi_source"].astype(bool).to_numpy()
        mask &= multi if sources == "multi" else ~multi
    return pq[mask]


def columns(lad: ladder.Ladder | None, pq: pd.DataFrame, x: str) -> list[str]:
    """Figure columns in ladder order: rung names (x="rung") or pooled scales (x="scale")."""
    if x not in ("rung", "scale"):
        raise EmbSError(f"unknown column kind {x!r}", fix="use rung or scale.")
    names = lad.names if lad is not None else sorted(pq["rung"].unique()) if "rung" in pq else []
    return list(dict.fromkeys(scale_of(n) for n in names)) if x == "scale" else list(names)


def overview(pq: pd.DataFrame, lad: ladder.Ladder | None, metric: str, x: str, run_names: list[str]
             ) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """(aggregate, cell states, columns) for the heatmap and curves of ``metric`` over ``run_names``; the aggregate
    marks thin cells (``thin``: n below ``metrics.THIN_N``, greyed; ``small``: below ``metrics.SMALL_N``, n printed):
    pooled scales hide how few queries a cell averages (a 64K base may keep 6 of 77 queries of a domain)."""
    cols = columns(lad, pq, x)
    pq = pq[pq["run"].isin(run_names)] if len(pq) else pq  # only the shown runs are aggregated
    if pq.empty:
        agg = pd.DataFrame(columns=["run", x, "metric", "value", "n", "ci_low", "ci_high"])
    else:
        agg = metrics.aggregate(pq, by=("run", x), metrics=[metric])
    n = pd.to_numeric(agg["n"], errors="coerce").fillna(0)
    agg = agg.assign(thin=(n > 0) & (n < metrics.THIN_N), small=(n > 0) & (n < metrics.SMALL_N))
    return agg, cell_states(pq, run_names, cols, x=x), cols


def overview_table(agg: pd.DataFrame, states: pd.DataFrame, metric: str, x: str, run_names: list[str]
                   ) -> pd.DataFrame:
    """The Overview's table: one row per (run, column) cell with its state, the value of ``metric``, n and the
    interval (cells without a score keep their state and a blank value)."""
    table = agg[agg["run"].isin(run_names)].merge(states[["run", x, "state"]], on=["run", x], how="right")
    return table[["run", x, "state", "value", "n", "ci_low", "ci_high"]].rename(columns={"value": metric})


def unscored(states: pd.DataFrame) -> tuple[int, list[str]]:
    """(how many cells have no score, their distinct states sorted): everything but ok."""
    missing = states.loc[states["state"] != CELL_OK, "state"]
    return len(missing), sorted(set(missing))


def cell_states(per_query_df: pd.DataFrame, run_names: list[str], cols: list[str], x: str = "rung") -> pd.DataFrame:
    """State of every (run, x) cell from the per-query statuses (``schema.CELL_*``), with ``n_ok`` and ``n_total``.

    A cell is ok when at least one of its queries has a ranking; "does not fit" when every query was too long for
    the model; error when all failed otherwise; "not run" when the run stored nothing there. Neither of the last
    three is ever drawn as a zero.
    """
    run_names = list(dict.fromkeys(run_names))  # a repeated name is one name (one row per run)
    grid = pd.MultiIndex.from_product([run_names, cols], names=["run", x]).to_frame(index=False)
    if per_query_df.empty:
        grid["state"] = CELL_NOT_RUN
        grid["n_ok"] = grid["n_total"] = 0
        return grid
    status = per_query_df["status"]
    counts = (per_query_df.assign(is_ok=status == OK, is_fit=status == DOES_NOT_FIT)
              .groupby(["run", x], observed=True)
              .agg(n_total=("status", "size"), n_ok=("is_ok", "sum"), n_nofit=("is_fit", "sum"))
              .reset_index())
    out = grid.merge(counts, on=["run", x], how="left")
    out[["n_total", "n_ok", "n_nofit"]] = out[["n_total", "n_ok", "n_nofit"]].fillna(0).astype(int)
    out["state"] = np.select(
        [out["n_total"] == 0, out["n_ok"] > 0, out["n_nofit"] == out["n_total"]],
        [CELL_NOT_RUN, CELL_OK, CELL_DOES_NOT_FIT], default=CELL_ERROR)
    return out.drop(columns="n_nofit")


def figure(ws: Workspace, kind: str, metric: str = "SR@10", *, run_names: list[str] | None = None, x: str = "scale",
           domains=(), tasks=(), sources: str = "all", twin: bool = True):
    """The Overview heatmap / curves, or the Ladder page's source-mixing figure, for ``ws`` (CLI entry point).

    Heatmap and curves come from the Overview's own analysis (``illusion.overview``) and builder
    (``figures.overview``): the benign twin as ``<run> · benign`` rows / dashed curves beside the view's ladder, or
    left out (``twin=False``); never its rungs as more columns."""
    from emb_s_core.analysis import illusion
    from emb_s_core.evaluate import stale_twin_runs
    from emb_s_core.figures import mixing, overview, style

    lad = ladder.load_all(ws)
    if lad is None:
        raise EmbSError(f"the workspace {ws.path} has no ladder", fix=f"build it first: `emb-s ladder build --workspace {ws.cli}`.")
    all_runs = runs.list_runs(ws)["run"].tolist()
    if not all_runs:
        raise EmbSError(f"the workspace {ws.path} has no runs",
                        fix=f"evaluate a retriever first (`emb-s eval --workspace {ws.cli} --retriever bm25`).")
    chosen = list(dict.fromkeys(run_names or all_runs))  # `--runs bm25,bm25` names one run
    unknown = [r for r in chosen if r not in all_runs]
    if unknown:
        raise EmbSError(f"no run named {', '.join(unknown)}", fix=f"use some of: {', '.join(all_runs)}.")
    name = Path(ws.path).name
    if kind == "mixing":
        from emb_s_core.analysis import mixing as mixing_view

        pair = mixing_view.rung_pair(lad)
        dist = mixing_view.distinct_sources(ws, run_names=chosen[:1], rungs=pair, k=mixing_view.K)
        return mixing.mixing(dist, chosen[0], pair, k=mixing_view.K,
                             caption=style.caption(name, pair, mixing_view.K, mixing_view.n_queries(dist)))
    if kind not in overview.KINDS:
        raise EmbSError(f"unknown figure {kind!r}", fix="use heatmap, curves or mixing.")
    m = metrics.metric(metric)
    pq = filter_rows(per_query(ws), domains, tasks, sources)
    if pq.empty:
        raise EmbSError("no query matches the filters", fix="widen --domain / --task / --sources.")
    view = illusion.overview(illusion.without_stale_twins(pq, stale_twin_runs(ws)), lad, m.name, x, chosen,
                             twin=twin)
    cap = overview.caption(view, m.name, x, name, int(pq["qid"].nunique()),
                           filtered=bool(domains or tasks or sources != "all"))
    return overview.figure(kind, view, m.name, x, caption_text=cap)
