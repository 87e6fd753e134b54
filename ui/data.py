"""Cached reads of a workspace through emb_s_core, keyed by (folder, committed version).

Why the version in every key: the manifest's version counts finished transactions, so a new run or ladder shows up
at once while an unchanged workspace is never re-read. Large frames are cached with ``st.cache_resource`` (returned
without copying — callers treat them as read-only); small ones with ``st.cache_data``.
"""
from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import streamlit as st

from emb_s_core import bank, ladder, runs, store
from emb_s_core.analysis import cases, drilldown, mixing, report, run_state, views
from emb_s_core.errors import EmbSError
from emb_s_core.store import Workspace

REPO = Path(__file__).resolve().parents[1]
ENTRIES = 8


def data_dir() -> Path:
    """Where workspaces live: ``$EMB_S_DATA`` or the repository's ``data/`` (``analysis.cases.data_roots``)."""
    return cases.data_roots()[0]


#: setting that lets the URL (and the sidebar path box) open a workspace anywhere on the server (local, single user)
ALLOW_ANY_PATH = "EMB_S_ALLOW_ANY_WORKSPACE"


def any_path_allowed() -> bool:
    return os.environ.get(ALLOW_ANY_PATH, "").strip().lower() in ("1", "true", "yes")


def shown_path(path: str | Path) -> str:
    """A workspace as a page may show it (hints, messages): relative to the server's working folder when inside it
    (``data/demo``, a command that works where the server was started), else its link name (``demo``); never the
    absolute folders of the server, which any visitor would see."""
    candidate = Path(os.path.normpath(Path(path).absolute()))
    here = Path.cwd()
    if here in candidate.parents:
        return candidate.relative_to(here).as_posix()
    return link_name(candidate)


def hide_root(text: object) -> str:
    """``text`` (an error message) with secrets masked and the absolute paths of the data folder and the server's
    working folder removed: ``/srv/emb/data/demo`` → ``data/demo`` or ``demo``."""
    from emb_s_core.llm.secrets import redact

    out = redact(text)  # and no secret-shaped string either
    here = str(Path.cwd())
    if len(here) > 1:
        out = out.replace(here + os.sep, "")
    for root in sorted({str(r) for r in cases.data_roots()}, key=len, reverse=True):
        out = out.replace(root + os.sep, "").replace(root, "the data folder")
    return out


def allowed_workspace(path: str) -> str:
    """``path`` as an absolute path if the dashboard may open it: under :func:`data_dir` (as named, so ``..`` cannot
    leave it; links placed there by whoever runs the server are followed), or anywhere with ``EMB_S_ALLOW_ANY_WORKSPACE=1``.
    A relative name (``demo``) is a folder of the data root, whatever the server's working directory.
    """
    shown = "".join(c if c.isprintable() else "?" for c in str(path))[:200]
    if any(not c.isprintable() for c in str(path)):  # a newline or control character is never part of a name
        raise EmbSError(f"the workspace name {shown!r} holds a control character",
                        fix="open a workspace by its folder name under the dashboard's data folder.")
    given = Path(path).expanduser()
    root, named = cases.data_roots()
    candidate = Path(os.path.normpath(given if given.is_absolute() else named / given))
    if any_path_allowed() or any(r in candidate.parents for r in (root, named)):
        return str(candidate)
    # a visitor learns nothing of the server's folders: the refusal names what was asked, not the data root
    raise EmbSError(f"the workspace {shown!r} is outside the data folder of this dashboard",
                    fix="open a workspace by its name in the data folder (see the sidebar's list); whoever runs the "
                        f"server can set EMB_S_DATA to another data folder, or {ALLOW_ANY_PATH}=1 for a local "
                        "single-user dashboard.")


#: how links name a workspace (relative to the data folder when under it)
link_name = cases.link_name


def list_workspaces() -> list[str]:
    """Workspace folders directly under :func:`data_dir` (those with a manifest), by name."""
    root = data_dir()
    if not root.is_dir():
        return []
    return sorted(str(p) for p in root.iterdir() if store.is_workspace(p))


def version(path: str) -> int:
    """The committed version (``store.committed_version``: a cheap file read); EmbSError when the workspace is
    gone."""
    return store.committed_version(path)


@st.cache_resource(max_entries=ENTRIES, show_spinner=False)
def _ws(path: str, v: int) -> Workspace:
    return Workspace(path)


