"""Judging QA answers on a 0–5 scale (paper §A.6): an LLM judge and an offline reference-match judge.

- LLM judge (``judge`` = any litellm model string): sees only (question, true answer, predicted answer), prompt
  ``prompts/judge_v2.txt`` (asks for ``Score: N`` first), and :func:`parse_score` reads the score the reply gives
  (a marked score first, so a number in the explanation never replaces it; hedges, ranges, out-of-range values and
  other scales are ``unparseable``, never a zero). ``repeats`` > 1 judges each answer again (each repeat is its own
  cache entry), so the spread of a judge can be measured; agreement uses every pair of parseable repeats.
- Reference match (``judge = "reference"``, rule version ``reference_v11``): reply and truths are read in one
  canonical form (:func:`answer_match.canonical`: accents folded, dates as year/month/day, numbers as digits), then
  SQuAD-normalized; what the reply *asserts* is read by :mod:`emb_s_core.answer_match` (its final claim after a
  correction, negation, alternatives the question offers, comparatives, hedges, refusals, lists, modifiers). In
  order: ``5`` on exact match or the same entities; ``0`` for a refusal; at most ``1`` when the answer is asserted
  only before a correction ("X? No — Y"); ``4`` / ``≤ 1`` for a comparison naming both sides, by its comparative;
  ``4`` when the answer (an alias, a cased short alias or acronym, a partial name when one entity is asked, or its
  side of "X or Y?") is asserted and no competitor is, unless it is one candidate of a hedge or a list carries
  extra members (then ``≤ 1``); for yes/no questions answered without the word, ``4`` / ``0`` by the reply's
  polarity; ``≤ 1`` when a competitor is asserted or the answer only negated; else ``min(3, round(5·F1))``.
  A ``4`` or ``5`` is held back to ``3`` (found, not credited) when the reply casts doubt on the answer it names
  (:func:`answer_match.doubt`): a reader's check, not a guess. The rule versions' history is in bench/RESULTS.md.
  ``question`` is required. Measured against the labelled sets in :mod:`emb_s_core.labels` (figures in
  ``bench/RESULTS.md``). Rows written under an older rule version are judged again on the next run.

Judgments live in the table ``judgments`` (one row per judge × QA run × rung × query × repeat).
"""
from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pyarrow as pa

from emb_s_core import answer_match, llm, protocol, qa
from emb_s_core.llm import structured
from emb_s_core.errors import EmbSError
from emb_s_core.schema import UNPARSEABLE
from emb_s_core.store import Workspace

REFERENCE = "reference"
LEARNED = "learned"  # the reference judge with a learned reading where its rules fall back to token F1 (opt-in)
OFFLINE = (REFERENCE, LEARNED)  # judges that make no model call
REFERENCE_VERSION = "reference_v11"  # the no-model baseline; v11: surface forms as classes (issue 34 §1); history:
# bench/RESULTS.md
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
_NUMBER_NOUN = re.compile(r"(\d+) ([a-z]+(?: [a-z]+)?)")
_NUMBER_UNIT = re.compile(r"(\d+) (?:dollars|euros|pounds|percent|km|miles|m)")  # "$72,641" is also "72641"
normalize = answer_match.normalize
token_f1 = answer_match.token_f1


