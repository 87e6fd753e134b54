"""Query drill-down: it opens on the finder (queries a run gets at a smaller rung and loses at a larger one), then
one query's gold and hard-negative documents, their ranks on every rung for the chosen run, the top-K at one rung,
and the gold next to the document that outranked it, with what tells them apart (all document text escaped)."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from emb_s_core import metrics
from emb_s_core.analysis import drilldown, finder, views
from emb_s_core.schema import OK
from ui import cases, data, state, widgets, whatif
from ui.safe import html_fragment, md

# the query's words on yellow, what only one text has underlined in blue: a query word only one text has shows both
READING_CSS = ("<style>.emb-doc mark{background:#fde68a;color:inherit;padding:0 1px}"
               ".emb-doc ins{text-decoration:underline 2px #2563eb;text-underline-offset:3px}</style>")

view = widgets.analysis_view("Query drill-down")
path, v, metric, lad, run_names = view.path, view.v, view.metric, view.ladder, view.run_names
domains, tasks, sources, tags = view.filters
with widgets.guard():
    qs = data.queries(path, v)

ways = ["finder", "failures", "search"]
default_by = "finder" if run_names else "search"
by = st.radio("Find a query by", ways, index=state.url_index("by", ways, default_by), horizontal=True,
              format_func=lambda s: {"finder": "lost at scale (fine at a smaller rung, failing at a larger one)",
                                     "failures": "failures of a run at a rung", "search": "id or text"}[s],
              key="url_by")
state.put(by=by)
cases.import_as_tag(path)

qid: str | None = None
found = None  # the finder's row for the chosen query: which gold, which document took its place, where
if by == "finder":
    if not run_names:
        st.info("This workspace has no runs yet, so nothing can be lost at scale: search by id or text instead.")
        st.stop()
    pq = data.filtered(path, v, domains, tasks, sources, tags)
    if pq.empty:
        st.warning("No query matches the filters in the sidebar: widen the domain, task-type or source filter.")
        st.stop()
    larger = [n for n in finder.sides(lad, pq) if finder.smaller_than(lad, pq, n)]
    c1, c2, c3 = st.columns(3)
    with c1:
        run = state.selectbox("Run", run_names, "run")
    with c3:
        large = state.selectbox("Larger rung or scale", larger, "rung", default=finder.defaults(lad, pq)[1])
    if not large:
        st.info("The ladder has a single rung: nothing can be lost at scale.")
        st.stop()
    with c2:
        small = state.selectbox("Smaller rung or scale", finder.smaller_than(lad, pq, large), "from",
                                default=finder.defaults(lad, pq, large)[0])
    direction = st.radio("Show", list(finder.DIRECTIONS), index=state.url_index("dir", finder.DIRECTIONS),
                         horizontal=True, key="url_dir", format_func=finder.DIRECTION_LABELS.get)
    state.put(dir=direction)
    widgets.run_notes(path, v, [run])
    with widgets.guard():
        rows = data.finder_rows(path, v, run, small, large, metric, direction, domains, tasks, sources, tags)
        other = data.finder_rows(path, v, run, small, large, metric,
                                 finder.GAINED if direction == finder.LOST else finder.LOST, domains, tasks, sources,
                                 tags)
    st.caption(f"{md(finder.summary(rows))}; {len(other):,} went the other way. The gold that moved furthest first; "
               f"\"{md(drilldown.NOT_IN_LIST)}\": below the stored list. Click a row (or pick below) to open it.")
    table = finder.readable(rows)
    event = st.dataframe(table, hide_index=True, width="stretch", on_select="rerun", selection_mode="single-row",
                         key=f"finder_table_{direction}")
    widgets.table_downloads(table, f"{direction}_at_scale_{metric}_{run}_{small}_{large}", "finder",
                            formats=("csv", "markdown"))
    if rows.empty:
        st.stop()
    picks = finder.labels(rows)
    clicked = [i for i in (event.selection.rows if event is not None else []) if i < len(picks)]
    if clicked:  # a row clicked in the table opens its query (a picker of its own, so it starts on that row)
        qid = st.selectbox("Open a query", list(picks), index=clicked[0], format_func=picks.get,
                           key=f"finder_pick_{clicked[0]}")
    else:
        qid = st.selectbox("Open a query", list(picks), index=state.url_index("q", list(picks)),
                           format_func=picks.get, key="finder_pick")
    found = rows.set_index("qid").loc[qid]
elif by == "failures":
    if not run_names:
        st.info("This workspace has no runs yet, so there are no failures to walk: search by id or text instead.")
        st.stop()
    pq = data.filtered(path, v, domains, tasks, sources, tags)
    rungs = data.columns_in_order(lad, pq, "rung")
    scales = [s for s in data.columns_in_order(lad, pq, "scale") if s not in rungs]
    c1, c2 = st.columns(2)
    with c1:
        run = state.selectbox("Run", run_names, "run")
    with c2:
        rung = state.selectbox("Rung or scale", rungs + scales, "rung", default=views.default_rung(rungs))
    x = "rung" if rung in rungs else "scale"
    widgets.run_notes(path, v, [run])
    fails = drilldown.failures(pq, run, rung, metric, x=x) if not pq.empty else pq
    if fails.empty:
        st.success(f"No failures of {md(metric)} for {md(run)} at {md(rung)} with the current filters: "
                   f"{md(drilldown.no_failures_reason(pq, run, rung, metric, x=x)) if not pq.empty else 'no results'}.")
    else:
        col = metrics.metric(metric).column
        labels = {q: f"{q} · {metric} = {val:.3f}" for q, val in zip(fails["qid"], fails[col])}
        st.caption(f"{len(fails):,} failures of {md(metric)} for **{md(run)}** at **{md(rung)}** (worst first).")
        cases.case_downloads(fails, path, v, f"failures_{metric}_{run}_{rung}", "fails")
        options = list(labels)

        def step(delta: int) -> None:
            """Previous / next failure: move the selectbox before it is drawn again."""
            at = state.index_of(options, st.session_state.get("fail_pick"))
            st.session_state["fail_pick"] = options[(at + delta) % len(options)]

        c1, c2, c3 = st.columns([8, 1, 1], vertical_alignment="bottom")
        with c1:
            qid = st.selectbox("Failure", options, index=state.url_index("q", options),
                               format_func=labels.get, key="fail_pick")
        c2.button("← prev", key="fail_prev", on_click=step, args=(-1,), width="stretch")
        c3.button("next →", key="fail_next", on_click=step, args=(1,), width="stretch")
else:
    needle = st.text_input("Query id or words from its text or answer", value=state.get("find", "") or "",
                           key="url_find")
    state.put(find=needle)
    hits = drilldown.find_queries(qs.reset_index(drop=True), needle) if needle else qs.iloc[0:0]
    if needle and hits.empty:
        st.warning(f"No query id, text or answer contains {md(repr(needle))}.")
    options = hits["qid"].tolist()
    if not options and state.get("q") in qs.index:
        options = [state.get("q")]
    if options:
        qid = st.selectbox("Query", options, index=state.url_index("q", options),
                           format_func=lambda q: f"{q} · {qs.loc[q, 'text'][:90]}", key="search_pick")

if not qid:
    st.stop()
state.put(q=qid)
query = qs.loc[qid]
gold = [int(d) for d in query["ref_ids"]]
negs = [int(d) for d in (query["hard_negative_ids"] if query["hard_negative_ids"] is not None else [])]

st.divider()
st.markdown(f"#### Query {md(qid, one_line=True)}")
st.text(query["text"])
m = st.columns(4)
m[0].markdown("**Answer**")
m[0].text(str(query["answer"]))
m[1].markdown(f"**Domain**: {md(query['domain'])}")
m[2].markdown(f"**Task type**: {md(query['task_type'])}")
m[3].markdown(f"**Gold / hard negatives**: {len(gold)} / {len(negs)}")
with st.expander("Tags and note", expanded=True):
    cases.note_editor(path, v, qid, state.get("run"), state.get("rung"))

texts = data.document_texts(path, v, tuple(sorted(set(gold + negs))))
g_col, n_col = st.columns(2)
for column, ids, label in ((g_col, gold, "Gold"), (n_col, negs, "Hard negative")):
    with column:
        st.markdown(f"**{label} documents**")
        if not ids:
            st.caption("none")
        for d in ids:
            doc = texts.get(d)
            title = md(doc["title"], one_line=True) if doc else "(missing from the bank)"
            with st.expander(f"{label} · doc {d} · {title}"):
                if doc:
                    st.caption(f"source {md(doc['source'])} · domain {md(doc['domain'])}")
                    st.text(doc["text"])

st.markdown("**What if the query read differently?** Edit it: the ranks below follow as you type")
whatif.box(path, v, qid, "drill")
cases.answers_and_labels(path, v, qid)  # QA replies, judge scores and labels (only where a QA run exists)

res = data.query_results(path, v, qid)
if res.empty:
    st.info("No run has results for this query yet.")
    st.stop()

order = lad.names if lad is not None else sorted(res["rung"].unique())
runs_here = [r for r in run_names if r in set(res["run"])]
run_sel = st.selectbox("Run", runs_here, index=state.index_of(runs_here, state.get("run")), key="top_run")
ranks = drilldown.rank_columns(res, run_sel, gold, negs, order, pools=data.query_pools(path, v, qid))
in_view = views.ladder_in_view([c for c in ranks.columns if c != "document"])
own, companion = list(in_view.searchable), list(in_view.companion)
st.markdown(f"**Rank of each gold and hard-negative document on every rung, {md(run_sel)}** (1 = first; "
            f"\"{md(drilldown.NOT_IN_LIST)}\" = in the pool, below the stored list; \"{md(drilldown.NOT_IN_POOL)}\" = "
            "not in the pool the query was searched in; blank = no ranking there)")
st.dataframe(ranks[["document", *own]], hide_index=True, width="stretch")
if companion:
    st.markdown("**The same on the benign twin** (the query's own near misses taken out of its pool)")
    st.dataframe(ranks[["document", *companion]], hide_index=True, width="stretch")
st.caption(md(drilldown.RANK_LEGEND))
widgets.table_downloads(ranks, f"ranks_{qid}_{run_sel}", "ranks")

st.markdown("**Top-K at one rung**")
rungs_here = [r for r in order if r in set(res[res["run"] == run_sel]["rung"])]
came_from = found["other_rung"] if found is not None and pd.notna(found["other"]) else state.get("rung")
default_rung = came_from if came_from in rungs_here else views.default_rung(rungs_here)
c2, c3 = st.columns([3, 1])
with c2:
    rung_sel = st.selectbox("Rung", rungs_here, index=state.index_of(rungs_here, default_rung), key="top_rung")
with c3:
    topn = st.number_input("K", min_value=1, max_value=100, value=10, key="top_k")
row = res[(res["run"] == run_sel) & (res["rung"] == rung_sel)].iloc[0]
if row["status"] != OK:
    st.info(f"{md(run_sel)} has no ranking at {md(rung_sel)}: {md(row['status'].replace('_', ' '))}.")
    st.stop()
meta = data.documents_meta(path, v)
highlight = [int(d) for d in state.get_list("hl") if d.lstrip("-").isdigit()]  # from the Explain page
top = drilldown.top_k(row["doc_ids"], row["scores"], gold, negs, meta, k=int(topn), highlight=highlight)
st.dataframe(top, hide_index=True, width="stretch",
             column_config={"score": st.column_config.NumberColumn(format="%.4f")})
widgets.table_downloads(top, f"top{topn}_{qid}_{run_sel}_{rung_sel}", "top")

if (found is not None and pd.notna(found["other"]) and found["other_rung"] == rung_sel
        and run_sel == state.get("run")):
    pair = int(found["gold"]), int(found["other"])  # the finder's gold and the document that took its place
else:
    pair = drilldown.outranked_pair(row["doc_ids"], gold, negs)
if pair is None:
    st.success("The gold document is ranked first here: nothing outranked it.")
    st.stop()
g_id, o_id = pair
both = data.document_texts(path, v, tuple(sorted({g_id, o_id})))
ga, ob = both.get(g_id), both.get(o_id)
if not ga or not ob:
    st.warning("One of the two documents is missing from the bank.")
    st.stop()
kind = "hard negative" if o_id in negs else "other document"
st.markdown(f"**Gold doc {g_id} vs the {kind} {o_id} that outranked it at {md(rung_sel)}**")
read = drilldown.reading(ga["text"], ob["text"], query["text"])
st.dataframe(drilldown.reading_table(read, f"gold {g_id}", f"{kind} {o_id}"), hide_index=True, width="stretch")
st.caption("Highlighted: the query's words, in both texts. Underlined: names and numbers one document has and the "
           "other lacks. Words both share are left plain.")
st.markdown(READING_CSS, unsafe_allow_html=True)
left, right = st.columns(2)
with left:
    st.caption(f"gold · doc {g_id} · {md(ga['source'])} / {md(ga['domain'])}")
    st.markdown(f"<div class='emb-doc'>{html_fragment(drilldown.reading_html(read.left))}</div>",
                unsafe_allow_html=True)
with right:
    st.caption(f"{kind} · doc {o_id} · {md(ob['source'])} / {md(ob['domain'])}")
    st.markdown(f"<div class='emb-doc'>{html_fragment(drilldown.reading_html(read.right))}</div>",
                unsafe_allow_html=True)
