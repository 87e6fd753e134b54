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
from ui import data, widgets
from ui.safe import md

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
        except WorkspaceBusy as exc:
            st.warning(f"Not saved: {md(exc.what)}. What you typed is still here; save again when it has finished.")
            return False
    return True


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
