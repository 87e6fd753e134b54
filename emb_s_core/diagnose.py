"""Access versus use: was the evidence reached, and was it then used? (DESIGN.md §1, the paper's title question.)

For an access system (a retrieval or localization run), a QA run and a judge, each (rung, query) lands in one
quadrant:

=================  ===========================  ==============================
                   answered well (score ≥ t_u)  answered badly (score < t_u)
accessed           ``accessed_good``            ``use_failure``
not accessed       ``unaccessed_good``          ``access_failure``
=================  ===========================  ==============================

with *accessed* ⇔ ``SR@K ≥ t_a`` (``SR@K = |top-K ∩ G| / |G|``; ``t_a = 1`` means the whole gold set was reached)
and *answered well* ⇔ the judge's mean score ≥ ``t_u``. Cells without an access ranking (does not fit, error), or
without an answer or a judgment, are kept with ``quadrant = None`` and a ``reason`` so they are counted, never
silently dropped and never scored zero.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from emb_s_core import bank, judge as judge_mod, metrics, qa, runs
from emb_s_core.errors import EmbSError
from emb_s_core.schema import OK
from emb_s_core.store import Workspace

ACCESSED_GOOD = "accessed_good"
USE_FAILURE = "use_failure"
UNACCESSED_GOOD = "unaccessed_good"
ACCESS_FAILURE = "access_failure"
QUADRANTS = (ACCESSED_GOOD, USE_FAILURE, UNACCESSED_GOOD, ACCESS_FAILURE)
LABELS = {
    ACCESSED_GOOD: "accessed · answered well",
    USE_FAILURE: "accessed · answered badly (use failure)",
    UNACCESSED_GOOD: "not accessed · answered well",
    ACCESS_FAILURE: "not accessed · answered badly (access failure)",
}
BREAKDOWNS = ("rung", "domain", "task_type", "source", "multi_source")


def quadrants(ws: Workspace, access_run: str, qa_run: str, judge: str = judge_mod.REFERENCE, k: int = 10,
              access_threshold: float = 1.0, score_threshold: float = 4, rungs: list[str] | None = None
              ) -> pd.DataFrame:
    """One row per (rung, qid) answered by ``qa_run``: access SR@K, judge score, quadrant (or None + reason).

    Columns: rung, qid, domain, task_type, source, n_gold, multi_source, access_status, sr, accessed, answer,
    score, answered_well, quadrant, reason, access_ids (top-K of the access run), context_ids (the documents the
    QA model saw; empty for GLOBAL, which saw the whole rung), access_run, qa_run, judge.
    """
    if runs.get_run(ws, access_run) is None:
        raise EmbSError(f"no run named {access_run!r}", fix="see `emb-s runs list` for the stored runs.")
    if qa.get_qa_run(ws, qa_run) is None:
        raise EmbSError(f"no QA run named {qa_run!r}", fix="answer with `emb-s qa` first; `emb-s qa --list` shows them.")
    if k < 1:
        raise EmbSError(f"-k must be ≥ 1, got {k}", fix="pass -k N with N ≥ 1.")
    judge = judge_mod.judge_name(judge) if not judge.startswith("llm:") else judge
    answers = qa.load_answers(ws, [qa_run])[["rung", "qid", "answer", "context_ids", "status"]].rename(
        columns={"status": "qa_status"})
    if rungs:
        answers = answers[answers["rung"].isin(rungs)]
    scored = judge_mod.scores(ws, qa_run, judge)
    if scored.empty and not answers.empty and (answers["qa_status"] == OK).any():
        raise EmbSError(f"judge {judge!r} has not judged QA run {qa_run!r}",
                        fix=f"run `emb-s judge --qa-run {qa_run!r} --judge ...` first.")
    queries = bank.queries(ws)
    answers = answers[answers["qid"].isin(queries["qid"])]  # retired queries: see bank_notes
    res = runs.load_results(ws, runs=[access_run])
    res = res[res["qid"].isin(queries["qid"])]
    if len(res):  # SR@K from the one metrics implementation (NaN where the access cell is not ok)
        sr_k = metrics.per_query(res, queries, ks=(k,))[["rung", "qid", f"SR@{k}"]].rename(columns={f"SR@{k}": "sr"})
        res = res.merge(sr_k, on=["rung", "qid"], how="left")
    else:
        res["sr"] = pd.Series(dtype=float)
    res = res[["rung", "qid", "doc_ids", "status", "sr"]].rename(columns={"status": "access_status"})
    qs = queries[["qid", "domain", "task_type", "source", "n_gold", "multi_source"]]
    df = (answers.merge(res, on=["rung", "qid"], how="left")
          .merge(scored[["rung", "qid", "score"]], on=["rung", "qid"], how="left")
          .merge(qs, on="qid", how="left"))
    has_access = df["access_status"].eq(runs.OK).to_numpy()
    sr = np.where(has_access, df["sr"].to_numpy(float), np.nan)
    df["sr"] = sr
    # the evidence each side saw, for the drill-down: the access run's top-K and the QA context (rag)
    df["access_ids"] = [list(ids)[:k] if ok else [] for ids, ok in zip(df["doc_ids"], has_access)]
    df["context_ids"] = [list(c) if c is not None else [] for c in df["context_ids"]]
    df["accessed"] = pd.array(np.where(has_access, sr >= access_threshold, pd.NA), dtype="boolean")
    has_score = df["score"].notna().to_numpy()
    df["answered_well"] = pd.array(np.where(has_score, df["score"].to_numpy(float) >= score_threshold, pd.NA),
                                   dtype="boolean")
    quadrant = np.select(
        [has_access & has_score & (sr >= access_threshold) & (df["score"].to_numpy(float) >= score_threshold),
         has_access & has_score & (sr >= access_threshold),
         has_access & has_score & (df["score"].to_numpy(float) >= score_threshold),
         has_access & has_score],
        list(QUADRANTS), default="")
    df["quadrant"] = pd.Series(quadrant, index=df.index).replace("", None)
    df["reason"] = np.select(
        [df["qa_status"].ne(OK).to_numpy(), ~has_access, ~has_score],
        ["answer: " + df["qa_status"].astype(str), "access: " + df["access_status"].fillna("missing").astype(str),
         "not judged"], default="")
    df["reason"] = df["reason"].replace("", None)
    df["access_run"], df["qa_run"], df["judge"] = access_run, qa_run, judge
    order = {r: i for i, r in enumerate(_rung_order(ws))}
    df = df.sort_values(["rung", "qid"], key=lambda s: s.map(order) if s.name == "rung" else s, kind="stable")
    cols = ["rung", "qid", "domain", "task_type", "source", "n_gold", "multi_source", "access_status", "sr",
            "accessed", "answer", "score", "answered_well", "quadrant", "reason", "access_ids", "context_ids",
            "access_run", "qa_run", "judge"]
    return df[cols].reset_index(drop=True)


def judge_agreement(ws: Workspace, judge: str = judge_mod.REFERENCE, score_threshold: float = 4) -> pd.DataFrame:
    """The judge's measured agreement with human labels at the "answered well" threshold, one row per labelled set
    (false credit, false reject, n and which set; see :mod:`emb_s_core.labels`): shown wherever its scores are."""
    from emb_s_core import labels

    name = judge if judge.startswith("llm:") else judge_mod.judge_name(judge)
    return labels.agreement(ws, name, score_threshold)


def agreement_lines(ws: Workspace, judge: str = judge_mod.REFERENCE, score_threshold: float = 4) -> list[str]:
    """:func:`judge_agreement` as plain lines (the worst honest figure first), or one line saying the judge was
    measured on no labels. For the reference judge a first line says how many right answers it is measured to
    reject on replies its rules never saw: so many right answers land in "answered badly"."""
    from emb_s_core import labels

    df = judge_agreement(ws, judge, score_threshold)
    if df.empty:
        return [f"judge {judge}: not measured against human labels (label answers on the Access vs use page or the "
                "Query drill-down; they join this workspace's labelled set)"]
    lines = labels.describe(df)
    unseen = df[(df["labelled_set"] == labels.BLIND_SET) & (df["dataset"] == labels.ALL)]
    if judge == judge_mod.REFERENCE and len(unseen) and unseen.iloc[0]["n_right"]:
        r = unseen.iloc[0]
        lines.insert(0, f"the reference judge is measured to reject {r.false_reject:.0%} of right answers "
                        f"({r.false_reject_low:.0%}–{r.false_reject_high:.0%}, {round(r.false_reject * r.n_right)} of "
                        f"{r.n_right}) on replies its rules never saw: about that share of the right answers here "
                        "is counted as answered badly, so use failure is overstated; an LLM judge (`emb-s judge "
                        "--judge MODEL`) or --judge learned rejects fewer")
    return lines


def default_judge(judges: list[str]) -> str:
    """The judge a view opens with: an LLM judge when one has judged (the reference judge rejects more right
    answers, see :func:`agreement_lines`), else the reference judge."""
    return next((j for j in judges if j.startswith("llm:")), judge_mod.REFERENCE)


def judges_to_compare(judge: str, judges: list[str]) -> list[str]:
    """The judges whose agreement a view shows: the one chosen, and beside an LLM judge the reference judge (or
    beside the reference judge the LLM judge that also judged), so a reader sees both."""
    other = judge_mod.REFERENCE if judge.startswith("llm:") else default_judge([j for j in judges if j != judge])
    return [judge] + ([other] if other != judge and other in judges else [])


def bank_notes(ws: Workspace, access_run: str, qa_run: str) -> list[str]:
    """The access and QA runs made on an earlier bank version, with the retired queries left out of the quadrants."""
    from emb_s_core import provenance

    res = runs.load_results(ws, runs=[access_run])
    answers = qa.load_answers(ws, [qa_run]).rename(columns={"qa_run": "run"})
    both = pd.concat([res[["run", "qid"]], answers[["run", "qid"]]], ignore_index=True)
    left = provenance.left_out(ws, both)
    configs = {access_run: (runs.get_run(ws, access_run) or {}).get("config", {}),
               qa_run: (qa.get_qa_run(ws, qa_run) or {}).get("config", {})}
    return provenance.notes(left, provenance.earlier_bank(ws, configs, left), [access_run, qa_run])


def summary(df: pd.DataFrame, by: tuple[str, ...] | list[str] = ("rung",)) -> pd.DataFrame:
    """Quadrant shares per group, long form: *by, quadrant, n, share, n_classified, n_excluded.

    ``share = n / n_classified``; excluded cells (no ranking, no answer, no judgment) are reported, not counted.
    Every quadrant appears for every group (n = 0 when empty) so stacked figures line up.
    """
    by = list(by)
    unknown = [c for c in by if c not in df.columns]
    if unknown:
        raise EmbSError(f"cannot break down by {unknown}", fix=f"use columns among: {', '.join(BREAKDOWNS)}.")
    if df.empty:
        return pd.DataFrame(columns=[*by, "quadrant", "label", "n", "share", "n_classified", "n_excluded"])
    classified = df[df["quadrant"].notna()]
    groups = df[by].drop_duplicates()
    grid = groups.merge(pd.DataFrame({"quadrant": list(QUADRANTS)}), how="cross")
    counts = classified.groupby([*by, "quadrant"], sort=False).size().rename("n").reset_index()
    out = grid.merge(counts, on=[*by, "quadrant"], how="left").fillna({"n": 0})
    totals = df.groupby(by, sort=False).agg(n_all=("qid", "size"),
                                            n_classified=("quadrant", lambda s: int(s.notna().sum())))
    out = out.merge(totals.reset_index(), on=by, how="left")
    out["n"] = out["n"].astype(int)
    out["n_excluded"] = (out["n_all"] - out["n_classified"]).astype(int)
    out["share"] = np.where(out["n_classified"] > 0, out["n"] / out["n_classified"].clip(lower=1), np.nan)
    out["label"] = out["quadrant"].map(LABELS)
    return out[[*by, "quadrant", "label", "n", "share", "n_classified", "n_excluded"]].reset_index(drop=True)


EXCLUDED = "excluded"  # the cells no quadrant holds (no ranking, no answer, no judgment), each with its reason
CASE_LISTS = (*QUADRANTS, EXCLUDED)  # what cases() lists
CASE_LABELS = {**LABELS, EXCLUDED: "excluded (no ranking, answer or judgment)"}


def cases(df: pd.DataFrame, quadrant: str) -> pd.DataFrame:
    """The rows of one quadrant (e.g. the use failures) for the page's case list, or with ``excluded`` the cells
    left out of every quadrant (their ``reason`` says why)."""
    if quadrant == EXCLUDED:
        return df[df["quadrant"].isna()].reset_index(drop=True)
    if quadrant not in QUADRANTS:
        raise EmbSError(f"unknown quadrant {quadrant!r}", fix=f"use one of: {', '.join(CASE_LISTS)}.")
    return df[df["quadrant"] == quadrant].reset_index(drop=True)


def _rung_order(ws: Workspace) -> list[str]:
    from emb_s_core import ladder

    if not ladder.exists(ws):
        return []
    return ws.read_pandas("rungs", ["rung", "order"]).sort_values("order")["rung"].tolist()
