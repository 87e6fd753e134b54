"""Judging QA answers on a 0–5 scale (paper §A.6): an LLM judge and an offline reference-match judge.

- LLM judge (``judge`` = any litellm model string): sees only (question, true answer, predicted answer), prompt
  ``prompts/judge_v1.txt``, and must reply with one integer 0–5; the first standalone digit 0–5 in the reply is the
  score, anything else is counted as ``unparseable`` (never a zero). ``repeats`` > 1 judges each answer again (each
  repeat is its own cache entry), so the spread of a judge can be measured.
- Reference match (``judge = "reference"``): SQuAD-style normalization (lower case, no punctuation, no articles,
  single spaces); the best over the answer and its aliases of exact match and token F1,
  ``F1 = 2·P·R / (P + R)`` over the normalized token bags; ``score = 5`` on exact match, ``4`` when the normalized
  answer appears as a whole phrase inside a longer prediction (answer containment, the usual lenient match for
  verbose generators), else ``min(3, round(5·F1))``. It is the standard metric for the HotpotQA-style datasets and
  needs no model.

Judgments live in the table ``judgments`` (one row per judge × QA run × rung × query × repeat).
"""
from __future__ import annotations

import re
import string
from collections import Counter

import numpy as np
import pandas as pd
import pyarrow as pa

from emb_s_core import llm, protocol, qa
from emb_s_core.errors import EmbSError
from emb_s_core.schema import UNPARSEABLE
from emb_s_core.store import Workspace

REFERENCE = "reference"
JUDGMENTS_SCHEMA = pa.schema([
    pa.field("judge", pa.string(), nullable=False), pa.field("qa_run", pa.string(), nullable=False),
    pa.field("rung", pa.string(), nullable=False), pa.field("qid", pa.string(), nullable=False),
    pa.field("repeat", pa.int32()), pa.field("score", pa.float64()), pa.field("status", pa.string()),
    pa.field("raw", pa.string()), pa.field("prompt_version", pa.string()), pa.field("cost", pa.float64()),
])
_SCORE = re.compile(r"(?<![\d.])([0-5])(?![\d.])")
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans("", "", string.punctuation)


# --------------------------------------------------------------------------------------------- reference match
def normalize(text: str | None) -> str:
    """SQuAD normalization: lower case, drop punctuation and articles, collapse white space."""
    text = (text or "").lower().translate(_PUNCT)
    return " ".join(_ARTICLES.sub(" ", text).split())


def token_f1(prediction: str | None, truth: str | None) -> float:
    pred, gold = normalize(prediction).split(), normalize(truth).split()
    common = sum((Counter(pred) & Counter(gold)).values())
    if not pred or not gold or common == 0:
        return float(pred == gold and bool(pred))
    precision, recall = common / len(pred), common / len(gold)
    return 2 * precision * recall / (precision + recall)


def reference_score(prediction: str | None, answer: str | None, aliases: list[str] | None = None) -> dict:
    """Best exact match / F1 over the answer and its aliases, and the 0–5 score they map to."""
    truths = [t for t in [answer, *(aliases or [])] if t]
    em = max((float(normalize(prediction) == normalize(t) and bool(normalize(t))) for t in truths), default=0.0)
    f1 = max((token_f1(prediction, t) for t in truths), default=0.0)
    contained = any(_contains(prediction, t) for t in truths)
    score = 5 if em else 4 if contained else min(3, int(round(5 * f1)))
    return {"score": score, "em": em, "f1": f1, "contained": contained}


def _contains(prediction: str | None, answer: str) -> bool:
    """The normalized answer occurs as a whole-token phrase in the normalized prediction."""
    truth = normalize(answer)
    return bool(truth) and f" {truth} " in f" {normalize(prediction)} "


# --------------------------------------------------------------------------------------------- LLM judge
def parse_score(reply: str | None) -> int | None:
    """The first standalone integer 0–5 in the reply, or None (unparseable)."""
    match = _SCORE.search(reply or "")
    return int(match.group(1)) if match else None


def judge_messages(prompt: protocol.Prompt, question: str, answer: str, prediction: str) -> llm.Messages:
    return [{"role": "user", "content": prompt.render(question=question, answer=answer, prediction=prediction)}]