def workspace(path: str) -> tuple[Workspace, int]:
    v = version(path)
    return _ws(path, v), v


@st.cache_data(max_entries=ENTRIES, show_spinner=False)
def info(path: str, v: int) -> dict:
    return bank.info(_ws(path, v))


@st.cache_resource(max_entries=ENTRIES, show_spinner=False)
def get_ladder(path: str, v: int) -> ladder.Ladder | None:
    ws = _ws(path, v)
    return ladder.load_all(ws)


@st.cache_data(max_entries=ENTRIES, show_spinner=False)
def hard_negative_coverage(path: str, v: int) -> pd.DataFrame:
    lad = get_ladder(path, v)
    return pd.DataFrame() if lad is None else ladder.hard_negative_coverage(lad, queries(path, v))


@st.cache_resource(max_entries=ENTRIES, show_spinner=False)
def queries(path: str, v: int) -> pd.DataFrame:
    return bank.queries(_ws(path, v)).set_index("qid", drop=False)


@st.cache_resource(max_entries=ENTRIES, show_spinner=False)
def documents_meta(path: str, v: int) -> pd.DataFrame:
    """doc_id-indexed title, source, domain, n_tokens (no text: that is read per document on demand)."""
    return bank.documents(_ws(path, v), ["doc_id", "title", "source", "domain", "n_tokens"]).set_index("doc_id")


@st.cache_data(max_entries=256, show_spinner=False)
def document_texts(path: str, v: int, doc_ids: tuple[int, ...]) -> dict[int, dict]:
    return bank.documents_by_id(_ws(path, v), doc_ids)


@st.cache_data(max_entries=ENTRIES, show_spinner=False)
def run_table(path: str, v: int) -> pd.DataFrame:
    return runs.list_runs(_ws(path, v))


@st.cache_resource(max_entries=ENTRIES, show_spinner=False)
def results(path: str, v: int) -> pd.DataFrame:
    return runs.load_results(_ws(path, v))


@st.cache_resource(max_entries=64, show_spinner=False)
def query_results(path: str, v: int, qid: str) -> pd.DataFrame:
    r = results(path, v)
    return r[r["qid"] == qid]


@st.cache_data(max_entries=ENTRIES, show_spinner=False)
def has_qa_answers(path: str, v: int) -> bool:
    """One cheap check, so a page with no QA run in its workspace reads nothing of the LLM part."""
    return _ws(path, v).has_table("qa_answers")


@st.cache_data(max_entries=64, show_spinner=False)
def query_answers(path: str, v: int, qid: str, score_threshold: float) -> pd.DataFrame:
    """``analysis.drilldown.query_answers`` for one query, rungs in ladder order; cached per workspace version."""
    lad = get_ladder(path, v)
    return drilldown.query_answers(_ws(path, v), qid, score_threshold, lad.names if lad is not None else None)


@st.cache_resource(max_entries=ENTRIES, show_spinner="Scoring every query on every rung…")
def per_query(path: str, v: int) -> pd.DataFrame:
    return views.per_query(_ws(path, v))


@st.cache_resource(max_entries=ENTRIES, show_spinner=False)
def notes(path: str, v: int) -> pd.DataFrame:
    """Every note on a case of this workspace version (tags as lists)."""
    from emb_s_core import notes as notes_mod

    return notes_mod.load(_ws(path, v))


@st.cache_data(max_entries=64, show_spinner=False)
def case_note(path: str, v: int, qid: str, run: str | None, rung: str | None) -> dict | None:
    """The note of exactly this case, or None."""
    from emb_s_core import notes as notes_mod

    hit = notes(path, v)
    hit = hit[hit["note_id"] == notes_mod.note_id(qid, run, rung)]
    return None if hit.empty else hit.iloc[0].to_dict()


@st.cache_data(max_entries=ENTRIES, show_spinner=False)
def tags(path: str, v: int) -> list[str]:
    """The workspace's tags, most used first (what the tag filter and the editor offer)."""
    from emb_s_core import notes as notes_mod

    return notes_mod.all_tags(_ws(path, v))["tag"].tolist()


@st.cache_resource(max_entries=16, show_spinner=False)
def paper_table(path: str, v: int, scales: tuple[str, ...], run_names: tuple[str, ...], kind: str):
    from emb_s_core.analysis import paper_table as pt

    return pt.build(_ws(path, v), scales, runs=list(run_names), per_query_df=per_query(path, v), kind=kind)


