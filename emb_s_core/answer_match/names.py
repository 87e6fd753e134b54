"""The other names a truth may be given by (a town for "Town, Region", a demonym, a nickname, a surname, a
calendar day for "the Tuesday before …") and the case-sensitive readings marked before matching."""
from __future__ import annotations

import datetime
import re

from emb_s_core.answer_match.canonical import MONTHS, canon, fold
from emb_s_core.answer_match.words import (
    RELATIONS, _CONNECTORS, _FAMILY, _GENERATIONS, _GENERIC, _LIGHT, _PARTICLES, _TITLES,
)

PLACEHOLDER = "qqtruth{}qq"
_SENTENCE_OPENERS = frozenset({"it", "its", "this", "that", "he", "she", "they", "answer", "so", "yes", "probably",
                               "maybe", "perhaps", "surely", "clearly", "i", "was", "is", "by", "mr", "mrs", "ms",
                               "dr", "named", "called", "likely", "definitely", "either", "neither", "both",
                               "not", "only", "and", "or", "but", "in", "on", "at", "of", "for", "from", "with", "as",
                               "also", "then", "well", "oh", "sure", "certainly", "according", "based", "answer:",
                               "final", "a", "an", "no", "we", "you", "there", "here", "these", "those", "because"})


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


_MIDDLE_INITIALS = re.compile(r"\b([A-Z][a-z]+)\s+(?:[A-Z]\.\s*){1,2}(?=[A-Z][a-z])")


def without_middle_initials(reply_text: str, truths: list[str]) -> str:
    """The reply with middle initials read away ("Brian T. Moynihan" = "Brian Moynihan") when no truth has one: a
    truth that has one ("George W. Bush") is matched as written."""
    if any(re.search(r"(?:^|\s)[A-Z]\.(?:\s|$)", fold(t)) for t in truths):
        return reply_text
    return _MIDDLE_INITIALS.sub(r"\1 ", reply_text)


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
    if _person_like(folded) and len(words) >= 3 and words[-1].lower().rstrip(".") not in _GENERATIONS and \
            all(re.fullmatch(r"[A-Z][a-z]+", w) and w.lower() not in _PARTICLES | _TITLES for w in words[:-1]):
        out.append(" ".join(f"{w[0]}." for w in words[:-1]) + f" {words[-1]}")  # "C. W. Grafton" for "Cornelius
        # Warren Grafton": the given names as initials (only two or more, and all of them)
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
