"""Judges measured against human labels: a judge is only as good as its agreement on labelled items (issue 22).

Two labelled sets:

- the **packaged** sets: ``emb_s_core/labelled/answers.jsonl`` (written by ``bench/make_labelled_sets.py`` from
  templates; items from HotpotQA, MuSiQue, 2Wiki, LoCoMo, the demo bank and hand-written cases, each labelled by
  its meaning) and ``answers_blind.jsonl`` (4,727 replies written by hand, the way LLMs answer, by writers who never
  saw the judge's code, in eight rounds: ``blind_r1`` to ``blind_r7`` were each measured once, then tuned on;
  ``blind_r8`` was never looked at). The reference judge's figures on ``blind_r8`` (the worst honest figure,
  shown first) and on the *held-out* template items, overall and per dataset, are stored in
  ``labelled/agreement.json`` by ``bench/bench_labelled.py --write-figures`` for every score threshold, and a test
  checks they are what today's rule gives;
- the **workspace** set: table ``answer_labels``, one row per (QA run, rung, query) a researcher labelled right or
  wrong from the dashboard's drill-down. Any judge that scored those answers is measured on them.

Figures: ``false_credit`` = wrong answers the judge credits (score ≥ threshold) / wrong answers; ``false_reject`` =
right answers it does not credit / right answers; with ``n_wrong``, ``n_right``, a 95% Wilson interval and the set
they come from.
"""
from __future__ import annotations

import datetime as _dt
import json
from functools import lru_cache
from importlib import resources

import pandas as pd
import pyarrow as pa

from emb_s_core.errors import EmbSError
from emb_s_core.store import Workspace

TABLE = "answer_labels"
LABELS_SCHEMA = pa.schema([
    pa.field("qa_run", pa.string(), nullable=False), pa.field("rung", pa.string(), nullable=False),
    pa.field("qid", pa.string(), nullable=False), pa.field("answer", pa.string()),
    pa.field("correct", pa.bool_(), nullable=False), pa.field("note", pa.string()),
    pa.field("labelled_at", pa.string()),
])
PACKAGED_SET = ("emb_s_core/labelled/answers.jsonl (held-out template items: made from the templates the rules were "
                "tuned beside, a flattering figure)")
BLIND_SET = "emb_s_core/labelled/answers_blind.jsonl (blind_r8: written by hand, never read by the rules)"
# the worst honest figure first: replies the rules never saw, then the template items
MEASURED_SPLITS = {"blind_r8": ("answers_blind.jsonl", BLIND_SET), "held_out": ("answers.jsonl", PACKAGED_SET)}
WORKSPACE_SET = "this workspace's labels"
LOO_SET = ("emb_s_core/labelled/answers_blind.jsonl (each blind round held out of the learned judge's training in "
           "turn, pooled; rounds 1-7 were read to tune the rules it builds on)")
FIGURES = "agreement.json"
THRESHOLDS = (1, 2, 3, 4, 5)
COLUMNS = ["judge", "rule", "labelled_set", "dataset", "n", "n_wrong", "n_right", "false_credit", "false_credit_low",
           "false_credit_high", "false_reject", "false_reject_low", "false_reject_high", "threshold"]
ALL = "all"  # the dataset column of a row over the whole labelled set


def load_set(name: str = "answers.jsonl") -> list[dict]:
    """One packaged labelled set (``answers.jsonl``, ``judge_replies.jsonl``, ``localize_replies.jsonl``)."""
    text = resources.files("emb_s_core.labelled").joinpath(name).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def rates(correct: list[bool], credited: list[bool]) -> dict:
    """False credit and false reject of ``credited`` against the labels ``correct`` (NaN where a side is empty)."""
    wrong = [c for ok, c in zip(correct, credited) if not ok]
    right = [c for ok, c in zip(correct, credited) if ok]
    return {"n": len(correct), "n_wrong": len(wrong), "n_right": len(right),
            "false_credit": sum(wrong) / len(wrong) if wrong else float("nan"),
            "false_reject": 1 - sum(right) / len(right) if right else float("nan")}


