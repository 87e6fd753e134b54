"""Evaluate a retriever on the ladder: one resumable run, results per (rung, query) in the workspace.

Cost follows the bank, not the number of rungs: the retriever is prepared once over the union of the evaluated rungs
(the ladder is nested, so that is the largest one), each query is scored once, and each rung's top-K is taken by
membership mask (BM25 applies each rung's own statistics to the shared term-frequency matrix). Queries are grouped
by the set of rungs they still need and ranked in batches; every batch is saved in one transaction, so a run killed
at any point resumes on the next call with its finished (rung, qid) pairs kept.
"""
from __future__ import annotations

import threading
from typing import Any, Callable

import numpy as np
import pandas as pd

from emb_s_core import bank, ladder as ladder_mod, runs, retrievers
from emb_s_core.errors import EmbSError
from emb_s_core.store import Workspace

Progress = Callable[[str, float], None]
DEFAULT_K = 100
DEFAULT_BATCH = 64


def default_name(spec: str, k: int = DEFAULT_K, chunk_size: int | None = None) -> str:
    name = spec
    if chunk_size:
        name += f"@chunk{chunk_size}"
    if k != DEFAULT_K:
        name += f"@k{k}"
    return name


def _checked_retriever(spec: str, options: dict[str, Any]) -> retrievers.Retriever:
    r = retrievers.get(spec, **options)
    r.check()  # load models now: a missing one fails before anything is written
    return r


LADDER_CHOICES = (*ladder_mod.LADDER_KINDS, "both")


def ladder_kinds(choice: str = ladder_mod.BUILT) -> tuple[str, ...]:
    """The ladder kinds ``--ladder CHOICE`` evaluates: one kind, or ``both`` = the built (adversarial) ladder and its
    benign twin, in one call so the twin reuses the prepared retriever (term statistics, cached vectors)."""
    if choice == "both":
        return (ladder_mod.BUILT, ladder_mod.BENIGN)
    if choice in ladder_mod.LADDER_KINDS:
        return (choice,)
    raise EmbSError(f"unknown --ladder {choice!r}", fix=f"use one of: {', '.join(LADDER_CHOICES)}.")


def _ladder_identity(existing: dict | None, name: str, hashes: dict[str, str]) -> dict[str, str]:
    """The run's ladder identity after this call: the rungs it already had plus those of newly evaluated kinds.

    A kind the run was already evaluated on must have exactly the same rungs (else the ladder was rebuilt since).
    """
    if existing is None:
        return hashes
    old = existing["config"].get("ladder", {})
    for kind in {ladder_mod.kind_of(n) for n in hashes}:
        mine = {n: h for n, h in hashes.items() if ladder_mod.kind_of(n) == kind}
        before = {n: h for n, h in old.items() if ladder_mod.kind_of(n) == kind}
        if before and before != mine:
            what = "ladder" if kind == ladder_mod.BUILT else f"{kind} ladder"
            raise EmbSError(f"run {name!r} was made on another {what} (it was rebuilt since; membership "
                            "hashes differ)",
                            fix=f"pass a new --name, or delete the old run first (`emb-s runs delete {name}`).")
    return {**old, **hashes}


def evaluate(ws: Workspace, spec: str, name: str | None = None, k: int = DEFAULT_K, rungs: list[str] | None = None,
             progress: Progress | None = None, batch_size: int = DEFAULT_BATCH, ladder: str = ladder_mod.BUILT,
             **options: Any) -> str:
    """Run retriever ``spec`` on the rungs (all, or ``rungs``) of the ladder kinds ``ladder`` names (see
    ``ladder_kinds``); returns the run name.

    Options: ``chunk_size`` (dense, tokens of the model's tokenizer; default the model's max length),
    ``api_base`` (dense:litellm). The run's identity is (spec, retriever config, k, ladder membership hashes);
    rerunning with the same name resumes, with another identity it is an error. Evaluating a run on another kind
    later (``--ladder benign`` after ``built``) adds that kind's rungs to the same run.
    """
    retriever = retrievers.get(spec, **options)  # an unknown spec fails first, before any loading
    lad = ladder_mod.load(ws, kind=ladder_kinds(ladder))
    selected = [lad.rung(r) for r in (rungs or lad.names)]  # unknown names raise EmbSError
    if k < 1:
        raise EmbSError(f"k must be at least 1 (got {k})", fix="pass --k 1 or more.")
    small = sorted((r for r in selected if r.n_documents < k), key=lambda r: r.n_documents)
    if small:
        raise EmbSError(f"k={k} is larger than rung {small[0].name}'s {small[0].n_documents} documents",
                        fix=f"pass --k {min(r.n_documents for r in small)} or less, or leave out the smallest rungs "
                            "with --rungs.")
    retriever.check()  # load models now: a missing one fails before anything is written
    name = name or default_name(spec, k, options.get("chunk_size"))
    hashes = {r.name: r.membership_hash for r in lad.rungs}
    with ws.writer():  # one writer per workspace: a second eval of this run waits here, then resumes it
        return _run(ws, retriever, name, spec, hashes, ladder_kinds(ladder), selected, k, progress, batch_size)


