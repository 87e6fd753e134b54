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
- **entities** of a multi-entity answer: its parts split at commas, ``;``, ``&`` and ``and``.
"""
from __future__ import annotations

import re
import string
from collections import Counter
from dataclasses import dataclass

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans("", "", string.punctuation + "“”‘’–—")  # SQuAD's ASCII set, plus quotes and dashes
NEGATION_CUES = frozenset({"not", "no", "never", "neither", "nor", "none", "cannot", "cant", "isnt", "wasnt",
                           "arent", "werent", "doesnt", "didnt", "dont", "wont", "hasnt", "havent", "hadnt",
                           "unlike"})
NEGATION_BIGRAMS = frozenset({("rather", "than"), ("instead", "of"), ("other", "than")})
_AUX = frozenset({"is", "was", "are", "were", "does", "did", "do", "has", "had", "have"})
_AUX_NOT = frozenset({"isnt", "wasnt", "arent", "werent", "doesnt", "didnt", "dont", "hasnt", "hadnt", "havent"})
_DENIALS = frozenset({"not", "never", "incorrect", "wrong", "false"})  # "X is wrong", "X was not"
PRE_WINDOW = 3  # tokens before an occurrence that a negation cue reaches
# clause breaks sit next to white space only, so splitting never changes the token sequence normalize() makes
_CLAUSE_BREAK = re.compile(r"[,.;:!?)\]](?=\s|$)|(?:^|(?<=\s))[(\[]|\s[-–—]+\s|\b(?:but|whereas|however)\b", re.I)
_QUOTED_PAIR = re.compile(r"[\"“]([^\"”]+)[\"”]\s+or\s+[\"“]([^\"”]+)[\"”]", re.I)
_OR = re.compile(r"\s+or\s+", re.I)
_LEFT_DELIM = re.compile(r"(?:[,;:]\s|--|\s[-–—]\s|\bbetween\b|\beither\b)", re.I)
_RIGHT_DELIM = re.compile(r"[,;?]|\s[-–—]\s|--|$")
_CONNECTORS = frozenset({"of", "the", "and", "de", "del", "der", "di", "du", "da", "la", "le", "von", "van", "y",
                         "v", "v.", "vs", "vs.", "ul", "bin", "al", "to", "in", "on", "for", "&", "a", "e"})
_STOP = frozenset({"to", "the", "a", "an", "in", "on", "of", "for", "with", "by", "at", "from", "be", "is", "it"})
_ENTITY_SPLIT = re.compile(r"\s*(?:,|;|&|\band\b)\s*", re.I)
YES_NO = ("yes", "no")


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
        for i, clause in enumerate(_CLAUSE_BREAK.split(text or "")):
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
        words = normalize(phrase).split()
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
        after = [t for t, c in zip(self.tokens[end:end + 2], self.clauses[end:end + 2]) if c == self.clauses[end]] \
            if end < len(self.tokens) and not opens_phrase else []
        if after and (after[0] in _AUX_NOT or (after[0] in _AUX and len(after) > 1 and after[1] in _DENIALS)):
            return True
        return False

    def demoted(self, start: int, question_words: frozenset[str]) -> bool:
        """``<comparative in the question> than X``: X is what the answer is compared against."""
        return (start >= 2 and self.tokens[start - 1] == "than" and self.tokens[start - 2] in question_words
                and self.clauses[start - 2] == self.clauses[start])

    def asserts(self, phrase: str, question_words: frozenset[str] = frozenset(), yes_no: bool = False) -> bool:
        """``phrase`` occurs at least once neither negated nor compared against. A yes/no word counts only where it
        opens or closes its clause ("No, …", "… the answer is yes"), not inside one ("there is no doubt")."""
        return any(not self.negated(s, e, yes_no) and not self.demoted(s, question_words)
                   and (not yes_no or self._clause_edge(s, e)) for s, e in self.occurrences(phrase))

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
    parts = [normalize(p) for p in _ENTITY_SPLIT.split(answer or "")]
    return [p for p in parts if p]


def question_words(question: str | None) -> frozenset[str]:
    return frozenset(normalize(question).split())