def wilson(k: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson interval of a share ``k`` / ``n`` (NaN, NaN when ``n`` is 0): honest at small n and near 0."""
    if not n:
        return float("nan"), float("nan")
    p = k / n
    centre, half = p + z * z / (2 * n), z * ((p * (1 - p) + z * z / (4 * n)) / n) ** 0.5
    return max(0.0, (centre - half) / (1 + z * z / n)), min(1.0, (centre + half) / (1 + z * z / n))


def with_intervals(row: dict) -> dict:
    """``row`` (from :func:`rates`) with the Wilson bounds of its false credit and false reject."""
    out = dict(row)
    for key, n in (("false_credit", row["n_wrong"]), ("false_reject", row["n_right"])):
        share = row[key]
        out[f"{key}_low"], out[f"{key}_high"] = wilson(share * n, n) if n else (float("nan"), float("nan"))
    return out


def reference_figures(split: str = "held_out") -> dict:
    """The reference judge's figures on one measured split (``MEASURED_SPLITS``), for every threshold, overall and
    per dataset (now)."""
    from emb_s_core import judge

    name, described = MEASURED_SPLITS[split]
    items = [it for it in load_set(name) if it["split"] == split]
    scores = [judge.reference_score(it["reply"], it["gold"], it["aliases"], question=it["question"])["score"]
              for it in items]
    correct = [bool(it["correct"]) for it in items]
    datasets = sorted({it["dataset"] for it in items})
    return {"rule": judge.REFERENCE_VERSION, "labelled_set": described,
            "thresholds": {str(t): rates(correct, [s >= t for s in scores]) for t in THRESHOLDS},
            "datasets": {d: {str(t): rates([c for c, it in zip(correct, items) if it["dataset"] == d],
                                           [s >= t for s, it in zip(scores, items) if it["dataset"] == d])
                             for t in THRESHOLDS} for d in datasets}}


@lru_cache(maxsize=1)
def stored_figures() -> dict:
    """``labelled/agreement.json``: per rule version, the reference judge's figures on each measured split."""
    try:
        return json.loads(resources.files("emb_s_core.labelled").joinpath(FIGURES).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}


# --------------------------------------------------------------------------------------------- workspace labels
def load_labels(ws: Workspace) -> pd.DataFrame:
    """The workspace's labels, the last one per (QA run, rung, query)."""
    if not ws.has_table(TABLE):
        return pd.DataFrame(columns=LABELS_SCHEMA.names)
    df = ws.read_pandas(TABLE)
    return df.drop_duplicates(["qa_run", "rung", "qid"], keep="last").reset_index(drop=True)


def add_label(ws: Workspace, qa_run: str, rung: str, qid: str, correct: bool, note: str = "") -> None:
    """Label one stored answer right or wrong (a later label of the same answer replaces it); one transaction,
    under the workspace's writer lock."""
    from emb_s_core import qa

    answers = qa.load_answers(ws, [qa_run])
    hit = answers[(answers["rung"] == rung) & (answers["qid"] == qid)]
    if hit.empty:
        raise EmbSError(f"QA run {qa_run!r} has no answer for query {qid!r} on rung {rung!r}",
                        fix="label an answer listed in the access-vs-use cases of that QA run.")
    row = {"qa_run": qa_run, "rung": rung, "qid": qid, "answer": hit["answer"].iloc[-1], "correct": bool(correct),
           "note": note or "", "labelled_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}
    with ws.transaction():
        ws.write(TABLE, pa.Table.from_pylist([row], schema=LABELS_SCHEMA), schema=LABELS_SCHEMA)


def agreement(ws: Workspace | None, judge: str, score_threshold: float = 4) -> pd.DataFrame:
    """Measured agreement of ``judge`` (``reference`` or ``llm:<model>``) with human labels, one row per labelled
    set it was measured on: the packaged held-out and blind sets (reference judge, as stored for its rule) and the
    workspace's own labels (any judge that scored the labelled answers). Empty when it was measured on none."""
    from emb_s_core import judge as judge_mod

    rows = []
    rule_name = judge_mod.rule_version(judge)
    stored = stored_figures().get(rule_name, {}) if rule_name else {}  # figures of today's rule only
    t = str(int(score_threshold)) if float(score_threshold).is_integer() else None
    for figures in stored.values():  # stored with the worst honest figure first
        if t not in figures["thresholds"]:
            continue
        rows.append({"judge": judge, "rule": figures["rule"], "labelled_set": figures["labelled_set"],
                     "dataset": ALL, **with_intervals(figures["thresholds"][t]), "threshold": score_threshold})
        for dataset, by_t in figures.get("datasets", {}).items():
            rows.append({"judge": judge, "rule": figures["rule"], "labelled_set": figures["labelled_set"],
                         "dataset": dataset, **with_intervals(by_t[t]), "threshold": score_threshold})
    labels = load_labels(ws) if ws is not None else pd.DataFrame()
    if len(labels):
        scored = judge_mod.scores(ws, None, judge)
        joined = labels.merge(scored, on=["qa_run", "rung", "qid"], how="inner")
        joined = joined[joined["score"].notna()]
        if len(joined):
            rule = rule_name or "llm"
            rows.insert(0, {"judge": judge, "rule": rule, "labelled_set": WORKSPACE_SET, "dataset": ALL,
                            **with_intervals(rates(joined["correct"].astype(bool).tolist(),
                                                   (joined["score"] >= score_threshold).tolist())),
                            "threshold": score_threshold})
    return pd.DataFrame(rows, columns=COLUMNS)


def _share(value: float, low: float, high: float, n: int, what: str) -> str:
    if not n:
        return f"no {what} answers"
    return f"{value:.1%} [{low:.1%}–{high:.1%}] of {n} {what}"


def describe(df: pd.DataFrame) -> list[str]:
    """One plain line per row of :func:`agreement`, with its 95% interval (the CLI prints them, the page shows
    them): each labelled set overall, then its datasets indented."""
    out = []
    for r in df.itertuples():
        shares = (f"false credit {_share(r.false_credit, r.false_credit_low, r.false_credit_high, r.n_wrong, 'wrong')}"
                  f", false reject {_share(r.false_reject, r.false_reject_low, r.false_reject_high, r.n_right, 'right')}")
        if r.dataset == ALL:
            out.append(f"judge {r.judge} ({r.rule}) on {r.labelled_set}: {shares} (n = {r.n}, credited = score ≥ "
                       f"{r.threshold:g}; 95% Wilson intervals)")
        else:
            out.append(f"    {r.dataset}: {shares}")
    return out
