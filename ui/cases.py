"""Page furniture for cases: the tags + note editor of the drill-down, case-list downloads of any list of per-query
rows, and importing a colleague's case list as a tag. Writes go through ``emb_s_core.notes`` (one transaction each);
everything from the workspace is shown as text (widget values and dataframes, never Markdown)."""
from __future__ import annotations

from typing import Callable
from urllib.parse import urlsplit

import pandas as pd
import streamlit as st

from emb_s_core import notes
from emb_s_core.analysis import cases
from emb_s_core.store import Workspace, WorkspaceBusy
from ui import data, state, widgets

_SAVED = "_note_saved"


def base_url() -> str:
    """Where this dashboard is served (scheme, host and any path prefix), for the links in exported case lists."""
    url = getattr(st.context, "url", None) or ""
    parts = urlsplit(url)
    if not parts.scheme or not parts.netloc:
        return cases.DEFAULT_BASE_URL
    prefix = parts.path.rstrip("/").rsplit("/", 1)[0] if parts.path.count("/") > 1 else ""
    return f"{parts.scheme}://{parts.netloc}{prefix}"


def note_editor(path: str, v: int, qid: str, run: str | None, rung: str | None) -> None:
    """Tags (the workspace's tags offered, new ones typed) and a note for this query, or for this query at the
    run and rung being looked at; saved in one transaction, then the page reloads on the new version."""
    if st.session_state.pop(_SAVED, None):
        st.success("Note saved.")
    scopes: list[tuple[str | None, str | None]] = [(None, None)] + ([(run, rung)] if run and rung else [])
    labels = ["this query (any run, any rung)"] + ([f"this query for {run} at {rung}"] if run and rung else [])
    pick = st.selectbox("Note on", range(len(scopes)), index=len(scopes) - 1, format_func=labels.__getitem__,
                        key="note_scope")
    case_run, case_rung = scopes[pick]
    nid = notes.note_id(qid, case_run, case_rung)
    current = data.case_note(path, v, qid, case_run, case_rung)
    mine = list(current["tags"]) if current else []
    offered = list(dict.fromkeys([*mine, *data.tags(path, v)]))
    tags = st.multiselect("Tags", offered, default=mine, accept_new_options=True, key=f"note_tags_{nid}_{v}",
                          placeholder="pick a tag or type a new one")
    text = st.text_area("Note", value=current["text"] if current else "", key=f"note_text_{nid}_{v}",
                        max_chars=notes.MAX_TEXT, placeholder="what you see in this case")
    c1, c2, _ = st.columns([1, 1, 4])
    ws, _ = data.workspace(path)
    if c1.button("Save note", key="note_save", type="primary"):
        if without_waiting(ws, lambda: notes.save(ws, qid, tags, text, run=case_run, rung=case_rung)):
            st.session_state[_SAVED] = True
            st.rerun()
    if current and c2.button("Delete note", key="note_delete"):
        if without_waiting(ws, lambda: notes.delete(ws, qid, case_run, case_rung)):
            st.rerun()
    here = data.notes(path, v)
    here = here[here["qid"] == qid]
    if len(here):
        st.caption(f"{len(here)} note(s) on this query")
        st.dataframe(here[["run", "rung", "tags", "text", "updated_at"]], hide_index=True, width="stretch")


def without_waiting(ws: Workspace, write: Callable[[], object]) -> bool:
    """Run a dashboard write (note, tag, label) at once or not at all: an `emb-s eval` holds the writer lock for its whole run, and a page
    waiting behind it would hang for minutes. A busy workspace is a warning naming the writer; what was typed stays
    in the form to be saved again."""
    with widgets.guard():  # any other problem (a bad tag, ...) is an error box, as everywhere
        try:
            with ws.writer(wait=False):
                write()
        except WorkspaceBusy:  # its message names the server's path, the writer's pid and command: not for visitors
            st.warning("Not saved: another command is writing this workspace right now. What you typed is still "
                       "here; save again when it has finished.")
            return False
    return True


