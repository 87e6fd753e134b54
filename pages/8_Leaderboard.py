"""Leaderboard: every run next to a baseline run at every rung or scale for one metric; each cell marked better /
worse / no difference by the paired test over the same queries, corrected across all comparisons shown."""
from __future__ import annotations

import streamlit as st

from emb_s_core import metrics
from emb_s_core.analysis import leaderboard, views
from emb_s_core.figures import leaderboard as board_figure
from emb_s_core.figures import style
from ui import data, state, widgets

view = widgets.analysis_view("Leaderboard")
path, v, metric, run_names = view.path, view.v, view.metric, view.run_names
domains, tasks, sources, tags = view.filters
if not run_names:
    st.info("This workspace has no runs yet: evaluate a retriever (the command below) and reload this page.")
    widgets.command("emb-s eval --workspace", path, "--retriever bm25")
    st.stop()

c1, c2, c3 = st.columns([3, 2, 2])
with c1:
    chosen = state.multiselect("Runs", run_names, "runs", default=run_names)
with c2:
    baseline = state.selectbox("Baseline", run_names, "base", default=run_names[0])
with c3:
    correction = state.selectbox("Multiple-testing correction", list(metrics.CORRECTIONS), "corr", default="holm",
                                 format_func=metrics.CORRECTION_LABELS.get)
c4, c5, c6, c7 = st.columns([2, 2, 1, 1], vertical_alignment="bottom")
with c4:
    x = state.selectbox("Columns", ["scale", "rung"], "x", default="scale",
                        format_func=lambda s: {"scale": "scales (domain rungs pooled)", "rung": "every rung"}[s])

with widgets.guard():
    if data.filtered(path, v, domains, tasks, sources, tags).empty:
        st.warning("No query matches the filters in the sidebar: widen the domain, task-type, source or tag filter.")
        st.stop()
    board = data.leaderboard(path, v, metric, baseline, correction, x, tuple(chosen or [baseline]), domains, tasks,
                             sources, tags)
sort_options = ["run", leaderboard.SUMMARY, *board.columns]
with c5:
    sort_by = state.selectbox("Sort by", sort_options, "sort", default=views.default_rung(board.columns) or "run")
with c6:
    descending = st.toggle("Descending", value=state.get("desc", "1") == "1", key="url_desc")
with c7:
    detail = st.toggle("n and interval", value=state.get("detail") == "1", key="url_detail",
                       help="add each cell's n (queries scored) and bootstrap 95% interval as columns")
state.put(desc="1" if descending else "0", detail="1" if detail else None)

table = board.table(detail=detail, sort_by=sort_by, descending=descending)
column_help = {c: st.column_config.TextColumn(help=f"mean {metric} at {c}; ▲ ▼ = against the baseline")
               for c in board.columns}
widgets.table(table, column_config=column_help)
legend = board.legend()
st.text(legend)  # names from the workspace: shown as text, never as Markdown
widgets.table_downloads(table, f"leaderboard_{metric}_{correction}", "leaderboard",
                        formats=("csv", "latex", "markdown"), note=legend)

st.subheader("As a figure")
order = table["run"].tolist()
cap = style.caption(widgets.bank_name(path), board.columns, metrics.metric(metric).k,
                    int(data.filtered(path, v, domains, tasks, sources, tags)["qid"].nunique()),
                    extra=f"{metrics.CORRECTION_LABELS[correction]}, α = {board.alpha:g}", unit=x)
fig = board_figure.leaderboard(board.cells, order, board.columns, metric, board.baseline, x=x, caption=cap)
st.plotly_chart(fig, theme=None, key="board", width="stretch")
widgets.figure_downloads(fig, f"leaderboard_{metric}_{correction}", "board")
