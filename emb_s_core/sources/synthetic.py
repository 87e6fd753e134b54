"""The built-in adversarial demo bank: a deterministic, offline EMB-S-style bank of any size.

Why: the dashboard must open on real results on a fresh machine with no data and no internet, so the project writes
its own bank. It is adversarial in the paper's sense (§3.3): every query has *verified near-miss hard negatives*.

How it is built (per domain, eight domains as in the paper):

* A **cluster** is one subject (a drug, a regiment, a college, ...) with a grid of events keyed by
  (subject, year, place) — e.g. "the 2014 clinical trial of zeloritinib at the Kessingford site" — plus one event of
  a *sibling* subject that shares the stem ("zeloripril"). Every event document states the event's two numeric
  attributes and the person in its role. A question names all three constraints (subject, year, place), so the other
  events of the cluster are near misses that violate exactly one of them: another year, another place, another
  entity. They share the subject name, the place names and the topic words with the gold document, and often even
  mention the asked year and place ("A separate trial of zeloritinib took place at the Kessingford site in 2014"),
  so BM25 and dense retrievers are genuinely confused.
* **Verified by construction:** every numeric value of a cluster event, every sum asked for, every person and every
  organisation is unique in the whole bank, numeric answers avoid 1000–2099 (years) and filler numbers stay below
  100. So a hard negative cannot contain the answer; :func:`_verify` re-checks every query's documents anyway.
* Task types: ``single-fact`` (1 gold), and about a third multi-source: ``multi-split`` (sum of an attribute over
  2–4 events), ``comparison`` (the larger figure of 2–3 events), ``bridge`` (event doc names a person, the person's
  profile holds the fact; 2 gold).
* **Filler** fills the bank to the requested size: topical essays per domain and across two domains, and events that
  no question asks about (their values avoid every registered answer), half of them of subjects no question names:
  documents irrelevant to every query, which fill the benign twin ladder to its budgets.

Sizes are tiktoken tokens of the rendered documents (title line + text), reached within 1% (in practice 0.1%).
"""
from __future__ import annotations

import numbers
import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

from emb_s_core import tokens as tok
from emb_s_core.errors import EmbSError
from emb_s_core.schema import Bank, Document, Query, render_document
from emb_s_core.sources import synthetic_lexicon as L

#: 1.25M tokens (4,614 documents, 576 queries): the ladder gets 64K/128K/256K per domain, 512K, 1M and full; on 2
#: CPU cores generation takes ~2 s, import ~3 s, ladder ~1 s, BM25 ~2 s, and embedding the 4,614 documents is the one
#: cost that grows quickly with the size (bench/RESULTS.md).
DEFAULT_TOKENS = 1_310_720
MIN_TOKENS = 48 * 1024
#: queries per domain at DEFAULT_TOKENS; the count scales linearly with the size (at least 3 per domain)
QUERIES_PER_DOMAIN = 72
#: clusters (of ~3 queries) per subject: a subject's documents grow with the pool, so retrieval gets harder with size
SUBJECT_CLUSTERS = 6
SOURCE = "demo"
TASK_TYPES = ("single-fact", "multi-split", "comparison", "bridge")
MULTI_TYPES = TASK_TYPES[1:]
DOMAIN_NAMES = tuple(d.name for d in L.DOMAINS)
#: the rough ratio of cl100k tokens to words in this prose, used only to aim document lengths
_TOKENS_PER_WORD = 1.32
_SLOT = re.compile(r"\{(\w+)\}")
_ARTICLE = re.compile(r"\b([Aa])n? (?=([A-Za-z]))")


def answer_pattern(answer: str) -> re.Pattern[str]:
    """Whole-string match of an answer inside a text: "412" does not match inside "1,412" or "4125"."""
    return re.compile(r"(?<![\w,.])" + re.escape(answer) + r"(?![\w]|[,.]\d)")


