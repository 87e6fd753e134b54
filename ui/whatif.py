"""The "what if" box of the drill-down and Compare pages: edit a bank query's text, see every live retriever's rank
of each gold and hard negative on every rung beside the stored ranks (``analysis.whatif``), as one types.

Why a fragment: typing reruns only this box (``live`` commits after a short pause), not the page around it, so a
keystroke costs the re-ranking and one table. The edited text lives in the session only; saving it writes a note on
the case through the notes machinery (under the workspace lock), never the bank.
"""
from __future__ import annotations

import time

import numpy as np
import streamlit as st

from emb_s_core import evaluate, notes
from emb_s_core.analysis import kept, whatif
from emb_s_core.ladder import BENIGN
from ui import cases, data
from ui.safe import md

PAUSE = "300ms"  # commit after this typing pause (Streamlit's live text input)
NOTE_PREFIX = "What if the query read: "


def pools(path: str, v: int, qid: str) -> dict[str, np.ndarray]:
    """The query's rungs (every ladder kind but the per-query benign twin), in ladder order, with their members."""
    lad = data.get_ladder(path, v)
    if lad is None:
        return {}
    return {r.name: r.doc_ids for r in lad.rungs if r.ladder != BENIGN and qid in set(r.qids)}


@st.cache_resource(max_entries=64, show_spinner=False)
def _ranks(path: str, v: int, qid: str, text: str) -> whatif.WhatIf:
    """``analysis.whatif.what_if`` for one (query, text), cached: the page redrawn for any other widget (or a second
    visitor) re-uses it; only a new text re-ranks."""
    query = data.queries(path, v).loc[qid]
    gold = [int(d) for d in query["ref_ids"]]
    negs = [int(d) for d in (query["hard_negative_ids"] if query["hard_negative_ids"] is not None else [])]
    ws, _ = data.workspace(path)
    return whatif.what_if(lambda spec: evaluate.prepared(ws, spec), text, gold, negs, pools(path, v, qid),
                          whatif.specs_of(data.run_table(path, v)), data.query_results(path, v, qid))


@st.fragment
def box(path: str, v: int, qid: str, key: str) -> None:
    """Draw the box for bank query ``qid``; ``key`` keeps two pages' widgets apart."""
    query = data.queries(path, v).loc[qid]
    st.caption("Rephrase the query and watch each gold and hard negative move, on every rung, for BM25 and every "
               "retriever whose vectors are cached. The edit is a what-if: the bank keeps its text.")
    text = st.text_input("Query text (edited)", value=str(query["text"]), key=f"whatif_{key}_{qid}", live=PAUSE)
    rungs = pools(path, v, qid)
    if not rungs:
        why = kept.absent_reason(data.get_ladder(path, v), qid) or "it is on no rung the what-if can search"
        st.info(f"The what-if searches the query's rungs, and {md(qid, one_line=True)} is on none: {md(why)}.")
        return
    if not text.strip():
        st.info("Type the query text to try.")
        return
    if text.strip() == str(query["text"]).strip():
        # nothing is prepared until the first edit: on a large bank BM25 indexes the bank (tens of seconds at 10M
        # tokens, once per server), which must not delay every first opening of the page
        st.caption("Edit the text above: the ranks under the edited text appear here, beside the stored ones "
                   "(the first edit after a server start loads each retriever's index once).")
        return
    ws, _ = data.workspace(path)
    t0 = time.perf_counter()
    with st.spinner("Loading each retriever's cached index once, then milliseconds per edit…"):
        result = _ranks(path, v, qid, text)
    shown = whatif.table(result)
    took = time.perf_counter() - t0
    st.markdown("**Ranks under the edited text** · "
                f"{len(result.seconds)} retriever(s) · {took * 1000:.0f} ms")
    st.dataframe(shown, hide_index=True, width="stretch", key=f"whatif_table_{key}")
    st.caption(whatif.LEGEND)
    for spec, why in result.skipped.items():
        st.caption(f"{md(spec)} left out: {md(why, one_line=True)}")
    saved = f"_whatif_saved_{key}_{qid}"
    if st.session_state.pop(saved, None):
        st.success("Saved as a note on this query (the bank keeps its text).")
    if st.button("Save the edited query as a note on this case", key=f"whatif_save_{key}_{qid}"):
        current = data.case_note(path, v, qid, None, None) or {}
        body = "\n".join(p for p in (current.get("text") or "", NOTE_PREFIX + text.strip()) if p)
        tags = list(current.get("tags") or [])
        # the notes machinery: one transaction under the workspace lock, a "busy" warning instead of waiting
        if cases.without_waiting(ws, lambda: notes.save(ws, qid, tags, body)):
            st.session_state[saved] = True
            st.rerun(scope="app")  # the note editor above the box shows the new note
