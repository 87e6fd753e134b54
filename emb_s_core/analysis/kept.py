"""Which queries a ladder evaluates, and what to do about the ones it dropped (``emb-s ladder build``'s summary and
the Ladder page).

Why it matters: a query whose domain's gold documents do not all fit the base rung is dropped from EVERY rung, full
included, so a one-domain bank built with the default 64K base silently loses queries and its "512K" rung is just
its 64K pool. The summary says how many, why, and the smallest base rung that keeps every query.
"""
from __future__ import annotations

import shlex
from pathlib import Path

import numpy as np
import pandas as pd

from emb_s_core import bank, ladder, tokens
from emb_s_core.analysis import views
from emb_s_core.ladder import BUILT, Ladder
from emb_s_core.store import Workspace

COLUMNS = ["domain", "queries", "kept", "dropped", "gold_tokens", "base_needed", "near_miss_tokens",
           "base_full_coverage"]


def base_needed(gold_tokens: int, reserve: int, base: int) -> int:
    """The smallest base rung (``base`` doubled as often as needed) whose budget (size − reserve) holds
    ``gold_tokens``."""
    size = max(base, 1)
    while size - reserve < gold_tokens:
        size *= 2
    return size


def table(ws: Workspace, lad: Ladder) -> pd.DataFrame:
    """Per domain of the built ladder: queries, kept, dropped, the tokens of all its gold documents and of their hard
    negatives (as a model is shown them: ``ladder.serialized_tokens``), the base rung that would keep every query's
    gold (``base_needed``) and the one that would keep every query with all its hard negatives
    (``base_full_coverage``: the base whose pools reach coverage 1.0 with every query kept)."""
    kept = lad.kept
    if "ladder" in kept:  # rows without a kind (a ladder just built, not yet read back) are the built ladder's
        kept = kept[kept["ladder"].isna() | (kept["ladder"] == BUILT)]
    if kept.empty:
        return pd.DataFrame(columns=COLUMNS)
    opts = lad.options
    qs = bank.queries(ws).set_index("qid")
    listed = _ids(pd.concat([qs["ref_ids"], qs["hard_negative_ids"]]))  # headers counted for these alone
    tok = ladder.serialized_tokens(ws, opts.get("encoding"), doc_ids=listed)
    base, reserve = tokens.parse_size(opts.get("base", "64K")), int(opts.get("reserve", 0))
    rows = []
    for domain, part in kept.groupby("domain", sort=True):
        present = [q for q in part["qid"] if q in qs.index]
        gold = _ids(qs.loc[present, "ref_ids"])
        near = np.setdiff1d(_ids(qs.loc[present, "hard_negative_ids"]), gold)
        gold_tokens = int(tok.reindex(gold).fillna(0).sum())
        near_tokens = int(tok.reindex(near).fillna(0).sum())
        n_kept = int(part["kept"].astype(bool).sum())
        rows.append({"domain": domain, "queries": len(part), "kept": n_kept, "dropped": len(part) - n_kept,
                     "gold_tokens": gold_tokens,
                     "base_needed": tokens.format_size(base_needed(gold_tokens, reserve, base)),
                     "near_miss_tokens": near_tokens,
                     "base_full_coverage": tokens.format_size(base_needed(gold_tokens + near_tokens, reserve, base))})
    return pd.DataFrame(rows, columns=COLUMNS)


def _ids(lists: pd.Series) -> np.ndarray:
    return np.unique(np.concatenate([np.asarray(r, np.int64) for r in lists] or [np.empty(0, np.int64)]))


def dropped_note(summary: pd.DataFrame, base: str, workspace: str | Path = "DIR") -> str | None:
    """One paragraph for the CLI and the page: how many queries were dropped, why, and the ways to keep them, with
    the workspace's real path in the commands; None when none was dropped."""
    dropped = int(summary["dropped"].sum()) if len(summary) else 0
    if not dropped:
        return None
    total = int(summary["queries"].sum())
    lost = summary[summary["dropped"] > 0]
    larger = 2 * tokens.parse_size(base)  # a query was dropped, so the base in use cannot be enough
    full = tokens.format_size(max([larger, *map(tokens.parse_size, lost["base_full_coverage"])]))
    gold_only = tokens.format_size(max(map(tokens.parse_size, lost["base_needed"])))  # may be the base in use
    domains = ", ".join(lost["domain"])
    ws = shlex.quote(str(workspace))
    text = (f"{dropped:,} of {total:,} queries are dropped from every rung (full included): the gold documents and "
            f"hard negatives of domain(s) {domains} do not all fit the {base} base rung. To keep them, label the "
            f"bank into broad domains so each domain's queries fit its own base rung (`emb-s domains label "
            f"--workspace {ws}`), or rebuild with a larger base rung: every query with all its hard negatives needs "
            f"`emb-s ladder build --workspace {ws} --base {full}`")
    if gold_only != full:
        text += (f"; every query's gold alone fits `--base {gold_only}` with `--hn-share 0` (near misses then "
                 "enter with scale)")
    return text + "."


def _view_rows(lad: Ladder) -> pd.DataFrame:
    """The kept-queries rows of the ladder a view is about: the built ladder's, else the official one's."""
    kept = lad.kept
    if "ladder" in kept:
        kinds = kept["ladder"].fillna(BUILT)
        kept = kept[kinds == (views.kind_in_view(kinds) or BUILT)]
    return kept


def n_evaluated(lad: Ladder | None) -> int | None:
    """How many queries the ladder evaluates (its kept ones): the built ladder's, else the official one's (a release
    evaluated on its published scales only); None without a ladder."""
    if lad is None:
        return None
    return int(_view_rows(lad)["kept"].astype(bool).sum())


def evaluated(lad: Ladder | None) -> list[str]:
    """The qids the view's ladder evaluates (kept), in its table's order (by domain): what a query picker offers."""
    if lad is None:
        return []
    rows = _view_rows(lad)
    return rows.loc[rows["kept"].astype(bool), "qid"].astype(str).tolist()


def absent_reason(lad: Ladder | None, qid: str) -> str | None:
    """Why ``qid`` is on no rung of the view's ladder (None when it is on one): the reason its build recorded, or
    that the query is newer than the ladder."""
    if lad is None:
        return "the workspace has no ladder yet (`emb-s ladder build`)"
    rows = _view_rows(lad)
    row = rows[rows["qid"].astype(str) == str(qid)]
    if row.empty:
        return ("the query was not in the bank when the ladder was built: rebuild the ladder "
                "(`emb-s ladder build`) to evaluate it")
    if bool(row["kept"].iloc[0]):
        return None
    why = str(row["reason"].iloc[0] or "").strip()
    base = lad.options.get("base")
    return ("the ladder left it out of every rung" + (f": {why}" if why else "")
            + (f" (base {base}; the Ladder page says how to keep it)" if base else ""))
