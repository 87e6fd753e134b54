"""Source mixing (the paper's Figure 4): how many distinct sources a query's top-K draws from, at the shared rung
versus the largest rung.

Why here: the Ladder page and ``emb-s figure mixing`` must pick the same rung pair and count the same way; the
figure only draws the frame this module returns.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from emb_s_core import bank, ladder, runs
from emb_s_core.analysis import views
from emb_s_core.schema import OK
from emb_s_core.store import Workspace

K = 10  # the paper's Figure 4 counts the top-10
COLUMNS = ["run", "rung", "qid", "n_sources"]


def rung_pair(lad: ladder.Ladder) -> list[str]:
    """The first shared rung of the view's ladder (the union of the base pools, "512K"; a one-domain ladder's base
    pool is that union, so its base rung) and the view's largest rung; one name when they are the same rung. Never a
    twin rung (``views.ladder_in_view``): the twin is its companion, not its continuation."""
    view = views.ladder_in_view(lad)
    mine = [r for r in lad.rungs if r.name in set(view.rungs)]
    one_domain = len({r.domain for r in mine if r.domain}) == 1
    shared = [r.name for r in mine if r.kind == "shared"] or ([mine[0].name] if one_domain else [])
    return list(dict.fromkeys(shared[:1] + ([view.largest] if view.largest else [])))


def count_sources(results: pd.DataFrame, doc_source: pd.Series, k: int = K) -> pd.DataFrame:
    """Per (run, rung, qid) with a ranking: ``n_sources`` = distinct ``source`` values among the top-``k`` doc ids.

    ``results`` has the shape of ``runs.load_results``; ``doc_source`` maps doc_id → source. Rows without a ranking
    (status not ok) are left out.
    """
    ok = results[results["status"] == OK][["run", "rung", "qid", "doc_ids"]]
    if ok.empty:
        return pd.DataFrame(columns=COLUMNS)
    top = ok.assign(doc_ids=[np.asarray(d)[:k] for d in ok["doc_ids"]]).explode("doc_ids")
    top = top.dropna(subset=["doc_ids"])
    top["source"] = doc_source.reindex(top["doc_ids"].astype(np.int64).to_numpy()).to_numpy()
    return top.groupby(["run", "rung", "qid"])["source"].nunique().rename("n_sources").reset_index()


def distinct_sources(ws: Workspace, run_names: Sequence[str] | None = None, rungs: Sequence[str] | None = None,
                     k: int = K) -> pd.DataFrame:
    """:func:`count_sources` over the workspace's stored results (all runs and rungs unless named)."""
    res = runs.load_results(ws, runs=list(run_names) if run_names is not None else None,
                            rungs=list(rungs) if rungs is not None else None)
    docs = bank.documents(ws, ["doc_id", "source"]).set_index("doc_id")["source"]
    return count_sources(res, docs, k=k)


def for_run(dist: pd.DataFrame, run: str, pair: Sequence[str]) -> pd.DataFrame:
    """The rows of one run on the rung pair."""
    return dist[(dist["run"] == run) & dist["rung"].isin(list(pair))]


def n_queries(dist: pd.DataFrame) -> int:
    """The caption's n: the most queries any one rung of ``dist`` has."""
    return int(dist.groupby("rung").size().max()) if len(dist) else 0


def summary(dist: pd.DataFrame) -> pd.DataFrame:
    """Per rung: queries (count), mean, median and largest number of distinct sources."""
    if dist.empty:
        return pd.DataFrame(columns=["rung", "queries", "mean", "median", "max"])
    g = dist.groupby("rung", sort=False)["n_sources"]
    return pd.DataFrame({"queries": g.size(), "mean": g.mean(), "median": g.median(),
                         "max": g.max()}).reset_index()