@st.cache_resource(max_entries=32, show_spinner=False)
def filtered(path: str, v: int, domains: tuple[str, ...], tasks: tuple[str, ...], sources: str,
             tags: tuple[str, ...] = ()) -> pd.DataFrame:
    from emb_s_core import notes as notes_mod

    return notes_mod.filter_by_tags(views.filter_rows(per_query(path, v), domains, tasks, sources), notes(path, v),
                                    tags)


@st.cache_resource(max_entries=64, show_spinner="Aggregating with bootstrap intervals…")
def overview(path: str, v: int, x: str, metric: str, run_names: tuple[str, ...], domains: tuple[str, ...],
             tasks: tuple[str, ...], sources: str, tags: tuple[str, ...] = ()
             ) -> tuple[pd.DataFrame, pd.DataFrame, list[str]]:
    """``views.overview`` (aggregate, cell states, columns) on the filtered rows; cached per view."""
    return views.overview(filtered(path, v, domains, tasks, sources, tags), get_ladder(path, v), metric, x,
                          list(run_names))


@st.cache_resource(max_entries=32, show_spinner="Paired tests per rung…")
def paired(path: str, v: int, run_a: str, run_b: str, metric: str, columns: tuple[str, ...],
           domains: tuple[str, ...], tasks: tuple[str, ...], sources: str, tags: tuple[str, ...] = (),
           x: str = "rung", twin: bool = True) -> pd.DataFrame:
    """``report.compare_by`` of A vs B on the filtered rows over ``columns`` (rungs or pooled scales, the twin's
    too unless ``twin`` is False): one row per column with its ladder."""
    tests = report.compare_by(_ws(path, v), run_a, run_b, metric, columns, x=x, twin=twin,
                              per_query_df=filtered(path, v, domains, tasks, sources, tags))
    return tests[[x, "ladder", "column", *report.PAIRED_COLUMNS[1:]]]


@st.cache_resource(max_entries=ENTRIES, show_spinner=False)
def source_mixing(path: str, v: int, k: int = mixing.K) -> pd.DataFrame:
    """``analysis.mixing.count_sources`` over the cached results and document sources."""
    return mixing.count_sources(results(path, v), documents_meta(path, v)["source"], k=k)


def columns_in_order(lad: ladder.Ladder | None, pq: pd.DataFrame, x: str) -> list[str]:
    return views.columns(lad, pq, x)


@st.cache_data(max_entries=ENTRIES, show_spinner=False)
def run_states(path: str, v: int) -> pd.DataFrame:
    """``analysis.run_state.states`` of every run: complete / INCOMPLETE (with counts) / empty, against the rungs
    each run was asked for."""
    listed = run_table(path, v)
    return run_state.states(results(path, v), get_ladder(path, v), listed["run"].tolist(),
                            run_state.configs_of(listed))


@st.cache_resource(max_entries=64, show_spinner="Aggregating with bootstrap intervals…")
def illusion_overview(path: str, v: int, x: str, metric: str, run_names: tuple[str, ...], domains: tuple[str, ...],
                      tasks: tuple[str, ...], sources: str, twin: bool, tags: tuple[str, ...] = ()) -> dict:
    """``analysis.illusion.overview``: the Overview's inputs with benign-twin rows and effective scale; cached."""
    from emb_s_core.analysis import illusion

    return illusion.overview(_current_twins(path, v, filtered(path, v, domains, tasks, sources, tags)),
                             get_ladder(path, v), metric, x, list(run_names), twin=twin)


def _current_twins(path: str, v: int, pq: pd.DataFrame) -> pd.DataFrame:
    """``pq`` without stale twin results (``analysis.illusion.without_stale_twins``)."""
    from emb_s_core.analysis import illusion
    from emb_s_core.evaluate import stale_twin_runs

    return illusion.without_stale_twins(pq, stale_twin_runs(_ws(path, v)))


@st.cache_data(max_entries=ENTRIES, show_spinner=False)
def twin_fill(path: str, v: int) -> tuple[pd.DataFrame, str | None]:
    """``analysis.illusion.twin_fill`` of the workspace's twin and the note on stale twin results (or None)."""
    from emb_s_core.analysis import illusion
    from emb_s_core.evaluate import stale_twin_runs

    return illusion.twin_fill(get_ladder(path, v)), illusion.stale_note(stale_twin_runs(_ws(path, v)))