def reference_score(prediction: str | None, answer: str | None, aliases: list[str] | None = None,
                    question: str | None = None) -> dict:
    """The 0–5 reference-match score of ``prediction`` (rule ``reference_v11`` in the module docstring) and why.

    ``question`` is required: the alternatives it offers, the comparative it asks for and whether it asks for one
    entity decide what a reply claims (a caller without it gets an error, never an older rule).
    Returns ``score``, ``em``, ``f1``, ``contained`` (the answer, or its side of the question, is asserted and
    credited), and ``reason``.
    """
    if question is None:
        raise EmbSError("the reference judge needs the question (question=None given)",
                        fix="pass question=<the query text>: what a reply claims depends on what was asked.")
    canon = answer_match.canon
    asked = set(canon(question).split())
    # an alias the question already says ("Sun" for "below the Sun", asked "… in relation to the sun?") is no answer
    truths = [t for t in [answer, *(a for a in aliases or [] if not set(canon(a).split()) <= asked)] if t]
    others = [p for t in truths for p in answer_match.other_names(t, question)]
    truths += others
    truths += [p for t in truths for p in answer_match.plural_forms(t)]
    pred = answer_match.without_middle_initials(prediction or "", truths)
    em = max((float(canon(pred) == canon(t) and bool(canon(t))) for t in truths), default=0.0)
    f1 = max((answer_match.canon_f1(pred, t) for t in truths), default=0.0)

    def out(score: int, reason: str, contained: bool = False) -> dict:
        return {"score": score, "em": em, "f1": f1, "contained": contained, "reason": reason}

    if em:
        return out(5, "exact", True)
    words = answer_match.question_words(question)
    alts = answer_match.alternatives_for(question, [t for t in truths if not answer_match.YES_NO_LEAD.match(t)])
    yes_no = bool(alts) and alts.answer_side[0] in answer_match.YES_NO
    if answer_match.refusal(pred) and not any(answer_match.refusal(t) for t in truths):
        return out(0, "refusal")
    asked_text = f" {canon(question)} "
    multi = [e for t in truths if not (others and "," in t) and not answer_match.YES_NO_LEAD.match(t)
             and f" {canon(t)} " not in asked_text  # a title the question names ("Rich, Young and Pretty or …")
             and not (t != answer and canon(t.split(",")[0]) == canon(answer))  # alias "Arthur Peel, 1st Viscount …"
             for e in [answer_match.entities(t)] if len(e) > 1]
    text, marks = answer_match.mark_truths(pred, truths, one_entity=not multi and not yes_no,
                                           keep=(*alts.answer_side, *alts.competitors), asked=words)
    units = [m.group(1) for t in truths if (m := _NUMBER_UNIT.fullmatch(canon(t)))]
    # "40" for "40 points" when the question asks for the points: the noun is the question's
    # (only where the reply's number stands alone: "40 rebounds" is no "40 points")
    units += [m.group(1) for t in truths if (m := _NUMBER_NOUN.fullmatch(canon(t))) and
              set(m.group(2).split()) <= {*asked, *(w.rstrip("s") for w in asked)} and
              re.search(rf"(?<!\S){m.group(1)}(?!\s+[a-z])(?!\S)", canon(pred))]
    truths = [t for t in truths if not answer_match.short_caps(t) and not answer_match.shadowed(pred, t)]
    truths += units + marks
    before, final = answer_match.final_claim(text)
    if before and not yes_no:  # the cue itself ("No —") belongs to the correction, not to the final claim
        final = answer_match.CORRECTION.sub(" ", final, count=1)
    phrases = [*truths, *alts.answer_side, *alts.competitors, *(p for e in multi for p in e)]
    sides = [(t, "contained") for t in truths] + [(a, "alternative") for a in alts.answer_side]
    if before:
        earlier = answer_match.Reply.parse(before, phrases)
        later = answer_match.Reply.parse(final, phrases)
        if any(earlier.asserts(p, words, yes_no) for p, _ in sides) and \
                not any(later.asserts(p, words, yes_no) for p, _ in sides):
            return out(min(1, int(round(5 * f1))), "rejected")
    reply = answer_match.Reply.parse(final, phrases)
    why_not = None if yes_no else answer_match.doubt(final, [*truths, *alts.answer_side], question)
    held_back = out(3, why_not) if why_not else None
    partial = min(3, int(round(5 * max((answer_match.canon_f1(final, t) for t in truths), default=0.0))))
    if alts and not yes_no:
        winner = answer_match.comparison_winner(reply, [*alts.answer_side, *marks, *alts.competitors], words)
        if winner is not None:  # a marked surname ("Zanussi … was born before Thom Andersen") is the answer's side
            if winner not in (*alts.answer_side, *marks):
                return out(min(1, partial), "compared")
            return held_back or out(4, "compared", True)
        both = any(reply.mentions(a) for a in (*alts.answer_side, *marks)) and \
            any(reply.mentions(c) for c in alts.competitors)
        pick = None if not both or hedging(reply, final, sides) else \
            answer_match.picked_side(final, [*alts.answer_side, *marks], list(alts.competitors), words)
        if pick is not None:  # a marked partial name ("So Agnew died later.") is the answer's side too
            return (held_back or out(4, "picked", True)) if pick in (*alts.answer_side, *marks) \
                else out(min(1, partial), "picked")
    competitor = any(reply.asserts(c, words, yes_no) for c in alts.competitors)
    asserted = next((why for phrase, why in sides if reply.asserts(phrase, words, yes_no)), None)
    if not competitor and any(set(e) == set(answer_match.entities(final)) for e in multi):
        return held_back or out(5, "entities", True)
    if asserted is None and not competitor and any(all(reply.asserts(p, words) for p in e) for e in multi):
        asserted = "contained"
    if asserted is not None and not competitor:
        if hedging(reply, final, sides):
            return out(min(1, partial), "hedge")
        if not yes_no and (answer_match.extra_members(final, [t for t in truths if t not in marks], question)
                           or any(answer_match.extra_items(final, e) for e in multi)):
            return out(min(1, partial), "extra members")
        return held_back or out(4, asserted, True)
    if yes_no and not competitor and asserted is None:
        polarity = answer_match.yes_no_polarity(reply, words, final)
        if polarity is not None:
            return out(4, "polarity", True) if polarity == alts.answer_side[0] else out(0, "polarity")
    if not competitor and any(answer_match.covers(final, t, question) for t in truths) and \
            not any(answer_match.extra_items(final, e) for e in multi):
        return held_back or out(4, "covered", True)
    blocked = competitor or any(reply.mentions(phrase) and not reply.asserts(phrase, words, yes_no)
                                for phrase in [*(p for p, _ in sides), *(p for e in multi for p in e)])
    if blocked:
        return out(min(1, partial), "competitor" if competitor else "negated")
    return out(partial, "f1")


