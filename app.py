"""EMB-S Diagnostics dashboard entry point (placeholder until the dashboard issue lands)."""
from __future__ import annotations

import streamlit as st

st.set_page_config(page_title="EMB-S Diagnostics", layout="wide")
st.title("EMB-S Diagnostics")
st.write("Evidence access under semantic interference. The dashboard pages arrive with the dashboard issue.")
