"""The vocabularies every reading shares (negation, relations, titles, light words) and the light stem that
reads a word in another form ("volunteered" = "volunteering")."""
from __future__ import annotations

import re

NEGATION_CUES = frozenset({"not", "no", "never", "neither", "nor", "none", "cannot", "cant", "isnt", "wasnt",
                           "arent", "werent", "doesnt", "didnt", "dont", "wont", "hasnt", "havent", "hadnt",
                           "unlike"})
NEGATION_BIGRAMS = frozenset({("rather", "than"), ("instead", "of"), ("other", "than")})
_AUX = frozenset({"is", "was", "are", "were", "does", "did", "do", "has", "had", "have"})
_AUX_NOT = frozenset({"isnt", "wasnt", "arent", "werent", "doesnt", "didnt", "dont", "hasnt", "hadnt", "havent"})
_DENIALS = frozenset({"not", "never", "incorrect", "wrong", "false", "mistake", "mistaken", "error", "untrue",
                      "erroneous"})  # "X is wrong", "X was not", "X is a common mistake"
PRE_WINDOW = 3  # tokens before an occurrence that a negation cue reaches

_CONNECTORS = frozenset({"of", "the", "and", "de", "del", "der", "di", "du", "da", "la", "le", "von", "van", "y", "ibn",
                         "bint", "abu",
                         "v", "v.", "vs", "vs.", "ul", "bin", "al", "to", "in", "on", "for", "&", "a", "e"})
_STOP = frozenset({"to", "the", "a", "an", "in", "on", "of", "for", "with", "by", "at", "from", "be", "is", "it"})

YES_NO = ("yes", "no")
CONSIDERED = frozenset({"considered", "thought", "guessed", "assumed", "suspected", "wondered"})
UNIT_WORDS = frozenset({"dollars", "euros", "pounds", "percent", "km", "miles", "m"})

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
                      "mountain", "province", "district", "city", "band", "group", "records", "magazine", "newspaper",
                      "journal"})

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
