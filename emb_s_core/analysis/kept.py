"""Which queries a ladder evaluates, and what to do about the ones it dropped (``emb-s ladder build``'s summary and
the Ladder page).

Why it matters: a query whose domain's gold documents do not all fit the base rung is dropped from EVERY rung, full
included, so a one-domain bank built with the default 64K base silently loses queries and its "512K" rung is just
its 64K pool. The summary says how many, why, and the smallest base rung that keeps every query.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from emb_s_core import bank, tokens
from emb_s_core.ladder import BUILT, OFFICIAL, Ladder
from emb_s_core.store import Workspace

COLUMNS = ["domain", "queries", "kept", "dropped", "gold_tokens", "base_needed"]


def base_needed(gold_tokens: int, reserve: int, base: int) -> int:
    """The smallest base rung (``base`` doubled as often as needed) whose budget (size − reserve) holds
    ``gold_tokens``."""
    size = max(base, 1)
    while size - reserve < gold_tokens:
        size *= 2
    return size


def table(ws: Workspace, lad: Ladder) -> pd.DataFrame:
    """Per domain of the built ladder: queries, kept, dropped, the tokens of all its gold documents, and the base
    rung that would keep every query (``base_needed``, e.g. ``512K``)."""
    kept = lad.kept
    if "ladder" in kept:  # rows without a kind (a ladder just built, not yet read back) are the built ladder's
        kept = kept[kept["ladder"].isna() | (kept["ladder"] == BUILT)]
    if kept.empty:
        return pd.DataFrame(columns=COLUMNS)
    opts = lad.options
    tok = bank.token_counts(ws, opts.get("encoding"))
    qs = bank.queries(ws).set_index("qid")["ref_ids"]
    base, reserve = tokens.parse_size(opts.get("base", "64K")), int(opts.get("reserve", 0))
    rows = []
    # one lookup per query by mapping, not a .loc per query (that was seconds a render at 10M tokens)
    kept = kept.assign(_refs=kept["qid"].map(qs))
    for domain, part in kept.groupby("domain", sort=True):
        refs = [r for r in part["_refs"] if r is not None and not isinstance(r, float)]
        gold = np.unique(np.concatenate([np.asarray(r, np.int64) for r in refs])) if refs else np.empty(0, np.int64)
        gold_tokens = int(tok.reindex(gold).fillna(0).sum())
        n_kept = int(part["kept"].astype(bool).sum())
        rows.append({"domain": domain, "queries": len(part), "kept": n_kept, "dropped": len(part) - n_kept,
                     "gold_tokens": gold_tokens,
                     "base_needed": tokens.format_size(base_needed(gold_tokens, reserve, base))})
    return pd.DataFrame(rows, columns=COLUMNS)


def dropped_note(summary: pd.DataFrame, base: str) -> str | None:
    """One paragraph for the CLI and the page: how many queries were dropped, why, and the two ways to keep them;
    None when none was dropped."""
    dropped = int(summary["dropped"].sum()) if len(summary) else 0
    if not dropped:
        return None
    total = int(summary["queries"].sum())
    need = max(summary.loc[summary["dropped"] > 0, "base_needed"], key=tokens.parse_size)
    domains = ", ".join(summary.loc[summary["dropped"] > 0, "domain"])
    return (f"{dropped:,} of {total:,} queries are dropped from every rung (full included): the gold documents of "
            f"domain(s) {domains} do not all fit the {base} base rung. To keep them, label the bank into broad "
            "domains so each domain's gold fits its own base rung (`emb-s domains label --workspace DIR`), or "
            f"rebuild with a larger base rung (`emb-s ladder build --workspace DIR --base {need}`).")


def n_evaluated(lad: Ladder | None) -> int | None:
    """How many queries the ladder evaluates (its kept ones): the built ladder's, else the official one's (a release
    evaluated on its published scales only); None without a ladder."""
    if lad is None:
        return None
    kept = lad.kept
    if "ladder" in kept:
        kinds = kept["ladder"].fillna(BUILT)
        kept = next((kept[kinds == kind] for kind in (BUILT, OFFICIAL) if (kinds == kind).any()), kept[kinds == BUILT])
    return int(kept["kept"].astype(bool).sum())
