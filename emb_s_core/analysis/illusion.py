"""The needle's illusion, measured: the gap between the benign twin and the adversarial ladder, and effective scale.

- **Illusion gap** (DESIGN §1): per run and rung, ``metric(benign:r) − metric(r)`` over the same queries (the twin
  keeps the built rung's queries), with the project's paired test (``metrics.paired_test``: sign-flip randomization
  p-value, paired bootstrap 95% interval), for SR@10, FR@10 and R@1 by default.
- **Effective scale** (after NoLiMa's effective length): the largest scale at which a run's SR@10 stays at or above
  ``fraction`` (0.85) × its base-scale value, domain rungs of one size pooled (each query sits on one rung per
  size). "Stays": the scale before the first one that falls below; a run that never falls below is "≥ full". The
  bootstrap resamples queries (paired across scales) and gives a 95% interval on the scale index.

Both take the per-query frame (``metrics.per_query`` of stored results) and return frames; nothing here draws.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from emb_s_core import ladder, metrics
from emb_s_core.analysis import common
from emb_s_core.analysis.views import scale_of
from emb_s_core.errors import EmbSError

GAP_METRICS = ("SR@10", "FR@10", "R@1")
EFFECTIVE_FRACTION = 0.85
EFFECTIVE_METRIC = "SR@10"
BENIGN, ADVERSARIAL = "benign", "adversarial"
GAP_COLUMNS = ["run", "rung", "metric", "benign", "adversarial", "gap", "n", "ci_low", "ci_high", "p_value",
               "wins", "losses", "ties", "test"]


def twin_pairs(pq: pd.DataFrame, run: str) -> list[str]:
    """The built rungs (plain names) that ``run`` has results for on both the rung and its benign twin."""
    have = set(pq.loc[pq["run"] == run, "rung"])
    return [r for r in dict.fromkeys(pq.loc[pq["run"] == run, "rung"])
            if ladder.kind_of(r) == ladder.BUILT and ladder.qualified(ladder.BENIGN, r) in have]


def paired_rows(pq: pd.DataFrame, run: str) -> pd.DataFrame:
    """``run``'s per-query rows on built rungs and their twins, relabelled for ``metrics.paired_test``: run =
    "benign" / "adversarial", rung = the built rung's plain name."""
    mine = pq[pq["run"] == run]
    kinds = mine["rung"].map(ladder.kind_of)
    mine = mine[kinds.isin([ladder.BUILT, ladder.BENIGN])]
    return mine.assign(run=np.where(kinds.loc[mine.index] == ladder.BENIGN, BENIGN, ADVERSARIAL),
                       rung=mine["rung"].map(ladder.plain_name))


def gap(pq: pd.DataFrame, runs: Sequence[str] | None = None, metric_names: Sequence[str] = GAP_METRICS,
        n_resamples: int = 10000, n_boot: int = 2000, seed: int = 0) -> pd.DataFrame:
    """The illusion gap per (run, rung, metric): benign, adversarial, gap (= benign − adversarial), n, the paired
    bootstrap interval and the randomization p-value. Runs without twin results are left out; none at all is an
    error naming what to do. Metrics no query defines (:func:`undefined_metrics`) are left out, not rows of NaN.
    The runs' gaps are side by side, so each rung compares the queries every run has there (:func:`gap_note`)."""
    chosen = list(runs) if runs is not None else list(dict.fromkeys(pq["run"]))
    pq = common.restrict(pq, "rung", chosen)[0]
    left_out = undefined_metrics(pq, metric_names)
    metric_names = [n for n in metric_names if n not in left_out]
    if not metric_names:
        raise EmbSError("; ".join(left_out.values()), fix="pick a metric these queries define, e.g. SR@10.")
    rows = []
    for run in chosen:
        pairs = twin_pairs(pq, run)
        if not pairs:
            continue
        rel = paired_rows(pq, run)
        for rung in pairs:
            for name in metric_names:
                t = metrics.paired_test(rel, BENIGN, ADVERSARIAL, rung, name, n_resamples=n_resamples, seed=seed,
                                        n_boot=n_boot)
                rows.append({"run": run, "rung": rung, "metric": t["metric"], "benign": t["mean_a"],
                             "adversarial": t["mean_b"], "gap": t["delta"], "n": t["n"], "ci_low": t["ci_low"],
                             "ci_high": t["ci_high"], "p_value": t["p_value"], "wins": t["wins"],
                             "losses": t["losses"], "ties": t["ties"], "test": t["test"]})
    if not rows:
        raise EmbSError("no run has results on both a built rung and its benign twin",
                        fix="build the twin (`emb-s ladder build --control benign`) and evaluate on both "
                            "(`emb-s eval -r SPEC --ladder both`).")
    return pd.DataFrame(rows, columns=GAP_COLUMNS)


