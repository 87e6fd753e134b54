"""Home: pick a workspace, see its bank at a glance; on a fresh machine build the demo workspace first.

The demo build is a background job of the server process (ui.jobs): closing the tab does not stop it, the page shows
its true stage and fraction, and the results that exist are shown as soon as the ladder is built (bm25's runs
first, the dense runs joining as they finish)."""
from __future__ import annotations

from pathlib import Path

import streamlit as st

from emb_s_core import demo
from emb_s_core import ladder as ladder_mod
from emb_s_core.analysis import bank_summary, kept, run_state
from emb_s_core.tokens import format_short
from ui import data, first_start, jobs, navigation, state, widgets
from ui.safe import md

st.title("EMB-S Diagnostics")
st.caption("Evidence access under semantic interference — after EverMemBench-S (arXiv 2601.20276): does a "
           "retriever still find the gold evidence as the searchable pool grows and fills with near-misses?")


DEMO = first_start.demo_dir()
DEMO_RETRIEVERS = first_start.demo_retrievers()
start_demo = first_start.start_demo  # the server starts it at start-up (ui.serve); here when it did not


def demo_version() -> int | None:
    return data.version(str(DEMO)) if (DEMO / "workspace.json").is_file() else None


@st.fragment(run_every=1.0)
def demo_progress(version_seen: int | None, running_seen: bool) -> None:
    """The running build's step and stage, with the step's own done/total, rate, ETA and elapsed time (ui.jobs'
    meter), refreshed every second; the whole page reruns when the build commits something new (a finished batch or
    run shows up at once) or ends."""
    job = jobs.get(str(DEMO))
    if job is None:
        return
    if job.running:
        n = len(demo.steps(DEMO_RETRIEVERS))
        step = demo.step_of(job.stage, DEMO_RETRIEVERS)
        st.progress(job.fraction, text=f"Building the demo workspace in the background, step {step or 1} of {n}: "
                                       f"{md(job.stage)} — {md(job.meter.describe())}. Closing this tab does not "
                                       "stop it.")
    elif job.error:
        st.error(f"The demo build stopped: {md(data.hide_root(job.error))}")
    if demo_version() != version_seen or job.running != running_seen:
        st.rerun()


if first_start.is_fresh() and not state.get("ws"):
    start_demo()
    state.put(ws=data.link_name(str(DEMO)))

building = jobs.get(str(DEMO))
if building is not None and building.running and state.get("ws") == data.link_name(str(DEMO)):
    # said on every run while the build goes on (a rerun when its first commit lands must not drop it)
    st.info("The demo workspace is being built in the background: the demo bank, its ladder and the offline "
            "retrievers' runs (bm25 in about a minute on two cores, the dense runs of the static model distilled "
            "from MiniLM-L6 shortly after); results appear here as they land.")
if building is not None and (building.running or building.error):
    demo_progress(demo_version(), building.running)
    if demo_version() is None or not ladder_mod.exists(data.workspace(str(DEMO))[0]):
        st.stop()  # nothing to show until the bank and its ladder exist

picked = widgets.pick_workspace()
assert picked is not None
path, v = picked
with widgets.guard():
    info = data.info(path, v)
    lad = data.get_ladder(path, v)
    runs = data.run_table(path, v)

is_demo = Path(path).resolve() == DEMO.resolve()
here = jobs.get(str(DEMO) if is_demo else str(path))
building_here = here is not None and here.running  # a background build is writing this workspace right now
if is_demo:  # a demo build that was interrupted resumes from where it stopped
    if not building_here and not demo.is_complete(data.workspace(path)[0], DEMO_RETRIEVERS):
        st.warning("The demo workspace is not finished (an earlier build was interrupted).")
        if st.button("Finish building the demo", key="finish_demo"):
            start_demo()
            st.rerun()

st.subheader(f"Workspace {md(widgets.bank_name(path), one_line=True)}")
c = st.columns(6)
c[0].metric("Documents", f"{info['documents']:,}")
c[1].metric("Text tokens", format_short(info["tokens"]), help=md(bank_summary.tokens_help(info, lad)))
n_eval = kept.n_evaluated(lad)
c[2].metric("Queries", f"{n_eval if n_eval is not None else info['queries']:,}",
            help=(f"{n_eval:,} of the bank's {info['queries']:,} queries are evaluated: the ladder keeps those whose "
                  "gold fits the base rung, the official ladder those whose gold is in every published scale (see "
                  "Ladder)") if n_eval is not None else "no ladder yet")
c[3].metric("Single / multi-source", f"{info['single_source_queries']:,} / {info['multi_source_queries']:,}")
c[4].metric("Rungs", bank_summary.rung_count(lad),
             help="the ladder's rungs; the benign twin's (the same rungs, near misses removed) are counted apart")
c[5].metric("Runs", f"{len(runs)}")

COUNTS = {col: st.column_config.NumberColumn(format="localized")  # 12,345 (thousands separated)
          for col in (bank_summary.TEXT_TOKENS, "queries", "documents")}
left, right = st.columns(2)
with left:
    st.markdown("**Domains**")
    st.dataframe(bank_summary.domains(info), hide_index=True, width="stretch", column_config=COUNTS)
with right:
    st.markdown("**Sources**")
    st.dataframe(bank_summary.sources(info), hide_index=True, width="stretch", column_config=COUNTS)

st.markdown("**Runs**")
if runs.empty and building_here:
    st.info("No run has finished yet: the background build is evaluating the retrievers; they appear here as they "
            "land.")
elif runs.empty:
    st.info("This workspace has no runs yet: evaluate a retriever with the command below, then reload.")
    widgets.command("emb-s eval --workspace", path, "--retriever bm25")
else:
    states = data.run_states(path, v)
    st.dataframe(run_state.annotate(runs, states), hide_index=True, width="stretch")
    unfinished = run_state.not_complete(states)
    if len(unfinished):
        st.caption("Not complete: " + "; ".join(f"{md(r.run)} ({md(r.label)})" for r in unfinished.itertuples())
                   + (". The background build is still running them." if building_here else
                      ". Rerunning the same command resumes a run."))
if lad is None:
    st.warning("No ladder yet: build it with the command below.")
    widgets.command("emb-s ladder build --workspace", path)
else:
    for msg in bank_summary.warnings(lad):  # the build's other notes are on the Ladder page
        st.warning(md(msg))

st.markdown("**Pages**")
for page in navigation.pages()[1:]:  # every page but Home, from the same list as the navigation
    st.page_link(str(page.path), label=page.title)
    st.caption(page.summary)
