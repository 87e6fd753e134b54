"""The one canonical form replies and truths are read in: accents folded, dates as "<year> m<MM> d<DD>",
numbers as digits, units and bounds in one spelling; then SQuAD normalization and token F1."""
from __future__ import annotations

import re
import string
import unicodedata
from collections import Counter
from functools import lru_cache

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans("", "", string.punctuation + "“”‘’–—")  # SQuAD's ASCII set, plus quotes and dashes


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


def question_words(question: str | None) -> frozenset[str]:
    return frozenset(normalize(question).split())


# Reply and truths are read in one canonical form before any matching: accents folded, dates written as
# "<year> m<MM> d<DD>" (so a partial gold date is a phrase inside a fuller reply date, never the other way round),
# numbers as plain digits (words, ordinals and thousands separators read), currency and units as words.
_LETTERS = str.maketrans({"ø": "o", "Ø": "O", "æ": "ae", "Æ": "AE", "ß": "ss", "ł": "l", "Ł": "L", "đ": "d",
                          "ı": "i", "ʿ": "", "ʾ": "", "ʻ": "", "ʼ": "", "ˈ": "", "œ": "oe", "Œ": "OE", "þ": "th", "ð": "d"})
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")
_MONTH = r"(?P<{}>jan(?:uary|\.)?|feb(?:ruary|\.)?|mar(?:ch|\.)?|apr(?:il|\.)?|may|june?|july?|aug(?:ust|\.)?|" \
         r"sep(?:t(?:ember|\.)?|\.)?|oct(?:ober|\.)?|nov(?:ember|\.)?|dec(?:ember|\.)?)(?![a-z])\.?"
_DAY = r"(?P<{}>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<{}>\d{{3,4}})(?!\d)"
_DATES = [re.compile(p, re.I) for p in (
    r"(?<!\d)(?P<y>\d{4})-(?P<m>[01]?\d)(?:-(?P<d>[0-3]?\d))?(?!\d)",                    # 1505-12-25, 2024-02
    r"(?<![\d/.])(?P<d>\d{1,2})[/.](?P<m>\d{1,2})[/.](?P<y>\d{4})(?!\d)",  # 25/12/1505 (day first)
    r"(?<!\d)(?P<y>\d{4})[/.](?P<m>[01]?\d)[/.](?P<d>[0-3]?\d)(?!\d)",                   # 1505/12/25
    r"(?<![\d/.])(?P<m>[01]?\d)/(?P<y>\d{4})(?![\d/])",                                  # 05/2022
    r"(?<!\d)" + _DAY.format("d") + r"-" + _MONTH.format("mn") + r"-" + _YEAR.format("y"),  # 25-Dec-1505
    r"(?:the\s+)?" + _DAY.format("d") + r"\s+(?:of\s+)?" + _MONTH.format("mn") + r",?\s+" + _YEAR.format("y"),
    _MONTH.format("mn") + r"\s+(?:the\s+)?" + _DAY.format("d") + r"(?:,\s*|\s+)" + _YEAR.format("y"),
    _MONTH.format("mn") + r",?\s+" + _YEAR.format("y") + r",?\s+on\s+the\s+" + _DAY.format("d") + r"(?![\d:])",
    _MONTH.format("mn") + r"(?:,?\s+|[.,/]\s*)(?:of\s+)?" + _YEAR.format("y"),  # "April 2023", "April.2023"
    r"(?:the\s+)?" + _DAY.format("d") + r"\s+(?:of\s+)?" + _MONTH.format("mn") + r"(?![a-z])",
    _MONTH.format("mn") + r"\s+" + _DAY.format("d") + r"(?![\d:])",
)]
_SMALL = {w: i for i, w in enumerate(("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
                                      "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen",
                                      "seventeen", "eighteen", "nineteen"))}
_TENS = {w: 10 * i for i, w in enumerate(("", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty",
                                          "ninety")) if w}
_ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8,
             "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12, "thirteenth": 13, "fourteenth": 14,
             "fifteenth": 15, "sixteenth": 16, "seventeenth": 17, "eighteenth": 18, "nineteenth": 19, "twentieth": 20,
             "thirtieth": 30, "fortieth": 40, "fiftieth": 50, "sixtieth": 60, "seventieth": 70, "eightieth": 80,
             "ninetieth": 90, "hundredth": 100}