# ----------------------------------------------------------------------------------------------- registries
class _Names:
    """Pronounceable proper names, each generated word unique in the bank (so a person or an organisation named in
    one document can never appear by accident in another)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.used: set[str] = set()

    def _syllable(self) -> str:
        r = self.rng
        return r.choice(L.ONSETS) + r.choice(L.VOWELS) + r.choice(L.CODAS)

    def word(self, suffixes: tuple[str, ...], lo: int = 1, hi: int = 2) -> str:
        while True:
            stem = "".join(self._syllable() for _ in range(self.rng.randint(lo, hi)))
            word = (stem + self.rng.choice(suffixes)).capitalize()
            if word not in self.used and 4 <= len(word) <= 13:
                self.used.add(word)
                return word

    def place(self) -> str:
        return self.word(L.PLACE_SUFFIXES)

    def surname(self) -> str:
        return self.word(L.SURNAME_SUFFIXES)

    def person(self, surname: str | None = None, not_first: str | None = None) -> str:
        """A new person; with ``surname`` a namesake (``not_first`` keeps the two full names apart)."""
        first = self.rng.choice(L.FIRST_NAMES)
        while first == not_first:
            first = self.rng.choice(L.FIRST_NAMES)
        return f"{first} {surname or self.surname()}"

    def org(self, kinds: tuple[str, ...]) -> str:
        return f"{self.word(L.ORG_STEM_SUFFIXES)} {self.rng.choice(kinds)}"

    def stem(self) -> str:
        return self.word(("",), 2, 2)


class _Numbers:
    """Numeric values. Registered values (cluster facts, answers, totals) are unique in the bank; unregistered ones
    (filler events) only avoid the registered ones. Years (1000–2099) are never used, so an answer without its
    thousands separator cannot be read as a year."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.used: set[int] = set()
        #: an attribute's widened upper bound, kept: without it every draw of a crowded range retried ~100 times
        #: before widening again, which made generation superlinear past ~20M tokens
        self.hi: dict[str, int] = {}

    def ok(self, v: int) -> bool:
        return v >= 100 and not 1000 <= v <= 2099 and v not in self.used

    def draw(self, attr: L.Attr, register: bool = True) -> int:
        hi = self.hi.get(attr.key, attr.hi)
        for attempt in range(10_000):
            v = self.rng.randint(attr.lo, hi)
            if self.ok(v):
                if register:
                    self.used.add(v)
                return v
            if attempt % 20 == 19:  # range crowded (huge banks): widen it, for every later draw too
                hi = self.hi[attr.key] = hi * 2
        raise RuntimeError(f"no free value for {attr.key}")  # pragma: no cover - needs ~1e6 facts in one range

    def claim(self, v: int) -> bool:
        if self.ok(v):
            self.used.add(v)
            return True
        return False


def fmt_number(v: int) -> str:
    return f"{v:,}"


# ----------------------------------------------------------------------------------------------- records
@dataclass
class _Subject:
    name: str
    lex: L.DomainLexicon

    @property
    def ref(self) -> str:
        """How prose refers to it: "zeloritinib", "the Varnel Legion", "The Orvan Letters"."""
        return self.lex.article + self.name


@dataclass
class _Event:
    subject: _Subject
    year: int
    place: str
    values: dict[str, int]
    person: str
    doc_id: int = -1


@dataclass
class _Profile:
    person: str
    org: str
    count: int
    doc_id: int = -1


