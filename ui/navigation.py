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


def page_title(path: Path) -> str:
    """``2_Overview.py`` → ``Overview``; ``6_Access_vs_Use.py`` → ``Access vs Use``."""
    return re.sub(r"^\d+_", "", path.stem).replace("_", " ")


def summary_of(path: Path) -> str:
    """First sentence of the page's docstring, without the leading ``Name:`` (empty when there is none)."""
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    text = " ".join(doc.split())
    text = text.split(": ", 1)[1] if ": " in text[:40] else text
    first = re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0]
    return first.rstrip(".")


def pages(folder: Path = PAGES) -> list[PageInfo]:
    """Every page file (not starting with ``_``) in number order; the first one is the default page (Home)."""
    files = sorted(folder.glob("[!_]*.py"), key=lambda p: (int(m.group(1)) if (m := re.match(r"(\d+)", p.stem))
                                                           else 10**6, p.name))
    return [PageInfo(p, page_title(p), page_title(p).lower().replace(" ", "_"), summary_of(p)) for p in files]
