"""The alternatives an "X or Y?" question offers, and which one a reply picks: by its comparative, its
conclusion, or the side it opens with; yes/no read by polarity."""
from __future__ import annotations

import re
from dataclasses import dataclass

from emb_s_core.answer_match.canonical import canon, normalize, token_f1
from emb_s_core.answer_match.names import partial_names
from emb_s_core.answer_match.reply import Reply, sentences
from emb_s_core.answer_match.words import NEGATION_CUES, YES_NO, _CONNECTORS, _STOP

_QUOTED_PAIR = re.compile(r"[\"“]([^\"”]+)[\"”]\s+or\s+[\"“]([^\"”]+)[\"”]", re.I)
_OR = re.compile(r"\s+or\s+", re.I)
_LEFT_DELIM = re.compile(r"(?:[,;:]\s|--|\s[-–—]\s|\bbetween\b|\beither\b)", re.I)
_RIGHT_DELIM = re.compile(r"[,;?]|\s[-–—]\s|--|$")


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
        if asks_same and "only" in tokens:
            return "no"  # "Both are documentaries, but only Über Goober is about gamers"
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
