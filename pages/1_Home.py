"""Home: pick a workspace, see its bank at a glance; on a fresh machine build the demo workspace first."""
from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import streamlit as st

from emb_s_core import demo
from ui import data, navigation, state, widgets

st.title("EMB-S Diagnostics")
st.caption("Evidence access under semantic interference — after EverMemBench-S (arXiv 2601.20276): does a "
           "retriever still find the gold evidence as the searchable pool grows and fills with near-misses?")


def build_demo() -> None:
    """Build the demo workspace with a visible progress bar (``emb_s_core.demo``), then show it.

    ``EMB_S_DEMO_TOKENS`` sets a smaller bank and ``EMB_S_DEMO_RETRIEVERS`` (comma-separated specs) fewer retrievers,
    for tests and quick looks; the defaults are the demo's own.
    """
    bar = st.progress(0.0, text="Building the demo workspace…")

    def progress(stage: str, fraction: float) -> None:
        bar.progress(min(max(float(fraction), 0.0), 1.0), text=f"Building the demo workspace: {stage}")

    target = data.data_dir() / "demo"
    tokens = int(os.environ["EMB_S_DEMO_TOKENS"]) if os.environ.get("EMB_S_DEMO_TOKENS") else None
    specs = tuple(s for s in os.environ.get("EMB_S_DEMO_RETRIEVERS", "").split(",") if s.strip())
    with widgets.guard():
        demo.build(target, tokens=tokens, progress=progress, **({"retrievers": specs} if specs else {}))
    bar.progress(1.0, text="Demo workspace ready.")
    state.put(ws=str(target))
    st.rerun()


if not data.list_workspaces() and not state.get("ws"):
    st.info(f"No workspace under {data.data_dir()} yet: building the demo bank, its ladder and the offline "
            "retrievers' runs (a few minutes on two cores, once).")
    build_demo()

picked = widgets.pick_workspace()
assert picked is not None
path, v = picked
with widgets.guard():
    info = data.info(path, v)
    lad = data.get_ladder(path, v)
    runs = data.run_table(path, v)

if Path(path) == data.data_dir() / "demo":  # a demo build that was interrupted resumes from where it stopped
    if not demo.is_complete(data.workspace(path)[0]):
        st.warning("The demo workspace is not finished (an earlier build was interrupted).")
        if st.button("Finish building the demo", key="finish_demo"):
            build_demo()

st.subheader(f"Workspace `{widgets.bank_name(path)}`")
c = st.columns(6)
c[0].metric("Documents", f"{info['documents']:,}")
c[1].metric("Tokens", f"{info['tokens']:,}", help=f"counted with {info['encoding']}")
c[2].metric("Queries", f"{info['queries']:,}")
c[3].metric("Single / multi-source", f"{info['single_source_queries']:,} / {info['multi_source_queries']:,}")
c[4].metric("Rungs", f"{len(lad.rungs) if lad else 0}")
c[5].metric("Runs", f"{len(runs)}")

left, right = st.columns(2)
with left:
    st.markdown("**Domains**")
    dom = pd.DataFrame({"domain": list(info["tokens_per_domain"]),
                        "tokens": list(info["tokens_per_domain"].values())})
    dom["queries"] = dom["domain"].map(info["queries_per_domain"]).fillna(0).astype(int)
    st.dataframe(dom, hide_index=True, width="stretch")
with right:
    st.markdown("**Sources**")
    src = pd.DataFrame(info["sources"]) if info["sources"] else pd.DataFrame(
        {"source": list(info["documents_per_source"]), "documents": list(info["documents_per_source"].values())})
    st.dataframe(src.drop(columns=[c for c in ("sha256", "path") if c in src]), hide_index=True, width="stretch")

st.markdown("**Runs**")
if runs.empty:
    st.info("This workspace has no runs yet: evaluate a retriever with "
            "`emb-s eval --workspace DIR --retriever bm25`, then reload.")
else:
    st.dataframe(runs[["run", "kind", "system", "created_at"]], hide_index=True, width="stretch")
if lad is None:
    st.warning("No ladder yet: build it with `emb-s ladder build --workspace DIR`.")
else:
    for msg in lad.messages:
        st.caption(msg)

st.markdown("**Pages**")
for page in navigation.pages()[1:]:  # every page but Home, from the same list as the navigation
    st.page_link(str(page.path), label=page.title)
    st.caption(page.summary)
