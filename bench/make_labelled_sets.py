"""Write the labelled sets the judges and parsers are measured on (issue 22): ``emb_s_core/labelled/*.jsonl``.

    nice python3 bench/make_labelled_sets.py        # reads /work/shared/data (or $EMB_S_SHARED_DATA), seed 22

Three sets, each item labelled by what the reply means (the template says what the reply claims; the label is
whether that claim answers the question — never what a judge says):

- ``answers.jsonl`` — (question, gold, aliases, reply, correct) from HotpotQA, MuSiQue, 2Wiki, LoCoMo and the demo
  bank, replies in the styles real models write: verbose, markdown, other date formats, digits / words, partial
  names, accents, aliases, yes/no without the word, comparisons naming both sides, hedges, answers rejected inside
  reasoning, refusals, lists with extra members, the gold as a modifier, short upper-case aliases, plus hand-written
  items (``hand``). ``correct`` = the reply's final claim answers the question fully (an incomplete date or list is
  not correct; a hedge between two candidates is not correct).
- ``judge_replies.jsonl`` — LLM-judge replies and the score they give (``null`` = gives none / ambiguous).
- ``localize_replies.jsonl`` — localization replies, the ids shown in the context, K, and the ids they name.

Split: every item has ``split`` = ``held_out`` or ``tune``, from a seeded hash of its question (or reply), about
40% held out. Rules were tuned looking only at ``tune`` items; ``held_out`` figures are the ones to quote.
"""
from __future__ import annotations

import hashlib
import json
import os
import random
import re
import sys
import unicodedata
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "emb_s_core" / "labelled"
DATA = Path(os.environ.get("EMB_S_SHARED_DATA", ROOT.parent / "shared" / "data"))
SEED = 22
HELD_OUT_SHARE = 0.4
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]
_ONES = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
         "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
_TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]


