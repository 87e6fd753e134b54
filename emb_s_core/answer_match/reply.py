"""A reply as clauses of tokens: which phrases it asserts, negates, sets aside or uses as a modifier; its final
claim after a correction; its sentences; refusals and hedge markers."""
from __future__ import annotations

import re
from dataclasses import dataclass

from emb_s_core.answer_match.canonical import canon, canonical, normalize
from emb_s_core.answer_match.words import (
    CONSIDERED, NEGATION_BIGRAMS, NEGATION_CUES, PRE_WINDOW, RELATIONS, UNIT_WORDS, _AUX, _AUX_NOT, _DENIALS,
    _INVERSE, _OTHER_PARTY, _TITLES,
)

# clause breaks sit next to white space only, so splitting never changes the token sequence normalize() makes
_CLAUSE_BREAK = re.compile(r"[,.;:!?)\]](?=\s|$)|(?:^|(?<=\s))[(\[]|\s[-–—]+\s|\b(?:but|whereas|however)\b", re.I)


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
                           r"\b(?:could|might|may) also (?:have been|be (?:the|a|an|right|correct|read)\b)|\beither (?:works|one works|is "
                           r"fine|could be right)\b|\b(?:range|ranges|ranging|vary|varies) (?:from|between)\b|"
                           r"\b(?:is|are|would be)\s+(?:also|equally)\s+(?:possible|plausible|likely|correct)\b", re.I)
# a correction: what follows replaces what came before ("X? No — Y", "I thought X, but actually Y")
CORRECTION = re.compile(
    r"(?:(?<=[?.!;,:])|(?<=\s[-–—])|(?<=\.\.\.))\s*(?:no|nope|wait|actually|correction|rather|sorry)\b[,.:;!]?\s*"
    r"(?:[-–—]\s*)?|\bbut\s+(?:actually|in fact|really)\b|\b(?:on second thought|scratch that|i mean)\b", re.I)
HEDGE_OR = re.compile(r"\bor\b", re.I)


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


_SENTENCE_END = re.compile(r"(?<![A-Z])(?<!\b[a-z])(?<!\b(?:St|Dr|Mr|Ms|Jr|Sr|vs|No))(?<!\bMrs)[.!?;]+[\"”’)]*\s+(?=\S)|\n+")


def sentences(text: str) -> list[str]:
    """The reply cut at sentence ends (not after an initial, "St.", "Dr." or "No."), semicolons and line breaks."""
    return [s for s in _SENTENCE_END.split(text or "") if s.strip()]
