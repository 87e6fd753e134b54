"""Judging QA answers on a 0–5 scale (paper §A.6): an LLM judge and an offline reference-match judge.

- LLM judge (``judge`` = any litellm model string): sees only (question, true answer, predicted answer), prompt
  ``prompts/judge_v1.txt``, and must reply with one integer 0–5; :func:`parse_score` reads the score the reply gives
  (the last standalone integer 0–5 once scale mentions are removed; ambiguous replies such as "3 or 4" and other
  scales are ``unparseable``, never a zero). ``repeats`` > 1 judges each answer again (each repeat is its own cache
  entry), so the spread of a judge can be measured; agreement uses every pair of parseable repeats.
- Reference match (``judge = "reference"``, rule version ``reference_v2``): SQuAD-style normalization (lower case,
  no punctuation, no articles, single spaces), best over the answer and its aliases, ``F1 = 2·P·R / (P + R)`` over
  the normalized token bags. What the reply *asserts* is read by :mod:`emb_s_core.answer_match` (alternatives the
  question offers, negation scopes, entities). In order:

  1. ``5`` on exact match, or when a multi-entity answer's entities are exactly the reply's ("B and A" for "A and
     B");
  2. ``4`` when the reply asserts the answer (a whole-phrase occurrence outside a negation), or the answer's side of
     an "X or Y?" question ("Virginia Woolf" for "Adeline Virginia Woolf"), or every entity of a multi-entity
     answer, **and asserts no competing alternative** (the other side of "X or Y?", the other of yes/no);
  3. at most ``1`` when the reply asserts a competitor ("Annie Morton or Terry Richardson", "Annie Morton, not
     Terry Richardson" when the answer is Terry Richardson) or names the answer only under a negation ("not
     yes"): its token overlap is not evidence of a right answer;
  4. else ``min(3, round(5·F1))`` (partial overlap never reaches the "answered well" threshold 4).

  It is the standard metric for the HotpotQA-style datasets plus the two checks containment needs; no model.
  Rows written under an older rule version are judged again on the next run.

Judgments live in the table ``judgments`` (one row per judge × QA run × rung × query × repeat).
"""
from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pyarrow as pa

from emb_s_core import answer_match, llm, protocol, qa
from emb_s_core.errors import EmbSError
from emb_s_core.schema import UNPARSEABLE
from emb_s_core.store import Workspace

REFERENCE = "reference"
REFERENCE_VERSION = "reference_v2"  # v1 credited containment without the alternative and negation checks
JUDGMENTS_SCHEMA = pa.schema([
    pa.field("judge", pa.string(), nullable=False), pa.field("qa_run", pa.string(), nullable=False),
    pa.field("rung", pa.string(), nullable=False), pa.field("qid", pa.string(), nullable=False),
    pa.field("repeat", pa.int32()), pa.field("score", pa.float64()), pa.field("status", pa.string()),
    pa.field("raw", pa.string()), pa.field("prompt_version", pa.string()), pa.field("cost", pa.float64()),
])
# a scale's bounds are never the score: "0-5", "0 to 5", "1–5", "out of 5", "/5", "scale of 5"
_SCALE = re.compile(r"\b[01]\s*(?:-|–|—|to)\s*5\b|(?:\bout\s+of|/)\s*5\b(?![.,]\d)|\bscale\s+of\s+5\b", re.I)
_OTHER_SCALE = re.compile(r"(?:\bout\s+of|/)\s*(\d+)\b", re.I)  # "7/10", "3 out of 10": another scale
_INTEGER = re.compile(r"(?<![\d.,])(\d+)(?![\d]|[.,]\d)")  # not part of a decimal (4.5) or a longer number
_RANGE_BEFORE = re.compile(r"(?<![\d.,])([0-5])\s*(?:or|-|–|—|to|/|and|,)\s*$", re.I)  # "3 or 4", "3-4", "3/4"


# --------------------------------------------------------------------------------------------- reference match
normalize = answer_match.normalize
token_f1 = answer_match.token_f1