_SCALES = {"hundred": 100, "thousand": 1000, "million": 10 ** 6, "billion": 10 ** 9}
_NUMBER_WORD = "|".join([*_SMALL, *_TENS, *_SCALES, "and"])
_NUMBER_WORDS = re.compile(r"\b(?:(?:%s)(?:[\s-]+(?:%s))*)\b" % (_NUMBER_WORD, _NUMBER_WORD), re.I)
_ORDINAL = re.compile(r"\b(?:(\d+)(?:st|nd|rd|th)|(%s))\b(?:\s+(%s)\b)?" % ("|".join(_ORDINALS), "|".join(
    ("season", "series", "century", "edition", "place", "round", "episode", "volume", "album", "term", "division",
     "grade", "floor", "generation", "anniversary", "congress", "president", "amendment"))), re.I)
_SEPARATED = re.compile(r"(?<![\d.,])(\d{1,3})((?:,\d{3})+)(?![\d]|[.,]\d)")
_SCALED = re.compile(r"(?<![\d.,])(\d+(?:\.\d+)?)\s*(million|billion|thousand)\b", re.I)
# "$59,039", "US$59,039", "A$2 million": a country's prefix is part of the sign; the number ends on a digit (a full
# stop after it is the sentence's) and keeps its scale word ("$2 million" = "2 million dollars")
_CURRENCY = re.compile(r"(?:(?<![\w$])(?:US|U\.S\.|USD|AUD?|A|CAD?|C|NZ|HK|S|NT|R)\s?)?([$€£])\s*(\d(?:[\d,.]*\d)?)"
                       r"(\s+(?:million|billion|thousand)\b)?")
_CURRENCY_WORDS = {"$": "dollars", "€": "euros", "£": "pounds"}
_UNITS = [(re.compile(p, re.I), w) for p, w in (
    (r"\b(?:usd|us dollars?|dollars?)\b", "dollars"), (r"\b(?:kilomet(?:er|re)s?|kms?)\b", "km"),
    (r"%|\bper\s?cent\b", " percent"), (r"\b(?:met(?:er|re)s|m)\b(?=\s|$|[.,;])", "m"), (r"\bmiles?\b", "miles"),
    (r"(?<=\d)\s*(?:hours?|hrs?|h)\b", " hours"), (r"(?<=\d)\s*(?:minutes?|mins?)\b", " minutes"),
    (r"(?<=\d)\s*(?:seconds?|secs?)\b", " seconds"), (r"(?<=\d)\s*(?:years?|yrs?)\b", " years"),
    (r"(?<=\d)\s*(?:kilograms?|kgs?)\b", " kg"), (r"(?<=\d)\s*(?:feet|foot|ft)\b", " feet"),
)]
# a bound in other words: "over 70" = "more than 70", "under 5" = "fewer than 5"
_BOUNDS = [(re.compile(r"\b(?:more than|over|above|in excess of|upwards of|upward of)\s+(?=\d)", re.I), "over "),
           (re.compile(r"\b(?:less than|fewer than|under|below)\s+(?=\d)", re.I), "under ")]
_UNTIL = re.compile(r"(?<=\d)\s+(?:until|till|til|through|thru)\s+(?=\d)", re.I)  # "1969 until 1974" = "1969 to 1974"
_SHORT_YEAR_RANGE = re.compile(r"\b(1\d|20)(\d\d) to (\d\d)\b")  # "1969–74" = "1969 to 1974"
_SEASON_OF = re.compile(r"\b(spring|summer|autumn|fall|winter) of (?=\d{4}\b)", re.I)  # "summer of 2022" = "summer 2022"


def fold(text: str | None) -> str:
    """Accents and special letters folded to ASCII ("Montréal" → "Montreal", "Øystein" → "Oystein")."""
    text = unicodedata.normalize("NFKD", (text or "").translate(_LETTERS))
    return "".join(c for c in text if not unicodedata.combining(c)).replace("\u200b", "")


def _month(name: str) -> int:
    return next(i + 1 for i, m in enumerate(MONTHS) if m.startswith(name.lower().rstrip(".")[:3]))