def hedging(reply: answer_match.Reply, final: str, sides: list[tuple[str, str]]) -> bool:
    """Candidates kept open: two hedge markers, "Y also fits", or every mention of the answer one side of an "or"."""
    if len(answer_match.HEDGE_MARKER.findall(final)) >= 2 or answer_match.ALSO_POSSIBLE.search(final):
        return True
    return any(reply.hedged(p) for p, _ in sides if reply.mentions(p)) and \
        not any(reply.mentions(p) and not reply.hedged(p) for p, _ in sides)


# --------------------------------------------------------------------------------------------- LLM judge
_SCORE_WORDS = {"zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
                "nine": 9, "ten": 10}
_VALUE = r"(?P<v>-?\d+(?:\.\d+)?|" + "|".join(_SCORE_WORDS) + r")(?![\w.]\d)"
_AFTER = r"(?P<after>\s*(?:(?:/|out\s+of|of)\s*(?P<of>\d+|five\b)|(?:-|–|—|to|or|and)\s*\d))?"
# a marked score: "Score: 4", "**Score:** 4/5", "final score is 4", "Rating - 2", '"score": 4', "(score 1)"; after
# criteria, the overall one: "Correctness: 5/5. Completeness: 3/5. Overall: 4", "Final: 4", "Points: 1 of 5"
_MARKER = re.compile(r"(?:\bscore|\brating|\bgrade|\boverall|\bfinal|\btotal|\bpoints?)\b[\"*_\s]*(?:is|of|=|:|-|–)?[\"*_\s]*[\[(]?\s*" + _VALUE + _AFTER,
                     re.I)
_SCALED_VALUE = re.compile(r"(?<![\w.-])" + _VALUE + r"\s*(?:/|out\s+of)\s*(?:5|five)\b(?![.,]\d)", re.I)  # "3/5", "3 out of 5"
_REVISED = re.compile(r"\b(?:actually|on (?:second thought|reflection)|edit(?:ed)?|revis\w*|correct\w*|updat\w*|"
                      r"final|chang\w*|instead|rather|re-?read\w*|reconsider\w*|wait)\b", re.I)
_JSON_SCORE = re.compile(r"[\"']score[\"']\s*:\s*[\"']?" + _VALUE + r"[\"']?\s*[,}\n]", re.I)
_SETTLED = re.compile(r"(?:\b(?:settle on|settling on|go with|going with|make it|change (?:it |that )?to|"
                      r"revise (?:it |that )?to)|\bactually\b[^.\d]{0,60}?\bso)\s+(?:a\s+)?" + _VALUE + r"\b", re.I)
_SUPPOSED = re.compile(r"\s*(?:would|requires?|needs?|is reserved|means|is for|should|could)\b", re.I)
_HEDGED_AFTER = re.compile(r"\s*[(,;—–-]?\s*(?:maybe|perhaps|possibly|or)\s+(?:a\s+)?" + _VALUE, re.I)
_RUBRIC = re.compile(r"\b[0-5]\s*=\s*[a-z][\w -]*", re.I)
_CONDITIONAL = re.compile(r"\b(?:if|unless|otherwise|depending)\b", re.I)
_WORDS = "|".join(_SCORE_WORDS)
# "I would rate this a four", "I'd score it 3"; not "give it 2 or 3", "rate it 7 out of 10"
_RATED = re.compile(r"\b(?:rat(?:e|es|ing)|giv(?:e|es|ing)|award(?:s|ing)?|assign(?:s|ing)?|scores?)\b[^.\n\d]{0,25}?\b(?:an?\s+)?(?P<v>\d+|" + _WORDS + r")\b"
                    r"(?!\s*(?:of|out|/|points?\s+out|[.,]\d|(?:and|or|to|-|–)\s*(?:an?\s+)?(?:\d|" + _WORDS + r")))",
                    re.I)
