"""Runs across bank edits: which bank and ladder a stored run was made on, and what of it still applies.

A bank edit (``collide --apply`` retiring a query, an import, ``domains label --apply``) and the ladder rebuild after
it must not make older runs unreadable, nor let a run silently continue on rungs it was not started on:

- **reading**: results and answers of queries the bank no longer holds are left out of every score and counted:
  :func:`left_out` names them per run (with collide's reason when a verdict retired them), and
  :func:`earlier_bank` says which runs were made on an earlier bank version (their recorded ladder differs from
  the stored one, or they hold retired queries). ``report`` and ``diagnose`` print both.
- **resuming**: a run records the membership hashes of the ladder it was started on (``config["ladder"]``);
  :func:`check_resume` refuses to continue it on another ladder, for evaluation, localization and QA alike. Runs
  made before this record existed resume as before (their ladder is unknown).
"""
from __future__ import annotations

from typing import Iterable

import pandas as pd

from emb_s_core.errors import EmbSError
from emb_s_core.store import Workspace

LADDER_KEY = "ladder"
_NAMED = 10  # retired qids named in a note; the rest are counted


def ladder_hashes(lad) -> dict[str, str]:
    """What identifies a ladder for a run: each rung's membership hash (documents and kept queries)."""
    return {r.name: r.membership_hash for r in lad.rungs}


def check_resume(what: str, name: str, old: dict, new: dict, fix: str) -> None:
    """Refuse to resume run ``name`` when its ladder or its configuration differs from what it was started with."""
    old_ladder = old.get(LADDER_KEY)
    if old_ladder is not None and old_ladder != new.get(LADDER_KEY):
        raise EmbSError(f"{what} run {name!r} was made on another ladder (the ladder was rebuilt since; membership "
                        "hashes differ)", fix=fix)
    strip = lambda c: {k: v for k, v in c.items() if k != LADDER_KEY}  # noqa: E731
    if strip(old) != strip(new):
        raise EmbSError(f"{what} run {name!r} already exists with another configuration", fix=fix)


def current_qids(ws: Workspace) -> set[str]:
    if not ws.has_table("queries"):
        return set()
    return set(ws.read("queries", ["qid"])["qid"].to_pylist())


def left_out(ws: Workspace, rows: pd.DataFrame, run_column: str = "run") -> pd.DataFrame:
    """Per run: the queries of ``rows`` (a results or answers frame) that the bank no longer holds.

    Columns: run, qid, n_rows, reason (collide's reason when a verdict retired it, else "not in the bank").
    """
    cols = ["run", "qid", "n_rows", "reason"]
    if rows is None or rows.empty:
        return pd.DataFrame(columns=cols)
    gone = rows[~rows["qid"].isin(current_qids(ws))]
    if gone.empty:
        return pd.DataFrame(columns=cols)
    out = gone.groupby([run_column, "qid"], sort=True).size().rename("n_rows").reset_index()
    out = out.rename(columns={run_column: "run"})
    reasons = _retired_reasons(ws)
    out["reason"] = [reasons.get(q, "not in the bank") for q in out["qid"]]
    return out[cols]


def _retired_reasons(ws: Workspace) -> dict[str, str]:
    from emb_s_core import collide

    retired = collide.retired_queries(ws)
    return {q: f"retired by collide --apply at version {int(v)}: {r}"
            for q, v, r in zip(retired["qid"], retired["retired_at_version"], retired["reason"])}


def earlier_bank(ws: Workspace, configs: dict[str, dict], left: pd.DataFrame | None = None) -> dict[str, str]:
    """Runs (name → stored config) made on an earlier bank version or ladder, with why we know."""
    now = _stored_hashes(ws)
    out: dict[str, str] = {}
    gone = set(left["run"]) if left is not None and len(left) else set()
    for run, config in configs.items():
        recorded = (config or {}).get(LADDER_KEY)
        why = []
        if run in gone:
            why.append("made on an earlier bank version (it holds queries the bank has retired since)")
        # compared rung by rung: storing another ladder kind (official, benign) beside it changes nothing here
        if recorded and now is not None and any(now.get(rung) != h for rung, h in recorded.items()):
            why.append("made on an earlier ladder (rebuilt since it ran)")
        if why:
            out[run] = "; ".join(why)
    return out


def _stored_hashes(ws: Workspace) -> dict[str, str] | None:
    if not ws.has_table("rungs"):
        return None
    rungs = ws.read_pandas("rungs", ["rung", "membership_hash"])
    return dict(zip(rungs["rung"], rungs["membership_hash"]))


def notes(left: pd.DataFrame, earlier: dict[str, str], runs: Iterable[str] | None = None) -> list[str]:
    """One line per affected run: what it was made on, and the retired queries left out of its scores."""
    lines = []
    names = list(dict.fromkeys([*earlier, *left["run"]])) if runs is None else list(runs)
    for run in names:
        mine = left[left["run"] == run]
        if run not in earlier and mine.empty:
            continue
        line = f"run {run!r}: {earlier.get(run, 'made on an earlier bank version')}"
        if len(mine):
            qids = list(mine["qid"])
            named = ", ".join(qids[:_NAMED]) + (f" and {len(qids) - _NAMED} more" if len(qids) > _NAMED else "")
            line += (f"; {len(qids)} retired quer{'y' if len(qids) == 1 else 'ies'} left out of its scores "
                     f"({int(mine['n_rows'].sum())} rows): {named}")
        lines.append(line)
    return lines
