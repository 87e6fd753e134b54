"""Judges measured against human labels: a judge is only as good as its agreement on labelled items (issue 22).

Two labelled sets:

- the **packaged** sets: ``emb_s_core/labelled/answers.jsonl`` (written by ``bench/make_labelled_sets.py`` from
  templates; items from HotpotQA, MuSiQue, 2Wiki, LoCoMo, the demo bank and hand-written cases, each labelled by
  its meaning) and ``answers_blind.jsonl`` (4,727 replies written by hand, the way LLMs answer, by writers who never
  saw the judge's code, in eight rounds: ``blind_r1`` to ``blind_r7`` were each measured once, then tuned on;
  ``blind_r8`` was never looked at). The reference judge's figures on the *held-out* template items and on
  ``blind_r8`` are stored in
  ``labelled/agreement.json`` by ``bench/bench_labelled.py --write-figures`` for every score threshold, and a test
  checks they are what today's rule gives;
- the **workspace** set: table ``answer_labels``, one row per (QA run, rung, query) a researcher labelled right or
  wrong from the dashboard's drill-down. Any judge that scored those answers is measured on them.

Figures: ``false_credit`` = wrong answers the judge credits (score ≥ threshold) / wrong answers; ``false_reject`` =
right answers it does not credit / right answers; with ``n_wrong``, ``n_right`` and the set they come from.
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
PACKAGED_SET = "emb_s_core/labelled/answers.jsonl (held-out items)"
BLIND_SET = "emb_s_core/labelled/answers_blind.jsonl (blind_r8: written by hand, never looked at)"
MEASURED_SPLITS = {"held_out": ("answers.jsonl", PACKAGED_SET), "blind_r8": ("answers_blind.jsonl", BLIND_SET)}
WORKSPACE_SET = "this workspace's labels"
FIGURES = "agreement.json"
THRESHOLDS = (1, 2, 3, 4, 5)
COLUMNS = ["judge", "rule", "labelled_set", "n", "n_wrong", "n_right", "false_credit", "false_reject", "threshold"]


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


def reference_figures(split: str = "held_out") -> dict:
    """The reference judge's figures on one measured split (``MEASURED_SPLITS``), for every threshold (now)."""
    from emb_s_core import judge

    name, described = MEASURED_SPLITS[split]
    items = [it for it in load_set(name) if it["split"] == split]
    scores = [judge.reference_score(it["reply"], it["gold"], it["aliases"], question=it["question"])["score"]
              for it in items]
    correct = [bool(it["correct"]) for it in items]
    return {"rule": judge.REFERENCE_VERSION, "labelled_set": described,
            "thresholds": {str(t): rates(correct, [s >= t for s in scores]) for t in THRESHOLDS}}


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
    stored = stored_figures().get(judge_mod.REFERENCE_VERSION, {}) if judge == judge_mod.REFERENCE else {}
    t = str(int(score_threshold)) if float(score_threshold).is_integer() else None
    for figures in stored.values():
        if t in figures["thresholds"]:
            rows.append({"judge": judge, "rule": figures["rule"], "labelled_set": figures["labelled_set"],
                         **figures["thresholds"][t], "threshold": score_threshold})
    labels = load_labels(ws) if ws is not None else pd.DataFrame()
    if len(labels):
        scored = judge_mod.scores(ws, None, judge)
        joined = labels.merge(scored, on=["qa_run", "rung", "qid"], how="inner")
        joined = joined[joined["score"].notna()]
        if len(joined):
            rule = judge_mod.REFERENCE_VERSION if judge == judge_mod.REFERENCE else "llm"
            rows.append({"judge": judge, "rule": rule, "labelled_set": WORKSPACE_SET,
                         **rates(joined["correct"].astype(bool).tolist(),
                                 (joined["score"] >= score_threshold).tolist()), "threshold": score_threshold})
    return pd.DataFrame(rows, columns=COLUMNS)


def describe(df: pd.DataFrame) -> list[str]:
    """One plain line per row of :func:`agreement` (the CLI prints them; pages show the frame)."""
    out = []
    for r in df.itertuples():
        out.append(f"judge {r.judge} ({r.rule}) on {r.labelled_set}: false credit {r.false_credit:.1%} of "
                   f"{r.n_wrong} wrong, false reject {r.false_reject:.1%} of {r.n_right} right (n = {r.n}, "
                   f"credited = score ≥ {r.threshold:g})")
    return out