def reference_score(prediction: str | None, answer: str | None, aliases: list[str] | None = None,
                    question: str | None = None) -> dict:
    """The 0–5 reference-match score of ``prediction`` (rule in the module docstring) and why it was given.

    Returns ``score``, ``em``, ``f1``, ``contained`` (the answer, or its side of the question, is asserted and
    credited), and ``reason``: exact, entities, contained, alternative, competitor, negated or f1.
    """
    truths = [t for t in [answer, *(aliases or [])] if t]
    em = max((float(normalize(prediction) == normalize(t) and bool(normalize(t))) for t in truths), default=0.0)
    f1 = max((token_f1(prediction, t) for t in truths), default=0.0)
    partial = min(3, int(round(5 * f1)))
    if em:
        return {"score": 5, "em": em, "f1": f1, "contained": True, "reason": "exact"}
    words = answer_match.question_words(question)
    alts = answer_match.alternatives_for(question, truths)
    multi = [e for e in (answer_match.entities(t) for t in truths) if len(e) > 1]
    reply = answer_match.Reply.parse(prediction, [*truths, *alts.answer_side, *alts.competitors,
                                                  *(p for e in multi for p in e)])
    yes_no = bool(alts) and alts.answer_side[0] in answer_match.YES_NO
    competitor = any(reply.asserts(c, words, yes_no) for c in alts.competitors)
    sides = [(t, "contained") for t in truths] + [(a, "alternative") for a in alts.answer_side]
    asserted = next((why for phrase, why in sides if reply.asserts(phrase, words, yes_no)), None)
    if not competitor and any(set(e) == set(answer_match.entities(prediction)) for e in multi):
        return {"score": 5, "em": em, "f1": f1, "contained": True, "reason": "entities"}
    if asserted is None and not competitor and any(all(reply.asserts(p, words) for p in e) for e in multi):
        asserted = "contained"
    if asserted is not None and not competitor:
        return {"score": 4, "em": em, "f1": f1, "contained": True, "reason": asserted}
    blocked = competitor or any(reply.mentions(phrase) and not reply.asserts(phrase, words, yes_no)
                                for phrase in [*(p for p, _ in sides), *(p for e in multi for p in e)])
    if blocked:
        return {"score": min(1, partial), "em": em, "f1": f1, "contained": False,
                "reason": "competitor" if competitor else "negated"}
    return {"score": partial, "em": em, "f1": f1, "contained": False, "reason": "f1"}


# --------------------------------------------------------------------------------------------- LLM judge
def parse_score(reply: str | None) -> int | None:
    """The score an LLM judge's reply gives, or None (unparseable; never a zero).

    Rule: scale mentions are removed first ("0-5", "0 to 5", "out of 5", "/5", "scale of 5"); a reply naming
    another scale ("7/10", "out of 10") is unparseable. The score is then the *last* standalone integer 0–5
    (not part of a decimal such as 4.5 or of a longer number such as 10), so "On a 0-5 scale, I give it 4" → 4,
    "4." → 4, "Score: 2 ... final score: 4" → 4. A last integer joined to another one ("3 or 4", "3-4", "3/4",
    "between 3 and 4") is ambiguous: unparseable.
    """
    text = reply or ""
    if any(int(m.group(1)) != 5 for m in _OTHER_SCALE.finditer(_SCALE.sub(" ", text))):
        return None
    text = _SCALE.sub(" ", text)
    found = [m for m in _INTEGER.finditer(text) if int(m.group(1)) <= 5 and len(m.group(1)) == 1]
    if not found:
        return None
    last = found[-1]
    before = _RANGE_BEFORE.search(text[:last.start()])
    if before is not None and int(before.group(1)) != int(last.group(1)):
        return None
    return int(last.group(1))


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
    df = df.drop_duplicates(["judge", "qa_run", "rung", "qid", "repeat"], keep="last").reset_index(drop=True)
    return _reparsed(df)


RAW_LIMIT = 500  # characters of an LLM judge's reply stored in ``raw``


