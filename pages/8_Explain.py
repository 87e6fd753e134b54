"""Why did it move? For one run and two nested rungs, what displaced each gold document that left the top-K
(hard negative, new same-domain / other-domain / other-source document, or an old document: the gold's own score
dropped), with the displaced queries, each opening in the drill-down with its displacers marked."""
from __future__ import annotations

import streamlit as st

from emb_s_core.analysis import explain
from emb_s_core.figures import explain as explain_fig
from emb_s_core.figures import style
from ui import cases as case_ui
from ui import data, state, widgets
from ui.safe import md

DRILL = "pages/3_Query_drilldown.py"

view = widgets.analysis_view("Why did it move?")
path, v, lad, run_names = view.path, view.v, view.ladder, view.run_names
if not run_names or lad is None:
    st.info("This needs a ladder and a run: `emb-s ladder build`, then `emb-s eval -r bm25`.")
    st.stop()

c1, c2, c3, c4 = st.columns([2, 2, 2, 1])
with c1:
    run = state.selectbox("Run", run_names, "run")
widgets.run_notes(path, v, [run])
k_wanted = int(state.number("k", explain.DEFAULT_K, 1, 100, integer=True))
with widgets.guard():
    pair = data.explain_default(path, v, run, k_wanted)  # the adjacent rungs where this run falls most
with c2:
    rung_from = state.selectbox("From rung", lad.names, "from", default=pair[0] if pair else None,
                                help="opens on the adjacent pair of rungs where the run's SR@K falls most")
with widgets.guard():
    larger = explain.larger_rungs(lad, rung_from)
if not larger:
    st.info(f"No rung of the ladder contains {md(rung_from)} and more: pick a smaller one.")
    st.stop()
with c3:
    rung_to = state.selectbox("To rung", larger, "to",
                              default=pair[1] if pair and pair[0] == rung_from and pair[1] in larger else larger[0])
with c4:
    k = st.number_input("K", min_value=1, max_value=100, value=k_wanted, key="explain_k")

with widgets.guard():
    out = data.explain_cell(path, v, run, rung_from, rung_to, int(k))
displaced, shares = out["displaced"], out["breakdown"]
st.text(f"{len(displaced):,} of {out['queries']:,} queries lost a gold document from the top-{int(k)} between "
        f"{rung_from} and {rung_to}.")  # names from the workspace: plain text, never Markdown
st.caption("Each displaced query is split equally over the documents that entered its top-K; 'already in r' means "
           "an old document overtook the gold (its score, or BM25's rung statistics, changed).")
fig = explain_fig.causes(shares, run, rung_from, rung_to, int(k),
                         caption=style.caption(widgets.bank_name(path), [rung_from, rung_to], int(k),
                                               len(displaced)))
st.plotly_chart(fig, theme=None, key="explain", width="stretch")
widgets.figure_downloads(fig, f"explain_{run}_{rung_from}_{rung_to}", "explain")
st.dataframe(shares, hide_index=True, width="stretch",
             column_config={"share": st.column_config.NumberColumn(format="%.3f")})

if displaced.empty:
    st.success("No gold document left the top-K between these rungs.")
    st.stop()
st.subheader("Displaced queries")
table = displaced.assign(lost=displaced["lost"].map(lambda v: ", ".join(map(str, v))),
                         displacers=[", ".join(f"{d} ({c})" for d, c in zip(ds, cs))
                                     for ds, cs in zip(displaced["displacers"], displaced["causes"])])
st.dataframe(table[["qid", "domain", "lost", "displacers"]], hide_index=True, width="stretch")
widgets.table_downloads(table.drop(columns=["causes", "gold_ranks_to"]), f"displaced_{run}", "displaced")
case_ui.case_downloads(displaced[["qid"]].assign(run=run, rung=rung_to), path, v,  # at the rung they were lost on
                       f"displaced_{run}_{rung_from}_{rung_to}", "displaced_cases")
qids = list(displaced["qid"])
pick = st.selectbox("Open a displaced query in the drill-down", qids, key="explain_q")
hl = displaced.set_index("qid").loc[pick, "displacers"]
st.page_link(DRILL, label="Open it in the drill-down: its top-K at the larger rung, displacing documents marked →",
             icon="🔍",
             query_params=state.carried(by="search", find=pick, q=pick, run=run, rung=rung_to, hl=list(hl)))
