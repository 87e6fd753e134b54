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

Rule ``reference_v9`` (read on round 6, measured on round 7): "twice", "thrice", "a decade" in numbers; a gold that
itself offers "A or B" is no hedge; a turn that comes back to the answer ("Distillery (today's Lisburn Distillery)")
or a "later" move after the first of something asked for is no doubt; a conclusion at the end of the answer's
sentence that names something else ("…, so 1220") is; "could also be the …" and "wasn't sure" hedge; a list gold is
covered member by member (each at least half found, a quarter of all words in other words), hyphenated words and
split compounds ("board games" = "boardgames") read apart.

Rule ``reference_v10`` (read on round 7, measured on round 8): a marked surname is the answer's side of a comparison
("Zanussi … was born before Thom Andersen"); fixed-date holidays are dates ("Christmas Day, 1505"); a bare number
answers "N <noun>" when the question asks for that noun and the reply's number stands alone ("40" for "40
points", not "40 rebounds"); a possessive is read without its "'s" when deciding whether a turn names something new;
an answer restated plainly in a later sentence is not held back by an earlier concessive; "only" answers no to a
"both" question; a closing "The <noun> … is Y." commits to Y.

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
    "relative_dates", "sentences", "shadowed", "short_caps", "stem", "token_f1", "yes_no_polarity",
]