_CONCLUDED = re.compile(r"\b(?:so|thus|hence|therefore)\s*,?\s+(?:a\s+)?" + _VALUE + r"\W*$", re.I)  # "…, so zero."
_BARE = re.compile(r"^\W*" + _VALUE + r"\W*$", re.I)
_LEADING = re.compile(r"^\s*" + _VALUE + r"\s*(?:[.:)=—–-]|\s-)\s+\S", re.I)  # "4. The answer ...", "5 = fully"


def _value(token: str) -> int | None:
    """An integer 0–5 from a digit string or a score word; None for fractions and values out of range."""
    word = token.lower()
    if word in _SCORE_WORDS:
        value = _SCORE_WORDS[word]
    elif re.fullmatch(r"-?\d+(?:\.0+)?", token):
        value = int(float(token))  # "4.0" is 4; "4.5" is no score
    else:
        return None
    return value if 0 <= value <= 5 else None


def parse_score(reply: str | None) -> int | None:
    """The score an LLM judge's reply gives, or None (unparseable; never a zero). Rule ``judge_parse_v4`` (stored
    replies are read again by it when judgments are read):

    0. a JSON ``"score"`` key wins over everything in the explanation;
    1. else a *marked* score: the last "Score: N" / "Rating: N" / "final score is N" / ``{"score": N}`` marker
       (after per-criterion scores, the "Overall: N" / "Final: N" / "Total: N" / "Points: N of 5" one), or
       "N/5" / "N out of 5" (or "five"); a number elsewhere in the explanation never replaces it ("Score: 3 … 3 of 5
       pets" → 3); two marked scores that differ are unparseable unless the text between revises the first
       ("Score: 2 — actually, on reflection, Score: 4" → 4; "Score: 2\nScore: 3" → None); a marked score under a
       condition on its line is unparseable ("Score: 5 (if Oporto counts), otherwise 0"); a value the reply settles on
       after it counts ("Score: 5 — well, maybe 4 … I'll settle on 4" → 4), a hedge right after it does not
       ("Score: 2 (maybe 1)" → None), and a score the reply only supposes is no mark ("a score of 5 would need …");
    2. else a value the reply settles on ("between a 2 and a 3; I'll settle on 3"), a value after "rate" / "give" /
       "score" ("I would rate this a four", "I'd score it 3", "giving 4"; hedged, "I'd give it a 3, maybe 4", it is
       unparseable), a value the reply concludes with ("…, so zero."), a reply that is only a value ("4", "Four.",
       "**4**") or one that opens with one ("4. The answer …");
    3. else the integers 0–5 of the reply once scale mentions ("0-5", "out of 5") and rubric definitions ("0 =
       wrong, 5 = fully correct") are removed, if they are all the same value ("I would give this a 4" → 4).
    Score words are read ("Score: five" → 5), and "4.0" is 4. Out-of-range values ("Score: 7", "Score: -1"),
    fractions ("4.5"), ranges and hedges ("3-4", "3 or 4", "I'd say 4, maybe 5"), and other scales ("7/10") are
    unparseable.
    """
    text = (reply or "").strip()
    if not text:
        return None
    keyed = {_value(m.group("v")) for m in _JSON_SCORE.finditer(text)}
    if keyed:  # {"score": 1, "explanation": "… score 5 would need …"}: the key is the score
        return keyed.pop() if len(keyed) == 1 else None
    # "A score of 5 would require the year": a score the reply only supposes is no mark
    marked = [m for m in _MARKER.finditer(text) if not _SUPPOSED.match(text, m.end())]
    settled = list(_SETTLED.finditer(text, marked[-1].end() if marked else 0))  # "… I'll settle on 4"
    if marked:
        last = marked[-1]
        if last.group("after") and (last.group("of") is None or last.group("of").lower() not in ("5", "five")):
            return None  # "Score: 3-4", "Score: 7/10"
        values = [_value(m.group("v")) for m in marked]
        if settled:  # "Score: 5 — well, maybe 4 … I'll settle on 4"; "(… actually the same date, so 5)"
            return _value(settled[-1].group("v"))
        if _HEDGED_AFTER.match(text, last.end()):
            return None  # "Score: 2 (maybe 1)"
        revised = [m for m in _SCALED_VALUE.finditer(text, last.end()) if _REVISED.search(text[last.end():m.start()])]
        if revised:  # "Score: 2/5 -> on second thought 1/5": the revision is the score
            return _value(revised[-1].group("v"))
        if _CONDITIONAL.search(text[last.end():].split("\n")[0]):
            return None  # "Score: 5 (if Oporto counts as Porto), otherwise 0": two scores, one condition
        if len(marked) > 1 and values[-2] != values[-1] and \
                not _REVISED.search(text[marked[-2].end():marked[-1].start()]):
            return None  # "Score: 2\nScore: 3": two scores, neither revised
        return _value(last.group("v"))
    scaled = list(_SCALED_VALUE.finditer(text))
    if scaled:
        values = {_value(m.group("v")) for m in scaled}
        return values.pop() if len(values) == 1 else None
    if settled:
        return _value(settled[-1].group("v"))  # "between a 2 and a 3; I'll settle on 3"
    if (rated := _RATED.search(text)) and not re.search(r"\bbetween\b", text[rated.start():rated.start("v")], re.I):
        if _HEDGED_AFTER.match(text, rated.end()):
            return None  # "I'd give it a 3, maybe 4": hedged, as "I'd say 4, maybe 5"
        return _value(rated.group("v"))  # "I would rate this a four"; "give this between 2 and 3" is a range
    if concluded := _CONCLUDED.search(text):
        return _value(concluded.group("v"))  # "The answer names another person, so zero."
    for pattern in (_BARE, _LEADING):
        m = pattern.match(text)
        if m:
            return _value(m.group("v"))
    if any(int(m.group(1)) != 5 for m in _OTHER_SCALE.finditer(_SCALE.sub(" ", text))):
        return None
    text = _SCALE.sub(" ", _RUBRIC.sub(" ", text))  # "(0 = wrong, 5 = fully correct)" defines the scale
    found = {int(m.group(1)) for m in _INTEGER.finditer(text)}
    if len(found) != 1 or not 0 <= min(found) <= 5:
        return None
    return found.pop()