# ----------------------------------------------------------------------------------------------- writer
class _Writer:
    """Fills sentence templates: fixed slots from the caller, the rest drawn from the domain lexicon."""

    def __init__(self, rng: random.Random, names: _Names) -> None:
        self.rng = rng
        self.names = names
        self._compiled: dict[str, tuple[list[str], bool]] = {}
        self.places: dict[str, list[str]] = {}
        self.subjects: dict[str, list[str]] = {}

    def _parts(self, template: str) -> tuple[list[str], bool]:
        got = self._compiled.get(template)
        if got is None:
            got = (_SLOT.split(template), " a {" in template or " an {" in template or template.startswith("A {"))
            self._compiled[template] = got
        return got

    def _draw(self, slot: str, lex: L.DomainLexicon, ctx: dict[str, str]) -> str:
        r = self.rng
        if slot in ("noun", "noun2"):
            v = r.choice(lex.nouns)
            while slot == "noun2" and v == ctx.get("noun") and len(lex.nouns) > 1:
                v = r.choice(lex.nouns)
            return v
        if slot in ("adj", "adj2"):
            v = r.choice(lex.adjs)
            while slot == "adj2" and v == ctx.get("adj"):
                v = r.choice(lex.adjs)
            return v
        if slot in ("group", "group2"):
            v = r.choice(lex.groups)
            while slot == "group2" and v == ctx.get("group"):
                v = r.choice(lex.groups)
            return v
        if slot == "verb":
            return r.choice(lex.verbs)
        if slot == "field":
            return r.choice(lex.fields)
        if slot in ("place", "place2"):
            v = r.choice(self.places[lex.name])
            while slot == "place2" and v == ctx.get("place"):
                v = r.choice(self.places[lex.name])
            return v
        if slot == "person":
            return self.names.person()
        if slot == "org":
            return self.names.org(lex.org_kinds)
        if slot == "few":
            return str(r.randint(3, 60)) if r.random() < 0.5 else r.choice(
                ("a dozen", "several", "a handful of", "dozens of", "twenty", "forty", "a few"))
        if slot == "pct":
            return str(r.randint(4, 96))
        if slot == "decade":
            lo, hi = lex.years
            return f"the {r.randint(lo // 10, hi // 10 - 1)}0s"
        if slot == "S":
            return r.choice(self.subjects[lex.name])
        raise KeyError(slot)  # pragma: no cover - a template names an unknown slot

    def fill(self, template: str, lex: L.DomainLexicon, **fixed: str) -> str:
        parts, fix_articles = self._parts(template)
        ctx: dict[str, str] = dict(fixed)
        out = []
        for i, part in enumerate(parts):
            if i % 2 == 0:
                out.append(part)
            else:
                if part not in ctx:
                    ctx[part] = self._draw(part, lex, ctx)
                out.append(ctx[part])
        text = "".join(out)
        if fix_articles:
            text = _ARTICLE.sub(lambda m: m.group(1) + ("n " if m.group(2).lower() in "aeiou" else " "), text)
        return text[0].upper() + text[1:]

    def essay_sentence(self, lex: L.DomainLexicon) -> str:
        r = self.rng
        template = r.choice(lex.about) if r.random() < 0.18 else r.choice(L.ESSAY)
        s = self.fill(template, lex)
        if r.random() < 0.28:
            proper = template.startswith(("{person}", "{place}")) or (
                template.startswith("{S}") and not lex.subject_lower)
            s = f"{r.choice(L.CONNECTIVES)}, {s if proper else s[0].lower() + s[1:]}"
        return s

    def essay(self, lexes: list[L.DomainLexicon], words: int, lead: list[str] | None = None) -> list[str]:
        """Paragraphs of about ``words`` words: ``lead`` sentences first, then essay sentences from ``lexes`` in turn."""
        r = self.rng
        sentences = list(lead or [])
        n = sum(len(s.split()) for s in sentences)
        k = 0
        while n < words:
            s = self.essay_sentence(lexes[k % len(lexes)] if len(lexes) > 1 and r.random() < 0.6 else lexes[0])
            k += 1
            sentences.append(s)
            n += len(s.split())
        return _paragraphs(r, sentences)


