"""Page furniture shared by every page: the workspace picker, filters, metric choice, download buttons, and the
guard that turns a user-caused problem into a clear message instead of a traceback."""
from __future__ import annotations

import re
import shlex
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import pandas as pd
import streamlit as st

from emb_s_core import metrics
from emb_s_core.errors import EmbSError
from ui import data, state
from ui.safe import md


@contextmanager
def guard() -> Iterator[None]:
    """Show an EmbSError as an error box and stop the page (never a traceback for a user-caused problem)."""
    try:
        yield
    except EmbSError as exc:
        st.error(md(data.hide_root(exc)))  # messages quote paths, names, values from the data: shown as text
        st.stop()
    except Exception as exc:  # noqa: BLE001 - a damaged table is one line too; anything else is re-raised
        line = damage_line(exc)
        if line is None:
            raise
        st.error(md(line))
        st.stop()


def damage_line(exc: BaseException) -> str | None:
    """The one line for a damaged or unwritable workspace (``emb_s_core.damage``), names relative to the data root;
    None when ``exc`` is something else."""
    from emb_s_core.damage import explain

    wanted = state.get("ws")
    try:
        path = data.allowed_workspace(wanted) if wanted else None
    except EmbSError:
        path = None
    if path is None:
        known = data.list_workspaces()
        path = known[0] if len(known) == 1 else None
    line = explain(path, exc) if path else None
    return None if line is None else data.hide_root(line)


@contextmanager
def page_guard() -> Iterator[None]:
    """Around the whole page: a damaged or unwritable workspace (a truncated table file, a deleted table folder, a
    read-only cache) is one error line naming the table and the way back, never a traceback; any other exception
    is left to Streamlit."""
    try:
        yield
    except EmbSError as exc:
        st.error(md(data.hide_root(exc)))
    except Exception as exc:  # noqa: BLE001 - only storage damage is explained; the rest is re-raised
        line = damage_line(exc)
        if line is None:
            raise
        st.error(md(line))


def pick_workspace(required: bool = True) -> tuple[str, int] | None:
    """Sidebar choice of workspace (folders under data/ or any path); lives in the URL as ``ws``.

    Returns (path, version); with ``required`` a page without a workspace shows how to get one and stops.
    """
    known = data.list_workspaces()
    wanted = state.get("ws")
    if wanted:
        try:
            wanted = data.allowed_workspace(wanted)
        except EmbSError as exc:  # a link naming a folder outside the data root: say so, open the default instead
            st.error(md(data.hide_root(exc)))
            state.put(ws=None)
            wanted = None
    with st.sidebar:
        st.markdown("**Workspace**")
        options = list(known)
        if wanted and wanted not in options:
            options.insert(0, wanted)
        choice = None
        if options:
            choice = st.selectbox("Workspace", options, index=state.index_of(options, wanted),
                                  format_func=data.link_name, key="ws_pick", label_visibility="collapsed")
        typed = st.text_input("…or a folder path", value="", key="ws_path", placeholder="/path/to/workspace")
        if typed.strip():
            try:
                choice = data.allowed_workspace(typed.strip())
            except EmbSError as exc:
                st.error(md(data.hide_root(exc)))
    if not choice:
        if required:
            st.info(f"No workspace yet in the data folder ({md(data.shown_path(data.data_dir()))}). Open **Home** to "
                    "build the demo workspace, or "
                    "create one with the command below.")
            command("emb-s import --format native PATH --workspace", Path(data.data_dir()) / "mybank")
            st.stop()
        return None
    state.put(ws=data.link_name(choice))  # the URL names it relative to the data root: shareable between servers
    with guard():
        v = data.version(choice)
    return choice, v


def tag_filter(path: str, v: int) -> tuple[str, ...]:
    """Tags of notes on cases as a query filter (sidebar, URL key ``tag``); shown once the workspace has tags."""
    offered = data.tags(path, v)
    if not offered and not state.get_list("tag"):
        return ()
    with st.sidebar:
        chosen = state.multiselect("Tagged", offered, "tag", placeholder="any tag or none",
                                   help="only queries with a note carrying one of these tags")
    return tuple(chosen)


def filters(path: str, v: int) -> tuple[tuple[str, ...], tuple[str, ...], str]:
    """Domain / task-type / single-multi filters (sidebar, in the URL)."""
    qs = data.queries(path, v)
    with st.sidebar:
        st.markdown("**Filters**")
        domains = state.multiselect("Domain", sorted(qs["domain"].dropna().unique()), "domain",
                                    placeholder="all domains")
        tasks = state.multiselect("Task type", sorted(qs["task_type"].dropna().astype(str).unique()), "task",
                                  placeholder="all task types")
        sources = state.selectbox("Gold sources", ["all", "single", "multi"], "sources",
                                  format_func=lambda s: {"all": "all queries", "single": "single-source",
                                                         "multi": "multi-source"}[s])
    return tuple(domains), tuple(tasks), sources or "all"


def metric_choice(container=st.sidebar) -> str:
    """Metric family + K (URL keys metric, k) → the metric name, e.g. SR@10."""
    with container:
        family = state.selectbox("Metric", list(metrics.FAMILY_NAMES), "metric", default="SR@K")
        k = state.selectbox("K", [str(k) for k in metrics.KS], "k", default="10",
                            disabled=not family.endswith("@K"))
    return metrics.metric_name(family, k)


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_") or "figure"