def judge_messages(prompt: protocol.Prompt, question: str, answer: str, prediction: str) -> llm.Messages:
    return [{"role": "user", "content": prompt.render(question=question, answer=answer, prediction=prediction)}]


# --------------------------------------------------------------------------------------------- running
def judge_name(judge: str) -> str:
    return judge if judge in OFFLINE else f"llm:{judge}"


def rule_version(judge: str) -> str | None:
    """The rule an offline judge's rows are written under (rows of another are judged again); None for LLMs."""
    from emb_s_core import equivalence

    return {REFERENCE: REFERENCE_VERSION, LEARNED: f"{equivalence.CODE_VERSION}+{REFERENCE_VERSION}"}.get(judge)


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
    if judge not in OFFLINE:
        if gateway is None:
            raise EmbSError("an LLM judge needs a model gateway", fix="pass --judge MODEL (a litellm model string).")
        gateway.check_credentials()
        gateway, asked = structured.asking(gateway, structured.JUDGE)  # the score in one field where supported
    prompt = protocol.load_prompt("judge")
    for start in range(0, len(todo), batch_size):
        chunk = todo.iloc[start:start + batch_size]
        if judge in OFFLINE:
            from emb_s_core import equivalence

            read = reference_score if judge == REFERENCE else equivalence.score
            rows = []
            for a, t, al, q in zip(chunk["answer"], chunk["true_answer"], chunk["answer_aliases"],
                                   chunk["question"]):
                got = read(a, t, list(al) if al is not None else [], question=q)
                rows.append({"score": float(got["score"]), "status": llm.OK, "raw": got["reason"],
                             "prompt_version": rule_version(judge), "cost": 0.0})
        else:
            batch = [judge_messages(prompt, q, t, a) for q, t, a in
                     zip(chunk["question"], chunk["true_answer"], chunk["answer"])]
            results = gateway.complete_many(batch, salts=[int(r) or None for r in chunk["repeat"]])
            rows = []
            for res in results:
                score = parse_score(structured.unwrap(structured.JUDGE, res.text)) if res.status == llm.OK else None
                status = res.status if res.status != llm.OK else (llm.OK if score is not None else UNPARSEABLE)
                rows.append({"score": None if score is None else float(score), "status": status,
                             "raw": (res.text or res.error or "")[:RAW_LIMIT],
                             "prompt_version": prompt.version + (structured.SUFFIX if asked else ""),
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
    if judge in OFFLINE:  # rows of an older rule are judged again
        done = done[done["prompt_version"] == rule_version(judge)]
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
