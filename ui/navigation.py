"""The dashboard's pages, discovered from ``pages/*.py``: what app.py navigates and what Home lists.

Why one place: a new page joins by adding one file, and its title and one-line summary (the first sentence of its
docstring, after ``Title:``) appear in the navigation and on Home without anyone editing a list. Nothing here
imports a page or Streamlit: the docstrings are read with ``ast``.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

PAGES = Path(__file__).resolve().parents[1] / "pages"


@dataclass(frozen=True)
class PageInfo:
    path: Path
    title: str  # "Access vs Use"
    url_path: str  # "access_vs_use"
    summary: str  # the docstring's first sentence, without its "Title:" lead


def _doc(path: Path) -> str:
    return " ".join((ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or "").split())


def _question(doc: str) -> str:
    """A docstring opening with a short question (``Why did it move? For one run…``) names its page by it."""
    first = re.split(r"(?<=[.!?])\s", doc, maxsplit=1)[0]
    return first if first.endswith("?") and len(first) <= 40 else ""


def page_title(path: Path) -> str:
    """``2_Overview.py`` → ``Overview``; ``6_Access_vs_Use.py`` → ``Access vs Use``; a page whose docstring opens
    with a question is named by it (``8_Explain.py`` → ``Why did it move?``: a file name cannot hold the "?")."""
    return _question(_doc(path)) or re.sub(r"^\d+_", "", path.stem).replace("_", " ")


def summary_of(path: Path) -> str:
    """First sentence of the page's docstring, without the leading ``Name:`` or title question (empty when there is
    none)."""
    text = _doc(path)
    if question := _question(text):
        text = text[len(question):].strip()
    text = text.split(": ", 1)[1] if ": " in text[:40] else text
    first = re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0]
    return first.rstrip(".")


def url_path(title: str) -> str:
    """``Access vs Use`` → ``access_vs_use``; ``Why did it move?`` → ``why_did_it_move``."""
    return re.sub(r"[^a-z0-9]+", "_", title.lower()).strip("_")


def pages(folder: Path = PAGES) -> list[PageInfo]:
    """Every page file (not starting with ``_``) in number order; the first one is the default page (Home)."""
    files = sorted(folder.glob("[!_]*.py"), key=lambda p: (int(m.group(1)) if (m := re.match(r"(\d+)", p.stem))
                                                           else 10**6, p.name))
    return [PageInfo(p, t, url_path(t), summary_of(p)) for p in files for t in [page_title(p)]]
