"""Overview: one metric as a run × rung heatmap and as degradation curves; click a cell for its failures."""
from __future__ import annotations

import streamlit as st

from emb_s_core.analysis import views
from emb_s_core.figures import curves, heatmap, style
from ui import data, state, widgets

DRILL = "pages/3_Query_drilldown.py"

view = widgets.analysis_view("Overview")
path, v, metric, lad, run_names = view.path, view.v, view.metric, view.ladder, view.run_names
domains, tasks, sources = view.filters
if not run_names:
    st.info("This workspace has no runs yet: evaluate a retriever (`emb-s evaluate --workspace DIR bm25`) and "
            "reload this page.")
    st.stop()

c1, c2 = st.columns([2, 1])
with c1:
    chosen = state.multiselect("Runs", run_names, "runs", default=run_names)
with c2:
    x = state.selectbox("Columns", ["scale", "rung"], "x", default="scale",
                        format_func=lambda s: {"scale": "scales (domain rungs pooled)", "rung": "every rung"}[s])
if not chosen:
    st.info("Pick at least one run above.")
    st.stop()

with widgets.guard():
    pq = data.filtered(path, v, domains, tasks, sources)
    if pq.empty:
        st.warning("No query matches the filters in the sidebar: widen the domain, task-type or source filter.")
        st.stop()
    agg, states, cols = data.overview(path, v, x, metric, tuple(chosen), domains, tasks, sources)

n_q = int(pq["qid"].nunique())
k = views.metric_k(metric)
cap = style.caption(widgets.bank_name(path), cols, k, n_q,
                    extra="filtered" if (domains or tasks or sources != "all") else None)
missing = states[states["state"] != "ok"]
fig = heatmap.heatmap(agg, states, metric, chosen, cols, x=x, caption=cap)
event = st.plotly_chart(fig, theme=None, key="heat", on_select="rerun", selection_mode="points", width="stretch")
widgets.figure_downloads(fig, f"heatmap_{metric}", "heat")
if len(missing):
    st.caption(f"{len(missing)} cell(s) have no score: " + ", ".join(
        sorted({f'{s}' for s in missing['state']})) + " — shown in grey, never as zero.")

points = (event.selection.points if event and getattr(event, "selection", None) else []) or []
if points:
    p = points[0]
    if p.get("y") in chosen and p.get("x") in cols:
        st.switch_page(DRILL, query_params=state.carried(run=p["y"], rung=p["x"]))

with st.expander("Open the failures of one cell", expanded=False):
    a, b = st.columns(2)
    run_pick = a.selectbox("Run", chosen, key="cell_run")
    col_pick = b.selectbox("Rung" if x == "rung" else "Scale", cols, key="cell_rung")
    st.page_link(DRILL, label=f"Failures of {run_pick} at {col_pick} →", icon="🔍",
                 query_params=state.carried(run=run_pick, rung=col_pick))

st.subheader("Degradation across the ladder")
fig2 = curves.curves(agg, states, metric, chosen, cols, x=x, caption=cap)
st.plotly_chart(fig2, theme=None, key="curves", width="stretch")
widgets.figure_downloads(fig2, f"curves_{metric}", "curves")

st.subheader("Table")
table = agg[agg["run"].isin(chosen)].merge(states[["run", x, "state"]], on=["run", x], how="right")
table = table[["run", x, "state", "value", "n", "ci_low", "ci_high"]].rename(columns={"value": metric})
st.dataframe(table, hide_index=True, width="stretch")
widgets.table_downloads(table, f"overview_{metric}", "overview")