def split_of(key: str) -> str:
    h = int(hashlib.sha256(f"{SEED}:{key}".encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
    return "held_out" if h < HELD_OUT_SHARE else "tune"


def words_of(n: int) -> str:
    """English words of 0 ≤ n < 10^9 (written here, not shared with the judge, so the set does not echo it)."""
    if n < 20:
        return _ONES[n]
    if n < 100:
        return _TENS[n // 10] + ("" if n % 10 == 0 else "-" + _ONES[n % 10])
    if n < 1000:
        return _ONES[n // 100] + " hundred" + ("" if n % 100 == 0 else " and " + words_of(n % 100))
    for size, name in ((10 ** 6, "million"), (1000, "thousand")):
        if n >= size:
            rest = n % size
            return words_of(n // size) + f" {name}" + ("" if rest == 0 else (" and " if rest < 100 else " ")
                                                       + words_of(rest))
    raise ValueError(n)


def fold(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


# --------------------------------------------------------------------------------------------- questions
def load_questions() -> list[dict]:
    from emb_s_core.sources import hotpotqa, locomo, musique, synthetic, twowiki

    files = {"hotpotqa": (hotpotqa.read, DATA / "hotpotqa-dev-distractor-500" / "dev_subsampled.jsonl"),
             "musique": (musique.read, DATA / "musique-ans-200" / "musique.jsonl"),
             "2wiki": (twowiki.read, DATA / "2wikimultihopqa-200" / "2wikimultihopqa.jsonl"),
             "locomo": (locomo.read, DATA / "locomo10" / "locomo10.json")}
    out = []
    for name, (read, path) in files.items():
        if not path.is_file():
            raise SystemExit(f"{path} not found: set EMB_S_SHARED_DATA to the shared data folder")
        out += [{"dataset": name, "qid": q.qid, "question": q.text, "gold": q.answer,
                 "aliases": list(q.answer_aliases or [])} for q in read(path).queries]
    out += [{"dataset": "demo", "qid": q.qid, "question": q.text, "gold": q.answer,
             "aliases": list(q.answer_aliases or [])} for q in synthetic.generate(tokens=60_000).queries]
    return out


_DATE_DMY = re.compile(r"^(\d{1,2}) (" + "|".join(MONTHS) + r") (\d{4})$")
_DATE_MDY = re.compile(r"^(" + "|".join(MONTHS) + r") (\d{1,2}), (\d{4})$")
_DATE_MY = re.compile(r"^(" + "|".join(MONTHS) + r") (\d{4})$")
_NUMBER = re.compile(r"^\$?\d{1,3}(,\d{3})*$|^\d+$")
_COMPARATIVES = {"older": "younger", "younger": "older", "earlier": "later", "later": "earlier",
                 "first": "later", "more": "fewer", "larger": "smaller", "taller": "shorter", "longer": "shorter",
                 "higher": "lower", "recently": "earlier"}


def kind_of(q: dict) -> str:
    from emb_s_core import answer_match

    g = q["gold"].strip()
    if g.lower() in ("yes", "no"):
        return "yesno"
    if _DATE_DMY.match(g) or _DATE_MDY.match(g) or _DATE_MY.match(g):
        return "date"
    if re.fullmatch(r"1\d{3}|20\d\d", g):
        return "year"
    if _NUMBER.match(g) or g.lower() in _ONES[1:]:
        return "number"
    alts = answer_match.alternatives_for(q["question"], [g, *q["aliases"]])
    if alts and answer_match.normalize(alts.answer_side[0]) not in answer_match.YES_NO \
            and g.lower() not in ("yes", "no") and len(g) < 60:
        return "comparison"
    if q["dataset"] == "locomo" and g.count(",") >= 1 and len(g) < 90 and " because " not in g \
            and not re.search(r"\d|" + "|".join(MONTHS), g):
        return "list"
    words = g.split()
    if q["question"].lower().startswith("who") and 2 <= len(words) <= 3 and all(w[:1].isupper() for w in words):
        return "person"
    if len(words) <= 6:
        return "short"
    return "long"


# --------------------------------------------------------------------------------------------- replies
def date_parts(g: str) -> tuple[int | None, int, int]:
    m = _DATE_DMY.match(g)
    if m:
        return int(m.group(1)), MONTHS.index(m.group(2)) + 1, int(m.group(3))
    m = _DATE_MDY.match(g)
    if m:
        return int(m.group(2)), MONTHS.index(m.group(1)) + 1, int(m.group(3))
    m = _DATE_MY.match(g)
    return None, MONTHS.index(m.group(1)) + 1, int(m.group(2))


def date_replies(g: str, rng: random.Random) -> list[tuple[str, bool, str]]:
    d, m, y = date_parts(g)
    mon = MONTHS[m - 1]
    if d is None:
        return [(f"{mon}, {y}", True, "date: month, year"), (f"{y}-{m:02d}", True, "date: ISO month"),
                (f"It happened in {mon[:3]}. {y}.", True, "date: abbreviated month"),
                (f"{MONTHS[m % 12]} {y}", False, "date: other month"), (f"{mon} {y + 1}", False, "date: other year"),
                (f"In {y}.", False, "date: year only (incomplete)")]
    other_d = d + 1 if d < 28 else d - 1
    out = [(f"{mon} {d}, {y}", True, "date: US order"), (f"{y}-{m:02d}-{d:02d}", True, "date: ISO"),
           (f"The {d}{'th' if d in (11, 12, 13) else {1: 'st', 2: 'nd', 3: 'rd'}.get(d % 10, 'th')} of {mon}, {y}",
            True, "date: ordinal day"),
           (f"It was on {mon[:3]}. {d}, {y}.", True, "date: abbreviated month in a sentence"),
           (f"{mon} {other_d}, {y}", False, "date: other day, US order"),
           (f"{y + 1}-{m:02d}-{d:02d}", False, "date: other year, ISO"),
           (f"{mon} {y}", False, "date: month and year only (incomplete)")]
    if d > 12:
        out += [(f"{d}/{m}/{y}", True, "date: numeric day first"), (f"{m}/{d}/{y}", True, "date: numeric month first")]
    else:
        out += [(f"{d:02d}.{m:02d}.{y}", True, "date: dotted day first")]
    rng.shuffle(out)
    return out[:6]


def number_replies(q: dict) -> list[tuple[str, bool, str]]:
    g = q["gold"].strip()
    n = _ONES.index(g.lower()) if g.lower() in _ONES else int(g.replace(",", "").lstrip("$"))
    money = g.startswith("$")
    out = []
    if g.lower() in _ONES or not g.isdigit() or n < 100:
        out += [(f"{n}" if not g[0].isdigit() or "," in g or money else words_of(n).capitalize(), True,
                 "number: digits/words swapped")]
    out += [(f"The answer is {n:,}{' dollars' if money else ''}.", True, "number: separators, unit words"),
            (f"{n + 1:,}" if money is False else f"${n + 1:,}", False, "number: off by one"),
            (f"About {n:,} or {n + 7:,}.", False, "number: hedge between two")]
    if n < 1000:
        out += [(f"There were {words_of(n)}.", True, "number: words in a sentence"),
                (f"{words_of(n + 2)}", False, "number: other number in words")]
    else:
        out += [(f"{n}", True, "number: no separator"), (f"{n * 10:,}", False, "number: an extra digit")]
    return out


def year_replies(g: str) -> list[tuple[str, bool, str]]:
    y = int(g)
    return [(f"In {y}.", True, "year: in a sentence"), (f"That was in the year {y}.", True, "year: verbose"),
            (f"{y - 1}", False, "year: another year"), (f"{y} or {y + 4}", False, "year: hedge between two"),
            (f"Around {y - 20}, I think.", False, "year: another year, hedged")]


def person_replies(q: dict, other: str) -> list[tuple[str, bool, str]]:
    g = q["gold"]
    first, last = g.split()[0], g.split()[-1]
    other_first = other.split()[0] if other.split() and other.split()[0] != first else "Robert"
    return [(f"{last}.", True, "person: surname only"), (f"It was {last}.", True, "person: surname in a sentence"),
            (f"{other_first} {last}", False, "person: same surname, other first name"),
            (f"{other}, son of {g}", False, "person: gold as a modifier"),
            (f"{other}, the successor of {g}.", False, "person: gold as a modifier (successor)"),
            (f"{g}'s collaborator, {other}", False, "person: gold as possessive modifier")]


def yesno_replies(q: dict) -> list[tuple[str, bool, str]]:
    yes = q["gold"].strip().lower() == "yes"
    ql = q["question"].lower()
    same = " same " in ql
    both = " both " in ql
    if same:
        pos, neg = "They share the same one.", "They are different."
    elif both:
        pos, neg = "Both of them are.", "Only one of them is."
    else:
        pos, neg = "That is correct.", "That is not the case."
    out = [(pos, yes, "yes/no: positive without the word"), (neg, not yes, "yes/no: negative without the word"),
           ("Yes, that's right.", yes, "yes/no: yes with words"), ("No, they are not.", not yes,
                                                                   "yes/no: no with words"),
           ("No idea.", False, "refusal: no idea"), ("I don't know.", False, "refusal: don't know"),
           ("No information is given in the documents.", False, "refusal: no information"),
           ("Yes or no, hard to say.", False, "yes/no: hedge"),
           ("Correct." if yes else "Incorrect.", True, "yes/no: one word without yes/no")]
    return out


def comparison_replies(q: dict) -> list[tuple[str, bool, str]]:
    from emb_s_core import answer_match

    alts = answer_match.alternatives_for(q["question"], [q["gold"], *q["aliases"]])
    a, c = alts.answer_side[0], alts.competitors[0]
    words = re.findall(r"[a-z]+", q["question"].lower())
    cmp = next((w for w in words if w in _COMPARATIVES), None)
    out = [(f"{a}.", True, "comparison: the side"), (c, False, "comparison: the other side"),
           (f"Either {a} or {c}.", False, "hedge: either"), (f"{a} or {c}", False, "hedge: or"),
           (f"{c}? No — it is {a}.", True, "reasoning: competitor rejected, answer final"),
           (f"{a}? No — it is {c}.", False, "reasoning: answer rejected")]
    if re.search(r"director|whose|has the|\bby\b", q["question"].lower()):
        cmp = None
    if cmp and cmp not in ("first", "recently"):
        anti = _COMPARATIVES[cmp]
        out += [(f"{a} is {cmp} than {c}.", True, "comparison: answer first, question's comparative"),
                (f"{c} is {anti} than {a}.", True, "comparison: both sides, antonym"),
                (f"{c} is {cmp} than {a}.", False, "comparison: competitor is the comparative"),
                (f"{a} is {anti} than {c}.", False, "comparison: answer first, antonym")]
    elif cmp in ("first", "recently"):
        before = cmp != "recently"
        out += [(f"{a} came {'before' if before else 'after'} {c}.", True, "comparison: before/after"),
                (f"{c} came {'before' if before else 'after'} {a}.", False, "comparison: before/after, wrong")]
    return out


def list_replies(q: dict, other: str) -> list[tuple[str, bool, str]]:
    parts = [p.strip() for p in re.split(r",\s*(?:and\s+)?|\s+and\s+", q["gold"]) if p.strip()]
    extra = other.split(",")[0].strip() or "swimming"
    rev = list(reversed(parts))
    return [(", ".join(rev[:-1]) + " and " + rev[-1], True, "list: reordered"),
            (f"They are {', '.join(parts)}.", True, "list: in a sentence"),
            (", ".join(parts) + f", and {extra}", False, "list: an extra member"),
            (", ".join(parts[:-1]) + ".", False, "list: a member missing")]


def generic_replies(q: dict, other: str) -> list[tuple[str, bool, str]]:
    g = q["gold"]
    out = [(g, True, "plain"), (f"The answer is {g}.", True, "verbose"), (f"**{g}**", True, "markdown"),
           (f"Based on the documents, the answer is {g}.", True, "verbose lead-in"),
           (f"I believe it is {g}.", True, "one candidate, mild hedge"),
           (other, False, "other answer"), (f"The answer is {other}.", False, "other answer, verbose"),
           (f"Either {g} or {other}.", False, "hedge: either"),
           (f"{g}? No — the documents say {other}.", False, "reasoning: answer rejected"),
           (f"At first I thought {other}, but actually it is {g}.", True, "reasoning: correction to the answer"),
           (f"It is not {g}.", False, "negated"),
           ("The documents do not say.", False, "refusal: not stated"),
           ("I cannot determine this from the context.", False, "refusal: cannot determine")]
    folded = fold(g)
    if folded != g:
        out += [(folded, True, "accent folded"), (f"The answer is {folded}.", True, "accent folded, verbose")]
    for al in q["aliases"][:2]:
        out += [(al, True, "alias"), (f"It is {al}.", True, "alias, verbose")]
    return out


def replies_for(q: dict, kind: str, other: str, rng: random.Random) -> list[tuple[str, bool, str]]:
    gen = generic_replies(q, other)
    rng.shuffle(gen)
    keep = [r for r in gen if r[2] in ("accent folded", "alias")]
    if kind == "date":
        return date_replies(q["gold"], rng) + gen[:3] + keep
    if kind == "year":
        return year_replies(q["gold"]) + gen[:2] + keep
    if kind == "number":
        return number_replies(q) + gen[:2] + keep
    if kind == "yesno":
        return yesno_replies(q)
    if kind == "comparison":
        return comparison_replies(q) + gen[:2]
    if kind == "list":
        return list_replies(q, other) + gen[:2]
    if kind == "person":
        return person_replies(q, other) + gen[:3] + keep
    return gen[:6] + keep


def round1_replies(q: dict, kind: str, other: str) -> list[tuple[str, bool, str]]:
    """Round-1 held-out phrasings (style ``r1: …``): written after the first tuning, measured once on held-out
    questions only (figures in bench/RESULTS.md), then made ordinary templates for every question and tuned on."""
    g = q["gold"]
    out = [(f"Final answer: {g}", True, "r1: final answer marker"), (f"{g}!", True, "r1: exclamation"),
           (f"I'm fairly confident it's {g}.", True, "r1: confident"),
           (f"{g} — according to the second passage.", True, "r1: source after a dash"),
           (f"It's {other}, definitely not {g}.", False, "r1: other, answer denied"),
           (f"Could be {g}, could be {other}.", False, "r1: hedge without or"),
           (f"Hmm, {g}... no wait, {other}.", False, "r1: answer withdrawn"),
           ("The context doesn't mention it.", False, "r1: refusal")]
    if kind == "date" and date_parts(g)[0] is not None:
        d, m, y = date_parts(g)
        out += [(f"{d}-{MONTHS[m - 1][:3]}-{y}", True, "r1: date d-Mon-yyyy"),
                (f"{MONTHS[m - 1]} {d} {y}", True, "r1: date without comma"),
                (f"{y}/{m:02d}/{d:02d}", True, "r1: date yyyy/mm/dd"),
                (f"{MONTHS[m % 12]} {d}, {y}", False, "r1: date, other month")]
    if kind == "yesno":
        yes = g.strip().lower() == "yes"
        out = [("Absolutely.", yes, "r1: yes without the word"), ("Nope.", not yes, "r1: nope"),
               ("Not at all.", not yes, "r1: not at all"), ("I'm not certain.", False, "r1: refusal")]
    if kind == "number":
        n = int(g.replace(",", "").lstrip("$")) if g.replace(",", "").lstrip("$").isdigit() else None
        if n is not None:
            out += [(f"{n:,} in total.", True, "r1: number in total"),
                    (f"{n + 10:,} in total.", False, "r1: other number in total")]
    if kind == "comparison":
        from emb_s_core import answer_match

        alts = answer_match.alternatives_for(q["question"], [g, *q["aliases"]])
        a, c = alts.answer_side[0], alts.competitors[0]
        out += [(f"Between the two, {a}.", True, "r1: between the two"),
                (f"Between the two, {c}.", False, "r1: between the two, other")]
    if kind == "list":
        parts = [p.strip() for p in re.split(r",\s*(?:and\s+)?|\s+and\s+", g) if p.strip()]
        out += [(" & ".join(parts), True, "r1: list with &"),
                (", ".join(parts) + " plus " + (other.split(",")[0].strip() or "tea"), False,
                 "r1: list plus another")]
    if kind == "person":
        out += [(f"Mr. {g.split()[-1]}", True, "r1: title and surname")]
    return out


def round2_replies(q: dict, kind: str, other: str) -> list[tuple[str, bool, str]]:
    """Round-2 held-out phrasings (style ``r2: …``): written after tuning on round 1, measured once on held-out
    questions only (figures in bench/RESULTS.md), then made ordinary templates and tuned on."""
    g = q["gold"]
    out = [(f"{g}, if I'm reading the documents right.", True, "r2: trailing hedge clause"),
           (f"The documents point to {g}.", True, "r2: point to"), (f"It must be {g}.", True, "r2: must be"),
           (f"Not {g} — {other}.", False, "r2: not answer, dash, other"),
           (f"{other}. (I first considered {g}.)", False, "r2: answer only considered"),
           ("Sorry, I can't find that.", False, "r2: refusal, can't find")]
    if kind not in ("list", "yesno", "comparison"):
        out += [(f"{g} and also {other}", False, "r2: and also another")]
    if kind == "date" and date_parts(g)[0] is not None:
        d, m, y = date_parts(g)
        out += [(f"{MONTHS[m - 1]} the {d}th, {y}", True, "r2: date, month the dth"),
                (f"{d} {MONTHS[m - 1]} {y + 1}", False, "r2: date, next year")]
    if kind == "yesno":
        yes = g.strip().lower() == "yes"
        out = [("Yep, they are.", yes, "r2: yep"), ("Nah.", not yes, "r2: nah"),
               ("They definitely are not.", not yes, "r2: definitely not"), ("Can't say.", False,
                                                                               "r2: refusal, can't say")]
    if kind == "number" and g.replace(",", "").isdigit() and int(g.replace(",", "")) < 100:
        out += [(f"There are {words_of(int(g))} of them.", True, "r2: number words, of them")]
    if kind == "comparison":
        from emb_s_core import answer_match

        alts = answer_match.alternatives_for(q["question"], [g, *q["aliases"]])
        a, c = alts.answer_side[0], alts.competitors[0]
        out += [(f"{a}, by a wide margin.", True, "r2: by a wide margin"),
                (f"{c} is the answer, not {a}.", False, "r2: other is the answer, not answer"),
                (f"I'd go with {a}.", True, "r2: go with")]
    if kind == "list":
        parts = [p.strip() for p in re.split(r",\s*(?:and\s+)?|\s+and\s+", g) if p.strip()]
        out += [(f"Just {parts[0]}.", False, "r2: list, one member only")]
    return out


def round3_replies(q: dict, kind: str, other: str) -> list[tuple[str, bool, str]]:
    """Round-3 held-out phrasings (style ``r3: …``): written after tuning on round 2, measured once on held-out
    questions only (figures in bench/RESULTS.md), then made ordinary templates and tuned on."""
    g = q["gold"]
    out = [(f"From what the passages say, {g}.", True, "r3: from what the passages say"),
           (f"{g} (see the first document).", True, "r3: parenthetical source"),
           (f"The correct answer should be {g}.", True, "r3: should be"),
           (f"{other} — {g} is a common mistake here.", False, "r3: answer called a mistake"),
           (f"My guess: {other}.", False, "r3: guess other"),
           ("There's not enough information to answer.", False, "r3: refusal, not enough information"),
           (f"{g}; {other} also fits.", False, "r3: answer and another fits")]
    if kind == "date" and date_parts(g)[0] is not None:
        d, m, y = date_parts(g)
        out += [(f"{d} {MONTHS[m - 1][:3]} {y}", True, "r3: date d Mon yyyy"),
                (f"{MONTHS[m - 1]} {y}, on the {d}th", True, "r3: month year, day after"),
                (f"{y}", False, "r3: date, year only")]
    if kind == "yesno":
        yes = g.strip().lower() == "yes"
        out = [("Of course.", yes, "r3: of course"), ("Negative.", not yes, "r3: negative"),
               ("They are the same, yes.", yes, "r3: same, yes"), ("It is unclear.", False,
                                                                     "r3: refusal, unclear")]
    if kind == "comparison":
        from emb_s_core import answer_match

        alts = answer_match.alternatives_for(q["question"], [g, *q["aliases"]])
        a, c = alts.answer_side[0], alts.competitors[0]
        out += [(f"The answer is {a}, not {c}.", True, "r3: answer, not other"),
                (f"It's {c} — {a} comes second.", False, "r3: other, answer second")]
    if kind == "number" and g.replace(",", "").isdigit():
        n = int(g.replace(",", ""))
        out += [(f"A total of {n:,}.", True, "r3: a total of"), (f"Roughly {n * 2:,}.", False,
                                                                    "r3: roughly double")]
    if kind == "person":
        out += [(f"{g.split()[0]}", False, "r3: first name only")]
    return out


def unseen_replies(q: dict, kind: str, other: str) -> list[tuple[str, bool, str]]:
    """Round-4 phrasings (style ``unseen: …``), written after tuning on round 3, for held-out questions only and
    never tuned on: they say how the rule does on wording it has not seen."""
    g = q["gold"]
    out = [(f"Answer — {g}", True, "unseen: answer dash"), (f"That would be {g}.", True, "unseen: that would be"),
           (f"Looking at the evidence, I'd say {g}.", True, "unseen: looking at the evidence"),
           (f"{g} is what the text claims, but that is outdated; today it is {other}.", False,
            "unseen: answer called outdated"),
           (f"Not sure between {g} and {other}.", False, "unseen: not sure between two"),
           (f"Most likely {other}.", False, "unseen: most likely other"),
           ("No relevant information was found.", False, "unseen: refusal, nothing found"),
           (f"{other} ({g} is wrong).", False, "unseen: other, answer wrong in parentheses")]
    if kind == "date" and date_parts(g)[0] is not None:
        d, m, y = date_parts(g)
        out += [(f"on {MONTHS[m - 1]} {d}, {y}", True, "unseen: on Month d, yyyy"),
                (f"{y}-{m:02d}", False, "unseen: date, ISO month only")]
    if kind == "yesno":
        yes = g.strip().lower() == "yes"
        out = [("Yes indeed.", yes, "unseen: yes indeed"), ("Definitely not.", not yes, "unseen: definitely not"),
               ("They did, yes.", yes, "unseen: they did, yes"), ("I have no way of knowing.", False,
                                                                  "unseen: refusal, no way of knowing")]
    if kind == "comparison":
        from emb_s_core import answer_match

        alts = answer_match.alternatives_for(q["question"], [g, *q["aliases"]])
        a, c = alts.answer_side[0], alts.competitors[0]
        out += [(f"Of the two, {a}.", True, "unseen: of the two"),
                (f"{a}, though some sources say {c}.", False, "unseen: answer, others say the other")]
    if kind == "number" and g.replace(",", "").isdigit():
        n = int(g.replace(",", ""))
        out += [(f"Exactly {n:,}.", True, "unseen: exactly"), (f"Fewer than {n:,}.", False, "unseen: fewer than")]
    if kind == "person":
        out += [(f"Professor {g.split()[-1]}", True, "unseen: professor and surname")]
    return out


HAND = [  # written by hand from the issue's examples and the shared datasets' questions
    ("Which university did he attend?", "Charles University", [], "Charles University? No — he was at the University "
     "of Vienna.", False, "reasoning: answer rejected"),
    ("Which university did he attend?", "University of Vienna", [], "Charles University? No — he was at the "
     "University of Vienna.", True, "reasoning: answer final"),
    ("In what year was the cathedral consecrated?", "1216", [], "1216 or 1220", False, "hedge: or"),
    ("Which town is the club based in?", "Stanley", [], "Either Stanley or New Town", False, "hedge: either"),
    ("Are both Jim McBride and Neil Jordan American?", "no", [], "No idea.", False, "refusal: no idea"),
    ("Who was the son of Sir Francis Baring?", "Henry Baring", [], "Henry Baring, son of Sir Francis Baring", True,
     "person: answer first, father as modifier"),
    ("Who was the father of Henry Baring?", "Sir Francis Baring", [], "Henry Baring, son of Sir Francis Baring", False,
     "person: gold as a modifier"),
    ("Which state is Portland in?", "Maine", ["ME"], "Let me think. It is Oregon.", False, "short alias: 'me' in words"),
    ("Which state is Portland in?", "Maine", ["ME"], "ME", True, "short alias: the alias"),
    ("Which country hosted the summit?", "United States", ["US"], "Let us see: it was Canada.", False,
     "short alias: 'us' in words"),
    ("Which country hosted the summit?", "United States", ["US"], "The US hosted it.", True, "short alias in a sentence"),
    ("Which company made the printer?", "Hewlett-Packard", [], "HP", True, "acronym of the gold"),
    ("Which company made the printer?", "Hewlett-Packard", [], "It was made by hp, I think... no, by Canon.", False,
     "reasoning: acronym rejected"),
    ("When was Pope Paul III born?", "25 December 1505", [], "December 25, 1505", True, "date: US order"),
    ("When was Pope Paul III born?", "25 December 1505", [], "1505-12-25", True, "date: ISO"),
    ("When was Pope Paul III born?", "25 December 1505", [], "25/12/1505", True, "date: numeric"),
    ("How many children did she have?", "five", [], "5", True, "number: digits for words"),
    ("How many children did she have?", "five", [], "She had 5 children.", True, "number: digits in a sentence"),
    ("How many children did she have?", "five", [], "Four or five.", False, "hedge: or"),
    ("Who starred as the lead in the film?", "Matt Damon", [], "Damon", True, "person: surname only"),
    ("Which school did he attend?", "Eton College", [], "Eton", True, "partial name: institution"),
    ("Which city was he born in?", "Montreal", [], "Montréal", True, "accent added"),
    ("Which city was he born in?", "Montréal", [], "Montreal, Quebec.", True, "accent folded"),
    ("Were Scott Derrickson and Ed Wood of the same nationality?", "yes", [], "Both were American.", True,
     "yes/no: positive without the word"),
    ("Were Scott Derrickson and Ed Wood of the same nationality?", "yes", [], "Both were American? No, they were "
     "not.", False, "reasoning: yes rejected"),
    ("Who is older, Annie Morton or Terry Richardson?", "Terry Richardson", [],
     "Annie Morton is younger than Terry Richardson.", True, "comparison: both sides, antonym"),
    ("Who is older, Annie Morton or Terry Richardson?", "Terry Richardson", [],
     "Terry Richardson or Annie Morton", False, "hedge: or"),
    ("Who is older, Annie Morton or Terry Richardson?", "Terry Richardson", [],
     "Terry Richardson is younger than Annie Morton.", False, "comparison: answer first, antonym"),
    ("Are the Laleli Mosque and Esma Sultan Mansion located in the same neighborhood?", "no", [],
     "They are in different neighbourhoods.", True, "yes/no: negative without the word"),
    ("Are the Laleli Mosque and Esma Sultan Mansion located in the same neighborhood?", "no", [],
     "Not mentioned in the documents.", False, "refusal: not mentioned"),
    ("What pets does Caroline have?", "guinea pig", [], "A guinea pig and a cat.", False, "list: an extra member"),
    ("What was the average salary?", "$59,039", [], "59039 dollars", True, "number: currency as a word"),
    ("What was the average salary?", "$59,039", [], "$59,309", False, "number: digits swapped"),
    ("Which season was the runner-up on?", "season three", [], "Season 3", True, "number: words for digits"),
    ("Which season was the runner-up on?", "season three", [], "the third season", True, "number: ordinal"),
    ("When did Melanie paint the sunrise?", "2022", [], "In 2022, I think.", True, "one candidate, mild hedge"),
    ("When did Deborah visit Brazil?", "2020", [], "In 2021 — not 2020.", False, "negated after the claim"),
    ("What is the capital of Turkey's European province?", "Edirne", ["Adrianople"], "Adrianople", True, "alias"),
]


def answers_set(rng: random.Random) -> list[dict]:
    questions = load_questions()
    by_ds: dict[str, list[dict]] = {}
    for q in questions:
        q["kind"] = kind_of(q)
        by_ds.setdefault(q["dataset"], []).append(q)
    quota = {"hotpotqa": 7, "musique": 6, "2wiki": 6, "locomo": 6, "demo": 4}  # questions per (dataset, kind)
    items = []
    for ds, qs in by_ds.items():
        rng.shuffle(qs)
        kinds: dict[str, list[dict]] = {}
        for q in qs:
            kinds.setdefault(q["kind"], []).append(q)
        for kind, group in sorted(kinds.items()):
            if kind == "long":
                continue
            for q in group[:quota[ds]]:
                differs = [o for o in qs if fold(o["gold"]).lower().strip(". ") != fold(q["gold"]).lower().strip(". ")]
                others = [o for o in group if o in differs] or differs
                other = rng.choice(others)["gold"]
                split = split_of(f"{ds}:{q['qid']}")
                extra = round1_replies(q, kind, other) + round2_replies(q, kind, other) + \
                    round3_replies(q, kind, other) + (unseen_replies(q, kind, other) if split == "held_out" else [])
                for reply, correct, style in replies_for(q, kind, other, rng) + extra:
                    items.append({"dataset": ds, "qid": q["qid"], "kind": kind, "question": q["question"],
                                  "gold": q["gold"], "aliases": q["aliases"], "reply": reply, "correct": correct,
                                  "style": style, "split": split})
    for i, (question, gold, aliases, reply, correct, style) in enumerate(HAND):
        items.append({"dataset": "hand", "qid": f"hand{i:02d}", "kind": "hand", "question": question, "gold": gold,
                      "aliases": aliases, "reply": reply, "correct": correct, "style": style,
                      "split": split_of(f"hand:{question}:{reply}")})
    return items


# --------------------------------------------------------------------------------------------- judge replies
def judge_set() -> list[dict]:
    """LLM-judge replies and the score each gives (None: no score, or an ambiguous / out-of-range one)."""
    words = ["zero", "one", "two", "three", "four", "five"]
    out: list[tuple[str, int | None, str]] = []
    for n in range(6):
        other = (n + 2) % 6
        out += [(f"{n}", n, "bare integer"), (f"Score: {n}", n, "marker"),
                (f"Score: {n}\n\nReasoning: the prediction lists {other} of 5 pets.", n, "marker, number in reasoning"),
                (f'{{"score": {n}, "reason": "{other} words differ"}}', n, "json"),
                (f"Score: {words[n]}", n, "marker, score word"),
                (f"The predicted answer deserves a {n} out of 5 because {other} details are missing.", n,
                 "prose with scale"),
                (f"**Score:** {n}/5", n, "markdown marker with scale")]
    out += [(f"Score = {n}", n, "equals marker") for n in range(6)]
    out += [(f"{n}. The answer names {other} things.", n, "integer first, then prose")
            for n, other in ((1, 3), (4, 2), (2, 5))]
    out += [("Score: 3\n\nReasoning: The prediction lists 3 of 5 pets.", 3, "issue example"),
            ("The prediction is wrong (score 1); a perfect answer would get 5.", 1, "issue example"),
            ("Score: 4. The answer has 2 extra words.", 4, "issue example"),
            ("I'd say 4, maybe 5.", None, "hedge"), ("Score: -1", None, "out of range"),
            ("Score: 7", None, "out of range"), ("7/10", None, "other scale"), ("3 or 4", None, "ambiguous"),
            ("Four.", 4, "score word alone"), ("Score: five", 5, "score word"), ("Score: 3-4", None, "range"),
            ("The answer is correct and matches the true answer.", None, "no score"),
            ("Score: 2.5", None, "not an integer"), ('{"score": 9}', None, "json out of range"),
            ("Final score: 4", 4, "final marker"), ("Score: 2\nFinal score: 3", 3, "revised marker: the last marker"),
            ("Rating: 5 — fully correct.", 5, "rating marker"), ("", None, "empty"),
            ("Between 3 and 4.", None, "range in words"), ("Score: 5 (fully correct; 0 would be no answer)", 5,
                                                           "marker, scale words after")]
    return [{"reply": r, "score": s, "style": st, "split": split_of(f"judge:{r}")} for r, s, st in out]


# --------------------------------------------------------------------------------------------- localization replies
def localize_set() -> list[dict]:
    ctx = [7, 12, 40, 3, 4, 5, 6, 1234, 1999, 2000, 17, 88, 301]
    rows = [
        ("40, 7", 2, [40, 7], "plain"), ("[40, 7]", 2, [40, 7], "json list"),
        ("1. DocID 40\n2. DocID 7", 2, [40, 7], "numbered list with DocID"),
        ("1. 40\n2. 7", 2, [40, 7], "numbered list, bare ids"),
        ("Top 2: 40, 7", 2, [40, 7], "count before the ids"),
        ("DocID=40, DocID=7", 2, [40, 7], "header form"),
        ("The 1999 film is described in DocID 12.", 1, [12], "year in prose, DocID named"),
        ("DocIDs 3-6", 4, [3, 4, 5, 6], "range"), ("Documents 3 to 6 are relevant.", 4, [3, 4, 5, 6], "range in words"),
        ("1,234 and 17", 2, [1234, 17], "thousands separator"),
        ("1. 2000\n2. 1999\n3. 12", 3, [2000, 1999, 12], "numbered list of year-like ids (local model)"),
        ('{"doc_ids": [12, 88]}', 2, [12, 88], "json object"), ("DocID 12 (relevance 3.5), DocID 88", 2, [12, 88],
                                                               "decimal dropped"),
        ("12, 12, 88", 2, [12, 88], "repeated id"), ("12, 99999, 88", 2, [12, 88], "id not in the context dropped"),
        ("None of the documents are relevant.", 2, [], "no ids"),
        ("The most relevant are [DocID=301] and [DocID=17].", 3, [301, 17], "header forms in prose"),
        ("Relevant: 7, 12, 40", 2, [7, 12], "more than k"), ("- DocID 88\n- DocID 17", 2, [88, 17], "bullet list"),
        ("1) 40\n2) 88", 2, [40, 88], "numbered with parenthesis"),
        ("I found 2 documents: 40 and 88.", 2, [40, 88], "count in prose"),
        ("DocID 40 mentions the 2000 season; DocID 7 too.", 2, [40, 7], "DocID mentions first"),
        ("Answer: 301,17", 2, [301, 17], "comma without space (two ids)"),
        ("The ids are 5-3.", 3, [5, 4, 3], "descending range"),
        ("```json\n[88, 301]\n```", 2, [88, 301], "json in a code fence"),
        ("DocID 12 is most relevant, followed by DocID 40 and DocID 7.", 3, [12, 40, 7], "prose with DocIDs"),
        ("12 40 7", 3, [12, 40, 7], "space separated"), ("Documents #88 and #12", 2, [88, 12], "hash ids"),
        ("1. [DocID=1234]\n2. [DocID=17]", 2, [1234, 17], "numbered headers"),
        ("There are 3 relevant ones: 17, 88, 301", 3, [17, 88, 301], "count word then ids"),
        ("In 1999, DocID 1999 was written.", 1, [1999], "year and id the same number"),
        ("4\n5\n6", 3, [4, 5, 6], "one per line"), ("Step 1: read. Relevant: [12].", 1, [12], "json after prose"),
        ("DocID 2,000", 1, [2000], "id with separator"),
    ]
    return [{"reply": r, "k": k, "context_ids": ctx, "ids": ids, "style": st, "split": split_of(f"loc:{r}")}
            for r, k, ids, st in rows]


def write(name: str, rows: list[dict]) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    with open(OUT / name, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    held = sum(r["split"] == "held_out" for r in rows)
    print(f"{name}: {len(rows)} items, {held} held out")


def main() -> None:
    rng = random.Random(SEED)
    write("answers.jsonl", answers_set(rng))
    write("judge_replies.jsonl", judge_set())
    write("localize_replies.jsonl", localize_set())


if __name__ == "__main__":
    main()