def _paragraphs(r: random.Random, sentences: list[str]) -> list[str]:
    """Group sentences into 1–4 paragraphs of uneven length."""
    if len(sentences) <= 3:
        return [" ".join(sentences)]
    k = min(len(sentences) // 2, r.choice((1, 2, 2, 3, 3, 4)))
    cuts = sorted(r.sample(range(1, len(sentences)), k - 1)) if k > 1 else []
    bounds = [0, *cuts, len(sentences)]
    return [" ".join(sentences[a:b]) for a, b in zip(bounds, bounds[1:])]


def _plural(noun: str) -> str:
    if noun.endswith("um"):
        return noun[:-2] + "a"
    if noun.endswith("s"):
        return noun + "es"
    return noun + "s"


def _measure(attr: L.Attr) -> str:
    return attr.total.removeprefix("combined ")


def _target_words(r: random.Random, lo: int, hi: int) -> int:
    """Document length in words for a token length drawn log-uniformly in [lo, hi] tokens (many short, few long)."""
    return int(lo * (hi / lo) ** r.random() / _TOKENS_PER_WORD)


# ----------------------------------------------------------------------------------------------- generator
class _Generator:
    def __init__(self, seed: int, encoding: str) -> None:
        self.rng = random.Random(seed)
        self.names = _Names(self.rng)
        self.numbers = _Numbers(self.rng)
        self.writer = _Writer(self.rng, self.names)
        self.encoding = encoding
        self.docs: list[Document] = []
        self.queries: list[Query] = []
        self.per_domain: dict[str, int] = {}
        self.subjects: dict[str, list[_Subject]] = {d.name: [] for d in L.DOMAINS}
        self.keys: set[tuple[str, int, str]] = set()
        self.events: dict[str, list[_Event]] = {}  # subject name -> its events, for mentions
        for lex in L.DOMAINS:
            self.writer.places[lex.name] = [self.names.place() for _ in range(48)]
            self.writer.subjects[lex.name] = []

    # -- subjects and events
    def _subject_pair(self, lex: L.DomainLexicon) -> tuple[_Subject, _Subject]:
        stem = self.names.stem()
        a, b = self.rng.sample(lex.subject_suffixes, 2)
        make = (lambda suf: (stem + suf).lower()) if lex.subject_lower else (lambda suf: f"{stem} {suf}")
        pair = (_Subject(make(a), lex), _Subject(make(b), lex))
        for s in pair:
            self.subjects[lex.name].append(s)
            self.writer.subjects[lex.name].append(s.name)
        return pair

    def _event(self, subject: _Subject, year: int, place: str, register: bool = True) -> _Event:
        lex = subject.lex
        self.keys.add((subject.name, year, place))
        values = {a.key: self.numbers.draw(a, register) for a in lex.attrs}
        ev = _Event(subject, year, place, values, self.names.person())
        self.events.setdefault(subject.name, []).append(ev)
        return ev

    def _add_doc(self, title: str, paragraphs: list[str], domain: str) -> int:
        doc_id = len(self.docs)
        self.docs.append(Document(doc_id=doc_id, text="\n\n".join(paragraphs), title=title, domain=domain,
                                  source=SOURCE))
        return doc_id

    def _event_doc(self, ev: _Event, mentions: Iterable[_Event]) -> int:
        """One document per event: background about the subject, the event with its three facts, pointers to other
        events of the subject (no values), topical prose; sentence order and length vary."""
        r, w, lex = self.rng, self.writer, ev.subject.lex
        fixed = {"S": ev.subject.name, "Y": str(ev.year), "P": ev.place}
        core = [w.fill(r.choice(lex.event_facts), lex, **fixed)]
        facts = [w.fill(r.choice(a.facts), lex, V=fmt_number(ev.values[a.key]), **fixed) for a in lex.attrs]
        facts.append(w.fill(r.choice(lex.role_facts), lex, N=ev.person, **fixed))
        r.shuffle(facts)
        core += facts
        for other in mentions:
            pp = lex.place_phrase.format(P=other.place)
            core.insert(r.randint(1, len(core)), w.fill(r.choice(L.MENTIONS), lex, E=r.choice(lex.event),
                                                        AS=other.subject.ref, Y=str(other.year), PP=pp))
        about = [w.fill(r.choice(lex.about), lex, S=ev.subject.name) for _ in range(r.randint(1, 3))]
        words = _target_words(r, 130, 480)
        used = sum(len(s.split()) for s in core + about)
        tail = w.essay([lex], max(0, words - used)) if words > used else []
        if r.random() < 0.5:
            paragraphs = [" ".join(about), " ".join(core), *tail]
        else:
            paragraphs = [" ".join(core), " ".join(about), *tail]
        title = f"{ev.subject.name[0].upper()}{ev.subject.name[1:]}: {r.choice(lex.titles)}"
        ev.doc_id = self._add_doc(title, [p for p in paragraphs if p], lex.name)
        return ev.doc_id

    def _profile_doc(self, lex: L.DomainLexicon, person: str, register: bool = True) -> _Profile:
        r, w = self.rng, self.writer
        prof = _Profile(person, self.names.org(lex.org_kinds), self.numbers.draw(lex.profile_num, register))
        facts = [w.fill(r.choice(lex.profile_org), lex, N=person, O=prof.org),
                 w.fill(r.choice(lex.profile_num.facts), lex, N=person, V=fmt_number(prof.count))]
        lead = [w.fill(r.choice(L.PROFILE), lex, N=person) for _ in range(r.randint(1, 3))]
        lead[1:1] = facts
        paragraphs = w.essay([lex], _target_words(r, 100, 360), lead=lead)
        prof.doc_id = self._add_doc(person, paragraphs, lex.name)
        return prof

    # -- queries
    def _query(self, lex: L.DomainLexicon, task: str, text: str, answer: str, gold: list[int], hn: list[int],
               aliases: list[str] | None = None) -> None:
        n = self.per_domain[lex.name] = self.per_domain.get(lex.name, 0) + 1
        qid = f"demo-{lex.name}-{n - 1:04d}"
        self.queries.append(Query(qid=qid, text=text, answer=answer, ref_ids=gold, hard_negative_ids=hn,
                                  domain=lex.name, task_type=task, source=SOURCE, answer_aliases=aliases or []))

    def _cluster(self, lex: L.DomainLexicon, tasks: list[str], pair: tuple[_Subject, _Subject]) -> None:
        """A grid of events of one subject (years new to it), a sibling subject's event, and the ``tasks`` queries.

        Subjects are shared by several clusters, so a subject collects many events (and filler events) whose
        documents all name it: the larger the pool, the more same-subject near misses compete with the gold.
        """
        r, w = self.rng, self.writer
        s, sib = pair
        places = r.sample(self.writer.places[lex.name], 5)
        taken = {ev.year for ev in self.events.get(s.name, [])}
        while True:
            y1, y2 = r.sample(range(lex.years[0], lex.years[1] + 1), 2)
            if y1 not in taken and y2 not in taken and (sib.name, y1, places[0]) not in self.keys:
                break
        multi = next((t for t in tasks if t != "single-fact"), None)
        n_split = r.choice((2, 2, 3, 3, 4)) if multi == "multi-split" else r.choice((2, 3))
        grid: dict[tuple[int, int], _Event] = {}
        for i in range(n_split + 1):  # year y1 at places 0..n_split (the last is an "other place" near miss)
            grid[(0, i)] = self._event(s, y1, places[i])
        for i in range(2):
            grid[(1, i)] = self._event(s, y2, places[i])
        sibling = self._event(sib, y1, places[0])
        events = list(grid.values())
        for ev in events:
            others = [o for o in events if o is not ev]
            self._event_doc(ev, r.sample(others, min(len(others), r.choice((0, 1, 1, 2)))))
        self._event_doc(sibling, [grid[(0, 0)]] if r.random() < 0.5 else [])

        def pp(ev: _Event) -> str:
            return lex.place_phrase.format(P=ev.place)

        def near_misses(ev: _Event) -> list[int]:
            """Same subject, other year same place; same subject and year, other place; sibling, same year+place."""
            out = [o.doc_id for o in events if o.subject is ev.subject and o is not ev
                   and ((o.place == ev.place) != (o.year == ev.year))]
            if sibling.year == ev.year and sibling.place == ev.place:
                out.append(sibling.doc_id)
            return out

        singles = r.sample([grid[(0, 0)], grid[(0, 1)], grid[(1, 0)], grid[(1, 1)]], 4)
        for task in tasks:
            if task == "single-fact":
                ev = singles.pop()
                fixed = {"S": ev.subject.name, "Y": str(ev.year), "P": ev.place}
                pick = r.randrange(3)
                if pick < 2:
                    attr = lex.attrs[pick]
                    v = ev.values[attr.key]
                    self._query(lex, task, w.fill(r.choice(attr.asks), lex, **fixed), fmt_number(v),
                                [ev.doc_id], near_misses(ev), [str(v)] if v >= 1000 else [])
                else:
                    self._query(lex, task, w.fill(r.choice(lex.role_asks), lex, **fixed), ev.person,
                                [ev.doc_id], near_misses(ev))
            elif task == "multi-split":
                parts = [grid[(0, i)] for i in range(n_split)]
                attr = r.choice(lex.attrs)
                total = self._claim_sum(parts, attr)
                where = [pp(e) for e in parts]
                text = (f"What was the {attr.total} of the {y1} {_plural(lex.event[0])} of {s.ref} held "
                        f"{', '.join(where[:-1])} and {where[-1]}?")
                hn = [grid[(0, n_split)].doc_id, grid[(1, 0)].doc_id, grid[(1, 1)].doc_id, sibling.doc_id]
                self._query(lex, task, text[0].upper() + text[1:], fmt_number(total), [e.doc_id for e in parts], hn,
                            [str(total)] if total >= 1000 else [])
            elif task == "comparison":
                picked = [grid[(0, 0)], grid[(1, 1)], grid[(0, 2)]][:n_split]
                attr = r.choice(lex.attrs)
                best = max(e.values[attr.key] for e in picked)
                named = [f"the {e.year} {lex.event[0]} of {s.ref} {pp(e)}" for e in picked]
                text = (f"Of {', '.join(named[:-1])} and {named[-1]}, which had the "
                        f"{'higher' if len(named) == 2 else 'highest'} {_measure(attr)}? Give that figure.")
                hn = [grid[(1, 0)].doc_id, grid[(0, 1)].doc_id, sibling.doc_id]
                self._query(lex, task, text, fmt_number(best), [e.doc_id for e in picked], hn,
                            [str(best)] if best >= 1000 else [])
            else:  # bridge: the event names a person, the person's profile holds the fact
                ev = grid[(1, 0)]
                prof = self._profile_doc(lex, ev.person)
                first, surname = ev.person.split(" ", 1)
                namesake = self._profile_doc(lex, self.names.person(surname, not_first=first))
                fixed = {"S": ev.subject.name, "Y": str(ev.year), "P": ev.place}
                hn = [grid[(0, 0)].doc_id, grid[(1, 1)].doc_id, namesake.doc_id]
                if r.random() < 0.5:
                    self._query(lex, task, w.fill(lex.profile_org_ask, lex, **fixed), prof.org,
                                [ev.doc_id, prof.doc_id], hn)
                else:
                    self._query(lex, task, w.fill(lex.profile_num.asks[0], lex, **fixed), fmt_number(prof.count),
                                [ev.doc_id, prof.doc_id], hn, [str(prof.count)] if prof.count >= 1000 else [])

    def _claim_sum(self, parts: list[_Event], attr: L.Attr) -> int:
        """Redraw the first part until the total is itself a fresh value (so no document states it)."""
        while True:
            total = sum(e.values[attr.key] for e in parts)
            if self.numbers.claim(total):
                return total
            self.numbers.used.discard(parts[0].values[attr.key])
            parts[0].values[attr.key] = self.numbers.draw(attr)

    def build_queries(self, per_domain: int) -> None:
        for lex in L.DOMAINS:
            n_clusters = -(-per_domain // 3)
            pairs = [self._subject_pair(lex) for _ in range(max(2, round(n_clusters / SUBJECT_CLUSTERS)))]
            n_multi = max(1, round(per_domain / 3))
            multis = [MULTI_TYPES[i % 3] for i in range(n_multi)]
            self.rng.shuffle(multis)
            n_single = per_domain - n_multi
            k = 0
            while multis or n_single > 0:
                tasks = ["single-fact"] * min(2, n_single)
                n_single -= len(tasks)
                if multis:
                    tasks.append(multis.pop())
                first = len(self.queries)
                self._cluster(lex, tasks, pairs[k % len(pairs)])
                k += 1
                for q in self.queries[first:]:
                    _verify(q, self.docs)

    # -- filler
    def filler_doc(self, k: int) -> None:
        r, w = self.rng, self.writer
        lex = L.DOMAINS[k % len(L.DOMAINS)]
        roll = r.random()
        if roll < 0.45:
            # an event nobody asks about, pointing at its subject's other events (values avoid every registered
            # answer): half of them of a subject questions are about (more same-subject near misses as the pool
            # grows), half of subjects nobody asks about (irrelevant to every query, so the benign twin fills)
            pool = self.subjects[lex.name]
            subject = r.choice(pool) if pool and r.random() < 0.5 else self._subject_pair(lex)[0]
            while True:
                year = r.randint(*lex.years)
                place = r.choice(self.writer.places[lex.name])
                if (subject.name, year, place) not in self.keys:
                    break
            known = self.events.get(subject.name, [])
            mentions = r.sample(known, min(len(known), r.choice((1, 1, 2, 3))))
            self._event_doc(self._event(subject, year, place, register=False), mentions)
        elif roll < 0.5:
            self._profile_doc(lex, self.names.person(), register=False)
        else:
            lexes = [lex]
            if roll > 0.9:
                lexes.append(r.choice([d for d in L.DOMAINS if d is not lex]))
            title_lex = lexes[-1]
            title = f"{r.choice(lex.adjs).capitalize()} {r.choice(lex.nouns)} and {r.choice(title_lex.nouns)}"
            self._add_doc(title, w.essay(lexes, _target_words(r, 80, 600)), lex.name)


def _verify(q: Query, docs: list[Document] | dict[int, Document]) -> None:
    """The generator's own check that a query is what it claims: the answer is not stated by any hard negative,
    and for single-fact / comparison / bridge it is stated by a gold document (multi-split sums are stated nowhere)."""
    pat = answer_pattern(q.answer)
    for i in q.hard_negative_ids:
        if pat.search(render_document(docs[i].title, docs[i].text)):
            raise RuntimeError(f"demo generator bug: hard negative {i} of {q.qid} states the answer {q.answer!r}")
    stated = [i for i in q.ref_ids if pat.search(docs[i].text)]
    if q.task_type == "multi-split" and stated or q.task_type != "multi-split" and len(stated) != 1:
        raise RuntimeError(f"demo generator bug: answer of {q.qid} stated in gold {stated}")
    if not q.hard_negative_ids:
        raise RuntimeError(f"demo generator bug: {q.qid} has no hard negative")


def queries_per_domain(tokens: int) -> int:
    return max(3, round(QUERIES_PER_DOMAIN * tokens / DEFAULT_TOKENS))


def generate(tokens: int = DEFAULT_TOKENS, seed: int = 0, encoding: str = "cl100k_base",
             progress: bool = False) -> Bank:
    """The demo bank of about ``tokens`` tiktoken tokens (within ±1%): same seed, same bank, byte for byte.

    Queries per domain = max(3, round(72 · tokens / DEFAULT_TOKENS)); documents are shuffled so ids carry no hint of
    which are gold.
    """
    if isinstance(tokens, bool) or not isinstance(tokens, numbers.Integral) or tokens < MIN_TOKENS:
        raise EmbSError(f"demo bank size {tokens!r} is too small or not a whole number of tokens",
                        fix=f"ask for at least {tok.format_size(MIN_TOKENS)} tokens, e.g. 1M or 10M.")
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise EmbSError(f"demo seed {seed!r} is not an integer", fix="use a whole number such as 0 or 42.")
    tok.encoding(encoding)  # unknown or unavailable encodings fail here, before any work
    tokens, seed = int(tokens), int(seed)
    gen = _Generator(seed, encoding)
    gen.build_queries(queries_per_domain(tokens))
    total = _count(gen.docs, 0, encoding)
    if total > 0.9 * tokens:
        raise EmbSError(f"the demo questions alone need {total:,} tokens, more than 90% of {tokens:,}",
                        fix="ask for a larger bank.")
    bar = _progress(progress, tokens, total)
    k = 0
    while total < tokens * 0.999:
        remaining = tokens - total
        start = len(gen.docs)
        n = max(1, min(1024, int(0.85 * remaining / 330)))
        for _ in range(n):
            gen.filler_doc(k)
            k += 1
        added = _count(gen.docs, start, encoding)
        total += added
        bar(added)
    bar(None)
    return _shuffled(gen, seed)


def _count(docs: list[Document], start: int, encoding: str) -> int:
    """Set n_tokens of docs[start:] (batched tiktoken) and return their sum."""
    step = 4096
    total = 0
    for a in range(start, len(docs), step):
        chunk = docs[a:a + step]
        for d, n in zip(chunk, tok.count_batch([render_document(d.title, d.text) for d in chunk], encoding)):
            d.n_tokens = n
            total += n
    return total


def _progress(enabled: bool, target: int, done: int) -> Callable[[int | None], None]:
    if not enabled:
        return lambda n: None
    from tqdm import tqdm

    bar = tqdm(total=target, initial=done, desc="demo bank", unit="tok", unit_scale=True, leave=False)

    def update(n: int | None) -> None:
        bar.close() if n is None else bar.update(n)

    return update


def _shuffled(gen: _Generator, seed: int) -> Bank:
    """Seeded permutation of the documents, ids renumbered 0..n-1 (the workspace assigns the final ones)."""
    order = list(range(len(gen.docs)))
    random.Random(seed + 1).shuffle(order)
    new_id = [0] * len(order)
    docs = []
    for new, old in enumerate(order):
        new_id[old] = new
        d = gen.docs[old]
        docs.append(Document(doc_id=new, text=d.text, title=d.title, domain=d.domain, source=d.source,
                             n_tokens=d.n_tokens))
    for q in gen.queries:
        q.ref_ids = [new_id[i] for i in q.ref_ids]
        q.hard_negative_ids = [new_id[i] for i in q.hard_negative_ids]
    bank = Bank(source=SOURCE, documents=docs, queries=gen.queries, renumber=True, encoding=gen.encoding,
                hard_negative_provenance="synthetic")
    bank.notes.append(f"demo bank: seed {seed}, {sum(d.n_tokens or 0 for d in docs):,} text tokens ({gen.encoding}), "
                      f"{len(docs):,} documents, {len(gen.queries):,} queries")
    return bank


# ----------------------------------------------------------------------------------------------- importer
OPTIONS = {"tokens": "size in tokens, e.g. 1M or 1310720", "seed": "integer", "encoding": "cl100k_base or o200k_base"}


def read(path: Path, source: str = SOURCE) -> Bank:
    """``emb-s import --format demo OPTIONS.json``: the file holds the generator's options, e.g.
    ``{"tokens": "10M", "seed": 1}``; ``{}`` gives the default bank. The file's checksum keys re-imports."""
    from emb_s_core.sources._io import load_json, require_file

    require_file(path, "demo options file")
    opts = load_json(path)
    if not isinstance(opts, dict):
        raise EmbSError("the demo options must be a JSON object", where=str(path),
                        fix='write e.g. {"tokens": "1M", "seed": 0} (or {} for the defaults).')
    unknown = sorted(set(opts) - set(OPTIONS))
    if unknown:
        raise EmbSError(f"unknown demo option(s) {unknown}", where=str(path),
                        fix=f"use only: {', '.join(f'{k} ({v})' for k, v in OPTIONS.items())}.")
    size = opts.get("tokens", DEFAULT_TOKENS)
    if isinstance(size, str):
        size = tok.parse_size(size)
    bank = generate(size, opts.get("seed", 0), opts.get("encoding", tok.DEFAULT_ENCODING), progress=False)
    if source != SOURCE:
        bank.source = source
        for d in bank.documents:
            d.source = source
        for q in bank.queries:
            q.source = source
    return bank


__all__ = ["DEFAULT_TOKENS", "DOMAIN_NAMES", "TASK_TYPES", "answer_pattern", "generate", "queries_per_domain", "read"]
