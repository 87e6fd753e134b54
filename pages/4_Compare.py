"""Compare: two runs on the same rungs with paired tests (never two unpaired means), the queries one gets and the
other misses, and a live query box that ranks a typed question with several retrievers at once."""
from __future__ import annotations

import time

import streamlit as st

from emb_s_core import evaluate, metrics
from emb_s_core.analysis import drilldown, kept, report, run_state, views
from emb_s_core.errors import EmbSError
from emb_s_core.analysis import cases as case_lists
from emb_s_core.figures import compare, style
from ui import cases, data, state, widgets, whatif
from ui.safe import md

view = widgets.analysis_view("Compare two runs")
path, v, metric, lad, run_names = view.path, view.v, view.metric, view.ladder, view.run_names
domains, tasks, sources, tags = view.filters

tab_runs, tab_live = st.tabs(["Two runs, paired", "Live query"])

with tab_runs:
    if len(run_names) < 2:
        st.info("Comparing needs two runs in this workspace; it has "
                f"{len(run_names)}. Evaluate another retriever (the command below, with a retriever of yours).")
        widgets.command("emb-s eval --workspace", path, "--retriever SPEC")
    else:
        c1, c2 = st.columns(2)
        with c1:
            run_a = state.selectbox("Run A", run_names, "a", default=run_names[0])
        with c2:
            others = [r for r in run_names if r != run_a]
            run_b = state.selectbox("Run B", others, "b", default=others[0])
        c3, c4 = st.columns(2)
        with c3:
            x = state.selectbox("Columns", ["scale", "rung"], "x", default="scale",
                                format_func=lambda s: {"scale": "scales (domain rungs pooled)",
                                                       "rung": "every rung"}[s])
        with c4:
            twin = st.toggle("Benign twin beside each point (hollow)", value=state.get("twin", "1") == "1",
                             key="url_twin", help="The same pair on the benign twin ladder, drawn on its built "
                                                  "column; off: left out of the figure and the table.")
        state.put(twin=None if twin else "0")
        pq = data.filtered(path, v, domains, tasks, sources, tags)
        common, only = report.ranked_rungs(pq, run_a, run_b, data.columns_in_order(lad, pq, "rung"))
        shown, only_shown = report.ranked_rungs(report.pooled(pq, x, twin), run_a, run_b,
                                                data.columns_in_order(lad, pq, x))
        empty = run_state.empty_runs(data.run_states(path, v), [run_a, run_b])
        if empty:
            st.warning(f"{' and '.join(md(e) for e in empty)} {'has' if len(empty) == 1 else 'have'} no results yet (the run is "
                       "registered but empty): evaluate it first, or pick another run.")
        elif not common:
            st.warning(f"{md(run_a)} and {md(run_b)} share no rung with rankings under the current filters.")
        else:
            if only_shown:
                st.caption(f"{'Rungs' if x == 'rung' else 'Scales'} only one run has (left out): "
                           + ", ".join(md(o) for o in only_shown))
            widgets.run_notes(path, v, [run_a, run_b])
            note = report.compare_note(report.pooled(pq, x, twin), run_a, run_b, shown)
            if note:
                st.caption(md(note))
            tests = data.paired(path, v, run_a, run_b, metric, tuple(shown), domains, tasks, sources, tags, x, twin)
            m = metrics.metric(metric)
            built = tests[tests["ladder"] != "benign"]["column"].tolist()
            cap = style.caption(widgets.bank_name(path), built, m.k, int(tests["n"].max()) if len(tests) else 0,
                                unit=x, extra=" · ".join(part for part in (
                                    "hollow: benign twin" if (tests["ladder"] == "benign").any() else None,
                                    run_state.caption_mark(data.run_states(path, v), [run_a, run_b])) if part)
                                or None)
            fig = compare.deltas(tests, run_a, run_b, metric, caption=cap, x=x)
            st.plotly_chart(fig, theme=None, key="deltas", width="stretch")
            widgets.figure_downloads(fig, f"delta_{run_a}_vs_{run_b}_{metric}", "deltas")
            widgets.table(tests)
            widgets.table_downloads(tests, f"paired_{run_a}_vs_{run_b}_{metric}", "paired")
            fig2 = compare.win_loss(tests, run_a, run_b, caption=cap, x=x)
            st.plotly_chart(fig2, theme=None, key="winloss", width="stretch")
            widgets.figure_downloads(fig2, f"winloss_{run_a}_vs_{run_b}_{metric}", "winloss")

            st.markdown("**Queries one run gets and the other misses**")
            rung = state.selectbox("At rung", common, "rung", default=views.default_rung(common))
            a_better, b_better = report.side_by_side(pq, run_a, run_b, rung, metric,
                                                     texts=data.queries(path, v)["text"])
            better = "higher" if m.higher_is_better else "lower"
            for title, part, missing in ((f"{run_a} better", a_better, run_b), (f"{run_b} better", b_better, run_a)):
                st.markdown(f"*{md(title)}* — {len(part):,} queries ({better} {md(metric)} is better)")
                if len(part):
                    st.dataframe(part, hide_index=True, width="stretch")
                    widgets.table_downloads(part, f"{title}_{rung}", f"side_{title}")
                    st.text(f"Case lists: the cases of {missing}, the run that misses these queries.")
                    cases.case_downloads(case_lists.rows_of(pq, missing, rung, part["qid"].tolist()), path, v,
                                         f"{missing}_misses_{rung}", f"side_{title}")
                    st.page_link("pages/3_Query_drilldown.py", label="Open one in the drill-down →",
                                 query_params=state.carried(by="search", q=part["qid"].iloc[0],
                                                            run=run_a, rung=rung))