def gap_note(pq: pd.DataFrame, runs: Sequence[str] | None = None) -> str | None:
    """Which queries :func:`gap` left out so that every run's gap is over the same queries (None: none)."""
    chosen = list(runs) if runs is not None else list(dict.fromkeys(pq["run"]))
    return common.note(common.restrict(pq, "rung", chosen)[1], "rung")


def undefined_metrics(pq: pd.DataFrame, metric_names: Sequence[str]) -> dict[str, str]:
    """metric name → why it has no value, for the metrics of ``metric_names`` that no scored query of ``pq``
    defines (R@1 counts single-source queries only: on a bank of multi-source questions it has none), so tables
    leave them out with this note instead of printing rows of NaN."""
    out = {}
    for name in metric_names:
        m = metrics.metric(name)
        if m.column not in pq.columns or not pq[m.column].notna().any():
            out[m.name] = (f"{m.name} left out: it counts {m.family.population} only, and none of the "
                           f"{pq['qid'].nunique():,} queries with results is one")
    return out


# ------------------------------------------------------------------------------------------- effective scale
def _first_drop(curves: np.ndarray, fraction: float) -> np.ndarray:
    """Per row of ``curves`` (replicates × scales): index of the last scale before the first one below
    ``fraction`` × the base (column 0); ``n_scales`` when none falls below (never drops)."""
    below = curves[:, 1:] < fraction * curves[:, :1] - 1e-12
    return np.where(below.any(axis=1), below.argmax(axis=1), curves.shape[1])


def effective_scale(pq: pd.DataFrame, scales: Sequence[str], runs: Sequence[str] | None = None,
                    fraction: float = EFFECTIVE_FRACTION, metric: str = EFFECTIVE_METRIC, by_domain: bool = False,
                    n_boot: int = 1000, seed: int = 0) -> pd.DataFrame:
    """Effective scale per run (and per domain with ``by_domain``) on the built ladder's ``scales`` (in order).

    Columns: run, domain ("all" when pooled), base, threshold, effective (scale name, or "≥ <last>" when SR@10
    never falls below), index (0-based scale index; len(scales) when it never drops), ci_low / ci_high (scale
    names of the bootstrap 95% interval on the index), n (queries on every scale), values (the curve).
    """
    if not 0 < fraction <= 1:
        raise EmbSError(f"the effective-scale fraction must be in (0, 1], got {fraction}", fix="pass e.g. 0.85.")
    if len(scales) < 2:
        raise EmbSError("effective scale needs at least two scales", fix="build a ladder with more rungs.")
    col = metrics.metric_columns(pq, [metric])[0]
    built = pq[pq["rung"].map(ladder.kind_of) == ladder.BUILT]
    built = built.assign(scale=built["rung"].map(scale_of))
    built = built[built["scale"].isin(scales)]
    chosen = list(runs) if runs is not None else list(dict.fromkeys(built["run"]))
    built = common.restrict(built, "scale", chosen)[0]  # runs side by side: the queries they all have per scale
    names = list(scales)

    def label(i: int) -> str:
        return f"≥ {names[-1]}" if i >= len(names) else names[i]

    rows = []
    for run in chosen:
        mine = built[built["run"] == run]
        wide = mine.pivot_table(index="qid", columns="scale", values=col, aggfunc="first").reindex(columns=names)
        wide = wide.dropna()
        groups = [("all", wide)]
        if by_domain:
            dom = mine.drop_duplicates("qid").set_index("qid")["domain"]
            groups += [(d, wide[dom.reindex(wide.index).to_numpy() == d]) for d in sorted(dom.dropna().unique())]
        for domain, w in groups:
            m = w.to_numpy(np.float64)
            if len(m) == 0:
                continue
            curve = m.mean(axis=0)
            idx = int(_first_drop(curve[None, :], fraction)[0])
            rng = np.random.default_rng([seed, len(m)])
            boot = np.concatenate([m[rng.integers(0, len(m), size=(min(256, n_boot - s), len(m)))].mean(axis=1)
                                   for s in range(0, n_boot, 256)]) if n_boot else np.empty((0, len(names)))
            bidx = _first_drop(boot, fraction) if len(boot) else np.array([idx])
            lo, hi = (int(v) for v in np.quantile(bidx, [0.025, 0.975], method="inverted_cdf"))
            rows.append({"run": run, "domain": domain, "base": float(curve[0]),
                         "threshold": float(fraction * curve[0]), "effective": label(idx), "index": idx,
                         "ci_low": label(lo), "ci_high": label(hi), "n": len(m),
                         "values": [float(v) for v in curve]})
    return pd.DataFrame(rows, columns=["run", "domain", "base", "threshold", "effective", "index", "ci_low",
                                       "ci_high", "n", "values"])


