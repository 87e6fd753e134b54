"""Plotly figure builders shared by the dashboard and ``emb-s figure``: one module per figure family.

Builders take tidy DataFrames produced by ``emb_s_core.metrics`` / ``emb_s_core.diagnose`` and return
``plotly.graph_objects.Figure``; they never compute metrics themselves.
"""
