"""Overview: one metric as a run × rung heatmap and as degradation curves; click a cell for the queries lost there
(the drill-down's finder), or a base cell for its failures."""
from __future__ import annotations

import html

import streamlit as st

from emb_s_core import metrics
from emb_s_core.analysis import finder, paper_table, run_state, views
from emb_s_core.figures import overview
from ui import data, state, widgets
from ui.safe import md

DRILL = "pages/3_Query_drilldown.py"
EXPLAIN = "pages/8_Explain.py"


view = widgets.analysis_view("Overview")
path, v, metric, lad, run_names = view.path, view.v, view.metric, view.ladder, view.run_names
domains, tasks, sources, tags = view.filters
if not run_names:
    st.info("This workspace has no runs yet: evaluate a retriever (the command below) and reload this page.")
    widgets.command("emb-s eval --workspace", path, "--retriever bm25")
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

twin = st.toggle("Benign twin beside each run (the needle's illusion)", value=True, key="twin",
                 help="Rows '<run> · benign': the same queries and gold on the benign twin ladder, whose other "
                      "documents are irrelevant to every query (build it with `emb-s ladder build --control "
                      "benign`, evaluate with `emb-s eval --ladder both`). Dashed on the curves.")
with widgets.guard():
    pq = data.filtered(path, v, domains, tasks, sources, tags)
    if pq.empty:
        st.warning("No query matches the filters in the sidebar: widen the domain, task-type or source filter.")
        st.stop()
    view_data = data.illusion_overview(path, v, x, metric, tuple(chosen), domains, tasks, sources, twin, tags)
states, cols = view_data["states"], view_data["columns"]
twins, eff = view_data["twins"], view_data["effective"]
if twin and not twins:
    st.caption("No run has benign-twin results yet: `emb-s ladder build --control benign`, then "
               "`emb-s eval -r SPEC --ladder both`.")

cap = overview.caption(view_data, metric, x, widgets.bank_name(path), int(pq["qid"].nunique()),
                       filtered=bool(domains or tasks or sources != "all" or tags))
states_all = data.run_states(path, v)
cap = " · ".join(part for part in (cap, run_state.caption_mark(states_all, chosen),
                                   view_data.get("common_caption")) if part)
n_missing, missing = views.unscored(states)
fig = overview.figure("heatmap", view_data, metric, x, caption_text=cap)  # what `emb-s figure heatmap` draws
event = st.plotly_chart(fig, theme=None, key="heat", on_select="rerun", selection_mode="points", width="stretch")
widgets.figure_downloads(fig, f"heatmap_{metric}", "heat")
st.caption(f"{metrics.INTERVAL_NOTE}. Cells averaging fewer than {metrics.THIN_N} queries are grey; n is printed "
           f"in cells under {metrics.SMALL_N}.")
unfinished = run_state.not_complete(states_all)
unfinished = unfinished[unfinished["run"].isin(chosen)]
if len(unfinished):
    st.warning("Not complete, so some of their cells are empty: "
               + "; ".join(f"{md(r.run)} ({md(r.label)})" for r in unfinished.itertuples()))
for run, summary in run_state.settings(states_all, chosen).items():
    st.caption(md(run_state.settings_line(run, summary)))
if view_data.get("common_note"):
    st.caption(md(view_data["common_note"]))
if missing:
    st.caption(f"{n_missing} cell(s) have no score: " + ", ".join(md(m) for m in missing)
               + " — shown in grey, never as zero.")

def _way(column: str) -> str:
    """How the drill-down opens for a cell: the finder where the column has a smaller rung, else the failures."""
    return "finder" if finder.smaller_than(lad, pq, column) else "failures"


points = (event.selection.points if event and getattr(event, "selection", None) else []) or []
if points:
    p = points[0]  # the figure shows names escaped for plotly (figures.style.text): map them back
    run_hit, col_hit = html.unescape(str(p.get("y"))), html.unescape(str(p.get("x")))
    # a cell opens the finder (queries fine at the base, lost at that cell's rung); a base cell, with nothing below
    # it, its failures
    if run_hit in chosen and col_hit in cols:
        st.switch_page(DRILL, query_params=state.carried(run=run_hit, rung=col_hit, by=_way(col_hit)))
    if run_hit in twins and col_hit in cols:  # a twin cell opens the twin rung of its run
        st.switch_page(DRILL, query_params=state.carried(run=twins[run_hit], rung=f"benign:{col_hit}",
                                                          by=_way(f"benign:{col_hit}")))

