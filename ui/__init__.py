"""Streamlit-side helpers shared by the dashboard pages (emb_s_core never imports Streamlit; this package may)."""