def _date_sub(match: re.Match) -> str:
    g = match.groupdict()
    m = int(g["m"]) if g.get("m") else _month(g["mn"])
    d = int(g["d"]) if g.get("d") else None
    if match.re is _DATES[1] and m > 12 and d is not None and d <= 12:
        d, m = m, d  # 12/25/1505: month first
    if not 1 <= m <= 12 or (d is not None and not 1 <= d <= 31):
        return match.group()
    parts = [g["y"]] if g.get("y") else []
    return " ".join([*parts, f"m{m:02d}", *([f"d{d:02d}"] if d is not None else [])])


def _words_value(words: list[str]) -> int | None:
    total = current = 0
    seen = False
    for w in words:
        if w == "and":
            continue
        if w in _SMALL:
            current += _SMALL[w]
        elif w in _TENS:
            current += _TENS[w]
        elif w == "hundred":
            current = max(current, 1) * 100
        elif w in _SCALES:
            total += max(current, 1) * _SCALES[w]
            current = 0
        seen = True
    return total + current if seen else None


def _number_words_sub(match: re.Match) -> str:
    words = re.split(r"[\s-]+", match.group().lower())
    while words and words[0] == "and":
        words.pop(0)
    trail = ""
    while words and words[-1] == "and":
        words.pop()
        trail = " and"
    value = _words_value(words)
    lead = " and " if match.group().lower().startswith("and ") else ""
    return match.group() if value is None else f"{lead}{value}{trail}"


def _ordinal_sub(match: re.Match) -> str:
    """"third" / "3rd" → "3"; "the third season" → "the season 3", as "season three" reads."""
    value = match.group(1) or str(_ORDINALS[match.group(2).lower()])
    return f"{match.group(3)} {value}" if match.group(3) else value


_SLASHED = re.compile(r"(?<=[A-Za-z])/(?=[A-Za-z])")
# fixed-date holidays as their date ("Christmas Day, 1505" = "25 December, 1505")
_HOLIDAY_DATES = {"christmas day": "25 December", "christmas eve": "24 December", "new year s day": "1 January",
                  "new year s eve": "31 December", "boxing day": "26 December", "fourth of july": "4 July",
                  "independence day": "4 July", "halloween": "31 October", "valentine s day": "14 February"}
_HOLIDAYS = re.compile(r"\b(?:on\s+)?(?:the\s+)?(christmas day|christmas eve|new year['’]?s day|new year['’]?s eve|"
                       r"boxing day|fourth of july|independence day|halloween|valentine['’]?s day)\b", re.I)
_PERIOD_PREFIX = re.compile(r"\b(mid|early|late)-(?=[A-Za-z0-9'])", re.I)
_SHORT_DECADE = re.compile(r"['’‘](\d0)s\b")
_DECADE_WORDS = re.compile(r"\b(twenties|thirties|forties|fifties|sixties|seventies|eighties|nineties)\b", re.I)
_ONE_UNIT = re.compile(r"\b(?:a|an)\s+(second|minute|hour|day|week|month|year|decade|century)\b", re.I)
_TIMES_WORDS = {"once": "1 time", "twice": "2 times", "thrice": "3 times"}
_TIMES = re.compile(r"\b(?:once|twice|thrice)\b", re.I)
_DECADES = re.compile(r"\b(\d+)\s+decades?\b", re.I)
_BACK = re.compile(r"\b((?:seconds?|minutes?|hours?|days?|weeks?|months?|years?|decades?))\s+back\b", re.I)
_ORDINAL_HYPHEN = re.compile(r"\b(\d+(?:st|nd|rd|th))\s*[-–]\s*(?=[a-z])", re.I)
_GLUED = re.compile(r"(?<![\w.])(\d{1,2})([A-Z][a-z]{2,})")
_INITIALS = re.compile(r"\b(?:[A-Z]\.\s?){2,}(?=\s*[A-Z])")
_WORD_NUMBER = re.compile(r"(?<=[A-Za-z])-(?=\d+\b)")
_CENTURY_OF = re.compile(r"\b1([0-9])00s\b")
_NUMBER_RANGE = re.compile(r"(?<![\w.,])(\d+)\s*[-–—]\s*(\d+)(?![\w.,]\d)")
_POSSESSIVE = re.compile(r"\b([A-Za-z]+)['’][sS]\b")  # "Majhli Didi's director": the name, then "s"
_CONTRACTED = frozenset({"it", "that", "he", "she", "there", "what", "who", "here", "where", "let", "how", "this"})


