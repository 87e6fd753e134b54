"""Ladder: what each rung holds (tokens, documents, domains, sources) and the paper's Figure 4 — how many distinct
sources a query's top-10 draws from at the shared rung versus the largest rung."""
from __future__ import annotations

import shlex

import pandas as pd
import streamlit as st

from emb_s_core.analysis import bank_summary, composition, views
from emb_s_core.analysis import kept as kept_view
from emb_s_core.analysis import mixing as mixing_view
from emb_s_core.figures import ladder as ladder_fig
from emb_s_core.figures import mixing, style
from ui import data, state, widgets
from ui.safe import md

st.title("Ladder")
path, v = widgets.pick_workspace()
with widgets.guard():
    lad = data.get_ladder(path, v)
if lad is None:
    st.info(md(f"This workspace has no ladder yet: build it with `emb-s ladder build --workspace "
               f"{shlex.quote(data.shown_path(path))}`."))
    st.stop()

table = lad.table(absent=True)  # rungs not built (same documents as the one below) as rows saying why
for column in ("budget", "documents", "tokens", "queries"):  # "" for full or an absent rung → missing
    table[column] = pd.to_numeric(table[column], errors="coerce").astype("Int64")
table["hn_coverage"] = pd.to_numeric(table["hn_coverage"], errors="coerce")
st.caption("size: what each rung really holds (1K = 1,024 tokens); hn_coverage: the mean share of a kept query's "
           "hard negatives in the rung (below 0.9 at a base rung, near misses enter with scale).")
st.dataframe(table, hide_index=True, width="stretch")
st.caption(md(f"Rung tokens are {bank_summary.SERIALIZED_TOKENS}. {bank_summary.TOKENS_NOTE}."))
widgets.table_downloads(table, "ladder", "ladder")
for msg in lad.messages:  # a base rung under 90% hard-negative coverage, domain rungs with few queries: warnings
    (st.warning if msg.startswith("warning:") else st.caption)(md(msg))

st.subheader("Queries kept per domain")
with widgets.guard():
    kept_summary = kept_view.table(data.workspace(path)[0], lad)
st.dataframe(kept_summary, hide_index=True, width="stretch")
note = kept_view.dropped_note(kept_summary, str(lad.options.get("base", "64K")), path)
if note:
    st.warning(md(note))

st.subheader("Hard-negative coverage")
st.caption("Share of each kept query's hard negatives that are in the rung. A base pool keeps only queries whose "
           "gold and hard negatives fit it (up to --hn-share of its budget; by default all of them, coverage 1.0); "
           "what is left of a share takes hard negatives round-robin across queries in a seeded order.")
coverage = data.hard_negative_coverage(path, v)
if coverage.empty or not (coverage["hard_negatives"] > 0).any():
    st.info("No kept query lists hard negatives (import them with the bank, or add them with `emb-s collide`).")
else:
    # a per-query twin rung stores its built rung's membership: its coverage is the built rung's, so not offered
    cov_rung = state.selectbox("Rung", list(views.ladder_in_view(lad).searchable), "coverage_rung")
    rows = coverage[(coverage["rung"] == cov_rung) & (coverage["hard_negatives"] > 0)]
    st.dataframe(rows.drop(columns=["rung"]), hide_index=True, width="stretch")
    widgets.table_downloads(rows, f"hn_coverage_{cov_rung}", "hn_coverage")

st.subheader("Composition")
c1, c2 = st.columns(2)
with c1:
    by = state.selectbox("Split by", ["domain", "source"], "split")
with c2:
    value = state.selectbox("Measure", ["tokens", "documents"], "measure")
shown = list(views.ladder_in_view(lad).searchable)  # the twin's pools are per query: its table rows describe them
comp = composition.table([r for r in lad.rungs if r.name in set(shown)])
fig = ladder_fig.composition(comp, shown, by=by, value=value,
                             caption=style.caption(widgets.bank_name(path), shown))
st.plotly_chart(fig, theme=None, key="composition", width="stretch")
widgets.figure_downloads(fig, f"composition_{by}_{value}", "composition")

st.subheader("Source mixing in the top-10 (paper Figure 4)")
pair = mixing_view.rung_pair(lad)
run_names = data.run_table(path, v)["run"].tolist()
if not run_names:
    st.info("No runs yet: source mixing needs a retriever's top-10 lists.")
    st.stop()
run = state.selectbox("Run", run_names, "run")
widgets.run_notes(path, v, [run])
dist = data.source_mixing(path, v, mixing_view.K)
d = mixing_view.for_run(dist, run, pair)
if d.empty:
    st.info(f"{md(run)} has no rankings at {' or '.join(md(p) for p in pair)}.")
    st.stop()
fig2 = mixing.mixing(d, run, pair, k=mixing_view.K,
                     caption=style.caption(widgets.bank_name(path), pair, mixing_view.K, mixing_view.n_queries(d)))
st.plotly_chart(fig2, theme=None, key="mixing", width="stretch")
widgets.figure_downloads(fig2, f"mixing_{run}", "mixing")
st.dataframe(mixing_view.summary(d), hide_index=True)