def _reparsed(df: pd.DataFrame) -> pd.DataFrame:
    """LLM judgments scored again from their stored reply with today's :func:`parse_score`, so rows written under an
    older parsing rule ("On a 0-5 scale, I give it 4" read as 0) are read as the rule reads them now. Replies cut at
    RAW_LIMIT characters keep their stored score."""
    llm_rows = df["judge"].str.startswith("llm:") & df["status"].isin([llm.OK, UNPARSEABLE]) & df["raw"].notna()
    llm_rows &= df["raw"].fillna("").str.len() < RAW_LIMIT
    if not llm_rows.any():
        return df
    df = df.copy()
    parsed = [parse_score(r) for r in df.loc[llm_rows, "raw"]]
    df.loc[llm_rows, "score"] = [float("nan") if p is None else float(p) for p in parsed]
    df.loc[llm_rows, "status"] = [llm.OK if p is not None else UNPARSEABLE for p in parsed]
    return df


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
            rows = []
            for a, t, al, q in zip(chunk["answer"], chunk["true_answer"], chunk["answer_aliases"],
                                   chunk["question"]):
                got = reference_score(a, t, list(al) if al is not None else [], question=q)
                rows.append({"score": float(got["score"]), "status": llm.OK, "raw": got["reason"],
                             "prompt_version": REFERENCE_VERSION, "cost": 0.0})
        else:
            batch = [judge_messages(prompt, q, t, a) for q, t, a in
                     zip(chunk["question"], chunk["true_answer"], chunk["answer"])]
            results = gateway.complete_many(batch, salts=[int(r) or None for r in chunk["repeat"]])
            rows = []
            for res in results:
                score = parse_score(res.text) if res.status == llm.OK else None
                status = res.status if res.status != llm.OK else (llm.OK if score is not None else UNPARSEABLE)
                rows.append({"score": None if score is None else float(score), "status": status,
                             "raw": (res.text or res.error or "")[:RAW_LIMIT], "prompt_version": prompt.version,
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
    protocol.check_limit(limit)
    if limit is not None:  # N per rung in the seeded order every protocol uses
        keep = {(rung, q) for rung, g in answers.groupby("rung", sort=False)
                for q in protocol.query_order(list(g["qid"]))[:limit]}
        answers = answers[[(r, q) in keep for r, q in zip(answers["rung"], answers["qid"])]]
    qs = ws.read_pandas("queries", ["qid", "text", "answer", "answer_aliases"]).rename(
        columns={"text": "question", "answer": "true_answer"})
    df = answers[["rung", "qid", "answer"]].merge(qs, on="qid", how="left")
    df = df.loc[df.index.repeat(repeats)].copy()
    df["repeat"] = np.tile(np.arange(repeats), len(answers)) if len(answers) else []
    done = load_judgments(ws, [judge_name(judge)], [qa_run])
    done = done[done["status"] != llm.ERROR]
    if judge == REFERENCE:  # rows of an older rule are judged again
        done = done[done["prompt_version"] == REFERENCE_VERSION]
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
    """Agreement over every repeat: of two judges (each parseable repeat of A paired with each of B on the same
    answer), or of a judge with itself when ``judge_b`` is None (every pair of its parseable repeats of one
    answer). n = answers with at least one pair, n_pairs = pairs; exact and within-one agreement and Cohen's kappa
    are over the pairs (a self-pair is counted both ways, so kappa's two marginals are the same)."""
    df = load_judgments(ws, None, [qa_run])
    df = df[df["status"] == llm.OK]
    key = ["rung", "qid"]
    a = df[df["judge"] == judge_a][[*key, "repeat", "score"]]
    b = a if judge_b is None else df[df["judge"] == judge_b][[*key, "repeat", "score"]]
    pairs = a.merge(b, on=key, suffixes=("_a", "_b"))
    if judge_b is None:
        pairs = pairs[pairs["repeat_a"] != pairs["repeat_b"]]
    sa, sb = pairs["score_a"].round().astype(int).to_numpy(), pairs["score_b"].round().astype(int).to_numpy()
    n_pairs = len(pairs) // 2 if judge_b is None else len(pairs)
    n = int(pairs[key].drop_duplicates().shape[0])
    return {"judge_a": judge_a, "judge_b": judge_b or f"{judge_a} (repeat)", "n": n, "n_pairs": n_pairs,
            "exact": float(np.mean(sa == sb)) if len(pairs) else float("nan"),
            "within_1": float(np.mean(np.abs(sa - sb) <= 1)) if len(pairs) else float("nan"),
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