@lru_cache(maxsize=1 << 16)
def canonical(text: str | None) -> str:
    """The canonical text a reply or a truth is read in (before SQuAD normalization); cached, since one judgment
    reads the same phrases and sentences many times."""
    text = fold(text)
    text = _GLUED.sub(r"\1 \2", text)  # "15April, 2022" (a typo in LoCoMo's golds) reads as "15 April, 2022"
    text = _HOLIDAYS.sub(lambda m: _HOLIDAY_DATES[re.sub(r"\W+", " ", m.group(1).lower()).strip()], text)
    text = _PERIOD_PREFIX.sub(r"\1 ", text)  # "mid-June 2023" = "mid June 2023"
    text = _SLASHED.sub(" ", text)  # "restoring/refurbishing" = "restoring refurbishing"
    text = _SHORT_DECADE.sub(lambda m: ("20" if m.group(1) in ("00", "10") else "19") + m.group(1) + "s", text)
    text = _DECADE_WORDS.sub(lambda m: f"{_TENS[m.group(1).lower()[:-3] + 'y']}s", text)  # "early twenties" = "early 20s"
    text = _ONE_UNIT.sub(r"1 \1", text)  # "about a month" = "about 1 month"
    text = _TIMES.sub(lambda m: _TIMES_WORDS[m.group().lower()], text)  # "twice" = "2 times"
    text = _BACK.sub(r"\1 ago", text)  # "a few years back" = "a few years ago"
    text = _INITIALS.sub(lambda m: " ".join(re.findall(r"[A-Z]", m.group())) + " ", text)  # "J.R.R." = "J. R. R."
    text = _CENTURY_OF.sub(lambda m: f"{int('1' + m.group(1)) + 1}th century", text)  # "the 1400s" = "15th century"
    text = _CURRENCY.sub(lambda m: f"{m.group(2)}{m.group(3) or ''} {_CURRENCY_WORDS[m.group(1)]}", text)
    for pattern in _DATES:
        text = pattern.sub(_date_sub, text)
    text = _SEPARATED.sub(lambda m: m.group(1) + m.group(2).replace(",", ""), text)
    text = _SCALED.sub(lambda m: str(int(round(float(m.group(1)) * _SCALES[m.group(2).lower()]))), text)
    text = _NUMBER_WORDS.sub(_number_words_sub, text)
    text = _WORD_NUMBER.sub(" ", text)  # "Slaughterhouse-Five" = "Slaughterhouse-5" = "Slaughterhouse 5"
    text = _DECADES.sub(lambda m: f"{10 * int(m.group(1))} years", text)  # "a decade" = "10 years"
    text = _ORDINAL_HYPHEN.sub(r"\1 ", text)  # "16th-century", "16th - century" = "16th century"
    text = _ORDINAL.sub(_ordinal_sub, text)
    for pattern, word in _UNITS:
        text = pattern.sub(word, text)
    text = _NUMBER_RANGE.sub(r"\1 to \2", text)  # "30-60 seconds" = "30 to 60 seconds"
    text = _SHORT_YEAR_RANGE.sub(lambda m: f"{m.group(1)}{m.group(2)} to {m.group(1)}{m.group(3)}"
                                 if m.group(3) > m.group(2) else m.group(), _UNTIL.sub(" to ", text))
    text = _SEASON_OF.sub(lambda m: ("autumn" if m.group(1).lower() == "fall" else m.group(1)) + " ", text)
    for pattern, word in _BOUNDS:
        text = pattern.sub(word, text)
    return _POSSESSIVE.sub(lambda m: m.group() if m.group(1).lower() in _CONTRACTED else f"{m.group(1)} s", text)


@lru_cache(maxsize=1 << 16)
def canon(text: str | None) -> str:
    """Canonical form, then SQuAD normalization: the tokens the reference judge compares."""
    return normalize(canonical(text))


def canon_f1(prediction: str | None, truth: str | None) -> float:
    return token_f1(canonical(prediction), canonical(truth))