@st.cache_resource(max_entries=32, show_spinner="Paired tests, benign twin against the adversarial ladder…")
def illusion_gap(path: str, v: int, run_names: tuple[str, ...], metric: str, domains: tuple[str, ...],
                 tasks: tuple[str, ...], sources: str, tags: tuple[str, ...] = ()) -> pd.DataFrame:
    from emb_s_core.analysis import illusion

    gaps = illusion.gap_or_empty(_current_twins(path, v, filtered(path, v, domains, tasks, sources, tags)),
                                 list(run_names), metric)
    return illusion.with_gap_context(_ws(path, v), gaps, get_ladder(path, v))


@st.cache_data(max_entries=ENTRIES, show_spinner=False)
def twin_references(path: str, v: int) -> str | None:
    """``analysis.illusion.references_note``: the twin's reference retrievers, as every gap is shown with them."""
    from emb_s_core.analysis import illusion

    return illusion.references_note(_ws(path, v))


@st.cache_data(max_entries=32, show_spinner=False)
def illusion_gap_note(path: str, v: int, run_names: tuple[str, ...], domains: tuple[str, ...], tasks: tuple[str, ...],
                      sources: str, tags: tuple[str, ...] = ()) -> str | None:
    """``analysis.illusion.gap_note``: the queries the gap table left out so every run's gap is over the same ones."""
    from emb_s_core.analysis import illusion

    return illusion.gap_note(_current_twins(path, v, filtered(path, v, domains, tasks, sources, tags)),
                             list(run_names))


@st.cache_data(max_entries=64, show_spinner="Attributing the displaced gold documents…")
def explain_cell(path: str, v: int, run: str, rung_from: str, rung_to: str, k: int) -> dict:
    """``analysis.explain.explain`` for one cell (the "Why did it move?" page)."""
    from emb_s_core.analysis import explain

    return explain.explain(_ws(path, v), run, rung_from, rung_to, k)

@st.cache_resource(max_entries=32, show_spinner="Paired tests of every run against the baseline…")
def leaderboard(path: str, v: int, metric: str, baseline: str, correction: str, x: str, run_names: tuple[str, ...],
                domains: tuple[str, ...], tasks: tuple[str, ...], sources: str, tags: tuple[str, ...] = ()):
    """``analysis.leaderboard.compute`` on the filtered rows, columns in ladder order; cached per view."""
    from emb_s_core.analysis import leaderboard as board

    pq = filtered(path, v, domains, tasks, sources, tags)
    lad = get_ladder(path, v)
    return board.compute(pq, views.columns(lad, pq, x), metric, baseline, x=x,
                         runs=list(run_names), correction=correction, lad=lad, completeness=run_states(path, v))


@st.cache_data(max_entries=64, show_spinner=False)
def explain_default(path: str, v: int, run: str, k: int) -> tuple[str, str] | None:
    """``analysis.explain.largest_drop``: the rung pair the "Why did it move?" page opens on."""
    from emb_s_core.analysis import explain

    return explain.largest_drop(per_query(path, v), get_ladder(path, v), run, k)


@st.cache_resource(max_entries=32, show_spinner="Finding the queries lost at scale…")
def finder_rows(path: str, v: int, run: str, small: str, large: str, metric: str, direction: str,
                domains: tuple[str, ...], tasks: tuple[str, ...], sources: str, tags: tuple[str, ...] = ()
                ) -> pd.DataFrame:
    """``analysis.finder.find`` on the filtered rows (the drill-down's landing view); cached per view."""
    from emb_s_core.analysis import finder

    return finder.find(_ws(path, v), run, small, large, metric, direction=direction,
                       per_query_df=filtered(path, v, domains, tasks, sources, tags), lad=get_ladder(path, v),
                       documents=documents_meta(path, v))


@st.cache_resource(max_entries=64, show_spinner=False)
def query_pools(path: str, v: int, qid: str) -> dict:
    """``analysis.drilldown.query_pools``: the pool ``qid`` was searched in on every rung (twin rungs: its own)."""
    lad = get_ladder(path, v)
    return {} if lad is None else drilldown.query_pools(lad, _twin_deltas(path, v), qid)


@st.cache_resource(max_entries=ENTRIES, show_spinner=False)
def _twin_deltas(path: str, v: int) -> dict:
    from emb_s_core import twin

    return twin.deltas(_ws(path, v))
