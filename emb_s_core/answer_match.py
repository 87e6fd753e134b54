"""What a free-text reply asserts about a question's answer: the reference judge's reading of a reply.

Containment ("the answer appears inside a longer reply") is the usual lenient match for verbose generators, but on
its own it credits a reply that names every candidate ("Annie Morton or Terry Richardson") or that denies the answer
("Annie Morton, not Terry Richardson" when the answer is Terry Richardson). This module says, for one reply:

- **alternatives** the question offers: the two sides of its last "X or Y" (quoted titles first; a side that runs
  to the question's start or into its predicate is cut to its capitalized name), or ``yes``/``no`` when the answer is
  yes or no. The answer's side is the alternative that matches the answer best (equal or one inside the other beats
  token F1; F1 must be ≥ 0.4), the other sides are *competitors*. When no side matches, or two match equally (a
  date answering "which case came first, A or B?"), the question has no usable alternatives.
- **asserted**: a phrase occurs in the reply outside a negation. A negation covers an occurrence when, in the same
  clause (clauses end at ``, ; : . ! ? ( )``, dashes and *but / whereas / however*), one of ``not no never neither
  nor none cannot …n't`` or *rather than / instead of / other than / unlike* is among the three tokens before it
  (``not only`` excepted), or the occurrence is followed by ``is/was/are/were/does/did`` + ``not / never /
  incorrect / wrong / false`` or by an ``…n't`` form (also across one clause break: "X, is wrong"). An
  occurrence right after ``<comparative> than`` is the compared-against side, not the answer, only when that
  comparative word is in the question ("older than" for "who is older"); otherwise it counts as asserted, since
  "younger than" may invert the claim.
- **entities** of a multi-entity answer: its parts split at commas, ``;``, ``&`` and ``and`` (of the canonical
  form, so "1,462" and "April 1, 1949" stay whole).

Rule ``reference_v3`` (issue 22) adds, below the canonical forms: the reply's **final claim** (what follows its last
correction: "X? No — Y", "at first X, but actually Y"), **refusals** (never an answer, never "no"), **hedges**
(candidates joined by "or", or under two hedge markers), **lists** with extra members, the answer as a **modifier**
("son of X") or as a candidate **considered** and dropped, **comparisons** naming both sides read by their
comparative, **yes/no polarity** without the word, cased **short aliases and acronyms**, and **partial names**.

Rule ``reference_v4`` adds **doubt** (:func:`doubt`): every round of phrasings nobody had tuned to brought one more
way to name the answer without standing behind it, so an answer found and asserted is still not credited when the
reply casts doubt on it in any of a few general ways (a word of doubt from the first sentence naming the answer on,
a turn to another name after it, a conditional around it, a later commitment to something else, a bound or
estimate instead of the number, another month or day for the answer's year).

Rule ``reference_v5`` (read on round 3 of the blind replies, measured on round 4) widens what counts as the same
answer and narrows what counts as standing behind it, each as a class: a gold's **other forms** (the calendar day of
LoCoMo's "the Tuesday before 20 July 2023", the part before a ";" explanation, a gold without its leading
preposition or verb — "2021" for "In 2021", "10 July 1951" for "began 10 July 1951" —, a person without a middle
name or a title inside the name, the last two words of a long name, "Likely yes/no" read as yes/no), **canonical
forms** for bounds ("over 70" = "more than 70"), short year ranges ("1969–74"), "until", unit abbreviations
("2 hrs"), "summer of 2022" and "April.2023"; **lists** read without their parenthetical asides, with appositives
that describe the answer ("…, Albert Einstein's elder son, a hydraulic engineer") not counted as members and a
list that starts after "with"; **comparisons** concluded mid-sentence ("…, so Live", "→ A"); **yes/no** for
"same / different / both" questions read by what the reply says of them; and, against false credit, an alias the
question already says ("Sun") or a partial name made of question words ("Party") is no answer, the answer as
another's possessive ("X's rival, Y") or after "the <noun>" in "son of the shipbuilder X" is a modifier, "prefers
Y over X" sets X aside, words of uncertainty ("not sure", "can't confirm") are doubt, "So Y." commits elsewhere, and
an answer that came "later" in its sentence is not what a question about origins asks.

Rule ``reference_v6`` (read on round 4, measured on round 5): "Answer: X" and a side named by its surname ("So
Agnew died later.") conclude a comparison; a word of doubt that is the answer's own ("A Wrong Way to Love") casts
none; a reply that ends by concluding with the answer ("So his place of birth is China.") is not held back by a turn
in an earlier sentence; a possessive before a name is its owner, not a first name ("Tarantino's Hateful Eight");
other forms: common short given names ("Bill Clinton"), a company without "Inc." or "& Co", a people's singular
("Apalachee"), the country of a nationality gold, the name after title words ("Queen dowager Clarisse Renaldi"),
"the week before D" as its seven days, "Presumably not"; canonical "mid-June", "'70s", "twenties", "a month",
"years back"; a reply reasoning through other dates that ends on the answer's date has no conflicting date; list
items that describe ("mainly to …", "later …") and what follows them are no members.

Rule ``reference_v7``: a free-form gold of eight content words or more is covered when three quarters of them are in
the reply (LoCoMo's sentence-long answers, retold in the reply's own words); shorter golds keep the old tolerance.

Rule ``reference_v8`` (read on round 5, measured on round 6): a free-form gold's filler verbs ("have dinner …") need
not be repeated, and "and" inside it no longer takes its one-word tolerance away; stems read "-ance/-ant"
("intolerance" = "intolerant") and a short plural ("DVDs" = "DVD"); asides in parentheses and slashes
("restoring/refurbishing") are read apart; "X was a son of Y" names Y when the parent is asked (an appositive
"X, son of Y" still does not); "Football Club" is a suffix; a styled name ("Sir Francis Baring, 1st Baronet") may be
given without its style unless the last numbered holder the reply names is another; "I'll say Y" commits; and "the
1700s" is the 18th century (it read as the 8th).
"""
from __future__ import annotations

import datetime
import re
import unicodedata
import string
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans("", "", string.punctuation + "“”‘’–—")  # SQuAD's ASCII set, plus quotes and dashes
NEGATION_CUES = frozenset({"not", "no", "never", "neither", "nor", "none", "cannot", "cant", "isnt", "wasnt",
                           "arent", "werent", "doesnt", "didnt", "dont", "wont", "hasnt", "havent", "hadnt",
                           "unlike"})
NEGATION_BIGRAMS = frozenset({("rather", "than"), ("instead", "of"), ("other", "than")})
_AUX = frozenset({"is", "was", "are", "were", "does", "did", "do", "has", "had", "have"})
_AUX_NOT = frozenset({"isnt", "wasnt", "arent", "werent", "doesnt", "didnt", "dont", "hasnt", "hadnt", "havent"})
_DENIALS = frozenset({"not", "never", "incorrect", "wrong", "false", "mistake", "mistaken", "error", "untrue",
                      "erroneous"})  # "X is wrong", "X was not", "X is a common mistake"
PRE_WINDOW = 3  # tokens before an occurrence that a negation cue reaches
# clause breaks sit next to white space only, so splitting never changes the token sequence normalize() makes
_CLAUSE_BREAK = re.compile(r"[,.;:!?)\]](?=\s|$)|(?:^|(?<=\s))[(\[]|\s[-–—]+\s|\b(?:but|whereas|however)\b", re.I)
_QUOTED_PAIR = re.compile(r"[\"“]([^\"”]+)[\"”]\s+or\s+[\"“]([^\"”]+)[\"”]", re.I)
_OR = re.compile(r"\s+or\s+", re.I)
_LEFT_DELIM = re.compile(r"(?:[,;:]\s|--|\s[-–—]\s|\bbetween\b|\beither\b)", re.I)
_RIGHT_DELIM = re.compile(r"[,;?]|\s[-–—]\s|--|$")
_CONNECTORS = frozenset({"of", "the", "and", "de", "del", "der", "di", "du", "da", "la", "le", "von", "van", "y", "ibn",
                         "bint", "abu",
                         "v", "v.", "vs", "vs.", "ul", "bin", "al", "to", "in", "on", "for", "&", "a", "e"})
_STOP = frozenset({"to", "the", "a", "an", "in", "on", "of", "for", "with", "by", "at", "from", "be", "is", "it"})
_ENTITY_SPLIT = re.compile(r"\s*(?:,|;|&|\band\b)\s*", re.I)
YES_NO = ("yes", "no")
CONSIDERED = frozenset({"considered", "thought", "guessed", "assumed", "suspected", "wondered"})
UNIT_WORDS = frozenset({"dollars", "euros", "pounds", "percent", "km", "miles", "m"})


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


# --------------------------------------------------------------------------------------------- reply tokens
@dataclass(frozen=True)
class Reply:
    """A reply as normalized tokens, each with the clause it belongs to.

    ``spans`` are the occurrences of the phrases the reply is read for (answer, aliases, alternatives): a clause
    break inside one ("Molokai: The Story Of Father Damien", "A.P.J. Abdul Kalam") does not end a negation's reach,
    and a phrase inside a longer one is negated exactly when the longer one is.
    """

    tokens: tuple[str, ...]
    clauses: tuple[int, ...]
    spans: tuple[tuple[int, int], ...] = ()

    @classmethod
    def parse(cls, text: str | None, phrases: tuple[str, ...] | list[str] = ()) -> "Reply":
        tokens: list[str] = []
        clauses: list[int] = []
        for i, clause in enumerate(_CLAUSE_BREAK.split(canonical(text))):
            words = normalize(clause).split()
            tokens += words
            clauses += [i] * len(words)
        reply = cls(tuple(tokens), tuple(clauses))
        spans = sorted({occ for phrase in phrases for occ in reply.occurrences(phrase)}, key=lambda o: o[0] - o[1])
        for s, e in spans:  # longest first: a phrase's tokens share the clause of its first token
            for j in range(s + 1, e):
                if clauses[j] != clauses[s]:
                    old = clauses[j]
                    clauses[j:] = [clauses[s] if c == old else c for c in clauses[j:]]
        return cls(tuple(tokens), tuple(clauses), tuple(spans))

    def occurrences(self, phrase: str) -> list[tuple[int, int]]:
        """(start, end) of every whole-token occurrence of the normalized ``phrase``."""
        words = canon(phrase).split()
        n = len(words)
        if not n:
            return []
        return [(i, i + n) for i in range(len(self.tokens) - n + 1) if list(self.tokens[i:i + n]) == words]

    def _outermost(self, start: int, end: int) -> tuple[int, int]:
        """The longest protected span around tokens[start:end] (itself when none)."""
        for s, e in self.spans:  # longest first
            if s <= start and end <= e:
                return s, e
        return start, end

    def negated(self, start: int, end: int, yes_no: bool = False) -> bool:
        """Is the occurrence tokens[start:end] under a negation (before it in its clause, or "is not" after it)?
        For a yes/no word, "no" is an alternative, not a cue ("no and yes" asserts both)."""
        start, end = self._outermost(start, end)
        clause = self.clauses[start]
        lo = start
        while lo > 0 and start - lo < PRE_WINDOW and self.clauses[lo - 1] == clause:
            lo -= 1
        before = self.tokens[lo:start]
        for j, word in enumerate(before):
            follower = before[j + 1] if j + 1 < len(before) else self.tokens[start]
            if word in NEGATION_CUES and follower != "only" and not (yes_no and word == "no"):
                return True
            if j + 1 < len(before) and (word, before[j + 1]) in NEGATION_BIGRAMS:
                return True
        # the words right after, even across one break ("Golden Valley, Minnesota, is incorrect"), unless they open
        # another phrase read here ("..., but Don't Freak Me Out is" names a title, not a denial)
        opens_phrase = any(s == end for s, _ in self.spans)
        after = [t for t, c in zip(self.tokens[end:end + 4], self.clauses[end:end + 4]) if c == self.clauses[end]] \
            if end < len(self.tokens) and not opens_phrase else []
        if after and (after[0] in _AUX_NOT or (after[0] in _AUX and any(t in _DENIALS for t in after[1:]))):
            return True
        return False

    def demoted(self, start: int, question_words: frozenset[str]) -> bool:
        """``<comparative in the question> than X``: X is what the answer is compared against; ``I first
        considered X``, ``I thought of X``: X was a candidate the reply moved away from."""
        if any(t in CONSIDERED for t in self.tokens[max(0, start - 3):start]):
            return True
        if start >= 2 and (self.tokens[start - 1] == "over" and any(t.startswith(("prefer", "favo", "chose", "pick"))
                                                                    for t in self.tokens[max(0, start - 6):start - 1])
                           or self.tokens[start - 1] == "than" and self.tokens[start - 2] in ("more", "rather",
                                                                                             "better")):
            return True  # "prefers beef over chicken", "likes beef more than chicken": chicken is set aside
        return (start >= 2 and self.tokens[start - 1] == "than" and self.tokens[start - 2] in question_words
                and self.clauses[start - 2] == self.clauses[start])

    def asserts(self, phrase: str, question_words: frozenset[str] = frozenset(), yes_no: bool = False) -> bool:
        """``phrase`` occurs at least once neither negated nor compared against. A yes/no word counts only where it
        opens or closes its clause ("No, …", "… the answer is yes"), not inside one ("there is no doubt")."""
        return any(not self.negated(s, e, yes_no) and not self.demoted(s, question_words)
                   and not modifier(self, s, question_words, e)
                   and (not yes_no or self._clause_edge(s, e)) for s, e in self.occurrences(phrase))

    def hedged(self, phrase: str) -> bool:
        """Every occurrence of ``phrase`` is one side of an "or" ("1216 or 1220", "either X or Y")."""
        occ = self.occurrences(phrase)
        nxt = [e + (e < len(self.tokens) and self.tokens[e] in UNIT_WORDS) for _, e in occ]
        return bool(occ) and all((e < len(self.tokens) - 1 and self.tokens[e] == "or")
                                 or (s > 0 and self.tokens[s - 1] == "or") for (s, _), e in zip(occ, nxt))

    def _clause_edge(self, start: int, end: int) -> bool:
        first = start == 0 or self.clauses[start - 1] != self.clauses[start]
        last = end == len(self.tokens) or self.clauses[end] != self.clauses[end - 1]
        return first or last

    def mentions(self, phrase: str) -> bool:
        return bool(self.occurrences(phrase))


