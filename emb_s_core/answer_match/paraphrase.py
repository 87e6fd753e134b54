"""A free-form answer given in other words."""
from __future__ import annotations

import re
import string

from emb_s_core.answer_match.canonical import canon, canonical, fold, normalize
from emb_s_core.answer_match.doubts import DOUBT_WORDS
from emb_s_core.answer_match.lists import _ASIDE
from emb_s_core.answer_match.words import (
    CONSIDERED, NEGATION_BIGRAMS, NEGATION_CUES, _FILLER, _LIGHT, _numeric, _same_stem, stem,
)

_HYPHEN = re.compile(r"(?<=\w)-(?=\w)")
_MEMBER_SPLIT = re.compile(r"\s*(?:,|;|&|\band\b)\s*", re.I)


def _words(text: str) -> list[str]:
    """The canonical tokens, hyphenated words apart ("one-on-one" = "1 on 1", "dairy-free" = "dairy free")."""
    return normalize(_HYPHEN.sub(" ", canonical(text))).split()


def covers(reply_text: str, truth: str, question: str | None) -> bool:
    """A free-form answer given in other words: every content word of ``truth`` the question does not already say is
    in the reply (by :func:`stem`), its numbers in their order, at least two such words in lower case (names, dates
    and numbers are read as phrases), and the reply adds no negation or word of doubt the truth does not have
    ("volunteered at a homeless shelter" for "Volunteering at a homeless shelter"; not "an animal shelter", not "did
    not volunteer"). A list gold is read member by member; a sentence-long gold may have a quarter of its words in
    other words."""
    gold = [w for w in _words(truth) if w not in _FILLER]
    reply = _words(_ASIDE.sub("", reply_text))  # asides are no claim ("(Cannon is also a writer, but Simon was not.)")
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
    have = {stem(w) for w in reply} | {stem(a + b) for a, b in zip(reply, reply[1:])}  # "board games" = "boardgames"
    if "," in canonical(truth):  # a list: no member missing (half its words found), a quarter lost in all
        members = [[w for w in normalize(m).split() if w not in _FILLER and (w.isdigit() or stem(w) not in asked)]
                   for m in _MEMBER_SPLIT.split(_HYPHEN.sub(" ", canonical(truth)))]
        members = [m for m in members if m]
        lost = [[w for w in m if not any(_same_stem(stem(w), h) for h in have)] for m in members]
        if any(2 * len(gone) > len(m) or any(_numeric(w) for w in gone) for m, gone in zip(members, lost)) or \
                sum(map(len, lost)) > max(1, sum(map(len, members)) // 4):
            return False
    else:
        missing = [w for w in needed if not any(_same_stem(stem(w), h) for h in have)]
        tolerance = 1 if len(needed) >= 5 and "," not in truth else 0  # one in five may be a typo ("metoring")
        if len(needed) >= 8:
            tolerance = max(tolerance, len(needed) // 4)  # a sentence-long gold: a quarter of its words in other words
        if len(missing) > tolerance or any(_numeric(w) for w in missing):
            return False
    numbers = [w for w in gold if _numeric(w)]
    it = iter(w for w in reply if _numeric(w))
    if not all(n in it for n in numbers):
        return False
    return not (set(reply) & NEGATION_CUES) - set(gold)
