"""EMB-S Diagnostics dashboard: ``streamlit run app.py``.

Pages are discovered from ``pages/*.py`` sorted by file name (``3_Query_drilldown.py`` → "Query drilldown"), so a
new page joins by adding one file. Nothing heavy is imported here: each page loads what it needs, cached.
"""
from __future__ import annotations

import re
from pathlib import Path

import streamlit as st

PAGES = Path(__file__).resolve().parent / "pages"


def page_title(path: Path) -> str:
    """``2_Overview.py`` → ``Overview``; ``6_Access_vs_Use.py`` → ``Access vs Use``."""
    return re.sub(r"^\d+_", "", path.stem).replace("_", " ")


def discover() -> list:
    files = sorted(PAGES.glob("[!_]*.py"), key=lambda p: (int(m.group(1)) if (m := re.match(r"(\d+)", p.stem))
                                                           else 10**6, p.name))
    return [st.Page(str(p), title=page_title(p), url_path=page_title(p).lower().replace(" ", "_"),
                    default=(i == 0)) for i, p in enumerate(files)]


st.set_page_config(page_title="EMB-S Diagnostics", page_icon="🔎", layout="wide")
st.navigation(discover()).run()