# --------------------------------------------------------------------------------------------- question alternatives
def _is_name_word(word: str) -> bool:
    return bool(word) and (word[0].isupper() or word[0].isdigit() or word[0] in "\"'“‘(")


def _trailing_name(words: list[str], question_start: bool) -> list[str]:
    """The capitalized run at the end of a left side (never the question's first word)."""
    out: list[str] = []
    floor = 1 if question_start else 0
    i = len(words) - 1
    while i >= floor:
        w = words[i]
        if _is_name_word(w) or (w.lower() in _CONNECTORS and out and i - 1 >= floor and _is_name_word(words[i - 1])):
            out.insert(0, w)
            i -= 1
            continue
        break
    return out


def _leading_name(words: list[str]) -> list[str]:
    """The capitalized run at the start of a right side (leading articles kept)."""
    out: list[str] = []
    for i, w in enumerate(words):
        if _is_name_word(w):
            out.append(w)
        elif w.lower() in ("the", "a", "an") and not out:
            out.append(w)
        elif w.lower() in _CONNECTORS and out and i + 1 < len(words) and _is_name_word(words[i + 1]):
            out.append(w)
        else:
            break
    while out and out[-1].lower() in _CONNECTORS:
        out.pop()
    return out if any(_is_name_word(w) for w in out) else []


def question_alternatives(question: str | None) -> list[str]:
    """The alternatives an "X or Y?" question offers, as written in the question (empty when there are none)."""
    q = (question or "").strip()
    quoted = _QUOTED_PAIR.findall(q)
    if quoted:
        return list(quoted[-1])
    splits = list(_OR.finditer(q))
    if not splits:
        return []
    cut = splits[-1]
    left_text, right_text = q[:cut.start()], q[cut.end():]
    delims = list(_LEFT_DELIM.finditer(left_text))
    left_start = delims[-1].end() if delims else 0
    left = left_text[left_start:].split()
    right_end = _RIGHT_DELIM.search(right_text)
    right = (right_text[:right_end.start()] if right_end else right_text).split()
    if not left or not right:
        return []
    if not delims or any(not _is_name_word(w) and w.lower() not in _CONNECTORS for w in left):
        name = _trailing_name(left, question_start=not delims)
        left = name or ([left[-1]] if left[-1].lower() not in _STOP and not delims else left)
    if any(not _is_name_word(w) and w.lower() not in _CONNECTORS for w in right):
        right = _leading_name(right) or ([right[0]] if right[0].lower() not in _STOP else [])
    left_s, right_s = " ".join(left).strip(" ,;:"), " ".join(right).strip(" ,;:")
    if not normalize(left_s) or not normalize(right_s) or normalize(left_s) == normalize(right_s):
        return []
    return [left_s, right_s]


def _match_score(alternative: str, truth: str) -> float:
    """2 when one of alternative / truth contains the other as a phrase, else their token F1."""
    a, t = normalize(alternative), normalize(truth)
    if not a or not t:
        return 0.0
    if a == t or f" {a} " in f" {t} " or f" {t} " in f" {a} ":
        return 2.0
    return token_f1(a, t)


MATCH_F1 = 0.4  # an alternative matches the answer on token F1 ≥ this ("Ken Flach" ~ "Kenneth Eliot Flach")


@dataclass(frozen=True)
class Alternatives:
    """The question's alternatives split into the answer's side and its competitors."""

    answer_side: tuple[str, ...] = ()
    competitors: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.answer_side and self.competitors)


def alternatives_for(question: str | None, truths: list[str]) -> Alternatives:
    """Split the question's alternatives by the answer; empty when the answer is not exactly one of them."""
    norm_truths = {normalize(t) for t in truths if normalize(t)}
    if norm_truths and norm_truths <= set(YES_NO) and len(norm_truths) == 1:
        (truth,) = norm_truths
        return Alternatives((truth,), tuple(y for y in YES_NO if y != truth))
    alts = question_alternatives(question)
    if not alts:
        return Alternatives()
    best = [max(_match_score(a, t) for t in truths) for a in alts]
    top = max(best)
    if top < MATCH_F1 or best.count(top) != 1:
        return Alternatives()
    side = alts[best.index(top)]
    others = [a for a in alts if a != side and not any(f" {normalize(a)} " in f" {normalize(t)} " for t in truths)]
    return Alternatives((side,), tuple(others))


def entities(answer: str | None) -> list[str]:
    """The normalized parts of a multi-entity answer ("A, B and C" → [a, b, c]); one part for a plain answer."""
    parts = [normalize(p) for p in _ENTITY_SPLIT.split(canonical(answer))]  # "1,462" and dates stay whole
    return [p for p in parts if p]


def question_words(question: str | None) -> frozenset[str]:
    return frozenset(normalize(question).split())


# --------------------------------------------------------------------------------------------- canonical forms (v3)
# Reply and truths are read in one canonical form before any matching: accents folded, dates written as
# "<year> m<MM> d<DD>" (so a partial gold date is a phrase inside a fuller reply date, never the other way round),
# numbers as plain digits (words, ordinals and thousands separators read), currency and units as words.
_LETTERS = str.maketrans({"ø": "o", "Ø": "O", "æ": "ae", "Æ": "AE", "ß": "ss", "ł": "l", "Ł": "L", "đ": "d",
                          "ı": "i", "ʿ": "", "ʾ": "", "ʻ": "", "ʼ": "", "ˈ": "", "œ": "oe", "Œ": "OE", "þ": "th", "ð": "d"})
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")
_MONTH = r"(?P<{}>jan(?:uary|\.)?|feb(?:ruary|\.)?|mar(?:ch|\.)?|apr(?:il|\.)?|may|june?|july?|aug(?:ust|\.)?|" \
         r"sep(?:t(?:ember|\.)?|\.)?|oct(?:ober|\.)?|nov(?:ember|\.)?|dec(?:ember|\.)?)(?![a-z])\.?"
_DAY = r"(?P<{}>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<{}>\d{{3,4}})(?!\d)"
_DATES = [re.compile(p, re.I) for p in (
    r"(?<!\d)(?P<y>\d{4})-(?P<m>[01]?\d)(?:-(?P<d>[0-3]?\d))?(?!\d)",                    # 1505-12-25, 2024-02
    r"(?<![\d/.])(?P<d>\d{1,2})[/.](?P<m>\d{1,2})[/.](?P<y>\d{4})(?!\d)",  # 25/12/1505 (day first)
    r"(?<!\d)(?P<y>\d{4})[/.](?P<m>[01]?\d)[/.](?P<d>[0-3]?\d)(?!\d)",                   # 1505/12/25
    r"(?<![\d/.])(?P<m>[01]?\d)/(?P<y>\d{4})(?![\d/])",                                  # 05/2022
    r"(?<!\d)" + _DAY.format("d") + r"-" + _MONTH.format("mn") + r"-" + _YEAR.format("y"),  # 25-Dec-1505
    r"(?:the\s+)?" + _DAY.format("d") + r"\s+(?:of\s+)?" + _MONTH.format("mn") + r",?\s+" + _YEAR.format("y"),
    _MONTH.format("mn") + r"\s+(?:the\s+)?" + _DAY.format("d") + r"(?:,\s*|\s+)" + _YEAR.format("y"),
    _MONTH.format("mn") + r",?\s+" + _YEAR.format("y") + r",?\s+on\s+the\s+" + _DAY.format("d") + r"(?![\d:])",
    _MONTH.format("mn") + r"(?:,?\s+|[.,/]\s*)(?:of\s+)?" + _YEAR.format("y"),  # "April 2023", "April.2023"
    r"(?:the\s+)?" + _DAY.format("d") + r"\s+(?:of\s+)?" + _MONTH.format("mn") + r"(?![a-z])",
    _MONTH.format("mn") + r"\s+" + _DAY.format("d") + r"(?![\d:])",
)]
_SMALL = {w: i for i, w in enumerate(("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
                                      "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen",
                                      "seventeen", "eighteen", "nineteen"))}
_TENS = {w: 10 * i for i, w in enumerate(("", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty",
                                          "ninety")) if w}
_ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8,
             "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12, "thirteenth": 13, "fourteenth": 14,
             "fifteenth": 15, "sixteenth": 16, "seventeenth": 17, "eighteenth": 18, "nineteenth": 19, "twentieth": 20,
             "thirtieth": 30, "fortieth": 40, "fiftieth": 50, "sixtieth": 60, "seventieth": 70, "eightieth": 80,
             "ninetieth": 90, "hundredth": 100}
_SCALES = {"hundred": 100, "thousand": 1000, "million": 10 ** 6, "billion": 10 ** 9}
_NUMBER_WORD = "|".join([*_SMALL, *_TENS, *_SCALES, "and"])
_NUMBER_WORDS = re.compile(r"\b(?:(?:%s)(?:[\s-]+(?:%s))*)\b" % (_NUMBER_WORD, _NUMBER_WORD), re.I)
_ORDINAL = re.compile(r"\b(?:(\d+)(?:st|nd|rd|th)|(%s))\b(?:\s+(%s)\b)?" % ("|".join(_ORDINALS), "|".join(
    ("season", "series", "century", "edition", "place", "round", "episode", "volume", "album", "term", "division",
     "grade", "floor", "generation", "anniversary", "congress", "president", "amendment"))), re.I)
_SEPARATED = re.compile(r"(?<![\d.,])(\d{1,3})((?:,\d{3})+)(?![\d]|[.,]\d)")
_SCALED = re.compile(r"(?<![\d.,])(\d+(?:\.\d+)?)\s*(million|billion|thousand)\b", re.I)
_CURRENCY = re.compile(r"([$€£])\s*(\d[\d,.]*)")
_CURRENCY_WORDS = {"$": "dollars", "€": "euros", "£": "pounds"}
_UNITS = [(re.compile(p, re.I), w) for p, w in (
    (r"\b(?:usd|us dollars?|dollars?)\b", "dollars"), (r"\b(?:kilomet(?:er|re)s?|kms?)\b", "km"),
    (r"%|\bper\s?cent\b", " percent"), (r"\b(?:met(?:er|re)s|m)\b(?=\s|$|[.,;])", "m"), (r"\bmiles?\b", "miles"),
    (r"(?<=\d)\s*(?:hours?|hrs?|h)\b", " hours"), (r"(?<=\d)\s*(?:minutes?|mins?)\b", " minutes"),
    (r"(?<=\d)\s*(?:seconds?|secs?)\b", " seconds"), (r"(?<=\d)\s*(?:years?|yrs?)\b", " years"),
    (r"(?<=\d)\s*(?:kilograms?|kgs?)\b", " kg"), (r"(?<=\d)\s*(?:feet|foot|ft)\b", " feet"),
)]
# a bound in other words: "over 70" = "more than 70", "under 5" = "fewer than 5"
_BOUNDS = [(re.compile(r"\b(?:more than|over|above|in excess of|upwards of|upward of)\s+(?=\d)", re.I), "over "),
           (re.compile(r"\b(?:less than|fewer than|under|below)\s+(?=\d)", re.I), "under ")]