def _run(ws: Workspace, retriever: retrievers.Retriever, name: str, spec: str, hashes: dict[str, str],
         kinds: tuple[str, ...], selected: list, k: int, progress: Progress | None, batch_size: int) -> str:
    """The run itself, under the writer lock: what is finished is read after the lock is held."""
    if {r.name: r.membership_hash for r in ladder_mod.load(ws, kind=kinds).rungs} != hashes:
        raise EmbSError("the ladder was rebuilt while this eval waited for the writer lock",
                        fix="run the eval again: it will use the new ladder.")
    existing = runs.get_run(ws, name)
    config = {"spec": spec, "retriever": retriever.config(), "k": k,
              "ladder": _ladder_identity(existing, name, hashes)}
    if existing is not None and existing["config"].get("ladder") != config["ladder"] and \
            {**existing["config"], "ladder": config["ladder"]} == config:
        runs.update_config(ws, name, config)  # the same run, now also on another ladder kind
    runs.create_run(ws, name, "retriever", spec, config)

    done = runs.finished(ws, name)
    need: dict[str, tuple[str, ...]] = {}
    for r in selected:
        for qid in r.qids:
            if (r.name, qid) not in done:
                need[qid] = need.get(qid, ()) + (r.name,)
    total = sum(len(v) for v in need.values())
    if not total:
        if progress:
            progress("ranking", 1.0)
        return name
    retriever.prepare(ws, np.unique(np.concatenate([r.doc_ids for r in selected])), progress)
    texts = bank.queries(ws).set_index("qid")["text"]
    members = {r.name: r.doc_ids for r in selected}
    groups: dict[tuple[str, ...], list[str]] = {}
    for qid in sorted(need):
        groups.setdefault(need[qid], []).append(qid)
    finished = 0
    for rung_names, qids in sorted(groups.items()):
        pools = {n: members[n] for n in rung_names}
        for start in range(0, len(qids), batch_size):
            batch = qids[start: start + batch_size]
            ranked = retriever.rank(texts.loc[batch].tolist(), pools, k)
            rows = [{"rung": rn, "qid": qid, "doc_ids": rk.ids[i], "scores": rk.scores[i]}
                    for rn, rk in ranked.items() for i, qid in enumerate(batch)]
            runs.save_results(ws, name, rows)
            finished += len(rows)
            if progress:
                progress("ranking", finished / total)
    return name


# ------------------------------------------------------------------------------------------- live queries
_LIVE: dict[tuple, Any] = {}
_LIVE_LOCK = threading.Lock()


def prepared(ws: Workspace, spec: str, **options: Any) -> retrievers.Retriever:
    """A retriever prepared over the whole bank, cached per (workspace, bank version, spec, options) in-process."""
    key = (str(ws.path), ws.table_versions().get("documents"), spec, tuple(sorted(options.items())))
    with _LIVE_LOCK:
        if key not in _LIVE:
            r = _checked_retriever(spec, options)
            r.prepare(ws, None)
            _LIVE[key] = r
        return _LIVE[key]


_LADDERS: dict[tuple, Any] = {}


def _ladder(ws: Workspace):
    key = (str(ws.path), ws.table_versions().get("rung_members"))
    if key not in _LADDERS:
        _LADDERS[key] = ladder_mod.load(ws)
    return _LADDERS[key]


def live_query(ws: Workspace, spec: str, text: str, rung: str, k: int = 10, **options: Any) -> pd.DataFrame:
    """Ranking of a typed question on one rung: DataFrame(rank, doc_id, score). The first call prepares (embeds or
    indexes) the bank; later calls reuse it, so a query takes milliseconds."""
    if not text or not text.strip():
        raise EmbSError("the question is empty", fix="type a question.")
    r = _ladder(ws).rung(rung)
    ranking = prepared(ws, spec, **options).rank([text], {rung: r.doc_ids}, k)[rung]
    return pd.DataFrame({"rank": np.arange(1, ranking.ids.shape[1] + 1), "doc_id": ranking.ids[0],
                         "score": ranking.scores[0].astype(float)})
