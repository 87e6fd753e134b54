"""Access versus use (DESIGN.md §1) as the Access vs Use page and ``emb-s diagnose`` show it: the captioned
quadrant-share figure and the wide table, built once for both.

Why here: the page and the CLI must draw the same figure with the same title and caption line (bank, rungs, K, n,
judge and thresholds) and print the same table; ``diagnose`` places the queries, this module only shapes its
output.
"""
from __future__ import annotations

from typing import Sequence

import pandas as pd

from emb_s_core import diagnose
from emb_s_core.store import Workspace


def plumbing_checks(ws: Workspace, access_run: str, qa_run: str, judge: str) -> list[str]:
    """One line per part of this view (access run, QA run, judge) made by the offline plumbing-check model
    (``llm.LOCAL_MODEL``, the same test as ``Gateway.is_local``): its quadrants measure nothing, and the page and
    ``emb-s diagnose`` say so beside them. Empty when every part is a real model (or a retriever)."""
    from emb_s_core import llm, qa, runs
    from emb_s_core import judge as judge_mod

    made_by = {}
    listed = runs.list_runs(ws)
    system = listed.loc[listed["run"] == access_run, "system"]
    made_by[f"access run {access_run}"] = str(system.iloc[0]) if len(system) else ""
    qa_row = qa.get_qa_run(ws, qa_run)
    made_by[f"QA run {qa_run}"] = str(qa_row["model"]) if qa_row else ""
    made_by[f"judge {judge}"] = judge.removeprefix("llm:") if judge != judge_mod.REFERENCE else ""
    local = [part for part, model in made_by.items() if model == llm.LOCAL_MODEL]
    if not local:
        return []
    return [f"{' and '.join(local)}: {llm.LOCAL_MODEL} is the {llm.LOCAL_LABEL}. These quadrants show that the "
            "pipeline runs; they say nothing about evidence use."]


def caption_parts(df: pd.DataFrame, judge: str, k: int, access_threshold: float, score_threshold: float) -> dict:
    """What the caption line says about one quadrant frame: its rungs, K, n (classified cells) and the rule."""
    return {"rungs": sorted(df["rung"].unique()) if len(df) else [], "k": k,
            "n": int(df["quadrant"].notna().sum()) if len(df) else 0,
            "extra": f"judge {judge}, SR@{k} ≥ {access_threshold:g}, score ≥ {score_threshold:g}"}


def figure(df: pd.DataFrame, summary: pd.DataFrame, *, bank: str | None, access_run: str, qa_run: str, judge: str,
           k: int, access_threshold: float, score_threshold: float, by: str = "rung"):
    """The quadrant-share figure of ``summary`` (``diagnose.summary`` of ``df`` by ``by``) in the house style, with
    the caption line every exported figure carries."""
    from emb_s_core.figures import access_use, style

    fig = access_use.quadrant_shares(summary, x=by)
    return style.apply(fig, f"Access vs use: {access_run} → {qa_run}",
                       style.caption(bank, **caption_parts(df, judge, k, access_threshold, score_threshold)))


def wide(summary: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    """One row per group: the count of each quadrant side by side, then n_classified and n_excluded."""
    by = list(by)
    if summary.empty:
        return pd.DataFrame(columns=[*by, *diagnose.QUADRANTS, "n_classified", "n_excluded"])
    table = summary.pivot_table(index=by, columns="quadrant", values="n", aggfunc="sum", sort=False).reset_index()
    table.columns.name = None
    extra = summary.drop_duplicates(by)[[*by, "n_classified", "n_excluded"]]
    return table.merge(extra, on=by)