with st.expander("Open the failures of one cell", expanded=False):
    a, b = st.columns(2)
    run_pick = a.selectbox("Run", chosen, key="cell_run")
    col_pick = b.selectbox("Rung" if x == "rung" else "Scale", cols, key="cell_rung")
    if _way(col_pick) == "finder":
        st.page_link(DRILL, label=f"Queries {md(run_pick, one_line=True)} gets at the base and loses at "
                                  f"{md(col_pick, one_line=True)} →", icon="📉",
                     query_params=state.carried(run=run_pick, rung=col_pick, by="finder"))
    st.page_link(DRILL, label=f"Failures of {md(run_pick, one_line=True)} at {md(col_pick, one_line=True)} →",
                 icon="🔍",
                 query_params=state.carried(run=run_pick, rung=col_pick, by="failures"))
    if x == "rung":  # a drop from this rung to a larger one: what displaced the gold
        st.page_link(EXPLAIN, label="Why did it move? What displaced the gold from this rung on →", icon="🧭",
                     query_params=state.carried(run=run_pick, **{"from": col_pick}))

st.subheader("Degradation across the ladder")
fig2 = overview.figure("curves", view_data, metric, x, caption_text=cap)  # what `emb-s figure curves` draws
if overview.thresholds(view_data, metric, x):
    st.caption("Dotted: each run's effective-scale threshold, 0.85 × its SR@10 on the base scale; its effective "
               "scale is the largest scale before SR@10 first falls below that line.")
st.plotly_chart(fig2, theme=None, key="curves", width="stretch")
widgets.figure_downloads(fig2, f"curves_{metric}", "curves")

st.subheader("Table")
table = view_data["table"]
widgets.table(table)
widgets.table_downloads(table, f"overview_{metric}", "overview")

if twins:
    st.subheader("The illusion gap: benign twin − adversarial ladder")
    st.caption(f"{metric} on the benign twin minus {metric} on the built ladder, over the same queries of each "
               "rung; paired bootstrap 95% interval and sign-flip randomization p-value.")
    with widgets.guard():
        gap = data.illusion_gap(path, v, tuple(chosen), metric, domains, tasks, sources, tags)
    st.caption(md(data.twin_references(path, v) or ""))
    widgets.table(gap.drop(columns=["test"]))
    gap_note = data.illusion_gap_note(path, v, tuple(chosen), domains, tasks, sources, tags)
    if gap_note:
        st.caption(md(gap_note))
    widgets.table_downloads(gap, f"illusion_gap_{metric}", "gap")
    st.caption("The twin each gap is measured on: its pools per rung (per-query = the built rung minus that "
               "query's own near misses, refilled to the same tokens), its fill (smallest query's pool tokens ÷ the "
               "built rung's; mean) and the queries' own near misses left in their pools (0 by construction).")
    fill, stale = data.twin_fill(path, v)
    widgets.table(fill)
    if stale:
        st.warning(md(stale))
if len(eff):
    st.subheader("Effective scale")
    st.caption("The largest scale at which SR@10 stays at or above 0.85 × its base-scale value (domain rungs "
               "pooled); '≥ full' when it never falls below. Interval: bootstrap over queries, 95%.")
    widgets.table(eff.drop(columns=["values"]))

paper = st.toggle("Paper table (Table 3: R@1 / SR@10 / FR@10 per scale, reranking under its base)",
                  value=state.get("paper") == "1", key="url_paper")
state.put(paper="1" if paper else None)
if paper:
    st.subheader("Paper table")
    pq_all = data.per_query(path, v)
    kinds = paper_table.ladders_in(pq_all)
    kind = state.selectbox("Ladder", kinds, "paper_ladder", default=paper_table.default_ladder(pq_all))
    available = paper_table.available_scales(pq_all, kind)
    scales = state.multiselect("Scales", available, "scales", default=paper_table.default_scales(available))
    if not scales:
        st.info("Pick at least one scale.")
        st.stop()
    with widgets.guard():
        pt = data.paper_table(path, v, tuple(scales), tuple(chosen), kind)
    st.caption("Values in %; n per cell in the table below it (R@1: single-source queries, FR@10: multi-source). "
               "Unfiltered: the sidebar filters do not apply to the paper table.")
    for line in pt.notes():
        st.caption(md(line))
    cells = paper_table.flat(pt)
    n_cols = [c for c in cells.columns if c.endswith(" n")]
    widgets.table(cells.drop(columns=n_cols), digits=1)
    widgets.table(cells[["run", *n_cols]])
    c1, c2, c3, _ = st.columns([1, 1, 1, 3])
    for col, fmt, suffix, mime in ((c1, "latex", "tex", "application/x-tex"), (c2, "markdown", "md", "text/markdown"),
                                   (c3, "csv", "csv", "text/csv")):
        col.download_button(f"⬇ {fmt.capitalize() if fmt != 'latex' else 'LaTeX'}",
                            data=lambda f=fmt: paper_table.render(pt, f).encode("utf-8"),
                            file_name=f"paper_table.{suffix}",
                            mime=mime, key=f"dl_paper_{suffix}", on_click="ignore")