def figure_layout(key: str):
    """Export size controls (the options of ``emb-s figure``: preset, width, height, font size, title), folded away:
    a figure for a paper column is exported at that width with print-size text instead of shrunk into it."""
    from emb_s_core.figures import layout

    with st.expander("Export size: width, height, font, title", expanded=False):
        c1, c2, c3, c4, c5 = st.columns([2, 1, 1, 1, 1], vertical_alignment="bottom")
        preset = c1.selectbox("Size", list(layout.PRESETS), key=f"fig_{key}_size",
                              format_func=lambda p: {"screen": "as drawn", "column": "paper column (3.5 in)",
                                                     "page": "paper text width (7 in)"}[p])
        width = c2.number_input("Width px", 0, layout.LIMITS["width"][1], 0, step=10, key=f"fig_{key}_w",
                                help="0: the size's own (1 px = 0.75 pt in the PDF)")
        height = c3.number_input("Height px", 0, layout.LIMITS["height"][1], 0, step=10, key=f"fig_{key}_h",
                                 help="0: in proportion to the width")
        font = c4.number_input("Font px", 0, int(layout.LIMITS["font_size"][1]), 0, key=f"fig_{key}_font",
                               help="0: the size's own; title, legend and cell labels keep their proportions")
        title = c5.selectbox("Title", ["default", "show", "hide"], key=f"fig_{key}_title",
                             help="default: shown, except on a paper column (its LaTeX caption replaces it)")
    try:
        return layout.layout(preset, width=width or None, height=height or None, font_size=font or None,
                             title={"default": None, "show": True, "hide": False}[title])
    except EmbSError as exc:  # a number out of range: say so, export as drawn, keep the page
        st.error(md(exc))
        return layout.Layout()


def figure_downloads(fig, name: str, key: str) -> None:
    """PNG / SVG / PDF / HTML buttons, at the size chosen under :func:`figure_layout`; files are made only when
    clicked (kaleido takes ~1 s per static file); static files draw heatmap cells as vector shapes."""
    from emb_s_core import export

    opts = figure_layout(key)
    cols = st.columns(4)
    for col, fmt in zip(cols, export.FIGURE_FORMATS):
        col.download_button(f"⬇ {fmt.upper()}", data=lambda f=fmt: export.figure_to(fig, f, opts=opts),
                            file_name=f"{slug(name)}.{fmt}", mime=export.MIME[fmt], key=f"dl_{key}_{fmt}",
                            on_click="ignore")


def table(df: pd.DataFrame, digits: int = 4, **kwargs) -> None:
    """``st.dataframe`` of an analysis table as people read it: every cell through the one formatter
    (``export.display_frame``: fixed decimals, ``< 0.0001`` p-values, ``–`` for missing), never ``None`` or
    ``0.00000000001``; downloads keep the full values."""
    from emb_s_core import export

    st.dataframe(export.display_frame(df, digits), hide_index=True, width="stretch", **kwargs)


_TABLE_DOWNLOADS = {"csv": ("CSV", "csv", "text/csv"), "latex": ("LaTeX", "tex", "application/x-tex"),
                    "markdown": ("Markdown", "md", "text/markdown")}


def table_downloads(df: pd.DataFrame, name: str, key: str, formats: tuple[str, ...] = ("csv", "latex"),
                    note: str | None = None) -> None:
    """One download button per table format; ``note`` goes under the Markdown / LaTeX table (export.table_to)."""
    from emb_s_core import export

    cols = st.columns([1] * len(formats) + [6 - len(formats)])
    for col, fmt in zip(cols, formats):
        label, suffix, mime = _TABLE_DOWNLOADS[fmt]
        col.download_button(f"⬇ {label}", data=lambda f=fmt: export.table_to(df, f, note=note).encode("utf-8"),
                            file_name=f"{slug(name)}.{suffix}", mime=mime, key=f"dlt_{key}_{suffix}",
                            on_click="ignore")


def bank_name(path: str) -> str:
    return Path(path).name


@dataclass
class View:
    """What an analysis page starts from: workspace, metric, filters, ladder and run names (all from the URL)."""

    path: str
    v: int
    metric: str
    domains: tuple[str, ...]
    tasks: tuple[str, ...]
    sources: str
    ladder: object
    run_names: list[str]
    tags: tuple[str, ...] = ()

    @property
    def filters(self) -> tuple[tuple[str, ...], tuple[str, ...], str, tuple[str, ...]]:
        """(domains, task types, sources, tags): the arguments of ``data.filtered`` after path and version."""
        return self.domains, self.tasks, self.sources, self.tags


def analysis_view(title: str) -> View:
    """Title, workspace picker, metric and filters in the sidebar; the shared start of Overview/Drill-down/Compare."""
    st.title(title)
    path, v = pick_workspace()
    metric = metric_choice()
    with guard():
        domains, tasks, sources = filters(path, v)
        tags = tag_filter(path, v)
        lad = data.get_ladder(path, v)
        run_names = data.run_table(path, v)["run"].tolist()
    return View(path, v, metric, domains, tasks, sources, lad, run_names, tags)


def run_notes(path: str, v: int, run_names) -> None:
    """Wherever a page shows runs: a warning per run of ``run_names`` with missing results, and a line per run whose
    model took prompts or half precision (``analysis.run_state``)."""
    from emb_s_core.analysis import run_state

    table = data.run_states(path, v)
    for line in run_state.notes(table, list(run_names)):
        st.warning(md(line))
    for run, summary in run_state.settings(table, list(run_names)).items():
        st.caption(md(run_state.settings_line(run, summary)))


def command(head: str, workspace: str | Path, tail: str = "") -> None:
    """The command that fixes what a message says, naming the real workspace folder (shell-quoted), never a
    placeholder; shown as a code block, which renders its text literally."""
    st.code(f"{head} {shlex.quote(data.shown_path(workspace))}{' ' + tail if tail else ''}", language="bash")
