"""Access vs use: for one access run (retrieval or localization), one QA run and one judge, each query on each rung
falls in one quadrant — evidence reached or not, answer good or not (DESIGN.md §1). The figure and its caption
come from emb_s_core.analysis.access_use, the same as ``emb-s diagnose --figure``."""
from __future__ import annotations

import streamlit as st

from emb_s_core import diagnose, metrics, qa
from emb_s_core import judge as judge_mod
from emb_s_core.analysis import access_use
from ui import cases as case_ui
from ui import data, state, widgets
from ui.safe import md

st.title("Access vs use")
path, v = widgets.pick_workspace()


@st.cache_resource(max_entries=16, show_spinner="Placing every answered query in its quadrant…")
def quadrants(path: str, v: int, access: str, qa_run: str, judge: str, k: int, t_a: float, t_u: float,
              tags: tuple[str, ...]):
    from emb_s_core import notes

    ws, _ = data.workspace(path)
    df = diagnose.quadrants(ws, access, qa_run, judge=judge, k=k, access_threshold=t_a, score_threshold=t_u)
    return notes.filter_by_tags(df, data.notes(path, v), tags)


ws, _ = data.workspace(path)
with widgets.guard():
    qa_runs = qa.list_qa_runs(ws)
    access_runs = data.run_table(path, v)["run"].tolist()
if qa_runs.empty or not access_runs:
    st.info("Access vs use needs a retrieval (or localization) run and a QA run with judgments: "
            "`emb-s eval`, then `emb-s qa` and `emb-s judge` on this workspace.")
    st.stop()

c1, c2, c3 = st.columns(3)
with c1:
    access = state.selectbox("Access run", access_runs, "run")
with c2:
    qa_run = state.selectbox("QA run", qa_runs["qa_run"].tolist(), "qa")
with widgets.guard():
    judged = judge_mod.load_judgments(ws, qa_runs=[qa_run])
judges = list(dict.fromkeys([judge_mod.REFERENCE, *judged["judge"].dropna().astype(str).tolist()])) \
    if "judge" in judged else [judge_mod.REFERENCE]
with c3:
    judge = state.selectbox("Judge", judges, "judge", default=diagnose.default_judge(judges))
widgets.run_notes(path, v, [access])
with st.sidebar:
    st.markdown("**Thresholds**")
    k = int(state.selectbox("K (evidence in the top-K)", [str(x) for x in metrics.KS], "k", default="10"))
    t_a = st.slider("accessed when SR@K ≥", 0.0, 1.0, float(state.number("ta", 1.0, 0.0, 1.0)), 0.05, key="url_ta")
    t_u = st.slider("answered well when judge score ≥", 0, 5, int(state.number("tu", 4, 0, 5, integer=True)), 1,
                    key="url_tu")
    state.put(ta=t_a, tu=t_u)
st.caption(f"Accessed ⇔ SR@{k} ≥ {t_a:g}; answered well ⇔ {md(judge)} score ≥ {t_u} (0–5). Cells without a ranking, "
           "an answer or a judgment are counted as excluded, never as failures.")

with widgets.guard():
    df = quadrants(path, v, access, qa_run, judge, k, t_a, t_u, widgets.tag_filter(path, v))
    for note in diagnose.bank_notes(ws, access, qa_run):  # runs made before a bank edit: plain text, never Markdown
        st.text(note)
    for line in access_use.plumbing_checks(ws, access, qa_run, judge):  # the offline demo model measures nothing
        st.warning(md(line))
if df.empty:
    st.info(f"{md(qa_run)} has no answers yet.")
    st.stop()
by = state.selectbox("Break down by", list(diagnose.BREAKDOWNS), "split", default="rung")
summary = diagnose.summary(df, by=(by,))
fig = access_use.figure(df, summary, bank=widgets.bank_name(path), access_run=access, qa_run=qa_run, judge=judge,
                        k=k, access_threshold=t_a, score_threshold=t_u, by=by)
st.plotly_chart(fig, theme=None, key="access_use", width="stretch")
widgets.figure_downloads(fig, f"access_use_{access}_{qa_run}", "access_use")
st.dataframe(summary, hide_index=True, width="stretch")
widgets.table_downloads(summary, f"access_use_{by}", "access_use_table")
# a judge is only as good as its measured agreement with human labels: shown beside its scores, as plain text
with widgets.guard():
    for shown in diagnose.judges_to_compare(judge, judges):
        for line in diagnose.agreement_lines(ws, shown, t_u):
            st.text(line)

st.subheader("Cases")
quadrant = state.selectbox("Quadrant", list(diagnose.CASE_LISTS), "quadrant", default=diagnose.USE_FAILURE,
                           format_func=diagnose.CASE_LABELS.get)
cases = diagnose.cases(df, quadrant)
st.caption(f"{len(cases):,} (rung, query) cells")
if len(cases):
    shown = cases[["rung", "qid", *(["reason"] if quadrant == diagnose.EXCLUDED else []), "domain", "sr", "score",
                   "answer"]]
    st.dataframe(shown, hide_index=True, width="stretch")
    widgets.table_downloads(shown, f"cases_{quadrant}", "cases")
    # the same cells as a case list (links, tags, notes; importable as a tag): the access run's cases at each rung
    case_ui.case_downloads(cases.assign(run=access), path, v, f"{quadrant}_{access}_{qa_run}", "quadrant")
    with st.expander("Label an answer right or wrong (joins this workspace's labelled set)"):
        keys = list(zip(cases["rung"], cases["qid"]))
        pick = st.selectbox("Case", range(len(keys)), format_func=lambda i: f"{keys[i][0]} · {keys[i][1]}",
                            key="label_case")
        st.text(f"answer: {cases['answer'].iloc[pick]}")
        # never waits behind a running eval: a busy workspace names the writer and keeps the choice
        if case_ui.label_form(ws, qa_run, keys[pick][0], keys[pick][1], "label"):
            st.success("Label saved: it counts in the agreement figures above from the next refresh.")
    st.page_link("pages/3_Query_drilldown.py", label=f"Open {md(cases['qid'].iloc[0], one_line=True)} in the drill-down →",
                 query_params=state.carried(by="search", q=cases["qid"].iloc[0], run=access,
                                            rung=cases["rung"].iloc[0]))