# ------------------------------------------------------------------------------------------- views
TWIN_SUFFIX = " · benign"


def effective_labels(pq: pd.DataFrame, lad: ladder.Ladder, runs: Sequence[str], n_boot: int = 200
                     ) -> pd.Series | None:
    """Each run's pooled effective scale on the built ladder as "scale [low, high]" (the paper table's and the
    leaderboard's column); None when the built ladder has fewer than two scales or nothing was scored on it."""
    if len({scale_of(r.name) for r in lad.rungs if r.ladder == ladder.BUILT}) < 2:
        return None
    mine = pq[pq["run"].isin(runs)]
    if not (mine["rung"].map(ladder.kind_of) == ladder.BUILT).any():
        return None
    eff = effective_for_ladder(mine, lad, runs=list(runs), n_boot=n_boot)
    eff = eff[eff["domain"] == "all"]
    if eff.empty:
        return None
    return pd.Series([f"{e} [{lo}, {hi}]" for e, lo, hi in zip(eff["effective"], eff["ci_low"], eff["ci_high"])],
                     index=eff["run"].to_numpy())


def twin_label(run: str) -> str:
    """The Overview row / curve name of ``run`` on the benign twin."""
    return f"{run}{TWIN_SUFFIX}"


def with_twin_rows(pq: pd.DataFrame, run_names: Sequence[str], kind: str = ladder.BUILT
                   ) -> tuple[pd.DataFrame, list[str], dict[str, str]]:
    """The per-query rows of the view's ladder (``kind``: built, else official) plus, for each run with twin
    results, its twin rows relabelled as run ``"<run> · benign"`` on the built rung names (so the heatmap and curves
    place them in the same columns: the twin beside its ladder, never its continuation).

    Returns (rows, row names in display order: each run followed by its twin, twin label → run).
    """
    kinds = pq["rung"].map(ladder.kind_of) if len(pq) else pd.Series([], dtype=object)
    built = pq[(kinds == kind).to_numpy()]
    benign = pq[(kinds == ladder.BENIGN).to_numpy() & pq["run"].isin(list(run_names)).to_numpy()]
    if kind != ladder.BUILT:  # the twin is the built ladder's companion
        benign = benign.iloc[0:0]
    twins = {twin_label(r): r for r in run_names if (benign["run"] == r).any()}
    if len(benign):
        plain = benign["rung"].map(ladder.plain_name)
        benign = benign.assign(run=benign["run"].map(twin_label), rung=plain, scale=plain.map(scale_of))
    names = [n for r in run_names for n in ([r, twin_label(r)] if twin_label(r) in twins else [r])]
    return pd.concat([built, benign], ignore_index=True), names, twins


def effective_for_ladder(pq: pd.DataFrame, lad: ladder.Ladder, runs: Sequence[str] | None = None,
                         fraction: float = EFFECTIVE_FRACTION, by_domain: bool = False, n_boot: int = 1000
                         ) -> pd.DataFrame:
    """:func:`effective_scale` on the scales of the built ladder ``lad`` (what the report and Overview show)."""
    scales = list(dict.fromkeys(scale_of(r.name) for r in lad.rungs if r.ladder == ladder.BUILT))
    return effective_scale(pq, scales, runs=runs, fraction=fraction, by_domain=by_domain, n_boot=n_boot)