_UNTIL = re.compile(r"(?<=\d)\s+(?:until|till|til|through|thru)\s+(?=\d)", re.I)  # "1969 until 1974" = "1969 to 1974"
_SHORT_YEAR_RANGE = re.compile(r"\b(1\d|20)(\d\d) to (\d\d)\b")  # "1969–74" = "1969 to 1974"
_SEASON_OF = re.compile(r"\b(spring|summer|autumn|fall|winter) of (?=\d{4}\b)", re.I)  # "summer of 2022" = "summer 2022"


def fold(text: str | None) -> str:
    """Accents and special letters folded to ASCII ("Montréal" → "Montreal", "Øystein" → "Oystein")."""
    text = unicodedata.normalize("NFKD", (text or "").translate(_LETTERS))
    return "".join(c for c in text if not unicodedata.combining(c)).replace("\u200b", "")


def _month(name: str) -> int:
    return next(i + 1 for i, m in enumerate(MONTHS) if m.startswith(name.lower().rstrip(".")[:3]))


def _date_sub(match: re.Match) -> str:
    g = match.groupdict()
    m = int(g["m"]) if g.get("m") else _month(g["mn"])
    d = int(g["d"]) if g.get("d") else None
    if match.re is _DATES[1] and m > 12 and d is not None and d <= 12:
        d, m = m, d  # 12/25/1505: month first
    if not 1 <= m <= 12 or (d is not None and not 1 <= d <= 31):
        return match.group()
    parts = [g["y"]] if g.get("y") else []
    return " ".join([*parts, f"m{m:02d}", *([f"d{d:02d}"] if d is not None else [])])


def _words_value(words: list[str]) -> int | None:
    total = current = 0
    seen = False
    for w in words:
        if w == "and":
            continue
        if w in _SMALL:
            current += _SMALL[w]
        elif w in _TENS:
            current += _TENS[w]
        elif w == "hundred":
            current = max(current, 1) * 100
        elif w in _SCALES:
            total += max(current, 1) * _SCALES[w]
            current = 0
        seen = True
    return total + current if seen else None


def _number_words_sub(match: re.Match) -> str:
    words = re.split(r"[\s-]+", match.group().lower())
    while words and words[0] == "and":
        words.pop(0)
    trail = ""
    while words and words[-1] == "and":
        words.pop()
        trail = " and"
    value = _words_value(words)
    lead = " and " if match.group().lower().startswith("and ") else ""
    return match.group() if value is None else f"{lead}{value}{trail}"


def _ordinal_sub(match: re.Match) -> str:
    """"third" / "3rd" → "3"; "the third season" → "the season 3", as "season three" reads."""
    value = match.group(1) or str(_ORDINALS[match.group(2).lower()])
    return f"{match.group(3)} {value}" if match.group(3) else value


_SLASHED = re.compile(r"(?<=[A-Za-z])/(?=[A-Za-z])")
_PERIOD_PREFIX = re.compile(r"\b(mid|early|late)-(?=[A-Za-z0-9'])", re.I)
_SHORT_DECADE = re.compile(r"['’‘](\d0)s\b")
_DECADE_WORDS = re.compile(r"\b(twenties|thirties|forties|fifties|sixties|seventies|eighties|nineties)\b", re.I)
_ONE_UNIT = re.compile(r"\b(?:a|an)\s+(second|minute|hour|day|week|month|year|decade|century)\b", re.I)
_BACK = re.compile(r"\b((?:seconds?|minutes?|hours?|days?|weeks?|months?|years?|decades?))\s+back\b", re.I)
_ORDINAL_HYPHEN = re.compile(r"\b(\d+(?:st|nd|rd|th))\s*[-–]\s*(?=[a-z])", re.I)
_GLUED = re.compile(r"(?<![\w.])(\d{1,2})([A-Z][a-z]{2,})")
_INITIALS = re.compile(r"\b(?:[A-Z]\.\s?){2,}(?=\s*[A-Z])")
_CENTURY_OF = re.compile(r"\b1([0-9])00s\b")
_NUMBER_RANGE = re.compile(r"(?<![\w.,])(\d+)\s*[-–—]\s*(\d+)(?![\w.,]\d)")
_POSSESSIVE = re.compile(r"\b([A-Za-z]+)['’][sS]\b")  # "Majhli Didi's director": the name, then "s"
_CONTRACTED = frozenset({"it", "that", "he", "she", "there", "what", "who", "here", "where", "let", "how", "this"})


@lru_cache(maxsize=1 << 16)
def canonical(text: str | None) -> str:
    """The canonical text a reply or a truth is read in (before SQuAD normalization); cached, since one judgment
    reads the same phrases and sentences many times."""
    text = fold(text)
    text = _GLUED.sub(r"\1 \2", text)
    text = _PERIOD_PREFIX.sub(r"\1 ", text)
    text = _SLASHED.sub(" ", text)  # "restoring/refurbishing" = "restoring refurbishing"  # "mid-June 2023" = "mid June 2023"
    text = _SHORT_DECADE.sub(lambda m: ("20" if m.group(1) in ("00", "10") else "19") + m.group(1) + "s", text)
    text = _DECADE_WORDS.sub(lambda m: f"{_TENS[m.group(1).lower()[:-3] + 'y']}s", text)  # "early twenties" = "early 20s"
    text = _ONE_UNIT.sub(r"1 \1", text)  # "about a month" = "about 1 month"
    text = _BACK.sub(r"\1 ago", text)  # "a few years back" = "a few years ago"  # "15April, 2022" (a typo in LoCoMo's golds) reads as "15 April, 2022"
    text = _INITIALS.sub(lambda m: " ".join(re.findall(r"[A-Z]", m.group())) + " ", text)  # "J.R.R." = "J. R. R."
    text = _CENTURY_OF.sub(lambda m: f"{int('1' + m.group(1)) + 1}th century", text)  # "the 1400s" = "15th century"
    text = _CURRENCY.sub(lambda m: f"{m.group(2)} {_CURRENCY_WORDS[m.group(1)]}", text)
    for pattern in _DATES:
        text = pattern.sub(_date_sub, text)
    text = _SEPARATED.sub(lambda m: m.group(1) + m.group(2).replace(",", ""), text)
    text = _SCALED.sub(lambda m: str(int(round(float(m.group(1)) * _SCALES[m.group(2).lower()]))), text)
    text = _NUMBER_WORDS.sub(_number_words_sub, text)
    text = _ORDINAL_HYPHEN.sub(r"\1 ", text)  # "16th-century", "16th - century" = "16th century"
    text = _ORDINAL.sub(_ordinal_sub, text)
    for pattern, word in _UNITS:
        text = pattern.sub(word, text)
    text = _NUMBER_RANGE.sub(r"\1 to \2", text)  # "30-60 seconds" = "30 to 60 seconds"
    text = _SHORT_YEAR_RANGE.sub(lambda m: f"{m.group(1)}{m.group(2)} to {m.group(1)}{m.group(3)}"
                                 if m.group(3) > m.group(2) else m.group(), _UNTIL.sub(" to ", text))
    text = _SEASON_OF.sub(lambda m: ("autumn" if m.group(1).lower() == "fall" else m.group(1)) + " ", text)
    for pattern, word in _BOUNDS:
        text = pattern.sub(word, text)
    return _POSSESSIVE.sub(lambda m: m.group() if m.group(1).lower() in _CONTRACTED else f"{m.group(1)} s", text)


@lru_cache(maxsize=1 << 16)
def canon(text: str | None) -> str:
    """Canonical form, then SQuAD normalization: the tokens the reference judge compares."""
    return normalize(canonical(text))


def canon_f1(prediction: str | None, truth: str | None) -> float:
    return token_f1(canonical(prediction), canonical(truth))


# --------------------------------------------------------------------------------------------- what a reply claims
REFUSAL = re.compile(
    r"\b(?:no idea|(?:do not|don'?t|doesn'?t|does not) know|not sure|unsure|cannot (?:be )?(?:determined?|tell|say|"
    r"answer|find)|can'?t (?:be )?(?:determined?|tell|say|answer|find)|unable to|no information|not (?:mentioned|"
    r"stated|specified|provided|given|available|enough|clear|known)|(?:do|does|did) not (?:say|mention|state|specify|"
    r"provide|contain)|(?:don'?t|doesn'?t|didn'?t) (?:say|mention|state|specify|provide|contain)|insufficient|"
    r"unknown|no answer|not possible to (?:tell|say|determine)|not certain|uncertain|hard to say|can'?t be sure|"
    r"unclear|no (?:way|means) (?:of|to) (?:knowing|know|tell(?:ing)?|say(?:ing)?|determin\w*|confirm\w*|verify\w*)|"
    r"impossible to (?:know|tell|say|determine|answer|confirm)|(?:can'?t|cannot|can not|couldn'?t|could not) "
    r"(?:know|confirm|verify|work out|figure out|establish|identify|pin down)|there'?s no (?:telling|knowing)|"
    r"no (?:clue|mention|record|indication)|who knows|(?:lack|lacking|without) (?:enough |sufficient |the |any )?"
    r"(?:information|context|details|data)|not (?:enough|sufficient) (?:information|context|evidence|detail)|"
    r"(?:doesn'?t|does not|don'?t|do not|didn'?t|did not) (?:include|indicate|reveal|tell|give)|"
    r"(?:i'?m|i am) not (?:able|certain)|hard to (?:tell|know)|(?:isn'?t|is not|aren'?t|are not|wasn'?t|was not) "
    r"(?:stated|mentioned|given|specified|recorded|said))\b",
    re.I)
# two or more candidates each under a hedge ("could be X, could be Y", "maybe X, maybe Y")
HEDGE_MARKER = re.compile(r"\b(?:(?:could|might|may) (?:also )?be|maybe|possibly|perhaps|probably)\b", re.I)
# a second candidate kept open: "X; Y also fits", "Y is also possible"
ALSO_POSSIBLE = re.compile(r"\b(?:also|equally|too)\s+(?:fits?|possible|plausible|works?|likely|correct|right)\b|"
                           r"\b(?:could|might|may) also (?:have been|be read|be right|be correct|be the answer)\b|\beither (?:works|one works|is "
                           r"fine|could be right)\b|\b(?:range|ranges|ranging|vary|varies) (?:from|between)\b|"
                           r"\b(?:is|are|would be)\s+(?:also|equally)\s+(?:possible|plausible|likely|correct)\b", re.I)
# a correction: what follows replaces what came before ("X? No — Y", "I thought X, but actually Y")
CORRECTION = re.compile(
    r"(?:(?<=[?.!;,:])|(?<=\s[-–—])|(?<=\.\.\.))\s*(?:no|nope|wait|actually|correction|rather|sorry)\b[,.:;!]?\s*"
    r"(?:[-–—]\s*)?|\bbut\s+(?:actually|in fact|really)\b|\b(?:on second thought|scratch that|i mean)\b", re.I)
HEDGE_OR = re.compile(r"\bor\b", re.I)
_NEGATIVE = frozenset({"not", "no", "never", "neither", "nor", "none", "different", "differ", "differs", "only",
                       "incorrect", "false", "wrong", "isnt", "wasnt", "arent", "werent", "doesnt", "didnt", "dont",
                       "cannot", "cant", "hasnt", "havent", "unlike", "nobody", "separate", "distinct", "nope",
                       "nah", "negative", "unlikely", "doubtful"})
_POSITIVE = frozenset({"correct", "true", "both", "same", "indeed", "right", "share", "shared", "did", "are", "were",
                       "is", "was", "does", "do", "has", "have", "can", "affirmative", "certainly", "definitely",
                       "absolutely", "yep", "yeah", "sure", "course", "exactly", "agreed", "likely", "probably"})
ANTONYMS = {"older": "younger", "younger": "older", "elder": "younger", "earlier": "later", "later": "earlier",
            "more": "fewer", "fewer": "more", "less": "more", "larger": "smaller", "smaller": "larger",
            "bigger": "smaller", "taller": "shorter", "shorter": "longer", "longer": "shorter", "higher": "lower",
            "lower": "higher", "greater": "smaller", "newer": "older", "sooner": "later"}
