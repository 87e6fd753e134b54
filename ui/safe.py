"""Text-only rendering: every value from a bank, a run or the URL is shown as text, never as Markdown or HTML.

Why: Streamlit renders Markdown in st.markdown/caption/title/header/info/warning/error/success, in expander, metric,
page-link and widget labels, and GitHub-style autolinks; a qid holding a backtick and ``![q](http://host/x)`` would
make every viewer's browser fetch that URL. Use :func:`md` around each data value placed in such a widget (or a
plain-text widget: st.text, st.code, st.dataframe, selectbox options); :func:`html_fragment` for the few places that
build HTML from already ``html.escape``d text.
"""
from __future__ import annotations

import re

# every ASCII punctuation character CommonMark lets a backslash escape, minus none: escaping all of them is always
# safe (an escaped character renders as itself) and also breaks autolinks (http\:), emoji/colour directives
# (\:red[...]), math ($) and HTML (\<img>)
_MARKDOWN_ACTIVE = re.compile(r"([!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~])")
_ENTITY_ACTIVE = re.compile(r"[!$()*+\-.:=?@\[\\\]^_`{|}~]")  # not & # ; (entities) nor < > / ' " (tags)


#: GitHub-style autolink literals (http://, www., user@host) are found in the parsed text, after escapes, so a word
#: joiner (U+2060, zero width, invisible) is put where they would start
#: (GFM starts a www. literal after whitespace or any of * _ ~ ( too, so every "www." is broken, not only a word's)
_AUTOLINK = re.compile(r"(?i)(?<=[a-z])(?=://)|(?<=www)(?=\.)|(?=@[-\w]+\.[-\w])")
WORD_JOINER = "\u2060"


def md(value: object, *, one_line: bool = False) -> str:
    """``value`` as Markdown source that renders literally as its text (``one_line``: newlines become spaces, for
    labels and headers). Autolink literals are broken by an invisible word joiner (copied text carries it)."""
    text = "" if value is None else str(value)
    if one_line:
        text = " ".join(text.split())
    text = _AUTOLINK.sub(WORD_JOINER, text)
    escaped = _MARKDOWN_ACTIVE.sub(r"\\\1", text)
    # a line of only spaces/tabs and a newline would otherwise start a new Markdown block: keep paragraphs literal
    return escaped.replace("\r", "").replace("\n", "  \n")


def html_fragment(escaped_html: str) -> str:
    """An HTML fragment whose text was ``html.escape``d, made safe inside ``st.markdown(..., unsafe_allow_html=True)``:
    newlines become <br> (a blank line would end the HTML block and let Markdown resume) and the Markdown-active
    punctuation of the text becomes numeric entities. Only attribute-free tags (e.g. <mark>) may be in the fragment."""
    text = escaped_html.replace("\r", "").replace("\n", "<br>")
    return _ENTITY_ACTIVE.sub(lambda m: f"&#{ord(m.group(0))};", text)
