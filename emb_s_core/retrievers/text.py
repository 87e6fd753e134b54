"""The one tokenization of the sparse retrievers (BM25 and its rank-bm25 reference): lowercase, ``\\w+`` words,
a fixed English stopword list. Both retrievers call this, so their top-10 lists can be compared exactly."""
from __future__ import annotations

import re

WORD = re.compile(r"\w+", re.UNICODE)

# A fixed list (not a library's, which changes between versions): run identities must not drift.
STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being below between
    both but by can could did do does doing down during each few for from further had has have having he her here
    hers herself him himself his how i if in into is it its itself just me more most my myself no nor not now of off
    on once only or other our ours ourselves out over own same she should so some such than that the their theirs
    them themselves then there these they this those through to too under until up very was we were what when where
    which while who whom why will with would you your yours yourself yourselves""".split()
)


#: every ASCII byte that is not a word character (\w on ASCII: letters, digits, underscore) → space
_ASCII_SPACES = bytes(c if (chr(c).isascii() and (chr(c).isalnum() or chr(c) == "_")) else 32 for c in range(256))


def words(text: str) -> list[str]:
    r"""The lowercased words of ``text`` (the ``\w+`` runs), stopwords included (a vocabulary built by
    :func:`tokenize` drops them on lookup, so a query needs no stopword pass).

    An ASCII text takes a byte-level path with the same result, 3× faster than the regex (the query tokenizer was
    most of a query's time from text at 1M tokens): every non-word byte becomes a space, then whitespace split."""
    low = text.lower()
    if low.isascii():
        return ascii_word_bytes(low).decode("ascii").split()
    return WORD.findall(low)


def ascii_word_bytes(low: str) -> bytes:
    """A lowercased ASCII text as bytes, every non-word byte a space: its words are the runs of other bytes (what
    :func:`words` splits, and what BM25's compiled query lookup reads)."""
    return low.encode("ascii").translate(_ASCII_SPACES)


def tokenize(text: str) -> list[str]:
    return [w for w in words(text) if w not in STOPWORDS]