def overview(pq: pd.DataFrame, lad: ladder.Ladder | None, metric: str, x: str, run_names: Sequence[str],
             twin: bool = True) -> dict:
    """The Overview's inputs with the benign twin beside each run: aggregate, cell states, columns, row names,
    twins (row → run), the effective scale per run (SR@10) and its threshold line per run for the curves."""
    from emb_s_core.analysis import views

    # the ladder the view is about (built, else official: views.kind_in_view); the twin its companion rows
    kind = views.kind_in_view(r.ladder for r in (lad.rungs if lad is not None else [])) or ladder.BUILT
    if twin:
        rows, names, twins = with_twin_rows(pq, run_names, kind)
    else:  # the twin left out: neither its rows nor its rungs
        rows, names, twins = (pq[(pq["rung"].map(ladder.kind_of) == kind).to_numpy()] if len(pq) else pq,
                              list(run_names), {})
    shown = lad  # one ladder's rungs as columns, in ladder order; the twin is drawn as rows beside them
    if lad is not None:
        shown = ladder.Ladder([r for r in lad.rungs if r.ladder == kind], lad.kept, lad.options)
    agg, states, cols = views.overview(rows, shown, metric, x, names)
    eff = pd.DataFrame(columns=["run", "effective", "ci_low", "ci_high", "base", "threshold", "n"])
    if lad is not None and len(pq):
        try:
            eff = effective_for_ladder(pq, lad, runs=list(run_names))
        except EmbSError:  # fewer than two scales: no effective scale to show
            pass
    table = views.overview_table(agg, states, metric, x, names)
    note, short = views.common_note(rows, names, x), views.common_note(rows, names, x, short=True)
    if len(eff):
        table = table.merge(eff[["run", "effective"]].rename(columns={"effective": "effective scale (SR@10)"}),
                            on="run", how="left")
    return {"agg": agg, "states": states, "columns": cols, "rows": names, "twins": twins, "effective": eff,
            "table": table, "common_note": note, "common_caption": short}


def gap_or_empty(pq: pd.DataFrame, runs: Sequence[str], metric: str) -> pd.DataFrame:
    """:func:`gap` for one metric, or an empty frame when no run has twin results (the page then says so)."""
    try:
        return gap(pq, runs=runs, metric_names=[metric], n_resamples=2000, n_boot=1000)
    except EmbSError:
        return pd.DataFrame(columns=GAP_COLUMNS)


#: what every gap table carries beside the test (issue 31 §4): the twin rung's fill and whether it is short, whether
#: the run is one of the twin's references (its gap then partly by construction), and the references themselves
GAP_CONTEXT_COLUMNS = ["twin fill", "twin short", "own reference", "twin references"]
SHORT = "short"
BY_CONSTRUCTION = "yes: gap partly by construction"


def twin_references(ws) -> tuple[list[str], int] | None:
    """(the reference retrievers, top-N) the stored benign twin was built with (its setting); None without a twin."""
    if not ladder.exists(ws, ladder.BENIGN):
        return None
    settings = ws.settings.get(ladder.setting_key(ladder.BENIGN), {})
    return list(settings.get("references") or []), int(settings.get("top_n") or 0)


def references_label(refs: tuple[list[str], int] | None) -> str:
    """``bm25 (top-20)``: the references as a gap table's column shows them ("" without a twin)."""
    if refs is None:
        return ""
    names, top_n = refs
    return f"{', '.join(names) or 'unknown (built before references were stored)'} (top-{top_n})"


def references_note(ws) -> str | None:
    """One line saying which references defined "near" for the twin every gap is measured on, how they were chosen
    and why a reference retriever's own gap is partly by construction (None without a twin)."""
    from emb_s_core import twin

    refs = twin_references(ws)
    if refs is None:
        return None
    return (f"benign twin references: {references_label(refs)}: each query's top-{refs[1]} documents under them "
            f"(and its hard negatives) were left out of its twin pools. Chosen once when the twin was built (default: "
            f"{', '.join(twin.DEFAULT_REFERENCES)}; `emb-s ladder build --control benign --reference SPECS` sets them "
            "and marks twin results stale); every run shares this twin. A reference retriever's own gap is partly "
            "by construction: its own top documents were removed from every pool, which can only help it "
            f"(rows marked '{BY_CONSTRUCTION}').")


def _reference_runs(ws, references: list[str]) -> set[str]:
    """The runs whose retriever (or a part of a hybrid) is one of ``references``."""
    import json

    from emb_s_core import runs

    wanted = set(references)

    def specs(cfg: dict) -> set[str]:
        out = {str(cfg.get("spec", ""))}
        for part in cfg.get("parts", []) or []:
            out |= specs(part)
        return out

    listed = runs.list_runs(ws)
    out = set()
    for name, cfg in zip(listed["run"], listed["config"]):
        cfg = json.loads(cfg)
        if ({str(cfg.get("spec", ""))} | specs(cfg.get("retriever", {}) or {})) & wanted:
            out.add(name)
    return out


