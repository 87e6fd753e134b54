"""Answers of several members: a reply's list must hold every member and nothing besides; asides and
descriptions of the answer are no members."""
from __future__ import annotations

import re

from emb_s_core.answer_match.canonical import canon, canonical, fold, normalize
from emb_s_core.answer_match.words import RELATIONS, _FILLER, _same_stem, stem

_ENTITY_SPLIT = re.compile(r"\s*(?:,|;|&|\band\b)\s*", re.I)


def entities(answer: str | None) -> list[str]:
    """The normalized parts of a multi-entity answer ("A, B and C" → [a, b, c]); one part for a plain answer."""
    parts = [normalize(p) for p in _ENTITY_SPLIT.split(canonical(answer))]  # "1,462" and dates stay whole
    return [p for p in parts if p]


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
