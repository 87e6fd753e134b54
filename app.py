"""EMB-S Diagnostics dashboard: ``streamlit run app.py``.

Pages are discovered from ``pages/*.py`` sorted by file name (``ui.navigation``: ``3_Query_drilldown.py`` → "Query
drilldown"), so a new page joins by adding one file, and Home lists it too. Nothing heavy is imported here: each
page loads what it needs, cached.
"""
from __future__ import annotations

import streamlit as st

from ui import navigation, widgets

st.set_page_config(page_title="EMB-S Diagnostics", page_icon="🔎", layout="wide")
pages = st.navigation([st.Page(str(p.path), title=p.title, url_path=p.url_path, default=(i == 0))
                      for i, p in enumerate(navigation.pages())])
with widgets.page_guard():  # a damaged workspace is one line naming the table and the way back
    pages.run()