# --------------------------------------------------------------------------------------------- running
def judge_name(judge: str) -> str:
    return REFERENCE if judge == REFERENCE else f"llm:{judge}"


def load_judgments(ws: Workspace, judges: list[str] | None = None, qa_runs: list[str] | None = None) -> pd.DataFrame:
    if not ws.has_table("judgments"):
        return pd.DataFrame(columns=JUDGMENTS_SCHEMA.names)
    df = ws.read_pandas("judgments")
    if judges is not None:
        df = df[df["judge"].isin(judges)]
    if qa_runs is not None:
        df = df[df["qa_run"].isin(qa_runs)]
    return df.drop_duplicates(["judge", "qa_run", "rung", "qid", "repeat"], keep="last").reset_index(drop=True)


def judge(ws: Workspace, qa_run: str, judge: str = REFERENCE, gateway: llm.Gateway | None = None,
          repeats: int = 1, rungs: list[str] | None = None, limit: int | None = None, batch_size: int = 16,
          progress: llm.ProgressFn | None = None) -> str:
    """Judge the ``ok`` answers of ``qa_run``; returns the judge's name (``reference`` or ``llm:<model>``).

    Resumable: finished (rung, qid, repeat) cells are skipped; error cells are retried.
    """
    todo = pending(ws, qa_run, judge, repeats, rungs, limit)
    name = judge_name(judge)
    if judge != REFERENCE:
        if gateway is None:
            raise EmbSError("an LLM judge needs a model gateway", fix="pass --judge MODEL (a litellm model string).")
        gateway.check_credentials()
    prompt = protocol.load_prompt("judge")
    for start in range(0, len(todo), batch_size):
        chunk = todo.iloc[start:start + batch_size]
        if judge == REFERENCE:
            rows = [{"score": float(reference_score(a, t, list(al) if al is not None else [])["score"]),
                     "status": llm.OK, "raw": None, "prompt_version": None, "cost": 0.0}
                    for a, t, al in zip(chunk["answer"], chunk["true_answer"], chunk["answer_aliases"])]
        else:
            batch = [judge_messages(prompt, q, t, a) for q, t, a in
                     zip(chunk["question"], chunk["true_answer"], chunk["answer"])]
            results = gateway.complete_many(batch, salts=[int(r) or None for r in chunk["repeat"]])
            rows = []
            for res in results:
                score = parse_score(res.text) if res.status == llm.OK else None
                status = res.status if res.status != llm.OK else (llm.OK if score is not None else UNPARSEABLE)
                rows.append({"score": None if score is None else float(score), "status": status,
                             "raw": (res.text or res.error or "")[:500], "prompt_version": prompt.version,
                             "cost": res.cost})
        out = pd.concat([chunk[["rung", "qid", "repeat"]].reset_index(drop=True), pd.DataFrame(rows)], axis=1)
        out.insert(0, "qa_run", qa_run)
        out.insert(0, "judge", name)
        table = pa.Table.from_pandas(out[JUDGMENTS_SCHEMA.names], schema=JUDGMENTS_SCHEMA, preserve_index=False)
        with ws.transaction():
            ws.write("judgments", table, schema=JUDGMENTS_SCHEMA)
        if progress:
            progress("judge", min(1.0, (start + len(chunk)) / len(todo)))
    return name


def pending(ws: Workspace, qa_run: str, judge: str, repeats: int, rungs: list[str] | None,
            limit: int | None) -> pd.DataFrame:
    """The (answer, repeat) cells ``judge`` has still to score: what a run would send (the CLI's estimate uses it)."""
    if repeats < 1:
        raise EmbSError(f"--repeats must be ≥ 1, got {repeats}", fix="pass --repeats 1 or more.")
    if qa.get_qa_run(ws, qa_run) is None:
        raise EmbSError(f"no QA run named {qa_run!r}", fix="see `emb-s qa --list`; answer with `emb-s qa` first.")
    answers = qa.load_answers(ws, [qa_run])
    answers = answers[answers["status"] == llm.OK]
    if rungs:
        answers = answers[answers["rung"].isin(rungs)]
    if limit is not None:
        answers = answers[answers["qid"].isin(sorted(set(answers["qid"]))[:limit])]
    qs = ws.read_pandas("queries", ["qid", "text", "answer", "answer_aliases"]).rename(
        columns={"text": "question", "answer": "true_answer"})
    df = answers[["rung", "qid", "answer"]].merge(qs, on="qid", how="left")
    df = df.loc[df.index.repeat(repeats)].copy()
    df["repeat"] = np.tile(np.arange(repeats), len(answers)) if len(answers) else []
    done = load_judgments(ws, [judge_name(judge)], [qa_run])
    done = done[done["status"] != llm.ERROR]
    keys = set(zip(done["rung"], done["qid"], done["repeat"].astype(int)))
    mask = [(r, q, int(p)) not in keys for r, q, p in zip(df["rung"], df["qid"], df["repeat"])]
    return df[mask].reset_index(drop=True)


