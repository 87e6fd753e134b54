"""Bank audit: the collision-test verdicts (paper §3.3 Stage III) — how many candidates were labeled Conflict / Hard
Negative / False Negative, each query's candidates next to its gold evidence with the model's rationale, filters, and
the verdict table for papers (CSV / LaTeX). Texts are shown escaped (st.text), never as HTML or markdown."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from emb_s_core import collide
from emb_s_core import ladder as ladder_mod
from emb_s_core.analysis import audit
from ui import data, state, widgets
from ui.safe import md


@st.cache_data(max_entries=8, show_spinner=False)
def audit_table(path: str, v: int) -> pd.DataFrame:
    """``analysis.audit.table``: every stored verdict joined with its query, cached per workspace version."""
    ws, _ = data.workspace(path)
    return audit.table(ws)


def _shown(doc: dict) -> str:
    text = ((doc.get("title") or "") + "\n" + (doc.get("text") or "")).strip()
    return text or "(document not in the bank)"


st.title("Bank audit")
path, v = widgets.pick_workspace()
with widgets.guard():
    ws, _ = data.workspace(path)
    table = audit_table(path, v)
    stale = ladder_mod.stale_reason(ws)
if stale:
    st.warning(f"The ladder is stale: {md(stale)}. Rebuild it with the command below.")
    widgets.command("emb-s ladder build --workspace", path)
if table.empty:
    st.info("No collision verdicts in this workspace yet. Run the command below with a model of yours "
            "(e.g. --model local/smollm2-135m offline, a plumbing check only: use a real model for verdicts) "
            "to label each query's nearest non-reference documents.")
    widgets.command("emb-s collide --workspace", path, "--model MODEL")
    st.stop()

labelers = sorted(table["labeler"].unique())
labeler = state.selectbox("Labeler (model · prompt)", labelers, "labeler") if len(labelers) > 1 else labelers[0]
t = table[table["labeler"] == labeler]

counts = collide.counts(t)
cols = st.columns(len(counts) + 1)
cols[0].metric("Queries tested", f"{t['qid'].nunique():,}")
for col, (name, n) in zip(cols[1:], counts.items()):
    col.metric(name, f"{n:,}")
last = audit.last_applied(ws)
if last:
    st.caption(f"Applied from version {last['from_version']} ({md(last['model'])}, {md(last['prompt_version'])}): "
               f"{last['hard_negatives_added']} hard negatives added, {last['false_negatives_added']} false negatives "
               f"added to RefLists, {last['retired']} queries retired.")

with st.sidebar:
    st.markdown("**Filters**")
    present = [s for s in audit.VERDICTS if s in set(t["verdict"])]
    verdict_filter = state.multiselect("Verdict", present, "verdict", placeholder="all verdicts")
    domain_filter = state.multiselect("Domain", sorted(t["domain"].dropna().unique()), "domain",
                                      placeholder="all domains")
    search = st.text_input("Query contains (text or qid)", value=state.get("q") or "", key="audit_search")
    state.put(q=search or None)
f = audit.select(t, verdict_filter, domain_filter, search)

st.subheader(f"Verdicts ({len(f):,} of {len(t):,} candidates)")
shown = f[audit.SHOWN].reset_index(drop=True)
st.dataframe(shown, hide_index=True, width="stretch")
widgets.table_downloads(shown, "collision_verdicts", "verdicts")

qids = list(dict.fromkeys(f["qid"]))
if not qids:
    st.info("No verdict matches these filters.")
    st.stop()
st.subheader("One query: gold evidence and candidates side by side")
qid = state.selectbox("Query", qids, "qid")
rows, refs = audit.candidates(f, qid)
head = rows.iloc[0]
st.text(f"{qid}: {head['query']}")
st.text(f"Answer: {head['answer']}" + ("   (retired: Conflict)" if bool(head["retired"]) else ""))
texts = data.document_texts(path, v, tuple(sorted(set(refs) | set(int(d) for d in rows["doc_id"]))))
left, right = st.columns(2)
with left:
    st.markdown("**Gold evidence (RefList)**")
    for d in refs:
        doc = texts.get(d, {})
        st.caption(f"doc {d} · {md(doc.get('source', ''))} · {md(doc.get('domain', ''))}")
        st.text(_shown(doc))
with right:
    st.markdown("**Nearest non-reference candidates**")
    for r in rows.itertuples(index=False):
        doc = texts.get(int(r.doc_id), {})
        st.caption(f"rank {r.rank} · doc {r.doc_id} · similarity {float(r.similarity):.3f} · {md(r.verdict)}")
        st.text(_shown(doc))
        st.text(f"Rationale: {r.rationale or '—'}")
