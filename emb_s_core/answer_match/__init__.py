"""What a free-text reply asserts about a question's answer: the reference judge's reading of a reply.

Containment ("the answer appears inside a longer reply") is the usual lenient match for verbose generators, but on
its own it credits a reply that names every candidate ("Annie Morton or Terry Richardson") or that denies the answer
("Annie Morton, not Terry Richardson" when the answer is Terry Richardson). This package says, for one reply:

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

Beyond these, the judge reads the reply's **final claim** (what follows its last correction: "X? No — Y", "at
first X, but actually Y"), **refusals** (never an answer, never "no"), **hedges** (candidates joined by "or", or under
two hedge markers, unless the gold itself offers "A or B"), **lists** with extra members (asides and appositives that
describe a member are no members), the answer as a **modifier** ("son of X", "X's rival") or as a candidate
**considered** and dropped, **comparisons** naming both sides read by their comparative (a side may be named by its
surname or without its generic word: "Merbold", "Arthur's"), **yes/no polarity** without the word, cased **short
aliases and acronyms**, **partial names** when one entity is asked, and **doubt** (:func:`doubt`: words of doubt or
uncertainty, a turn to another name, a conditional, a later commitment elsewhere, a bound or estimate instead of the
number, another date): an answer found and asserted but not stood behind is not credited.

Other forms of the same answer (:mod:`.names`, :mod:`.canonical`): dates in any common format, holidays and
LoCoMo's relative days; numbers in digits or words, with separators, bounds, short year ranges, units and currency
signs with a country's prefix ("US$59,039"); a number word joined to a title ("Slaughterhouse-Five" =
"Slaughterhouse 5"); a person without a middle name or with a middle initial the gold lacks ("Brian T. Moynihan"),
with the given names as initials ("C. W. Grafton"), with a common short given name ("Bill Clinton"), without a
title or a style ("…, 1st Baronet"); a place's town, a country's people and back when a nationality is asked; a
company without "Inc."; a gold without its leading preposition or verb, or without its "; because …" explanation;
a bare number when the question names the unit. A free-form gold is **covered** (:func:`covers`) when its content
words are in the reply (a sentence-long gold may have a quarter of them in other words; a list gold is read member
by member). How each rule version came to be (v3 … v11) is in bench/RESULTS.md, with its figures.

One module per reading, each importing only those above it: ``canonical`` (the canonical form, normalization, token
F1) and ``words`` (shared vocabularies, the light stem); ``reply`` (clauses, negation, modifiers, the final claim);
``names`` (the other names a truth may be given by); ``alternatives`` ("X or Y?" and yes/no); ``lists`` (answers of
several members); ``doubts`` (an answer named but not stood behind); ``paraphrase`` (a free-form answer in other words).
"""
from __future__ import annotations

from emb_s_core.answer_match.alternatives import (
    Alternatives, alternatives_for, comparison_winner, picked_side, question_alternatives, yes_no_polarity,
)
from emb_s_core.answer_match.canonical import canon, canon_f1, canonical, fold, normalize, question_words, token_f1
from emb_s_core.answer_match.paraphrase import covers
from emb_s_core.answer_match.doubts import doubt
from emb_s_core.answer_match.lists import entities, extra_items, extra_members
from emb_s_core.answer_match.names import (
    YES_NO_LEAD, mark_truths, other_names, partial_names, plural_forms, relative_dates, shadowed, short_caps,
    without_middle_initials,
)
from emb_s_core.answer_match.reply import (
    ALSO_POSSIBLE, CORRECTION, HEDGE_MARKER, Reply, final_claim, refusal, sentences,
)
from emb_s_core.answer_match.words import YES_NO, stem

__all__ = [
    "ALSO_POSSIBLE", "Alternatives", "CORRECTION", "HEDGE_MARKER", "Reply", "YES_NO", "YES_NO_LEAD",
    "alternatives_for", "canon", "canon_f1", "canonical", "comparison_winner", "covers", "doubt", "entities",
    "extra_items", "extra_members", "final_claim", "fold", "mark_truths", "normalize", "other_names",
    "partial_names", "picked_side", "plural_forms", "question_alternatives", "question_words", "refusal",
    "relative_dates", "sentences", "shadowed", "short_caps", "stem", "token_f1", "without_middle_initials",
    "yes_no_polarity",
]