# --------------------------------------------------------------------------------------------- reading, agreement
def scores(ws: Workspace, qa_run: str | None = None, judge: str | None = None) -> pd.DataFrame:
    """One row per (judge, qa_run, rung, qid): mean score over parseable repeats, repeats, unparseable count."""
    df = load_judgments(ws, None if judge is None else [judge], None if qa_run is None else [qa_run])
    cols = ["judge", "qa_run", "rung", "qid", "score", "n_repeats", "n_unparseable", "score_sd"]
    if df.empty:
        return pd.DataFrame(columns=cols)
    df["unparseable"] = df["status"] == UNPARSEABLE
    out = df.groupby(["judge", "qa_run", "rung", "qid"], sort=False).agg(
        score=("score", "mean"), n_repeats=("repeat", "size"), n_unparseable=("unparseable", "sum"),
        score_sd=("score", "std"))
    return out.reset_index()[cols]


def cohen_kappa(a: np.ndarray, b: np.ndarray, labels: range = range(6)) -> float:
    """Unweighted Cohen's kappa ``κ = (p_o − p_e) / (1 − p_e)`` on integer labels; NaN when undefined."""
    a, b = np.asarray(a, int), np.asarray(b, int)
    if not len(a):
        return float("nan")
    n = len(labels)
    table = np.zeros((n, n))
    np.add.at(table, (a - labels.start, b - labels.start), 1)
    table /= table.sum()
    p_o = np.trace(table)
    p_e = float(table.sum(1) @ table.sum(0))
    return float("nan") if p_e == 1 else float((p_o - p_e) / (1 - p_e))


def agreement(ws: Workspace, qa_run: str, judge_a: str, judge_b: str | None = None) -> dict:
    """Agreement of two judges on the same answers (first repeat each), or of a judge with itself across repeats
    (repeat 0 vs repeat 1) when ``judge_b`` is None: n, exact agreement, within-one agreement, Cohen's kappa."""
    df = load_judgments(ws, None, [qa_run])
    df = df[df["status"] == llm.OK]
    if judge_b is None:
        a = df[(df["judge"] == judge_a) & (df["repeat"] == 0)]
        b = df[(df["judge"] == judge_a) & (df["repeat"] == 1)]
    else:
        a = df[(df["judge"] == judge_a) & (df["repeat"] == 0)]
        b = df[(df["judge"] == judge_b) & (df["repeat"] == 0)]
    both = a.merge(b, on=["rung", "qid"], suffixes=("_a", "_b"))
    sa, sb = both["score_a"].round().astype(int).to_numpy(), both["score_b"].round().astype(int).to_numpy()
    n = len(both)
    return {"judge_a": judge_a, "judge_b": judge_b or f"{judge_a} (repeat)", "n": n,
            "exact": float(np.mean(sa == sb)) if n else float("nan"),
            "within_1": float(np.mean(np.abs(sa - sb) <= 1)) if n else float("nan"),
            "kappa": cohen_kappa(sa, sb)}


def summary(ws: Workspace, qa_run: str | None = None) -> pd.DataFrame:
    """Per (judge, qa_run, rung): mean score, n judged, unparseable replies."""
    df = load_judgments(ws, None, None if qa_run is None else [qa_run])
    if df.empty:
        return pd.DataFrame(columns=["judge", "qa_run", "rung", "mean_score", "n", "unparseable", "errors"])
    return df.groupby(["judge", "qa_run", "rung"], sort=False).agg(
        mean_score=("score", "mean"), n=("score", "count"),
        unparseable=("status", lambda s: int((s == UNPARSEABLE).sum())),
        errors=("status", lambda s: int((s == llm.ERROR).sum()))).reset_index()