def label_form(ws: Workspace, qa_run: str, rung: str, qid: str, key: str) -> bool:
    """Right / wrong, a note and Save for one stored answer: the label joins the workspace's labelled set
    (``labels.add_label``), never waiting behind a running eval. True when it was saved."""
    from emb_s_core import labels

    verdict = st.radio("The answer is", ["right", "wrong"], horizontal=True, key=f"{key}_verdict")
    note = st.text_input("Note (optional)", key=f"{key}_note")
    if st.button("Save label", key=f"{key}_save"):
        return without_waiting(ws, lambda: labels.add_label(ws, qa_run, rung, qid, verdict == "right", note))
    return False


def answers_and_labels(path: str, v: int, qid: str) -> None:
    """The drill-down's answers to one query: each QA run's reply per rung (text), every judge's score, the label
    and whether a judge disagrees with it, and a form to label one. Reads nothing when the workspace has no QA run."""
    if not data.has_qa_answers(path, v):
        return
    threshold = int(state.number("tu", 4, 0, 5, integer=True))
    with widgets.guard():
        rows = data.query_answers(path, v, qid, float(threshold))
    if rows.empty:
        return
    cells = list(dict.fromkeys(zip(rows["qa_run"], rows["rung"])))
    with st.expander(f"Answers to this query ({len(cells)}) and their judges: label them right or wrong"):
        st.caption(f"A judge credits an answer when its score is ≥ {threshold} (0–5); a label joins this "
                   "workspace's labelled set, which measures every judge that scored the answer.")
        for (qa_run, rung), one in rows.groupby(["qa_run", "rung"], sort=False):
            first = one.iloc[0]
            label = first["label"]
            scored = one[one["judge"].notna()]
            judged = "; ".join(f"{j} {s:.1f}" if pd.notna(s) else f"{j} unparseable"
                               for j, s in zip(scored["judge"], scored["score"])) or "not judged"
            against = [str(j) for j, d in zip(one["judge"], one["disagrees"]) if d is True]
            verdict = "unlabelled" if label is None else f"labelled {'right' if label else 'wrong'}"
            if against:
                verdict += f", judge {', '.join(against)} disagrees"
            st.text(f"{qa_run} · {rung} · {first['status']} · {judged} · {verdict}")
            st.text(str(first["answer"]) if pd.notna(first["answer"]) else "(no answer)")
        pick = st.selectbox("Answer to label", range(len(cells)), format_func=lambda i: f"{cells[i][0]} · {cells[i][1]}",
                            key="drill_label_pick")
        if label_form(data.workspace(path)[0], cells[pick][0], cells[pick][1], qid, "drill_label"):
            st.success("Label saved: it counts in the judges' agreement figures from the next refresh.")


def case_downloads(rows: pd.DataFrame, path: str, v: int, name: str, key: str) -> None:
    """CSV / JSONL case lists of ``rows`` (per-query rows) with ranks, tags, notes and drill-down links."""
    listed = cases.case_list(rows, data.queries(path, v), data.notes(path, v), data.link_name(path), base_url())
    c1, c2, _ = st.columns([1, 1, 4])
    for col, fmt, mime in ((c1, "csv", "text/csv"), (c2, "jsonl", "application/jsonl")):
        col.download_button(f"⬇ cases {fmt.upper()}", data=lambda f=fmt: cases.to_text(listed, f).encode("utf-8"),
                            file_name=f"{widgets.slug(name)}.{fmt}", mime=mime, key=f"cases_{key}_{fmt}",
                            on_click="ignore")


def import_as_tag(path: str) -> None:
    """Upload a case list (CSV / JSONL from `emb-s cases export` or these buttons) and tag its cases."""
    with st.expander("Import a case list as a tag"):
        up = st.file_uploader("Case list", type=["csv", "jsonl"], key="cases_upload")
        tag = st.text_input("Tag for its cases", key="cases_tag", placeholder="e.g. from-review")
        if st.button("Import", key="cases_import", disabled=up is None or not tag.strip()):
            ws, _ = data.workspace(path)
            r: dict = {}
            if not without_waiting(ws, lambda: r.update(cases.import_as_tag(ws, up.getvalue(), tag,
                                                                              fmt=cases.format_of(up.name),
                                                                              name=up.name))):
                return
            st.text(f"tagged {r['tagged']} of {r['cases']} cases; {r['unknown_queries']} not in this bank; "
                    f"{r['runs_dropped']} on the query only (run not here)")
