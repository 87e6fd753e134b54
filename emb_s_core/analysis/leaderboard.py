"""The leaderboard: every run next to one baseline run at every rung (or pooled scale), each cell with its n and
bootstrap interval, and marked better / worse / no difference by a paired test corrected across the whole table.

Why one module: ``emb-s leaderboard`` and the Leaderboard page must show the same table, and every metric must take
the same path — ``metrics.aggregate`` for a cell, ``metrics.paired_test`` (paired sign-flip randomization over the
queries both runs scored) for its comparison with the baseline, ``metrics.correct_p_values`` over all comparisons
shown — so an EMB-S metric (FR@K, R@1, HN-intrusion) and a ranx-style one (MRR, nDCG@10) are tested alike.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from emb_s_core import metrics
from emb_s_core.analysis import common, run_state
from emb_s_core.errors import EmbSError

BETTER, WORSE, SAME, BASELINE, UNTESTED = "better", "worse", "no difference", "baseline", "not tested"
MARKS = {BETTER: "▲", WORSE: "▼", SAME: "=", BASELINE: "", UNTESTED: "?"}
SUMMARY = "vs baseline"
NO_SCORE = "–"  # no query scored: not run there, or does not fit (never a zero)
EFFECTIVE_SCALE = "effective scale"  # the table column, when the board was computed with its ladder
RESULTS = "results"  # the table column saying which runs are INCOMPLETE, when one shown is
CELL_COLUMNS = ["run", "metric", "value", "n", "ci_low", "ci_high", "delta", "delta_ci_low", "delta_ci_high",
                "n_paired", "p_value", "p_adjusted", "verdict"]


@dataclass
class Leaderboard:
    """The computed board: ``cells`` has one row per (run, column) with the columns of ``CELL_COLUMNS`` (the column
    key is named ``x``: rung or scale); ``n_tests`` is the m of the correction (comparisons with paired queries)."""

    cells: pd.DataFrame
    columns: list[str]
    runs: list[str]
    metric: str
    x: str
    baseline: str
    correction: str
    alpha: float
    n_tests: int
    effective: pd.Series | None = None  # run -> effective scale on the built ladder ("1M [512K, ≥ full]")
    p_note: str = ""  # how the p-values were had (exact, or Monte Carlo with its error bound)
    incomplete: dict[str, str] | None = None  # run -> its INCOMPLETE label (analysis.run_state), runs shown only
    common_note: str | None = None  # which queries were left out so every column compares the same queries
    common_caption: str | None = None  # its short form, for the figure's caption
    settings: dict[str, str] | None = None  # run -> its model's prompts / precision (analysis.run_state), runs shown

    def table(self, detail: bool = False, sort_by: str | None = None, descending: bool = True) -> pd.DataFrame:
        """One row per run: the ``vs baseline`` summary, then per column the value with its mark (▲ ▼ = ?), and with
        ``detail`` the n and 95% interval next to each. ``sort_by``: run, ``vs baseline`` (better − worse) or a column
        (its numeric value; runs without a value last)."""
        c = self.cells
        rows = []
        for run in self.runs:
            mine = c[c["run"] == run].set_index(self.x)
            counts = mine["verdict"].value_counts()
            row: dict[str, object] = {"run": run, SUMMARY: BASELINE if run == self.baseline else
                                      f"{counts.get(BETTER, 0)}▲ {counts.get(WORSE, 0)}▼ {counts.get(SAME, 0)}="}
            for col in self.columns:
                cell = mine.loc[col] if col in mine.index else None
                if cell is None or np.isnan(cell["value"]):
                    row[col] = NO_SCORE
                else:
                    row[col] = f"{cell['value']:.3f} {MARKS[cell['verdict']]}".strip()
                if detail:
                    row[f"{col} n"] = int(cell["n"]) if cell is not None else 0
                    row[f"{col} 95% CI"] = (NO_SCORE if cell is None or np.isnan(cell["ci_low"])
                                            else f"{cell['ci_low']:.3f}–{cell['ci_high']:.3f}")
            if self.effective is not None:
                row[EFFECTIVE_SCALE] = self.effective.get(run, NO_SCORE)
            if self.incomplete:
                row[RESULTS] = self.incomplete.get(run, "complete")
            rows.append(row)
        out = pd.DataFrame(rows)
        if sort_by is None or out.empty:
            return out
        return out.iloc[self._order(sort_by, descending)].reset_index(drop=True)

    def _order(self, sort_by: str, descending: bool) -> np.ndarray:
        """Row positions of ``self.runs`` sorted by ``sort_by`` (stable; NaN last in either direction)."""
        if sort_by == "run":
            key = pd.Series(self.runs, dtype=object)
        elif sort_by == SUMMARY:
            c = self.cells
            net = (c["verdict"] == BETTER).astype(int) - (c["verdict"] == WORSE).astype(int)
            key = net.groupby(c["run"]).sum().reindex(self.runs).astype(float)
        elif sort_by in self.columns:
            here = self.cells[self.cells[self.x] == sort_by].set_index("run")["value"]
            key = here.reindex(self.runs).astype(float)
        else:
            raise EmbSError(f"cannot sort the leaderboard by {sort_by!r}",
                            fix=f"sort by run, {SUMMARY} or one of its columns: {', '.join(self.columns)}.")
        frame = pd.DataFrame({"key": key.to_numpy(), "pos": np.arange(len(self.runs))})
        frame = frame.sort_values("key", ascending=not descending, kind="stable", na_position="last")
        return frame["pos"].to_numpy()

    def legend(self) -> str:
        """The sentence printed under the table: what the marks mean and which correction was applied."""
        direction = "" if metrics.metric(self.metric).higher_is_better else " (lower is better)"
        notes = [self.common_note or "", *(run_state.note_line(r, lab) for r, lab in (self.incomplete or {}).items()),
                 *(run_state.settings_line(r, s) for r, s in (self.settings or {}).items())]
        return (f"Cells: mean {self.metric}{direction} over the queries every run shown has in that column. ▲ "
                "better / ▼ worse than "
                f"the baseline {self.baseline} by a two-sided paired sign-flip randomization test over the queries both "
                f"scored, p corrected with {metrics.CORRECTION_LABELS[self.correction]} across all {self.n_tests} "
                f"comparisons shown, α = {self.alpha:g}; = no difference; ? not tested (no paired queries); "
                f"{NO_SCORE} no score (not run there, or does not fit). {self.p_note} "
                + " ".join(n if n.endswith(".") else n + "." for n in notes if n)).strip()


def compute(pq: pd.DataFrame, columns: Sequence[str], metric: str, baseline: str, *, x: str = "rung",
            runs: Sequence[str] | None = None, correction: str = "holm", alpha: float = 0.05, n_boot: int = 1000,
            n_resamples: int = 10000, seed: int = 0, lad=None, completeness: pd.DataFrame | None = None
            ) -> Leaderboard:
    """The board of ``metric`` over the per-query rows ``pq`` (already filtered), one column per entry of
    ``columns`` (values of ``pq[x]``, in ladder order), for ``runs`` (default: every run in ``pq``) against
    ``baseline``. Every non-baseline cell with paired queries is one test; all of them are corrected together.
    With the ladder ``lad``, each run's effective scale on its built rungs (SR@10, whatever ``metric``) is a column.
    Each column compares the queries every run shown has there (``analysis.common``; the legend names what was left
    out); ``completeness`` (``analysis.run_state``'s table) marks the runs with missing results."""
    if x not in pq.columns:
        raise EmbSError(f"the per-query rows have no column {x!r}", fix="use x=rung or x=scale.")
    if not 0 < alpha < 1:
        raise EmbSError(f"the significance level must lie strictly between 0 and 1, got {alpha}",
                        fix="pass e.g. --alpha 0.05.")
    if (correction or "").lower() not in metrics.CORRECTIONS:
        raise EmbSError(f"unknown multiple-testing correction {correction!r}",
                        fix=f"use one of {', '.join(metrics.CORRECTIONS)}.")
    correction = correction.lower()
    m = metrics.metric(metric)
    metric = m.name
    present = list(pd.unique(pq["run"].to_numpy(object)))  # first-seen order, without a Python loop over rows
    chosen = list(dict.fromkeys(runs)) if runs else present  # a chosen run without rows shows as a row of –
    if baseline not in present:
        raise EmbSError(f"no results for the baseline run {baseline!r} under the current filters",
                        fix=f"pick a baseline among: {', '.join(present) or '(none)'}.")
    if baseline not in chosen:
        chosen = [baseline, *chosen]
    columns = list(columns)
    shown, left = common.restrict(pq[pq["run"].isin(chosen) & pq[x].isin(columns)], x)
    grid = pd.MultiIndex.from_product([chosen, columns], names=["run", x]).to_frame(index=False)
    if shown.empty:
        agg = pd.DataFrame(columns=["run", x, "value", "n", "ci_low", "ci_high"])
    else:
        agg = metrics.aggregate(shown, by=("run", x), metrics=[metric], n_boot=n_boot, seed=seed)
    cells = grid.merge(agg[["run", x, "value", "n", "ci_low", "ci_high"]], on=["run", x], how="left")
    cells["n"] = cells["n"].fillna(0).astype(int)
    cells["value"] = cells["value"].astype(float)
    needed = list(dict.fromkeys(["run", "rung", "qid", x, m.column]))  # a narrow frame: cheap subsetting
    tests, p_note = _tests(shown[needed], chosen, columns, baseline, metric, x, n_resamples, seed, correction,
                           float(alpha))
    cells = cells.merge(tests, on=["run", x], how="left")
    cells.insert(1, "metric", metric)
    cells["p_adjusted"] = metrics.correct_p_values(cells["p_value"].to_numpy(np.float64), correction)
    sign = 1.0 if m.higher_is_better else -1.0
    significant = cells["p_adjusted"] < alpha
    gain = cells["delta"] * sign
    cells["verdict"] = np.select(
        [cells["run"] == baseline, cells["p_value"].isna(), significant & (gain > 0), significant & (gain < 0)],
        [BASELINE, UNTESTED, BETTER, WORSE], default=SAME)
    n_tests = int(cells["p_value"].notna().sum())
    effective = None
    if lad is not None:
        from emb_s_core.analysis import illusion

        effective = illusion.effective_labels(pq, lad, chosen)
    return Leaderboard(cells[["run", x, *CELL_COLUMNS[1:]]], columns, chosen, metric, x, baseline, correction,
                       float(alpha), n_tests, effective, p_note, run_state.marks(completeness, chosen),
                       common.note(left, x), common.caption(left, x), run_state.settings(completeness, chosen))


def _tests(shown: pd.DataFrame, runs: list[str], columns: list[str], baseline: str, metric: str, x: str,
           n_resamples: int, seed: int, correction: str, alpha: float) -> tuple[pd.DataFrame, str]:
    """The paired test of each run against the baseline in each column with queries of both (the same test as
    ``metrics.paired_test``, all cells at once: their sign vectors and bootstrap resamples are shared per query
    count, and Monte Carlo p-values are refined until no verdict under ``correction`` at ``alpha`` can move);
    returns the rows and the caption's sentence on how the p-values were had."""
    col = metrics.metric(metric).column
    xc, xs = pd.factorize(shown[x].to_numpy(object))
    qc, _ = pd.factorize(shown["qid"].to_numpy(object))
    rc, names = pd.factorize(shown["run"].to_numpy(object))
    values = shown[col].to_numpy(np.float64)
    where_run = {r: i for i, r in enumerate(names)}
    keys, diffs = [], []
    order = np.argsort(xc, kind="stable")
    bounds = np.searchsorted(xc[order], np.arange(len(xs) + 1))
    for g, where in enumerate(xs):  # per column: a (queries × runs) matrix; a pooled scale holds a query once per run
        rows = order[bounds[g]:bounds[g + 1]]
        q, q_of = np.unique(qc[rows], return_inverse=True)
        mat = np.full((len(q), len(names)), np.nan)
        mat[q_of, rc[rows]] = values[rows]
        ran = np.zeros(len(names), bool)
        ran[rc[rows]] = True
        if baseline not in where_run or not ran[where_run[baseline]]:
            continue
        base = mat[:, where_run[baseline]]
        for run in runs:
            if run == baseline or run not in where_run or not ran[where_run[run]]:
                continue
            d = mat[:, where_run[run]] - base
            keys.append((run, where))
            diffs.append(d[~np.isnan(d)])
    sf = metrics.sign_flip_p_values(diffs, n_resamples=n_resamples, seed=seed, alpha=alpha, correction=correction)
    low, high = metrics.paired_intervals(diffs, seed=seed)
    rows = pd.DataFrame({"run": [k[0] for k in keys], x: [k[1] for k in keys],
                         "delta": [d.mean() if len(d) else np.nan for d in diffs], "delta_ci_low": low,
                         "delta_ci_high": high, "n_paired": [len(d) for d in diffs], "p_value": sf.p_value},
                        columns=["run", x, "delta", "delta_ci_low", "delta_ci_high", "n_paired", "p_value"])
    return rows, sf.note()


def for_workspace(ws, metric: str = "SR@10", baseline: str | None = None, *, x: str = "scale",
                  runs: Sequence[str] | None = None, correction: str = "holm", alpha: float = 0.05,
                  domains: Sequence[str] = (), tasks: Sequence[str] = (), sources: str = "all",
                  tags: Sequence[str] = (), n_boot: int = 1000, n_resamples: int = 10000, seed: int = 0
                  ) -> Leaderboard:
    """The board of a workspace's stored results under the dashboard's filters (what ``emb-s leaderboard`` prints);
    the baseline defaults to the first run."""
    from emb_s_core import ladder, notes
    from emb_s_core import runs as runs_mod
    from emb_s_core.analysis import views

    pq = views.per_query(ws)
    if pq.empty:
        raise EmbSError(f"the workspace {ws.path} has no results", fix="evaluate a retriever first (`emb-s eval`).")
    pq = notes.filter_by_tags(views.filter_rows(pq, domains, tasks, sources), notes.load(ws), tags)
    if pq.empty:
        raise EmbSError("no query matches the filters", fix="widen --domain / --task / --sources / --tag.")
    lad = ladder.load(ws, allow_stale=True) if ladder.exists(ws) else None
    known = runs_mod.list_runs(ws)["run"].tolist()
    unknown = [r for r in [*(runs or []), *([baseline] if baseline else [])] if r not in known]
    if unknown:
        raise EmbSError(f"no run named {unknown[0]!r}", fix=f"use some of: {', '.join(known)}.")
    baseline = baseline or (list(runs)[0] if runs else list(dict.fromkeys(pq["run"]))[0])
    return compute(pq, views.columns(lad, pq, x), metric, baseline, x=x, runs=runs, correction=correction,
                   alpha=alpha, n_boot=n_boot, n_resamples=n_resamples, seed=seed, lad=lad,
                   completeness=run_state.for_workspace(ws))
