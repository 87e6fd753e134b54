"""A live "what if" for meetings: re-rank a bank query under edited text and show, for every retriever the workspace
can answer live (BM25, and every retriever whose document vectors are cached), where each gold and each hard
negative of that query lands on every rung of its ladder, beside the ranks its stored runs recorded.

Why here: the drill-down and Compare pages draw the same frame, the bench measures it, and pages stay thin
(DESIGN.md §2). The edited text is only ever a query argument: nothing here writes to the workspace.

Ranks follow the retrievers' own order (score rounded to 6 decimals, ties to the smaller doc id, as
``retrievers.base.topk``). Retrievers whose scores do not depend on the pool (they declare ``EMBEDDINGS``: a dense
model over cached vectors) get the exact rank in the whole rung from one scoring pass; the others (BM25, fusions,
rerankers) rank each rung to a depth (the stored run's K, else :data:`DEPTH`), and a document below it is
"not in list", exactly as in the stored runs.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Mapping

import numpy as np
import pandas as pd

from emb_s_core.analysis.drilldown import GOLD, HARD_NEGATIVE, NOT_IN_LIST, NOT_IN_POOL
from emb_s_core.errors import EmbSError
from emb_s_core.retrievers.base import EMBEDDINGS, Retriever
from emb_s_core.schema import OK

DEPTH = 100  # ranking depth of a what-if for retrievers without a stored run (evaluate.DEFAULT_K)
BASELINE = "bm25"  # always offered: it prepares from the bank in seconds, no cache needed
#: what a cell of :func:`table` says; the numbers are 1-based ranks
LEGEND = (f"Each cell: the document's rank under the edited text, then (after \"was\") the rank its stored run "
          f"recorded for the bank's text when they differ. \"{NOT_IN_LIST}\": ranked below the list depth. "
          f"\"{NOT_IN_POOL}\": not a member of this rung. \"no run\": no stored run of this retriever.")
_ABSENT, _BELOW = -1, 0  # codes in rank arrays: not in the pool / below the ranking depth


@dataclass
class WhatIf:
    """The long frame (one row per retriever × rung × document), the retrievers left out with the reason, and the
    seconds each retriever took (embedding the edited text included)."""

    frame: pd.DataFrame
    skipped: dict[str, str] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)


def specs_of(run_table: pd.DataFrame) -> dict[str, list[str]]:
    """Retriever spec → the names of its stored retriever runs (BM25 first, listed even without a run)."""
    out: dict[str, list[str]] = {BASELINE: []}
    if run_table is not None and len(run_table):
        rows = run_table[run_table["kind"] == "retriever"].dropna(subset=["system"])
        for spec, run in zip(rows["system"], rows["run"]):
            out.setdefault(str(spec), []).append(str(run))
    return out


def doc_ranks(retriever: Retriever, text: str, pools: Mapping[str, np.ndarray], wanted: list[int],
              depth: int) -> dict[str, np.ndarray]:
    """Rank of each ``wanted`` document in each pool under ``text``: 1-based, 0 = below ``depth`` (only for
    retrievers ranked to a depth), -1 = not in the pool."""
    want = np.asarray(wanted, dtype=np.int64)
    members = {name: np.isin(want, ids) for name, ids in pools.items()}
    out: dict[str, np.ndarray] = {}
    if retriever.can(EMBEDDINGS):  # pool-independent scores: one pass, exact rank in every rung
        score = np.round(np.asarray(retriever.score([text])[0], np.float64), 6)
        ids = retriever.doc_ids
        inside = np.isin(want, ids)
        at = retriever.positions(want[inside])
        # ahead[i, j]: document j is ranked above wanted document i (higher score, ties to the smaller id); a rank is
        # then a count over the rung's members, with no sort of the bank (20 ms at 37K documents, per retriever)
        ahead = (score[None, :] > score[at][:, None]) | ((score[None, :] == score[at][:, None])
                                                          & (ids[None, :] < ids[at][:, None]))
        for name, pool in pools.items():
            rank = np.full(len(want), _ABSENT, np.int64)
            rank[inside] = ahead[:, retriever.positions(pool)].sum(axis=1) + 1
            out[name] = np.where(members[name], rank, _ABSENT)
        return out
    lists = retriever.rank([text], {n: np.asarray(p, np.int64) for n, p in pools.items()}, depth)
    for name, ranking in lists.items():
        hit = ranking.row(0)[0][None, :] == want[:, None]  # (wanted, depth)
        rank = np.where(hit.any(axis=1), hit.argmax(axis=1) + 1, _BELOW)
        out[name] = np.where(members[name], rank, _ABSENT).astype(np.int64)
    return out


def stored_ranks(results: pd.DataFrame, wanted: list[int]) -> dict[tuple[str, str], np.ndarray]:
    """(run, rung) → ranks of ``wanted`` in that stored list of one query (``results`` holds that query's rows), in
    the codes of :func:`doc_ranks` (0 = not in the stored list; pool membership is the caller's); cells without an
    OK ranking are absent. One pass over the rows: this runs on every keystroke."""
    out = {}
    for run, rung, status, ids in zip(results["run"], results["rung"], results["status"], results["doc_ids"]):
        if status == OK:
            pos = {int(d): i + 1 for i, d in enumerate(ids if ids is not None else [])}
            out[(run, rung)] = np.array([pos.get(int(d), _BELOW) for d in wanted], np.int64)
    return out


def what_if(prepare, text: str, gold: list[int], negatives: list[int], pools: Mapping[str, np.ndarray],
            specs: Mapping[str, list[str]], results: pd.DataFrame) -> WhatIf:
    """Re-rank one bank query under ``text`` with every retriever in ``specs`` (spec → its stored runs) on every
    rung in ``pools`` (rung → doc ids, the query's rungs in ladder order); ``results`` are the query's stored rows.

    ``prepare(spec)`` returns a prepared retriever (``evaluate.prepared``: cached per process, it refuses a dense
    model whose vectors are not cached); an EmbSError there leaves that retriever out with its reason.
    Columns: retriever, run, rung, role, doc_id, rank_now, rank_stored (codes as :func:`doc_ranks`; -2 = no stored
    ranking)."""
    if not text or not text.strip():
        raise EmbSError("the edited query is empty", fix="type the query text to try.")
    docs = [(int(d), GOLD) for d in gold] + [(int(d), HARD_NEGATIVE) for d in negatives if int(d) not in gold]
    wanted = [d for d, _ in docs]
    rungs = list(pools)
    rows, skipped, seconds = [], {}, {}
    stored = stored_ranks(results, wanted)
    depths: dict[str, int] = {}  # each run's stored list depth (its K): the what-if ranks as deep
    for run, status, ids in zip(results["run"], results["status"], results["doc_ids"]):
        if status == OK and ids is not None:
            depths[run] = max(depths.get(run, 0), len(ids))
    for spec, run_names in specs.items():
        try:
            retriever = prepare(spec)
        except EmbSError as exc:
            skipped[spec] = str(exc)
            continue
        depth = max([depths.get(run, 0) for run in run_names] + [0]) or DEPTH
        t0 = time.perf_counter()
        now = doc_ranks(retriever, text, pools, wanted, depth)
        seconds[spec] = time.perf_counter() - t0
        for run in run_names or [""]:
            for rung in rungs:
                before = stored.get((run, rung))
                for i, (d, role) in enumerate(docs):
                    was = -2 if before is None else _ABSENT if now[rung][i] == _ABSENT else int(before[i])
                    rows.append((spec, run, rung, role, d, int(now[rung][i]), was))
    frame = pd.DataFrame(rows, columns=["retriever", "run", "rung", "role", "doc_id", "rank_now", "rank_stored"])
    return WhatIf(frame, skipped, seconds)


def _cell(now: int, was: int) -> str:
    def word(r: int) -> str:
        return NOT_IN_POOL if r == _ABSENT else NOT_IN_LIST if r == _BELOW else str(r)

    if was == -2:
        return f"{word(now)} · no run"
    return word(now) if now == was else f"{word(now)} · was {word(was)}"


def table(result: WhatIf) -> pd.DataFrame:
    """The page's table: one row per (retriever, run, rung) in the frame's order, one text column per document
    ("gold 12", "hard negative 40") saying its rank now and, when it moved, the stored one; ``moved`` counts the
    documents whose rank changed. :data:`LEGEND` explains the cells."""
    f = result.frame
    if f.empty:
        return pd.DataFrame(columns=["retriever", "run", "rung", "moved"])
    labels = list(dict.fromkeys(f"{role} {d}" for role, d in zip(f["role"], f["doc_id"])))
    n = len(labels)
    now, was = f["rank_now"].to_numpy().reshape(-1, n), f["rank_stored"].to_numpy().reshape(-1, n)
    out = {c: f[c].to_numpy()[::n] for c in ("retriever", "run", "rung")}
    out["moved"] = ((now != was) & (was != -2)).sum(axis=1)
    for j, label in enumerate(labels):
        out[label] = [_cell(a, b) for a, b in zip(now[:, j].tolist(), was[:, j].tolist())]
    return pd.DataFrame(out)