with tab_live:
    if lad is None:
        st.info("Live querying searches a rung: build the ladder first (the command below).")
        widgets.command("emb-s ladder build --workspace", path)
    else:
        systems = data.run_table(path, v)
        retriever_runs = systems[systems["kind"] == "retriever"]["system"].dropna().tolist()
        # the workspace's own evaluated retrievers first (their vectors are cached), MiniLM-L6 offered last
        specs = list(dict.fromkeys(["bm25", *retriever_runs, "dense:minilm-l6"]))
        text = st.text_input("Question", value=state.get("live", "") or "", key="url_live",
                             placeholder="type a question and press Enter")
        c1, c2, c3 = st.columns([3, 2, 1])
        with c1:
            chosen = state.multiselect("Retrievers", specs, "specs", default=specs[:2])
        with c2:
            searchable = list(views.ladder_in_view(lad).searchable)  # a typed question has no twin pool
            rung = st.selectbox("Rung", searchable, index=state.index_of(searchable, views.default_rung(searchable)),
                                key="live_rung", help="rungs of the built (or official) ladder; the benign twin's "
                                "pools are made for the bank's own queries")
        with c3:
            k = st.number_input("K", 1, 50, 10, key="live_k")
        state.put(live=text)
        ws, _ = data.workspace(path)
        with widgets.guard():
            costs = {spec: evaluate.live_cost(ws, spec) for spec in chosen}
        allowed = st.session_state.setdefault("live_allowed", set())  # (workspace, spec) the user said go for
        for spec, cost in costs.items():  # what each costs, said before anything runs
            if cost.state == evaluate.READY or not cost.note:
                continue
            (st.warning if cost.state == evaluate.EMBEDS else st.caption)(md(cost.note))
            if not cost.at_once and (path, spec) not in allowed:
                if st.button(f"Try {spec} anyway: it loads the model ({evaluate.about(evaluate.MODEL_LOAD_S)}), then "
                             "refuses if the vectors are not cached", key=f"live_go_{spec}"):
                    allowed.add((path, spec))
        ready = [s for s in chosen if costs[s].at_once or (path, s) in allowed]
        if text.strip() and ready:
            meta = data.documents_meta(path, v)
            cols = st.columns(len(ready))
            for col, spec in zip(cols, ready):
                with col:
                    t0 = time.perf_counter()
                    try:
                        with st.spinner(f"{md(spec)}: {md(costs[spec].note)}…"):
                            ranked = evaluate.live_query(ws, spec, text, rung, k=int(k))
                    except EmbSError as exc:  # one bad spec must not hide the other rankings
                        st.markdown(f"**{md(spec)}**")
                        st.error(md(data.hide_root(exc)))
                        continue
                    ms = (time.perf_counter() - t0) * 1000
                    st.markdown(f"**{md(spec)}** · {ms:.0f} ms")
                    shown = drilldown.with_documents(ranked, meta)
                    st.dataframe(shown, hide_index=True, width="stretch")

        st.divider()
        st.markdown("**What if a bank query read differently?** Pick one, edit it, and see where its gold and hard "
                    "negatives land on every rung, beside the stored ranks")
        qs = data.queries(path, v)
        on_ladder = set(kept.evaluated(lad))  # only queries the ladder kept have rungs to search
        qids = [q for q in qs.index if q in on_ladder]
        if len(qids) < len(qs):
            st.caption(f"{len(qids):,} of {len(qs):,} bank queries are on the ladder (the others were left out when "
                       "it was built: the Ladder page says why).")
        pick = st.selectbox("Bank query", qids, index=state.url_index("q", qids), key="whatif_pick",
                            format_func=lambda q: f"{q} · {qs.loc[q, 'text'][:90]}")
        if pick:
            state.put(q=pick)
            whatif.box(path, v, pick, "compare")