def with_gap_context(ws, gaps: pd.DataFrame, lad: ladder.Ladder | None = None) -> pd.DataFrame:
    """``gaps`` (from :func:`gap`) with :data:`GAP_CONTEXT_COLUMNS`: the twin rung's fill (smallest query's pool
    tokens ÷ the built rung's) and "short" where it is under the twin's tolerance (the gap there mixes size with
    hardness), "yes: gap partly by construction" for a run that is one of the twin's references, and the references.
    """
    from emb_s_core import twin

    out = gaps.copy()
    refs = twin_references(ws)
    if lad is None and refs is not None:
        lad = ladder.load(ws, allow_stale=True, kind=ladder.BENIGN)
    fill = {r.name: r.composition.get("fill") for r in (lad.rungs if lad is not None else [])
            if r.ladder == ladder.BENIGN}
    twin_rung = out["rung"].map(lambda r: ladder.qualified(ladder.BENIGN, r)) if len(out) else out["rung"]
    out["twin fill"] = [fill.get(t) for t in twin_rung]
    out["twin short"] = [SHORT if f is not None and f < 1 - twin.FILL_TOLERANCE else "" for f in out["twin fill"]]
    own = _reference_runs(ws, refs[0]) if refs is not None else set()
    out["own reference"] = [BY_CONSTRUCTION if r in own else "" for r in out["run"]]
    out["twin references"] = references_label(refs)
    return out


TWIN_FILL_COLUMNS = ["rung", "pools", "built tokens", "fill", "fill mean", "residual near misses", "note"]


def twin_fill(lad: ladder.Ladder | None) -> pd.DataFrame:
    """Per benign-twin rung: its pools (``shared``: one per rung; ``per-query``: the built rung minus each query's
    own near misses, refilled), its fill (the smallest query's pool tokens ÷ the built rung's; and the mean) and the
    residual count of the queries' own near misses in their pools (0 by construction, shown so it can be checked;
    blank for a twin built before it was counted)."""
    rows = []
    for r in (lad.rungs if lad is not None else []):
        if r.ladder != ladder.BENIGN:
            continue
        c = r.composition
        rows.append({"rung": r.name, "pools": c.get("pools", "shared (not audited per query)"),
                     "built tokens": c.get("built_tokens"), "fill": c.get("fill"), "fill mean": c.get("fill_mean"),
                     "residual near misses": c.get("near_present") if "pools" in c else None,
                     "note": c.get("note", "")})
    return pd.DataFrame(rows, columns=TWIN_FILL_COLUMNS)


def without_stale_twins(pq: pd.DataFrame, stale: dict[str, list[str]]) -> pd.DataFrame:
    """``pq`` without the twin rows of runs whose twin results were made on another twin (it was rebuilt since):
    their built rows stay; ``eval --ladder benign`` redoes the twin rows."""
    if not stale or pq.empty:
        return pq
    drop = pq["run"].isin(list(stale)) & (pq["rung"].map(ladder.kind_of) == ladder.BENIGN)
    return pq[~drop.to_numpy()]


def stale_note(stale: dict[str, list[str]]) -> str | None:
    """One line naming the runs whose twin results are stale and what redoes them (None when none is)."""
    if not stale:
        return None
    names = ", ".join(sorted(stale))
    return (f"twin results of {names} are stale (the benign twin was rebuilt since) and left out; their built "
            f"results stand: `emb-s eval --ladder benign -r SPEC --name RUN` redoes only the twin")


def report(ws, runs: Sequence[str] | None = None, fraction: float = EFFECTIVE_FRACTION, by_domain: bool = False,
           n_resamples: int = 10000, n_boot: int = 1000, seed: int = 0
           ) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """What ``emb-s report --illusion`` prints: (the illusion gap table with :func:`with_gap_context`, the
    effective-scale table, notes: the metrics the gap table leaves out, the queries left out so runs compare the
    same ones, the INCOMPLETE runs) of ``ws``; stale twin results (:func:`stale_note`) are left out."""
    from emb_s_core.analysis import run_state, views
    from emb_s_core.evaluate import stale_twin_runs

    pq = without_stale_twins(views.per_query(ws, runs), stale_twin_runs(ws))
    if pq.empty:
        raise EmbSError("no results in the workspace", where=str(ws.path),
                        fix="evaluate a retriever first (`emb-s eval -r bm25 --ladder both`).")
    gaps = with_gap_context(ws, gap(pq, runs=runs, n_resamples=n_resamples, n_boot=n_boot, seed=seed))
    eff = effective_for_ladder(pq, ladder.load(ws, allow_stale=True), runs=runs, fraction=fraction,
                               by_domain=by_domain, n_boot=n_boot)
    chosen = list(runs) if runs is not None else list(dict.fromkeys(pq["run"]))
    notes = [*undefined_metrics(pq, GAP_METRICS).values(), gap_note(pq, chosen),
             *run_state.run_notes(run_state.for_workspace(ws), chosen)]
    return gaps, eff, [n for n in notes if n]