_BEFORE_WORDS = frozenset({"first", "earlier", "older", "oldest", "sooner", "elder", "before"})
_AFTER_WORDS = frozenset({"later", "recently", "younger", "newer", "last", "youngest", "after"})
RELATIONS = frozenset({"son", "daughter", "wife", "husband", "father", "mother", "brother", "sister", "child",
                       "children", "widow", "spouse", "nephew", "niece", "grandson", "granddaughter", "grandfather",
                       "grandmother", "uncle", "aunt", "cousin", "successor", "predecessor", "student", "teacher",
                       "pupil", "collaborator", "partner", "friend", "rival", "heir", "descendant", "ancestor",
                       "star", "director", "author", "founder", "owner", "creator", "member", "leader", "captain",
                       "coach", "producer", "writer", "singer", "actor", "actress", "host", "protagonist", "editor",
                       "composer", "manager", "chairman", "ceo", "mayor", "governor", "player", "winner", "hero",
                       "assistant", "colleague", "agent", "secretary", "deputy", "apprentice", "protege", "bandmate",
                       "teammate", "understudy", "biographer", "lawyer", "doctor", "stepson", "stepdaughter"})
_FAMILY = frozenset({"dad", "mom", "mum", "mother", "father", "parent", "grandma", "grandpa", "sibling", "kid"})
_PARENTS = frozenset({"father", "mother", "parent", "parents", "dad", "mom"})
_OFFSPRING = frozenset({"son", "daughter", "child", "children", "sons", "daughters"})
# "X, son of Y" names Y as the parent: no modifier when the question asks for the parent (and back)
_INVERSE = {**{w: _PARENTS for w in _OFFSPRING}, **{w: _OFFSPRING for w in _PARENTS},
            "wife": frozenset({"husband", "spouse"}), "husband": frozenset({"wife", "spouse"}),
            "widow": frozenset({"husband", "spouse"}), "spouse": frozenset({"wife", "husband", "spouse"})}
_OTHER_PARTY = frozenset({"countryman", "countrymen", "compatriot", "rival", "rivals", "competitor", "counterpart",
                          "neighbor", "neighbour", "contemporary", "successor", "predecessor", "subsidiary",
                          "affiliate", "partner", "sister", "imitator", "opponent", "nemesis", "replacement"})
_GENERATIONS = frozenset({"jr", "sr", "ii", "iii", "iv", "v"})
_PARTICLES = frozenset({"van", "von", "de", "da", "di", "del", "della", "der", "den", "du", "la", "le", "st", "mac",
                        "bin", "ibn", "al", "el", "ter", "ten", "dos", "das"})
_TITLES = frozenset({"mr", "mrs", "ms", "dr", "sir", "lord", "lady", "saint", "st", "king", "queen", "prince",
                     "president", "general", "captain", "professor", "prof", "colonel", "col", "major", "lieutenant",
                     "sergeant", "admiral", "commander", "detective", "inspector", "di", "dci", "ds", "judge", "marshal",
                     "sheriff", "deputy", "officer", "agent", "constable", "father", "brother", "sister", "mother",
                     "senator", "governor", "bishop", "reverend", "rev", "chief", "count", "duke", "earl", "baron"})
_GENERIC = frozenset({"college", "university", "school", "company", "county", "river", "island", "church", "hospital",
                      "airport", "stadium", "inc", "fc", "ltd", "corporation", "academy", "institute", "lake",
                      "mountain", "province", "district", "city", "band", "group", "records"})
_LEAD_IN = re.compile(r"^(?:the answer is|answer:|it is|it was|they are|they were|these are|those are|"
                      r"the answers are)\s+", re.I)
_TRAILING_CLAUSE = re.compile(r",\s*(?:if|as|since|because|though|although|according|which|when|based|i think|"
                              r"i believe)\b.*$", re.I)
_LEADING_CLAUSE = re.compile(r"^(?:from|according|based|in|as|per|after|given|judging)\b[^,]*,\s*", re.I)
_CLAUSE_VERBS = frozenset({"is", "are", "was", "were", "has", "have", "had", "which", "who", "whose",
                           "than", "while", "whereas", "because", "grows", "grew", "lives", "lived", "works",
                           "worked", "does", "did"})
_COMPANY = re.compile(r"^(?:alongside|along with|with|together with|besides|beside|next to|joined by)\b")
_DENIED_PART = re.compile(r"^\s*(?:not|no|never|rather than|instead of)\b", re.I)  # "…, not Y": no member
_LIST_SPLIT = re.compile(r"\s*(?:,|;|&|\band\b|\bplus\b|\bas well as\b)\s*", re.I)
PLACEHOLDER = "qqtruth{}qq"
_SENTENCE_OPENERS = frozenset({"it", "its", "this", "that", "he", "she", "they", "answer", "so", "yes", "probably",
                               "maybe", "perhaps", "surely", "clearly", "i", "was", "is", "by", "mr", "mrs", "ms",
                               "dr", "named", "called", "likely", "definitely", "either", "neither", "both",
                               "not", "only", "and", "or", "but", "in", "on", "at", "of", "for", "from", "with", "as",
                               "also", "then", "well", "oh", "sure", "certainly", "according", "based", "answer:",
                               "final", "a", "an", "no", "we", "you", "there", "here", "these", "those", "because"})


def final_claim(text: str) -> tuple[str, str]:
    """(what the reply says before its last correction, its final claim); ("", text) without a correction."""
    cuts = [m for m in CORRECTION.finditer(text) if text[:m.start()].strip(" \t\n?.!;,:-–—")]
    cuts = [m for m in cuts if text[m.end():].strip(" \t\n?.!;,:-–—")]
    if not cuts:
        return "", text
    last = cuts[-1]
    return text[:last.start()], text[last.start():]


def refusal(text: str) -> bool:
    return bool(REFUSAL.search(text or ""))


_DIFFERENT = frozenset({"different", "differ", "differs", "differed", "distinct", "separate"})
_CONTRAST = frozenset({"but", "whereas", "while", "however", "unlike", "although", "though"})
_CONTRAST_WORD = re.compile(r"\b(?:%s)\b" % "|".join(sorted(_CONTRAST)), re.I)  # "but" ends a clause in Reply
_SAME = frozenset({"same", "similar", "both", "share", "shared", "identical", "alike"})


def yes_no_polarity(reply: "Reply", question_words: frozenset[str] = frozenset(), text: str = "") -> str | None:
    """"yes" or "no" for a reply to a yes/no question that gives neither word ("Both were American." → yes). When
    the question asks whether two things differ, "the same" answers no and "different" yes ("not the same": yes)."""
    tokens = set(reply.tokens)
    if question_words & (_DIFFERENT | {"same", "both"}):
        same, differ, negated = tokens & _SAME, tokens & _DIFFERENT, tokens & NEGATION_CUES
        asks_same = not question_words & _DIFFERENT
        if bool(same) != bool(differ):
            says_same = bool(same) != bool(negated)  # "not the same" says they differ
            return "yes" if says_same == asks_same else "no"
        if asks_same and not same and (tokens & _CONTRAST or _CONTRAST_WORD.search(text)):
            return "no"  # "A is an orchid, but B is a bromeliad" for "are A and B both orchids?"
    if tokens & _NEGATIVE:
        return "no"
    if tokens & _POSITIVE:
        return "yes"
    return None


def comparison_winner(reply: "Reply", sides: list[str], qwords: frozenset[str]) -> str | None:
    """The side a reply naming both sides of a comparison puts first: "A is younger than B" for "who is older" → B;
    "A came before B" for "which came first" → A. None when the reply does not say which way."""
    occ = sorted((s, e, side) for side in sides for s, e in reply.occurrences(side))
    for (s1, e1, a), (s2, e2, b) in zip(occ, occ[1:]):
        if a == b or reply.clauses[s1] != reply.clauses[s2] or s2 - e1 > 8:
            continue
        between = reply.tokens[e1:s2]
        if between and between[-1] == "than" and len(between) >= 2:
            word = between[-2]
            if word in qwords:
                return a
            if ANTONYMS.get(word) in qwords or (word in ANTONYMS and any(ANTONYMS.get(w) == word for w in qwords)):
                return b
        if between and between[-1] in ("before", "after"):
            forward = between[-1] == "before"
            if qwords & _BEFORE_WORDS:
                return a if forward else b
            if qwords & _AFTER_WORDS:
                return b if forward else a
    return None


_CONCLUSION = re.compile(r"^\W*(?:so|therefore|thus|hence|in conclusion|in short|overall|the answer is|answer:|"
                         r"final answer|that means|which means)(?!\w)", re.I)
_INNER_CONCLUSION = re.compile(r"[,;]\s*(?:so|therefore|thus|hence)\b|\s(?:→|=>|⇒|->)\s", re.I)  # "…, so Live."
_COMPARATIVES = frozenset({"first", "last", "more", "most", "less", "least", "fewer", "recent", "recently", "before",
                           "after", "earliest", "latest", "sooner", "further", "farther"})
_NOT_COMPARATIVES = frozenset({"other", "number", "whether", "either", "neither", "over", "under", "after", "ever",
                               "never", "member", "members", "order", "together", "career", "character", "water",
                               "paper", "river", "father", "mother", "brother", "sister", "daughter", "founder",
                               "director", "writer", "player", "singer", "producer", "actor", "performer", "per"})


def _comparative(word: str, asked: list[str]) -> bool:
    return any(word == q or (min(len(word), len(q)) >= 3 and (word.startswith(q) or q.startswith(word))
                             and abs(len(word) - len(q)) <= 3) for q in asked)


def picked_side(text: str, answer_side: list[str], competitors: list[str], qwords: frozenset[str]) -> str | None:
    """The side of an "A or B?" question a reply that names both picks, read the way a reader does when the
    comparative alone does not say (:func:`comparison_winner`): a concluding sentence naming one side ("… So A came
    first."); else the first sentence that carries the question's comparative word ("first", "more recent(ly)",
    "earlier") with one side, or with both, the side before that word; else the side the reply opens with.
    None when none of these reads."""
    sides = [*answer_side, *competitors]
    asked = [canon(w) or w for w in qwords
             if (w in _COMPARATIVES or w.endswith(("er", "est"))) and w not in _NOT_COMPARATIVES]
    parts = sentences(text)

    short = {side: [n for n in partial_names(side) if not any(f" {canon(n)} " in f" {canon(o)} "
                                                              for o in sides if o != side)] for side in sides}

    def named(sentence: str, by_surname: bool = False) -> list[tuple[int, str]]:
        reply = Reply.parse(sentence, [*sides, *(n for v in short.values() for n in v)])
        full = [(s, e) for side in sides for s, e in reply.occurrences(side)]
        occ = [(s, e, side) for side in sides for s, e in reply.occurrences(side)]
        if by_surname:  # "So Agnew died later.": a surname only where it is not inside a full name
            occ += [(s, e, side) for side in sides for n in short[side] for s, e in reply.occurrences(n)
                    if not any(fs <= s and e <= fe for fs, fe in full)]
        return sorted({(s, side) for s, e, side in occ if not reply.negated(s, e) and not reply.demoted(s, qwords)})

    for sentence in parts:  # "A and B", "B, A": both named as one list picks neither
        reply = Reply.parse(sentence, sides)
        occ = sorted((s, e, side) for side in sides for s, e in reply.occurrences(side))
        if any(a != b and s2 - e1 <= 1 and all(t in ("and", "or", "also", "as", "well") for t in reply.tokens[e1:s2])
               for (_, e1, a), (s2, _, b) in zip(occ, occ[1:])):
            return None
    for sentence in reversed(parts):
        tail = _INNER_CONCLUSION.split(sentence)
        found = {side for _, side in named(tail[-1], by_surname=True)}
        if (_CONCLUSION.match(sentence) or len(tail) > 1) and len(found) == 1:
            return found.pop()
    for sentence in parts:
        occ = named(sentence)
        tokens = Reply.parse(sentence, sides).tokens
        hits = [i for i, t in enumerate(tokens) if _comparative(t, asked)]
        if not occ or not hits or any(tokens[i - 1] in ("less", "not", "fewer", "least") for i in hits if i):
            continue
        before = [side for s, side in occ if s < hits[0]]
        if len({side for _, side in occ}) == 1 or before:
            return before[-1] if before else occ[0][1]
    first = named(parts[0]) if parts else []
    if first and first[0][0] <= 2:
        return first[0][1]
    return None


def modifier(reply: "Reply", start: int, qwords: frozenset[str], end: int | None = None) -> bool:
    """``son of X``, ``successor of X``, ``X's collaborator``: X describes another person the reply names (a relation
    the question does not ask about)."""
    tokens = reply.tokens
    if end is not None and end + 1 < len(tokens) and tokens[end] == "s" and \
            any(t in RELATIONS | _OTHER_PARTY and t not in qwords and reply.clauses[j] == reply.clauses[end]
                for j, t in enumerate(tokens[end + 1:end + 4], start=end + 1)):
        return True  # "John John Florence's countryman Kelly Slater", "Cahiers du cinema's rival, Positif"
    while start >= 1 and tokens[start - 1] in _TITLES:
        start -= 1  # "son of Sir Francis Baring"
    # "son of the shipbuilder Henry J. Kaiser": up to two words between "of" and the name describe him
    of = next((j for j in range(start - 1, max(0, start - 4), -1) if tokens[j] == "of"
               and reply.clauses[j] == reply.clauses[start]), None)
    if of is None or of < 1 or tokens[of - 1] not in RELATIONS or tokens[of - 1] in qwords:
        return False
    # "William II was a son of Albert I" says who the father is; "Edgar Kaiser, son of …" only describes Edgar
    return not (of >= 2 and tokens[of - 2] in _AUX and qwords & _INVERSE.get(tokens[of - 1], frozenset()))


