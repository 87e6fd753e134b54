"""The inputs of the dashboard's figures, shared with ``emb-s figure`` so both draw the same thing.

Why a module: the Overview page and the CLI must pick the same columns (rungs or pooled scales, in ladder order),
apply the same filters and call the same metrics functions; pages add caching on top, nothing else.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from emb_s_core import bank, ladder, runs
from emb_s_core.errors import EmbSError
from emb_s_core.store import Workspace

METRIC_FAMILIES = ("SR@K", "FR@K", "R@1", "MRR", "nDCG@10", "HN-intrusion")
KS = (1, 5, 10, 20, 50, 100)
SOURCES = ("all", "single", "multi")


def metric_name(family: str, k: int | str) -> str:
    """``SR@K`` + 10 → ``SR@10``; other families have no K."""
    return family.replace("@K", f"@{k}") if family.endswith("@K") else family


def check_metric(metric: str) -> str:
    """Validate a metric name such as SR@10, FR@5, R@1, MRR, nDCG@10, HN-intrusion."""
    fam, _, k = metric.partition("@")
    if metric in ("R@1", "MRR", "nDCG@10", "HN-intrusion") or (fam in ("SR", "FR") and k.isdigit()
                                                                and int(k) in KS):
        return metric
    raise EmbSError(f"unknown metric {metric!r}",
                    fix=f"use SR@K or FR@K with K in {', '.join(map(str, KS))}, or R@1, MRR, nDCG@10, HN-intrusion.")


def metric_k(metric: str) -> int | None:
    return int(metric.split("@")[1]) if metric[:3] in ("SR@", "FR@") else None


def metric_column(metric: str) -> str:
    """The per-query column holding ``metric`` (the contract names hard-negative intrusion ``hn_intrusion``)."""
    return "hn_intrusion" if metric == "HN-intrusion" else metric


def scale_of(rung: str) -> str:
    """``64K/history`` → ``64K``: domain rungs of one size pooled into one scale; shared rungs keep their name."""
    return rung.split("/", 1)[0]


def per_query(ws: Workspace) -> pd.DataFrame:
    """``metrics.per_query`` over every stored result, plus ``scale`` (domain rungs of one size pooled)."""
    from emb_s_core import metrics

    res = runs.load_results(ws)
    if res.empty:
        return pd.DataFrame(columns=["run", "rung", "qid", "status", "scale", "domain", "task_type",
                                     "multi_source"])
    pq = metrics.per_query(res, bank.queries(ws))
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
    """(aggregate, cell states, columns) for the heatmap and curves of ``metric`` over ``run_names``."""
    from emb_s_core import metrics
    from emb_s_core.figures import heatmap

    cols = columns(lad, pq, x)
    pq = pq[pq["run"].isin(run_names)] if len(pq) else pq  # only the shown runs are aggregated
    if pq.empty:
        agg = pd.DataFrame(columns=["run", x, "metric", "value", "n", "ci_low", "ci_high"])
    else:
        agg = metrics.aggregate(pq, by=("run", x), metrics=[metric])
    return agg, heatmap.cell_states(pq, run_names, cols, x=x), cols


def figure(ws: Workspace, kind: str, metric: str = "SR@10", *, run_names: list[str] | None = None, x: str = "scale",
           domains=(), tasks=(), sources: str = "all"):
    """The Overview heatmap / curves, or the Ladder page's source-mixing figure, for ``ws`` (CLI entry point)."""
    from emb_s_core.figures import curves, heatmap, mixing, style

    lad = ladder.load(ws)
    all_runs = runs.list_runs(ws)["run"].tolist()
    if not all_runs:
        raise EmbSError(f"the workspace {ws.path} has no runs", fix="evaluate a retriever first (`emb-s evaluate`).")
    chosen = run_names or all_runs
    unknown = [r for r in chosen if r not in all_runs]
    if unknown:
        raise EmbSError(f"no run named {', '.join(unknown)}", fix=f"use some of: {', '.join(all_runs)}.")
    name = Path(ws.path).name
    if kind == "mixing":
        pair = list(dict.fromkeys([r.name for r in lad.rungs if r.kind == "shared"][:1] + [lad.rungs[-1].name]))
        docs = bank.documents(ws, ["doc_id", "source"]).set_index("doc_id")["source"]
        dist = mixing.distinct_sources(runs.load_results(ws, runs=chosen[:1], rungs=pair), docs, k=10)
        n = int(dist.groupby("rung").size().max()) if len(dist) else 0
        return mixing.mixing(dist, chosen[0], pair, k=10, caption=style.caption(name, pair, 10, n))
    if kind not in ("heatmap", "curves"):
        raise EmbSError(f"unknown figure {kind!r}", fix="use heatmap, curves or mixing.")
    metric = check_metric(metric)
    pq = filter_rows(per_query(ws), domains, tasks, sources)
    if pq.empty:
        raise EmbSError("no query matches the filters", fix="widen --domain / --task / --sources.")
    agg, states, cols = overview(pq, lad, metric, x, chosen)
    cap = style.caption(name, cols, metric_k(metric), int(pq["qid"].nunique()),
                        extra="filtered" if (domains or tasks or sources != "all") else None)
    build = heatmap.heatmap if kind == "heatmap" else curves.curves
    return build(agg, states, metric, chosen, cols, x=x, caption=cap)
