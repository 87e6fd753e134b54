"""The bank audit table: every stored collision verdict (paper §3.3 Stage III) next to its query, for the Bank
audit page and for export.

Why here: the join of verdicts with the live and the retired queries, and the filters over it, are analysis; the
page only lays the table out.
"""
from __future__ import annotations

from typing import Sequence

import pandas as pd

from emb_s_core import bank, collide
from emb_s_core.schema import DOES_NOT_FIT, ERROR, UNPARSEABLE
from emb_s_core.store import Workspace

VERDICTS = (*collide.LABELS, UNPARSEABLE, ERROR, DOES_NOT_FIT)  # in the order the page offers them
_QUERY_COLUMNS = ["qid", "text", "answer", "domain", "ref_ids"]
SHOWN = ["qid", "query", "domain", "retired", "rank", "doc_id", "similarity", "verdict", "rationale", "model",
         "prompt_version", "embedder"]


def table(ws: Workspace) -> pd.DataFrame:
    """Every stored verdict joined with its query (current, or retired by a Conflict): one row per (labeler, qid,
    candidate), with ``query`` (the text), ``retired``, ``verdict`` (the label, or the status when there is none)
    and ``labeler`` (model · prompt version)."""
    verdicts = collide.verdicts(ws)
    if verdicts.empty:
        return verdicts
    live = bank.queries(ws)[_QUERY_COLUMNS].assign(retired=False)
    gone = collide.retired_queries(ws)[_QUERY_COLUMNS].assign(retired=True)
    qs = pd.concat([live.reset_index(drop=True), gone], ignore_index=True).drop_duplicates("qid", keep="first")
    out = verdicts.merge(qs.rename(columns={"text": "query"}), on="qid", how="left")
    out["verdict"] = out["label"].where(out["label"].notna(), out["status"])
    out["labeler"] = out["model"] + " · " + out["prompt_version"]
    return out


def select(audit: pd.DataFrame, verdicts: Sequence[str] = (), domains: Sequence[str] = (), search: str = ""
           ) -> pd.DataFrame:
    """The rows with one of ``verdicts``, one of ``domains`` (empty = all) and ``search`` in the qid or the query text
    (case-insensitive)."""
    f = audit
    if verdicts:
        f = f[f["verdict"].isin(list(verdicts))]
    if domains:
        f = f[f["domain"].isin(list(domains))]
    needle = (search or "").strip().lower()
    if needle:
        f = f[f["qid"].str.lower().str.contains(needle, regex=False)
              | f["query"].fillna("").str.lower().str.contains(needle, regex=False)]
    return f


def candidates(audit: pd.DataFrame, qid: str) -> tuple[pd.DataFrame, list[int]]:
    """(one query's candidates by rank, its gold ids); no gold ids when the query is in neither table."""
    rows = audit[audit["qid"] == qid].sort_values("rank")
    refs = rows["ref_ids"].iloc[0] if len(rows) else None
    gold = [] if refs is None or isinstance(refs, float) else [int(i) for i in refs]
    return rows, gold


def last_applied(ws: Workspace) -> dict | None:
    """The last collision edit applied to the bank (from version, model, prompt, counts), or None."""
    edits = [e for e in ws.settings.get("bank_edits", []) if e.get("kind") == "collide"]
    return edits[-1] if edits else None
