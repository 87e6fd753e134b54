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