def extra_members(reply_text: str, truths: list[str], question: str = "") -> bool:
    """The reply is a list ("A, B and C") holding every part of a truth and something else besides; a trailing
    clause ("…, if I read it right", "…, according to …"), a clause with a verb ("…, which is native to …") and the
    company a member keeps ("George Benson, alongside Kenny G") are no extra members. For an answer of several
    members, the reply's items (lines, bullets, commas, "and") are read one by one: each member must be in an item
    (by :func:`stem`), and a short item without a verb that holds none is an extra member ("Seattle, Chicago, New
    York City, Paris, and Barcelona" for "Seattle, Chicago, New York, and Paris")."""
    truths = [t for t in truths if len(entities(t)) < 2 or f" {canon(t)} " not in f" {canon(question)} "]
    # a title of several words the question names ("Rich, Young and Pretty or …") is no list
    members = [canon(e) for t in truths for e in _ENTITY_SPLIT.split(canonical(t)) if canon(e)]
    body = _list_part(canonical(reply_text).strip().rstrip(".!"), members)
    body = _LEAD_IN.sub("", body).strip()
    body = _TRAILING_CLAUSE.sub("", _LEADING_CLAUSE.sub("", body)).strip()
    if not re.search(r"\band\b|&|;|\bplus\b|\bas well as\b", body, re.I) and body.count(",") < 2:
        return False  # "Montreal, Quebec" qualifies a place, it is no list
    raw = [p for p in _LIST_SPLIT.split(body) if canon(p) and not _DENIED_PART.match(p)]
    parts = [canon(p) for p in raw]
    if len(parts) < 2 or any(len(p.split()) > 6 or set(p.split()) & _CLAUSE_VERBS for p in parts):
        return False
    company = next((i for i, p in enumerate(parts) if _COMPANY.match(p)), len(parts))
    if company < len(parts) and any(_COMPANY.sub("", parts[company]).strip() == canon(e) for t in truths
                                    for e in _ENTITY_SPLIT.split(canonical(t))):
        parts[company] = _COMPANY.sub("", parts[company]).strip()  # "Lady Antebellum, with A and B": A's list
        raw, parts = raw[company:], parts[company:]
    else:
        raw, parts = raw[:company], parts[:company]  # "A, alongside B and C": B and C keep A company, no members
    for t in truths:
        ents = [canon(e) for e in _ENTITY_SPLIT.split(canonical(t)) if canon(e)]
        named = fold(t).strip()[:1].isupper()
        aside = next((i for i, r in enumerate(raw) if i and _describes(r, named)), len(raw))
        # "Ian Tor, his elder son and envoy": after a description, the items go on describing
        extra = [p for r, p in zip(raw[:aside], parts[:aside]) if p not in ents and not _describes(r, named)]
        if ents and all(e in parts for e in ents) and extra:
            return True
    return False


_ASIDE = re.compile(r"\s*\([^()]*\)")
_SEGMENT = re.compile(r"\s[-–—]+\s|\s?--\s?|(?<=\w\W):\s|(?<=\w):\s")
_DESCRIBERS = frozenset({"a", "an", "the", "his", "her", "their", "its", "whose", "who", "which", "home", "born",
                         "known", "famous", "it", "he", "she", "they", "this", "that", "there", "we", "i", "you",
                         "later", "formerly", "previously", "once", "then", "now", "mainly", "mostly", "especially",
                         "particularly", "primarily", "largely", "chiefly", "including"})
_OWN_RELATION = re.compile(r"\bs (?:\w+ ){0,2}(?:%s)\b" % "|".join(sorted(RELATIONS)))


def _list_part(text: str, members: list[str]) -> str:
    """The stretch of ``text`` that can hold the answer's list: asides in parentheses dropped, and of the pieces
    between dashes or after a colon ("Directors: A and B — the film is …"), the first that names a member."""
    text = _ASIDE.sub("", text)
    pieces = [p for p in _SEGMENT.split(text) if p.strip()]
    have = [p for p in pieces if any(f" {m} " in f" {canon(p)} " for m in members if m)]
    return have[0] if have else text


def _describes(part: str, named: bool = True) -> bool:
    """A list item that describes the answer or opens a clause ("a hydraulic engineer", "Albert Einstein's elder
    son", "it makes him feel alive"), rather than naming another member ("Eduard", "and also Dave Haywood").
    ``named``: the answer is a name, so an article opens a description of it ("…, a hydraulic engineer")."""
    words = re.findall(r"[a-z0-9]+", fold(part).lower())
    if not words or (words[0] in ("a", "an", "the") and not named):
        return False  # "A guinea pig and a cat": for a thing, an article opens another member
    return words[0] in _DESCRIBERS or bool(_OWN_RELATION.search(" ".join(words)))


_ITEM_SPLIT = re.compile(r"\n+\s*(?:[-*•·]|\d+[.)])?\s*|\s+[·•/]\s+|\s*(?:,|;|&|\band\b|\bplus\b|\bas well as\b)\s*",
                         re.I)


def extra_items(reply_text: str, members: list[str]) -> bool:
    """For an answer of several ``members``: the reply's list (its items — lines, bullets, commas, "and" — from the
    first item holding a member to the end of that sentence, or of the lines that follow) holds every member, and a
    short item without a verb that holds none ("…, Paris, and Barcelona"). Items before the list are its lead-in."""
    def holds(item: str, member: str) -> bool:
        have = {stem(w) for w in item.split()}
        return all(any(_same_stem(stem(w), h) for h in have) for w in member.split() if w not in _FILLER)

    for sentence in re.split(r"(?<=[.!?])\s+(?=\S)", _ASIDE.sub("", canonical(reply_text)).strip()):
        items = [canon(p) for p in _ITEM_SPLIT.split(sentence.strip().lstrip("-*• ")) if canon(p)]
        first = next((i for i, it in enumerate(items) if any(holds(it, m) for m in members)), None)
        if first is None:
            continue
        items = items[first:]
        company = next((i for i, p in enumerate(items) if _COMPANY.match(p)), len(items))
        items = [p for p in items[:company] if not _DENIED_PART.match(p)]
        if not all(any(holds(i, m) for i in items) for m in members):
            continue
        if any(not any(holds(i, m) for m in members) and len(i.split()) <= 5 and not set(i.split()) & _CLAUSE_VERBS
               and not _TRAILING_CLAUSE.match(", " + i) and not _describes(i, named=False) for i in items):
            return True
    return False


def short_caps(truth: str) -> bool:
    t = truth.strip().rstrip(".")
    return 2 <= len(t) <= 4 and t.isalpha() and t.isupper()


def acronym(truth: str) -> str | None:
    words = [w for w in re.split(r"[\s-]+", fold(truth)) if w and w[0].isalpha()]
    if len(words) < 2 or any(not w[0].isupper() for w in words):
        return None
    return "".join(w[0] for w in words)


def _person_like(truth: str) -> bool:
    words = truth.split()
    return 2 <= len(words) <= 8 and all(w[:1].isupper() or w.lower() in _CONNECTORS for w in words) \
        and sum(w[:1].isupper() for w in words) <= 5 and not any(c.isdigit() for c in truth) and "," not in truth


ORIGIN_QUESTION = re.compile(r"\b(?:born|birth\w*|first|original(?:ly)?|initially|founded|formed|established|"
                             r"began|begin|started|debut\w*)\b", re.I)  # what came first, not what came later
PLACE_QUESTION = re.compile(r"\b(?:where|place of (?:birth|death|burial)|birthplace|hometown|city|town|located|"
                            r"location|headquartered|born in|died in)\b", re.I)
NATIONALITY_QUESTION = re.compile(r"\b(?:nationality|nation|country|citizen(?:ship)?)\b", re.I)
# a country and its people's adjective, both ways ("India" = "Indian" when a nationality is asked)
_DEMONYMS = dict(pair.split(":") for pair in (
    "United States:American; America:American; USA:American; United Kingdom:British; Britain:British; "
    "England:English; Scotland:Scottish; Wales:Welsh; Ireland:Irish; France:French; Germany:German; "
    "Italy:Italian; Spain:Spanish; Portugal:Portuguese; Netherlands:Dutch; Belgium:Belgian; "
    "Switzerland:Swiss; Austria:Austrian; Sweden:Swedish; Norway:Norwegian; Denmark:Danish; Finland:Finnish; "
    "Iceland:Icelandic; Poland:Polish; Russia:Russian; Ukraine:Ukrainian; Czechoslovakia:Czechoslovak; "
    "Hungary:Hungarian; Romania:Romanian; Bulgaria:Bulgarian; Greece:Greek; Turkey:Turkish; Serbia:Serbian; "
    "Croatia:Croatian; Yugoslavia:Yugoslav; Canada:Canadian; Mexico:Mexican; Brazil:Brazilian; "
    "Argentina:Argentine; Chile:Chilean; Peru:Peruvian; Colombia:Colombian; Cuba:Cuban; "
    "Venezuela:Venezuelan; Australia:Australian; Zealand:Zealander; India:Indian; Pakistan:Pakistani; "
    "Bangladesh:Bangladeshi; China:Chinese; Japan:Japanese; Korea:Korean; Philippines:Filipino; "
    "Indonesia:Indonesian; Thailand:Thai; Vietnam:Vietnamese; Iran:Iranian; Iraq:Iraqi; Israel:Israeli; "
    "Egypt:Egyptian; Nigeria:Nigerian; Kenya:Kenyan; Ethiopia:Ethiopian; Morocco:Moroccan; Algeria:Algerian; "
    "Ghana:Ghanaian; Estonia:Estonian; Latvia:Latvian; Lithuania:Lithuanian; Slovenia:Slovenian; "
    "Slovakia:Slovak; Georgia:Georgian; Armenia:Armenian; Lebanon:Lebanese; Syria:Syrian; "
    "Afghanistan:Afghan; Malaysia:Malaysian; Singapore:Singaporean").split("; "))


_COUNTRY_NAMES = [("United States", "USA", "US", "America", "United States of America"),  # "US" as a cased token
                  ("United Kingdom", "UK", "Britain", "Great Britain")]
_NICKNAME = re.compile(r"^(?P<first>[^\"“”]+?)\s+[\"“](?P<nick>[^\"”]+)[\"”]\s+(?P<last>.+)$")
YES_NO_LEAD = re.compile(r"^\s*(?:(?:most |very )?(?:likely|probably|presumably),?\s+(?=(?:yes|no|not)\W*$)|"
                         r"(?=(?:yes|no)\b\s*[;,.:—–-]))(yes|no|not)\b", re.I)  # "Yes; …", "Likely no", "Presumably not"
_LEADING_PREPOSITION = re.compile(r"^(?:(?:began|begun|started|built|founded|established|opened|released|"
                                  r"published|born|died)\s+(?:in\s+|on\s+)?|(?:in|on|at|by|for|since|during|"
                                  r"around|about|from)\s+)(?=\S)", re.I)  # "began 10 July 1951", "built in …"


def other_names(truth: str, question: str | None) -> list[str]:
    """Other names of the same answer that the question's kind allows: the town of "Montreal, Quebec" when a place is
    asked (never the region alone); "Indian" for "India", "USA" for "United States" (and back) when a nationality or
    country is asked; the nickname form of 'Reginald Martinez "Reggie" Jackson'; a name without its title ("Humphrey
    Goodman" for "DI Humphrey Goodman"); "yes" for a gold that opens with it ("Yes; it's classical music")."""
    out = []
    folded = fold(truth).strip()
    head = truth.split(",")[0].strip()
    if PLACE_QUESTION.search(question or "") and "," in truth and head[:1].isupper() and not re.search(r"\d", head):
        out.append(head)
    if NATIONALITY_QUESTION.search(question or ""):
        for country, people in _DEMONYMS.items():
            if folded.endswith(country) and (folded == country or folded.lower().startswith(("the ", "kingdom",
                                                                                              "republic"))):
                out.append(people)
            elif folded == people:
                out.append(country)
        for names in _COUNTRY_NAMES:
            if any(canon(folded) == canon(n) for n in names) or any(canon(o) == canon(names[0]) for o in out):
                out += [n for n in names if canon(n) != canon(folded)]
    elif folded in _DEMONYMS.values():  # a nationality for a gold ("Chinese" for a place of birth): its country
        out += [country for country, people in _DEMONYMS.items() if people == folded]
    if m := _NICKNAME.match(folded):
        out.append(f"{m.group('nick')} {m.group('last').split()[-1]}")
    words = folded.split()
    if len(words) >= 3 and (words[0].lower().rstrip(".") in _TITLES or re.fullmatch(r"[A-Z]{2,3}", words[0])):
        out.append(" ".join(words[1:]))
    title = next((i for i, w in enumerate(words[:-2]) if w.lower().rstrip(".") in _TITLES), None)
    if title is not None and "," not in folded and not re.search(r"\d", folded):
        # "Rooster Cogburn" for "U.S. Marshal Rooster Cogburn", "Clarisse Renaldi" for "Queen
        run = []  # dowager Clarisse Renaldi": the name after the title words
        for w in reversed(words[title + 1:]):
            if not w[:1].isupper() or w.lower().rstrip(".") in _TITLES:
                break
            run.insert(0, w)
        between = words[title + 1:len(words) - len(run)]
        if len(run) >= 2 and all(w.islower() or w.lower().rstrip(".") in _TITLES for w in between):
            out.append(" ".join(run))
    out += relative_dates(folded)
    if m := re.fullmatch(r"(?P<what>[A-Za-z][\w' -]+?)\s+(?:of|in)\s+(?P<year>\d{4})", folded):
        out.append(f"{m.group('year')} {m.group('what')}")  # "2016 United States presidential election"
    if m := _LEADING_PREPOSITION.match(folded):
        out.append(folded[m.end():])  # "2021" for "In 2021", "summer 2022" for "in summer 2022"
    if m := YES_NO_LEAD.match(folded):
        out.append("no" if m.group(1).lower() == "not" else m.group(1).lower())
    if ";" in folded and canon(folded.split(";")[0]) and not set(canon(folded.split(";")[0]).split()) & {"yes", "no"}:
        out.append(folded.split(";")[0].strip())  # "A Nintendo Switch" for "A Nintendo Switch; since the game …"
    if ":" in folded and len(folded.split(":")[0].split()) >= 1 and folded.split(":")[0][:1].isupper():
        out.append(folded.split(":")[0].strip())  # "LaLee's Kin" for "LaLee's Kin: The Legacy of Cotton"
    if m := _CORPORATE.search(folded):
        out.append(folded[:m.start()])  # "Mondelez International" for "Mondelez International, Inc."
    out += nicknamed(folded)
    if (m := _STYLED.search(folded)) and _person_like(folded[:m.start()]):
        out.append(folded[:m.start()])  # "Sir Francis Baring" for "Sir Francis Baring, 1st Baronet"
    if re.fullmatch(r"[A-Z][a-z]{4,}(?<![su]s)s", folded):
        out.append(folded[:-1])  # "Apalachee" for "Apalachees"
    if _person_like(folded) and re.search(r"\s[A-Z]\.\s", folded):
        out.append(re.sub(r"\s[A-Z]\.(?=\s)", "", folded))  # "Henry Kaiser" for "Henry J. Kaiser"
    return list(dict.fromkeys(o for o in out if canon(o) and canon(o) != canon(folded)))


_CORPORATE = re.compile(r",?\s+(?:&\s*co\.?|inc\.?|incorporated|ltd\.?|limited|llc|plc|corp\.?|corporation|"
                        r"co\.|gmbh|s\.?a\.?|ag|n\.?v\.?|(?:association\s+)?football\s+club|a?\.?f\.?c\.?)\s*$",
                        re.I)
_STYLED = re.compile(r",\s+(?:\d+(?:st|nd|rd|th)\s+)?(?:baronet|baron|baroness|earl|count|countess|duke|duchess|"
                     r"viscount|marquess|marquis|lord|lady|prince|princess|king|queen)\b.*$", re.I)
# the common English short forms of given names ("Bill Clinton" for "William Jefferson Clinton")
_NICKNAMES = {full: short.split("/") for full, short in (pair.split(":") for pair in (
    "William:Bill/Will/Billy; Robert:Bob/Rob/Bobby; Richard:Dick/Rick/Rich; James:Jim/Jimmy/Jamie; John:Jack/Johnny; "
    "Edward:Ed/Ted/Eddie/Ned; Thomas:Tom/Tommy; Michael:Mike/Mickey; Charles:Charlie/Chuck; Elizabeth:Liz/Beth/Betty/"
    "Eliza/Lizzie; Katherine:Kathy/Kate/Katie; Kathryn:Kathy/Kate/Katie; Catherine:Cathy/Kate/Katie; Margaret:Maggie/"
    "Peggy/Meg; Joseph:Joe/Joey; Anthony:Tony; Christopher:Chris; Daniel:Dan/Danny; David:Dave; Steven:Steve; "
    "Stephen:Steve; Jonathan:Jon; Patrick:Pat; Benjamin:Ben; Samuel:Sam; Alexander:Alex; Nicholas:Nick; Matthew:Matt; "
    "Andrew:Andy/Drew; Timothy:Tim; Kenneth:Ken; Ronald:Ron; Donald:Don; Gerald:Jerry; Lawrence:Larry; Frederick:Fred; "
    "Henry:Harry/Hank; Jennifer:Jenny/Jen; Susan:Sue; Deborah:Debbie/Deb; Patricia:Pat/Patty; Rebecca:Becky; "
    "Victoria:Vicky; Abraham:Abe; Theodore:Ted/Teddy; Albert:Al; Gregory:Greg; Jeffrey:Jeff; Peter:Pete; Philip:Phil; "
    "Raymond:Ray; Walter:Walt; Zachary:Zach; Douglas:Doug; Frank:Frankie; Francis:Frank; Leonard:Len/Leo; "
    "Eugene:Gene; Harold:Harry; Louis:Lou; Mitchell:Mitch; Nathaniel:Nate; Nathan:Nate; Vincent:Vince; Jacob:Jake; "
    "Joshua:Josh; Zachariah:Zach; Gabriel:Gabe; Isaac:Ike; Arnold:Arnie; Bernard:Bernie; Barbara:Barb; Dorothy:Dot; "
    "Jessica:Jess; Judith:Judy; Pamela:Pam; Cynthia:Cindy; Sandra:Sandy; Christine:Chris; Christina:Tina; Valerie:Val; "
    "Alexandra:Alex/Sasha; Samantha:Sam; Suzanne:Sue; Theresa:Terry; Sylvester:Sly; Montgomery:Monty; Augustus:Gus; "
    "Adrian:Ade; Reginald:Reggie/Reg; Terence:Terry; Clifford:Cliff; Stanley:Stan; Russell:Russ; Bradley:Brad"
).split("; "))}


def nicknamed(truth: str) -> list[str]:
    """A person's name with a common short form of the given name and the surname: "Bill Clinton" for "William
    Jefferson Clinton", "Kathy Martin" for "Kathryn Jean Martin"."""
    words = truth.split()
    if not 2 <= len(words) <= 4 or not _person_like(truth) or words[0] not in _NICKNAMES:
        return []
    return [f"{short} {words[-1]}" for short in _NICKNAMES[words[0]]]


_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_RELATIVE_DAY = re.compile(r"^(?:on\s+)?(?:a\s+|the\s+)?(?P<what>%s|day|weekend|week)\s+(?P<dir>before|after)\s+(?P<date>.+)$"
                           % "|".join(_WEEKDAYS), re.I)


def relative_dates(truth: str) -> list[str]:
    """The calendar day(s) a relative date names, as LoCoMo's golds give them: "The Tuesday before 20 July 2023" →
    "18 July 2023"; "the day after …"; "the weekend before …" → its Saturday and its Sunday; "the week before …" →
    each of the seven days before."""
    m = _RELATIVE_DAY.match(truth.strip().rstrip("."))
    date = re.fullmatch(r"(\d{4}) m(\d\d) d(\d\d)", canon(m.group("date"))) if m else None
    if not date:
        return []
    try:
        anchor = datetime.date(*(int(g) for g in date.groups()))
    except ValueError:
        return []
    step = -1 if m.group("dir").lower() == "before" else 1
    what = m.group("what").lower()
    wanted = {"day": None, "weekend": (5, 6)}.get(what, (_WEEKDAYS.index(what),) if what in _WEEKDAYS else None)
    day = anchor + datetime.timedelta(days=step)
    if wanted is not None:
        while day.weekday() not in wanted:
            day += datetime.timedelta(days=step)
    days = [day]
    if what == "weekend":
        days.append(day + datetime.timedelta(days=step))
    if what == "week":  # the seven days before (or after) the anchor
        days = [anchor + datetime.timedelta(days=step * i) for i in range(1, 8)]
    return [f"{d.day} {MONTHS[d.month - 1].capitalize()} {d.year}" for d in sorted(days)]


# --------------------------------------------------------------------------------------------- covered in other words
_SUFFIXES = ("ational", "ations", "ation", "ically", "ical", "ities", "ity", "ingly", "ing", "edly", "ed", "ers", "er",
             "ies", "es", "ness", "ments", "ment", "ful", "s", "ly", "al", "ic")
_LIGHT = frozenset({"a", "an", "the", "of", "in", "on", "at", "to", "for", "with", "and", "or", "by", "from", "is",
                    "are", "was", "were", "be", "it", "its", "his", "her", "their", "them", "they", "he", "she",
                    "that", "this", "as", "while", "s"})
# words a free-form answer carries that say nothing of it ("have dinner with friends" = "dinner with friends")
_FILLER = _LIGHT | {"have", "has", "had", "do", "does", "did"}


_LONG_SUFFIXES = ("ance", "ence", "ancy", "ency", "ant", "ent")  # cut only when 5 letters or more remain


def stem(word: str) -> str:
    """A light suffix-stripping stem ("volunteered" / "volunteering" → "volunteer", "electrical" / "electricity" →
    "electr"), for reading free-form answers given in other words; numbers and short words stay as they are."""
    while not word.isdigit():
        cut = next((suf for suf in _SUFFIXES if word.endswith(suf) and len(word) - len(suf) >= 4), None) or \
            next((suf for suf in _LONG_SUFFIXES if word.endswith(suf) and len(word) - len(suf) >= 5), None)
        if cut is None:
            break
        word = word[: -len(cut)]
        if len(word) >= 2 and word[-1] == word[-2] and word[-1] not in "lsz":
            word = word[:-1]  # "putting" → "putt" → "put"
    return word


def _numeric(word: str) -> bool:
    """A number or a canonical date part ("m10", "d06")."""
    return word.isdigit() or bool(re.fullmatch(r"[md]\d\d", word))


def _same_stem(a: str, b: str) -> bool:
    """Equal stems, or one the other plus a letter ("spruc" / "spruce")."""
    return a == b or (min(len(a), len(b)) >= 4 and abs(len(a) - len(b)) <= 1 and (a.startswith(b) or b.startswith(a))) \
        or (min(len(a), len(b)) >= 3 and (a == b + "s" or b == a + "s"))  # "rpgs" / "rpg"


def covers(reply_text: str, truth: str, question: str | None) -> bool:
    """A free-form answer given in other words: every content word of ``truth`` the question does not already say is
    in the reply (by :func:`stem`), its numbers in their order, at least two such words in lower case (names, dates
    and numbers are read as phrases), and the reply adds no negation or word of doubt the truth does not have ("volunteered at a homeless shelter" for "Volunteering at a homeless
    shelter"; not "an animal shelter", not "did not volunteer")."""
    gold = [w for w in canon(truth).split() if w not in _FILLER]
    reply = canon(_ASIDE.sub("", reply_text)).split()  # "(Cannon is also a writer, but Simon was not.)"
    asked = {stem(w) for w in canon(question).split()}
    needed = [w for w in gold if w.isdigit() or stem(w) not in asked]
    common = [w for w in (w.strip(string.punctuation) for w in fold(truth).split()) if w.isalpha() and w.islower()
              and w not in _LIGHT
              and stem(canon(w)) not in asked]
    if len(needed) < 2 or len(common) < 2:
        return False  # names, dates and numbers are read as phrases, not word by word
    if DOUBT_WORDS.search(reply_text) or any(pair in NEGATION_BIGRAMS for pair in zip(reply, reply[1:])) or \
            set(reply) & CONSIDERED:
        return False
    have = {stem(w) for w in reply}
    missing = [w for w in needed if not any(_same_stem(stem(w), h) for h in have)]
    tolerance = 1 if len(needed) >= 5 and "," not in truth else 0
    if len(needed) >= 8:
        tolerance = max(tolerance, len(needed) // 4)  # a sentence-long gold: a quarter of its words in other words
    if len(missing) > tolerance or any(_numeric(w) for w in missing):
        return False  # one word in five may be missing (a typo in the gold: "metoring")
    numbers = [w for w in gold if _numeric(w)]
    it = iter(w for w in reply if _numeric(w))
    if not all(n in it for n in numbers):
        return False
    return not (set(reply) & NEGATION_CUES) - set(gold)


def plural_forms(truth: str) -> list[str]:
    """The plural of an answer that is not a person's name ("screenwriter" → "screenwriters", "Armenian-American" →
    "Armenian-Americans"); a possessive is read apart (:data:`_POSSESSIVE`), so "Murray's" never reads as one."""
    t = truth.strip()
    last = t.split()[-1] if t else ""
    if t and last.lower() in RELATIONS | _FAMILY and len(t.split()) <= 2:
        return [t[: len(t) - len(last)] + last.lower() + "s"]  # "Their dads" for "Dad"
    if not t or "," in t or _person_like(fold(t)) or len(last) < 4 or \
            not (last.isalpha() and last.islower() or re.fullmatch(r"[A-Za-z]+[-–][A-Za-z]+", last)):
        return []  # a lower-case word or a compound ("Armenian-American"), never a name or a place
    last = t.split()[-1]
    plural = last + ("es" if last.endswith(("s", "x", "ch", "sh")) else "s")
    return [t[: len(t) - len(last)] + plural]


def partial_names(truth: str) -> list[str]:
    """Shorter names a reply may give for ``truth`` when one entity is asked for: the surname of a person
    ("Damon" for "Matt Damon"), an institution without its generic word ("Eton" for "Eton College")."""
    words = fold(truth).split()
    if not _person_like(fold(truth)):
        return []
    while len(words) > 2 and words[-1].rstrip(".").lower() in _GENERATIONS:
        words = words[:-1]  # "Albee" for "Edward Franklin Albee III"
    if words[-1].lower().rstrip(".") in _GENERIC:
        rest = [w for w in words[:-1] if w.lower() not in ("the", "of")]
        return [" ".join(rest)] if rest and len(" ".join(rest)) >= 3 else []
    if any(w.lower() in _CONNECTORS and w.lower() not in _PARTICLES for w in words):
        return []  # "Nobel Prize in Literature", "Socialist Party of America": a thing's name, no person's
    last = words[-1].strip(".,")
    out = [last] if len(last) >= 3 and last.lower() not in _CONNECTORS and not last.isupper() else []
    if len(words) >= 3 and words[-2].lower() in _PARTICLES:
        out.insert(0, f"{words[-2]} {last}")  # "Van Duren" for "Mart Van Duren"
    elif len(words) >= 3 and all(w[:1].isupper() and w.lower() not in _CONNECTORS for w in words[-2:]):
        out.insert(0, f"{words[-2]} {last}")  # "Villicaña García" for "Rafael Villicaña García"
    if len(words) >= 3 and words[0][:1].isupper() and words[0].lower() not in _TITLES:
        out.insert(0, f"{words[0]} {last}")  # "Kelly Osbourne" for "Kelly Lee Osbourne"
    return out


def _name_before(text: str, start: int, gold_words: set[str], own: bool = False) -> bool:
    """Is the word right before ``start`` a name word of another name ("Robert" in "Robert Damon", "J.K." in
    "J.K. Rowling"), rather than a sentence opener, a title, a lower-case word or (``own``) a word of the truth?"""
    before = text[:start].rstrip()
    prev = re.search(r"([A-Za-z.'’-]+)$", before)
    if not prev:
        return False
    raw = prev.group(1)
    if re.search(r"['’]s?$", raw) and not own:
        return False  # "Tarantino's Hateful Eight": the possessive names an owner, not a first name
    word = re.sub(r"['’]s$", "", raw.replace(".", "").lower())  # "He's" is "he"
    if raw.endswith(".") and not re.fullmatch(r"(?:[A-Z]\.)+", raw):
        return False  # a sentence ends there
    if not raw[0].isupper() or word in _TITLES or word in _SENTENCE_OPENERS or (word == "the" and not own):
        return False
    return own or word not in gold_words


def shadowed(reply_text: str, truth: str) -> bool:
    """Every occurrence of a name of two words or more in the reply is the tail of another name ("Robert Matt Damon"
    hardly; "James Francis Baring" for "Francis Baring"): the reply names someone else. A one-word truth is never
    shadowed: real replies give the fuller name ("Boris Yeltsin" for "Yeltsin")."""
    text = fold(reply_text)
    words = fold(truth).split()
    if words and words[0].lower() in ("the", "a", "an"):
        words = words[1:]
    if len(words) < 2 or not _person_like(" ".join(words)) or words[0].lower() in _LIGHT:
        return False  # "Boris Yeltsin" for "Yeltsin", "a Toyota Prius" for "Prius": a fuller name, not another one;
        # "In 2021" is no name at all
    gold = {w.replace(".", "").lower() for w in fold(truth).split()}
    hits = list(re.finditer(r"(?<![A-Za-z0-9])" + re.escape(" ".join(words)) + r"(?![A-Za-z0-9])", text, re.I))
    return bool(hits) and all(_name_before(text, m.start(), gold) for m in hits)


def mark_truths(reply_text: str, truths: list[str], one_entity: bool, keep: tuple[str, ...] = (),
                asked: frozenset[str] = frozenset()) -> tuple[str, list[str]]:
    """Rewrite case-sensitive readings of the reply as placeholder tokens, so they count as the truth they stand
    for: short upper-case aliases and acronyms ("ME", "US", "HP") only as whole tokens with their case, never the
    words "me"/"us"; a partial name only when no other name word stands before it ("Damon", not "Robert Damon").
    Phrases in ``keep`` (the question's alternatives: "Ulf Merbold or …") are read as themselves, never marked, and
    a partial name made of the question's words (``asked``) is none unless the question names the whole: "Party" of
    "Democratic Party" for "what political party …", "Crockett" for "the person Crockett County is named after"."""
    text = fold(reply_text)
    marks: list[str] = []
    plain = [t for t in truths if not short_caps(t)]
    short = [t.strip().rstrip(".") for t in truths if short_caps(t)]
    short += [a for a in (acronym(t) for t in plain) if a and len(a) >= 2]
    for i, alias in enumerate(dict.fromkeys(short)):
        pat = re.compile(r"(?<![A-Za-z0-9])" + re.escape(alias) + r"(?![A-Za-z0-9])")
        if pat.search(text):
            token = PLACEHOLDER.format(len(marks))
            text = pat.sub(token, text)
            marks.append(token)
    if one_entity:
        gold_words = {w.replace(".", "").lower() for t in plain for w in fold(t).split()}
        kept = {canon(k) for k in keep}
        for name in dict.fromkeys(p for t in plain for p in partial_names(t) if canon(p) not in kept
                                  and (not set(canon(p).split()) <= asked or set(canon(t).split()) <= asked
                                       or any(f" {canon(p)} " in f" {k} " for k in kept))):
            token = PLACEHOLDER.format(len(marks))

            whole = [(k.start(), k.end()) for phrase in keep if len(phrase.split()) > 1
                     for k in re.finditer(r"(?<![A-Za-z0-9])" + re.escape(fold(phrase)) + r"(?![A-Za-z0-9])", text, re.I)]

            def sub(m: re.Match, token: str = token, whole: list = whole) -> str:
                if any(s <= m.start() and m.end() <= e for s, e in whole):
                    return m.group()  # "Hunt" inside "Helen Hunt", the question's own alternative
                prev = re.search(r"([A-Za-z.'’-]+)\s*$", text[:m.start()])
                if _name_before(text, m.start(), gold_words, own=True) or \
                        (prev and prev.group(1).replace(".", "").lower() in gold_words):
                    return m.group()  # "Robert Damon" names another person; "Bolko II of Opole" is the full name
                nxt = re.match(r"\s+([A-Z][a-z]+)", text[m.end():m.end() + 40])
                if nxt and (nxt.group(1).lower() not in _GENERIC or nxt.group(1).lower() in gold_words):
                    return m.group()  # "Eton Manor": another name; "Damon Hill": the full name, matched as itself
                return token

            pat = re.compile(r"(?<![A-Za-z0-9])" + re.escape(name) + r"(?![A-Za-z0-9'’])")
            new = pat.sub(sub, text)
            if new != text:
                text = new
                marks.append(token)
    return text, marks


# --------------------------------------------------------------------------------------------- doubt (v4)
# A rule reads the phrasings it knows; every round of new wordings brought a new way to name the answer and not stand
# behind it ("G is what the text claims, but that is outdated"). So v4 credits only a claim the reply stands behind:
# the answer found and asserted is still held back (at most 3, never credited) when the reply casts doubt on it in a
# way no rule above understood. Three general signs, each cheap to state and wide on purpose (a right reply held back
# costs a false reject, which the labelled figures show; a wrong one credited is the error the judge must not make):
DOUBT_WORDS = re.compile(
    r"\b(?:wrong(?:ly)?|incorrect(?:ly)?|mistaken(?:ly)?|mistakes?|errors?|erroneous(?:ly)?|false(?:ly)?|untrue|"
    r"inaccura(?:te|tely|cy)|outdated|out[- ]of[- ]date|obsolete|superseded|no longer|formerly|myths?|"
    r"misconceptions?|misattribut\w*|misremember\w*|misread\w*|misidentif\w*|confus\w*|conflat\w*|mix(?:ed)?[- ]up|"
    r"red herrings?|distractors?|decoys?|tempting|misleading|allegedly|supposedly|purportedly|rumou?r(?:ed|s)?|"
    r"disputed|debunked|refuted|contradict\w*|ruled? out|rules out|dismiss\w*|discard\w*|near[- ]miss\w*|"
    r"not the case|not quite|not (?:actually|really|the (?:right|correct|actual|real))|"
    r"(?:commonly|widely|popularly|often|many|some(?: people)?|people) (?:believed?|thought|think|assumed?|said|say|"
    r"claim(?:ed)?|confuse[ds]?)|(?:often|commonly|usually|widely|sometimes|popularly|frequently) (?:associated|"
    r"linked|credited|cited|listed|given|mistaken)|(?:some|many|several|other|older|a few) (?:\w+ ){0,2}(?:says?|said|lists?|listed|"
    r"gives?|gave|claims?|claimed|suggests?|suggested|reports?|reported|puts?|states?|stated|describes?|assumed?|"
    r"assumes|thinks?|thought|believed?|believes|guess(?:es|ed)?)|(?:looks|seems|sounds) (?:like|right|plausible)|at first glance|"
    r"not (?:\w+ )?(?:sure|certain)|unsure|uncertain|unclear|"
    r"(?:can(?:no|')?t|unable to|hard to|difficult to) (?:confirm|verify|be sure|tell for sure)|"
    r"enough to (?:confirm|verify|be sure|tell|say for sure))\b",
    re.I)
# after the answer, a turn to something else: "X, but Y", "X; today it is Y", "X was renamed Y"
TURN_WORDS = re.compile(
    r"\b(?:however|yet|instead|rather|actually|in fact|in reality|in truth|nowadays|today|currently|now|presently|"
    r"later|subsequently|renamed|replaced|succeeded|became|changed|"
    r"but(?= (?!not\b|also\b|only\b|too\b|still\b|just\b)\w))\b",
    re.I)
_TEMPORAL = re.compile(r"(?:nowadays|today|currently|now|presently)$", re.I)
# the answer inside a conditional or supposition: "if it were X, …", "assuming X, …"
CONDITIONAL = re.compile(r"\b(?:if|suppose|supposing|assuming|unless|hypothetically|imagine|were it|had it been)\b"
                         r"[^,;.!?\n]*$", re.I)
PAST = re.compile(r"\b(?:used to|formerly|previously|once|at first|originally)\b", re.I)
LATER = re.compile(r"\b(?:later|afterwards|subsequently|eventually)\b", re.I)
# the answer in a side clause after another claim: "X, though he also likes G", "married to Y — previously to G"
CONCESSIVE = re.compile(r"\b(?:though|although|while|whereas|previously|formerly|once|used to)\b", re.I)
# uncertainty beside an "or" in the answer's sentence: "probably the second or third season"
UNSURE = re.compile(r"\b(?:either|probably|possibly|perhaps|maybe|likely|might|could|not sure|unsure|guess|"
                    r"i think|i believe)\b", re.I)
# a commitment the reply makes later to something that is not the answer: "… So my answer is Y."
COMMITMENT = re.compile(r"\b(?:final answer|the answer is|answer:|i'?d go with|i would go with|i'?ll go with|"
                        r"my answer|i'?d say|i would say|i'?ll say|i will say|i'?ll go for|best guess|so it'?s|so it is|therefore|thus|hence|"
                        r"in conclusion|to conclude|overall|^\W*so\b(?=,?\s+(?-i:[A-Z])))(?!\w)", re.I)
# a number the reply bounds rather than states: "fewer than 821", "over 1,000", "almost 230"
QUALIFIED_NUMBER = re.compile(r"\b(?:fewer|less|more|over|under|above|below|nearly|almost|beyond|exceeding|"
                              r"(?:at|no) (?:least|most|more|fewer)|up to|just (?:over|under|shy of)|shy of|than)"
                              r"\s*$", re.I)  # "about 821" states the number, "fewer than 821" bounds it
_CANON_DATE = re.compile(r"\b(\d{3,4}) m(\d\d)(?: d(\d\d))?\b")
_SENTENCE_END = re.compile(r"(?<![A-Z])(?<!\b[a-z])(?<!\b(?:St|Dr|Mr|Ms|Jr|Sr|vs|No))(?<!\bMrs)[.!?;]+[\"”’)]*\s+(?=\S)|\n+")
_NAME_OR_NUMBER = re.compile(r"(?<![\w'’])(?:[A-Z][\w'’.-]*|\d[\d,.]*)")
_FUNCTION_CAPS = frozenset({"i", "the", "a", "an", "it", "its", "this", "that", "these", "those", "he", "she",
                            "they", "we", "you", "his", "her", "their", "there", "here", "so", "and", "or", "but",
                            "in", "on", "at", "of", "for", "as", "by", "with", "from", "to", "yes", "no", "not",
                            "also", "both", "all", "some", "none", "answer", "note", "however", "though", "although",
                            "today", "now", "currently", "actually", "instead", "rather", "yet", "based", "according",
                            "documents", "document", "doc", "docs", "context", "source", "sources", "text", "passage"})


def sentences(text: str) -> list[str]:
    """The reply cut at sentence ends (not after an initial, "St.", "Dr." or "No."), semicolons and line breaks."""
    return [s for s in _SENTENCE_END.split(text or "") if s.strip()]


def _new_names(text: str, known: set[str]) -> list[str]:
    """Names and numbers in ``text`` that are not words of the answer or the question, nor function words."""
    out = []
    for m in _NAME_OR_NUMBER.finditer(fold(text)):
        word = normalize(m.group())
        if word and word not in known and word not in _FUNCTION_CAPS and not (m.start() == 0 and word.isalpha()
                                                                              and len(word) < 4):
            out.append(m.group())
    return out


def _conflicting_date(text: str, phrases: list[str]) -> str | None:
    """The reply dates the answer's year with another month or day than a truth does ("June 1990" for "May 1990",
    even when "1990" alone is an accepted alias)."""
    truth_dates = [m.groups() for p in phrases for m in _CANON_DATE.finditer(canonical(p))]
    dated = [m.groups() for m in _CANON_DATE.finditer(canonical(text))]
    agrees = [any(ty == y and mo == tmo and not (d and td and d != td) for ty, tmo, td in truth_dates)
              for y, mo, d in dated]
    if agrees and agrees[-1]:
        return None  # "the session is dated 13 June …, so the Sunday before is 11 June 2023": it ends on the answer
    for (y, mo, d), ok in zip(dated, agrees):
        if not ok and any(ty == y for ty, _, _ in truth_dates):
            return "a different date"
    return None


def _moves_on_to_answer(rest: str, phrases: list[str]) -> bool:
    """After a word of doubt, the sentence turns ("… and is now", "but", "today") to the answer, which it had not
    named in between: the doubt was about what came before ("it used to be Y and is now X")."""
    turn = re.search(r"\b(?:but|and (?:is|was|are) now|now|today|currently|instead|actually|in fact)\b", rest, re.I)
    if not turn:
        return False
    before, after = Reply.parse(rest[:turn.start()], phrases), Reply.parse(rest[turn.end():], phrases)
    return not any(before.mentions(p) for p in phrases) and any(after.mentions(p) for p in phrases)


def _abbreviates(short: str, name: str) -> bool:
    """"AL" for "Alabama", "MN" for "Minnesota": the first letter, then the rest in order."""
    short, name = short.lower(), name.lower()
    rest = iter(name[1:])
    return bool(short) and name[:1] == short[0] and all(c in rest for c in short[1:])


def _other_place(text: str, phrases: list[str], question: str | None) -> str | None:
    """The reply puts the answer's town in another region ("Hastings, Nebraska" for "Hastings, Minnesota"), when a
    place is asked."""
    if not PLACE_QUESTION.search(question or ""):
        return None
    folded = fold(text)
    for p in phrases:
        head, _, region = fold(p).partition(",")
        if not region.strip():
            continue
        for m in re.finditer(r"(?<![\w])" + re.escape(head.strip()) + r",\s*([A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*)*)", folded):
            found = m.group(1)
            if canon(found) in (canon(region), *canon(region).split()) or \
                    (found.isupper() and len(found) <= 3 and _abbreviates(found, region.strip())):
                continue
            return "another place of that name"
    return None


_NUMBERED_STYLE = re.compile(r"^(?P<name>[^,]+),\s+(?P<n>\d+)(?:st|nd|rd|th)\s+(?P<style>\w+)", re.I)


def _other_holder(text: str, phrases: list[str]) -> str | None:
    """The last numbered holder of the answer's title the reply names is another one ("Sir Robert Peel, 2nd Baronet"
    for "Sir Robert Peel, 1st Baronet"; a chain "the 3rd Baronet's father was the 2nd Baronet" ends on the answer)."""
    folded = fold(text)
    for p in phrases:
        if not (m := _NUMBERED_STYLE.match(fold(p).strip())):
            continue
        named = list(re.finditer(r"(\d+)(?:st|nd|rd|th)\s+" + re.escape(m.group("style")), folded, re.I))
        if named and named[-1].group(1) != m.group("n"):  # the last numbered holder the reply names
            return "another holder of that name"
    return None


def _new_words(text: str, known: set[str]) -> bool:
    """Content words in ``text`` that are neither the answer's, the question's nor function words."""
    return any(w not in known and w not in _FUNCTION_CAPS and w not in _LIGHT and len(w) > 2 and not w.isdigit()
               and w not in ("favorite", "favourite", "answer", "married", "learning", "likes", "enjoys")
               for w in canon(text).split())


def _head_to_answer(sentence: str, phrases: list[str]) -> str:
    """``sentence`` up to the end of the first word at which it names the answer (all of it when it never does)."""
    for m in re.finditer(r"\S+", sentence):
        head = sentence[:m.end()]
        if any(Reply.parse(head, phrases).mentions(p) for p in phrases):
            return head
    return sentence


def _concludes_with(text: str, phrases: list[str]) -> bool:
    """``text`` ends by concluding with the answer: "So Live.", "…, so Live", "→ Live"."""
    tail = _INNER_CONCLUSION.split(text)
    if len(tail) == 1 and not _CONCLUSION.match(text.strip()):
        return False
    return any(Reply.parse(tail[-1], phrases).mentions(p) for p in phrases)


def doubt(text: str, phrases: list[str], question: str | None) -> str | None:
    """Why the reply does not stand behind the answer it names (None when nothing casts doubt on it).

    ``phrases`` are the ways the answer may be named (truths, aliases, its side of the question). In order: another
    month or day for the answer's year; from the first sentence naming the answer on, a word of doubt
    (``DOUBT_WORDS``: wrong, outdated, "commonly thought", allegedly …) that does not move on to the answer; another
    region for its town; its last mention negated; the answer in a concessive aside after another claim
    (``CONCESSIVE``); the answer as the past against something else (``PAST``) or coming ``LATER`` after another
    claim; a bound for the number ("fewer than 821"); a hedge beside an "or"; after the answer, a turn
    (``TURN_WORDS``: actually, today, renamed, "but Y" …) to a name or number that is neither the answer's nor the
    question's; the answer inside a conditional ("if it were X"); a later sentence that turns or commits to something
    else ("… Answer: Y").
    """
    if conflict := _conflicting_date(text, phrases):
        return conflict
    parts = sentences(text)
    names = [i for i, s in enumerate(parts) if any(Reply.parse(s, phrases).mentions(p) for p in phrases)]
    if not names:
        return None
    asked = set(normalize(question).split())
    asked_stems = {stem(w) for w in asked}
    heads = {i: _head_to_answer(parts[i], phrases) for i in names}  # each sentence up to its first naming
    known = asked | {w for p in phrases for w in canon(p).split()} | \
        {w for p in phrases for w in normalize(fold(p)).split()}
    for i in range(names[0], len(parts)):
        for m in DOUBT_WORDS.finditer(parts[i]):
            if set(normalize(m.group()).split()) <= known:
                continue  # "A Wrong Way to Love": the doubt word is the answer's (or the question's) own
            if not _moves_on_to_answer(parts[i][m.end():], phrases):
                return f"doubt: {m.group().lower()!r}"
    if conflict := _other_place(text, phrases, question):
        return conflict
    if conflict := _other_holder(text, phrases):
        return conflict
    last = Reply.parse(parts[names[-1]], phrases)
    final = max(((s, e) for p in phrases for s, e in last.occurrences(p)), default=None)
    if final is not None and last.negated(*final):
        return "denied where last named"  # "… then at Charles University. … Vienna rather than Charles University."
    lead = heads[names[0]]
    lead = lead[: max(0, len(lead) - len(lead.split()[-1]))] if lead.split() else ""
    if (m := CONCESSIVE.search(lead)) and _new_words(lead[:m.start()], known) and \
            not _concludes_with(parts[names[-1]] if names[-1] != names[0] else parts[names[0]][len(heads[names[0]]):],
                                phrases):
        return f"concessive: {m.group().lower()!r}"  # "The Matrix trilogy, though he also likes Lord of the Rings"
    for i in names:  # the answer as the past, something else as the present
        head = heads[i]
        elsewhere = " ".join(p for j, p in enumerate(parts) if j != i) + " " + parts[i][len(head):]
        past = [m for m in PAST.finditer(head) if not (set(canon(m.group()).split()) & known)
                and stem(canon(m.group()).split()[-1]) not in asked_stems
                and not _moves_on_to_answer(head[m.end():], phrases)]
        if past and _new_words(elsewhere, known):
            return f"in the past: {past[0].group().lower()!r}"  # "Evan used to drive a Prius, but … an SUV"
        if i > 0 and any(m.group().lower() not in asked for m in LATER.finditer(parts[i][len(head):])) and \
                _new_words(" ".join(parts[:i]), known):
            return "came later"  # "John was learning guitar at that point; the drums came later."
        later = [m for m in LATER.finditer(head) if m.group().lower() not in asked]
        if later and _new_names(head[:later[0].start()], known) and ORIGIN_QUESTION.search(question or ""):
            return "came later"  # "He was born in Manhattan and later moved to Brooklyn." for "where … born?"
    concluded = len(names) > 1 and names[-1] == len(parts) - 1 and bool(_CONCLUSION.match(parts[-1].strip()))
    for i in names:
        s, head = parts[i], heads[i]
        last = head.split()[-1] if head.split() else ""
        if any(canon(p).replace(" ", "").isdigit() for p in phrases if canon(p) == canon(last)) and \
                QUALIFIED_NUMBER.search(canonical(head[:len(head) - len(last)])):
            return "a bound, not the number"
        if re.search(r"\bor\b", s, re.I) and UNSURE.search(s) and not re.search(r"\bor\b", question or "", re.I):
            return f"hedge: {UNSURE.search(s).group().lower()!r}"
        for m in TURN_WORDS.finditer(s) if not (concluded and i != names[-1]) else ():
            # (a reply that ends "So … China." stands behind the answer whatever turn an earlier sentence took)
            if normalize(m.group()) in asked:
                continue  # "later" answering "which opened later?" is the question's own word, no turn
            before = Reply.parse(s[:m.start()], phrases)
            rest = s[m.end():]
            if any(before.mentions(p) for p in phrases) and (
                    _new_names(rest, known) or (_TEMPORAL.match(m.group()) and _new_words(rest, known))):
                return f"turn: {m.group().lower()!r}"  # "… the piano as a kid, but … now is the violin"
        if cond := CONDITIONAL.search(head.rstrip(",;:.!?)\"”’*")):
            return f"conditional: {cond.group().split()[0].lower()!r}"
    for s in parts[names[-1] + 1:]:
        if turn := next((m for m in TURN_WORDS.finditer(s)
                         if normalize(m.group()) not in asked and _new_names(s[m.end():], known)), None):
            return f"turn: {turn.group().lower()!r}"
        if COMMITMENT.search(s) and _new_names(s, known):
            return "commits elsewhere"
    return None
