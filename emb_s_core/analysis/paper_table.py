"""The paper's Table 3: one row per run, R@1 / SR@10 / FR@10 at chosen scales, each cell with its n.

Why a module: ``emb-s report --paper-table`` and the Overview page's "Paper table" view must print the same cells.
A column is a scale: a rung's name inside its ladder with domain rungs pooled (``64K/law`` and ``64K/code`` → ``64K``,
``official:512K`` → ``512K``), so built and official ladders fill the same columns. A ``rerank:<model>:<base>`` run is
listed right under the run of its base retriever, as the paper shows reranking as a row below its first stage.
Values are percentages (one decimal in the typeset formats); n is the number of queries the metric is defined on
(R@1: single-source, FR@10: multi-source), given per cell in CSV and as a note under Markdown and LaTeX.
On the built ladder the last column is each run's effective scale (``analysis.illusion``: the largest scale whose
SR@10 stays at or above 0.85 × its base value, with its bootstrap interval); other ladders have none.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from emb_s_core import ladder, metrics, tokens
from emb_s_core import runs as runs_mod
from emb_s_core.analysis import common, run_state, views
from emb_s_core.analysis.views import scale_of
from emb_s_core.errors import EmbSError
from emb_s_core.store import Workspace

METRICS = ("R@1", "SR@10", "FR@10")
FORMATS = ("markdown", "csv", "latex")
DEFAULT_LABEL = "(every scale of the ladder)"  # named in the error when the ladder has no scale with results


@dataclass
class PaperTable:
    """``values`` and ``n``: one row per run (index: run), columns (scale, metric); ``rows``: run, label, base."""

    values: pd.DataFrame
    n: pd.DataFrame
    rows: pd.DataFrame
    scales: list[str]
    effective: pd.Series | None = None  # run -> "1M [512K, ≥ full]" on the built ladder, else None
    sizes: dict[str, str] | None = None  # scale -> what its rung really holds ("shared" -> "63.0K"), when known
    incomplete: dict[str, str] | None = None  # run -> its INCOMPLETE label (analysis.run_state), listed runs only
    common_note: str | None = None  # the queries left out so every scale compares the same queries
    settings: dict[str, str] | None = None  # run -> its model's prompts / precision (analysis.run_state)

    def notes(self) -> list[str]:
        """The lines printed under the table in every format: which queries each scale compares, which runs are
        INCOMPLETE, which runs' models took prompts or half precision."""
        from emb_s_core.analysis import run_state

        return [*([self.common_note] if self.common_note else []),
                *(run_state.note_line(r, lab) for r, lab in (self.incomplete or {}).items()),
                *(run_state.settings_line(r, s) for r, s in (self.settings or {}).items())]


def column_of(rung: str) -> str:
    """The scale column a rung's results go to: its plain name with domain rungs pooled."""
    return scale_of(ladder.plain_name(rung))


def ladders_in(per_query_df: pd.DataFrame) -> list[str]:
    """The ladder kinds the stored results cover, in LADDER_KINDS order."""
    present = set(per_query_df["rung"].map(ladder.kind_of)) if len(per_query_df) else set()
    return [k for k in ladder.LADDER_KINDS if k in present]


def default_ladder(per_query_df: pd.DataFrame) -> str:
    """The ladder the view is about (``views.kind_in_view``): the built ladder when results cover it, else a
    release's official ladder; the twin only when the results cover nothing else."""
    held = ladders_in(per_query_df)
    return views.kind_in_view(held) or (held[0] if held else ladder.BUILT)


def available_scales(per_query_df: pd.DataFrame, kind: str | None = None) -> list[str]:
    """The scale columns the stored results of ladder ``kind`` can fill, in first-seen order."""
    if not len(per_query_df):
        return []
    kind = kind or default_ladder(per_query_df)
    rungs = per_query_df["rung"][per_query_df["rung"].map(ladder.kind_of) == kind]
    return list(dict.fromkeys(rungs.map(column_of)))


def default_scales(available: Sequence[str]) -> list[str]:
    """Every scale the ladder has results on: a release's published scales (whichever they are) or a built ladder's
    own rungs; the user narrows them."""
    return list(available)


def ladder_scales(ws: Workspace, kind: str) -> list[str]:
    """The scale columns of the workspace's ladder of ``kind``, in ladder order (empty without that ladder)."""
    if not ladder.exists(ws, kind):
        return []
    return list(dict.fromkeys(column_of(r.name) for r in ladder.load(ws, allow_stale=True, kind=kind).rungs))


def real_sizes(ws: Workspace, kind: str) -> dict[str, str]:
    """Scale -> the real size of its rung, for scales whose name is not a size (``shared``, ``full``)."""
    if not ladder.exists(ws, kind):
        return {}
    return {column_of(r.name): ladder.real_size(r.n_tokens) for r in ladder.load(ws, allow_stale=True, kind=kind).rungs
            if r.domain is None and "/" not in r.name and not _is_size(column_of(r.name))}


def _is_size(scale: str) -> bool:
    try:
        tokens.parse_size(scale)
    except EmbSError:
        return False
    return True


def build(ws: Workspace, scales: Sequence[str] | None = None, runs: Sequence[str] | None = None,
          per_query_df: pd.DataFrame | None = None, kind: str | None = None) -> PaperTable:
    """The table over the results on ladder ``kind`` (default :func:`default_ladder`): a run evaluated on several
    kinds contributes one kind's rungs only, so official and built rungs of one size never pool. ``scales``
    default: every scale of that ladder (the workspace's stored rungs, else those the results cover)."""
    explicit = scales is not None
    scales = [s.strip() for s in (scales or []) if s.strip()]
    if explicit and not scales:
        raise EmbSError("no scale given for the paper table", fix="pass e.g. --scales 64K,512K,30M,326M.")
    listed = runs_mod.list_runs(ws)
    chosen = list(runs) if runs is not None else listed["run"].tolist()
    unknown = [r for r in chosen if r not in set(listed["run"])]
    if unknown:
        raise EmbSError(f"no run named {unknown[0]!r}", fix=f"use some of: {', '.join(listed['run']) or 'none'}.")
    if not chosen:
        raise EmbSError(f"the workspace {ws.path} has no runs", fix="evaluate a retriever first (`emb-s eval`).")
    pq = per_query_df if per_query_df is not None else views.per_query(ws, chosen)
    kind = kind or default_ladder(pq)
    effective = _effective(ws, pq, chosen) if kind == ladder.BUILT else None
    if kind not in ladder.LADDER_KINDS:
        raise EmbSError(f"unknown ladder {kind!r}", fix=f"use one of: {', '.join(ladder.LADDER_KINDS)}.")
    if len(pq):
        pq = pq[pq["run"].isin(chosen) & (pq["rung"].map(ladder.kind_of) == kind)]
        pq = pq.assign(column=pq["rung"].map(column_of))
    present = set(pq["column"]) if len(pq) else set()
    if not explicit:
        scales = ladder_scales(ws, kind) or available_scales(pq) or [DEFAULT_LABEL]
    missing = [s for s in scales if s not in present]
    if len(missing) == len(scales):
        raise EmbSError(f"no results on the {kind} ladder at any of the scales {', '.join(scales)}",
                        fix=f"choose --scales from: {', '.join(sorted(present)) or '(no results on it)'}, or another "
                            "--ladder.")
    pq, left = common.restrict(pq[pq["column"].isin(scales)], "column")
    agg = metrics.aggregate(pq, by=("run", "column"), metrics=list(METRICS), n_boot=0)
    states = run_state.for_workspace(ws)
    incomplete = run_state.marks(states, chosen)
    rows = _row_order(listed[listed["run"].isin(chosen)], incomplete)
    cols = pd.MultiIndex.from_product([scales, METRICS], names=["scale", "metric"])
    values = agg.pivot_table(index="run", columns=["column", "metric"], values="value", dropna=False)
    counts = agg.pivot_table(index="run", columns=["column", "metric"], values="n", dropna=False)
    values = values.reindex(index=rows["run"], columns=cols) * 100.0
    counts = counts.reindex(index=rows["run"], columns=cols).fillna(0).astype(np.int64)
    if effective is not None:
        effective = effective.reindex(rows["run"]).fillna("–")
    return PaperTable(values, counts, rows, scales, effective, real_sizes(ws, kind), incomplete,
                      common.note(left, "scale"), run_state.settings(states, chosen))


EFFECTIVE_COLUMN = "effective scale"
RESULTS_COLUMN = "results"  # the CSV column saying which runs are INCOMPLETE, when one listed is


def _effective(ws: Workspace, pq: pd.DataFrame, chosen: Sequence[str]) -> pd.Series | None:
    """Each run's effective scale on the built ladder (None without a built ladder of two scales)."""
    from emb_s_core.analysis import illusion

    if not len(pq) or not ladder.exists(ws):
        return None
    return illusion.effective_labels(pq, ladder.load(ws, allow_stale=True), chosen)


def _row_order(listed: pd.DataFrame, incomplete: dict[str, str] | None = None) -> pd.DataFrame:
    """Runs as stored, each rerank run moved right under the run of its base spec (when that run is listed); the
    label of a run with missing results carries the INCOMPLETE mark."""
    systems = dict(zip(listed["run"], listed["system"].fillna("")))
    base_of = {}
    for run, system in systems.items():
        if system.startswith("rerank:"):
            base_spec = system.split(":", 2)[2] if system.count(":") >= 2 else ""
            base_of[run] = next((r for r, s in systems.items() if s == base_spec and r != run), None)
    order: list[str] = []
    for run in systems:
        if base_of.get(run):
            continue
        order.append(run)
        order += [r for r, b in base_of.items() if b == run]
    order += [r for r in systems if r not in order]
    mark = {r: f" [{run_state.INCOMPLETE}]" for r in (incomplete or {})}
    labels = [(f"  + {r}" if base_of.get(r) else r) + mark.get(r, "") for r in order]
    return pd.DataFrame({"run": order, "label": labels,
                         "base": [base_of.get(r) or "" for r in order]})


# ------------------------------------------------------------------------------------------- output
def flat(table: PaperTable) -> pd.DataFrame:
    """The CSV shape: run, base, then ``<scale> <metric>`` and ``<scale> <metric> n`` for every cell."""
    out = pd.DataFrame({"run": table.rows["run"].to_numpy(), "base": table.rows["base"].to_numpy()})
    for scale, metric in table.values.columns:
        out[f"{scale} {metric}"] = table.values[(scale, metric)].to_numpy()
        out[f"{scale} {metric} n"] = table.n[(scale, metric)].to_numpy()
    if table.effective is not None:
        out[EFFECTIVE_COLUMN] = table.effective.to_numpy()
    if table.incomplete:
        out[RESULTS_COLUMN] = [table.incomplete.get(r, "complete") for r in out["run"]]
    return out


def _cell(value: float) -> str | None:
    from emb_s_core.export import format_value

    return format_value(value, digits=1)  # the one formatter, at the paper's one decimal (values in %)


def _n_note(table: PaperTable) -> list[str]:
    """One line per scale: the n of each metric (one number when every run has the same n)."""
    lines = []
    for scale in table.scales:
        parts = []
        for metric in METRICS:
            ns = table.n[(scale, metric)]
            uniq = sorted(set(int(v) for v in ns))
            parts.append(f"{metric} n={uniq[0]}" if len(uniq) == 1 else
                         f"{metric} n=" + ", ".join(f"{r}: {int(v)}" for r, v in ns.items()))
        size = (table.sizes or {}).get(scale)
        lines.append(f"{scale}{f' ({size} tokens)' if size else ''}: " + "; ".join(parts))
    return lines


def to_markdown(table: PaperTable) -> str:
    def esc(s: str | None) -> str:
        return "–" if s is None else s.replace("|", "\\|").replace("\n", " ")

    eff = list(table.effective) if table.effective is not None else None
    header = ["run", *[f"{s} {m}" for s, m in table.values.columns], *([EFFECTIVE_COLUMN] if eff else [])]
    lines = ["| " + " | ".join(esc(h) for h in header) + " |",
             "|---|" + "|".join("---:" for _ in header[1:]) + "|"]
    for i, (label, (_, row)) in enumerate(zip(table.rows["label"], table.values.iterrows())):
        cells = [esc(label.replace("  + ", "↳ ")), *[esc(_cell(v)) for v in row], *([esc(eff[i])] if eff else [])]
        lines.append("| " + " | ".join(cells) + " |")
    notes = ["", "Values in %. n = queries each cell averages over (R@1: single-source, FR@10: multi-source):"]
    notes += [f"- {esc(line)}" for line in _n_note(table)]
    if eff:
        notes.append(f"- {EFFECTIVE_COLUMN}: the largest scale whose SR@10 stays ≥ 0.85 × its base value, with its "
                     "bootstrap 95% interval")
    notes += [f"- {esc(line)}" for line in table.notes()]
    return "\n".join(lines + notes) + "\n"


def to_latex(table: PaperTable) -> str:
    """A booktabs table: a header row of scales spanning their three metrics, cmidrules, a note with n; ASCII, and
    compiles with plain pdflatex (``export.latex_fragment``)."""
    from emb_s_core.export import latex_escape as tex
    from emb_s_core.export import latex_fragment

    k = len(METRICS)
    eff = list(table.effective) if table.effective is not None else None
    extra = ["Eff. scale"] if eff else []
    lines = [r"\begin{tabular}{l" + "r" * (k * len(table.scales)) + ("l" if eff else "") + "}", r"\toprule",
             " & " + " & ".join([rf"\multicolumn{{{k}}}{{c}}{{{tex(s)}}}" for s in table.scales]
                                + ([""] if eff else [])) + r" \\",
             "".join(rf"\cmidrule(lr){{{2 + i * k}-{1 + (i + 1) * k}}}" for i in range(len(table.scales))),
             "Run & " + " & ".join([tex(m) for _ in table.scales for m in METRICS] + extra) + r" \\", r"\midrule"]
    for i, (label, (_, row)) in enumerate(zip(table.rows["label"], table.values.iterrows())):
        name = r"\quad + " + tex(label.strip()[2:]) if label.startswith("  + ") else tex(label)
        lines.append(" & ".join([name, *[_cell(v) or "--" for v in row], *([tex(eff[i])] if eff else [])])
                     + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}",
              r"\par\footnotesize Values in \%. " + tex(" / ".join(_n_note(table) + table.notes())), ""]
    return latex_fragment("\n".join(lines))


def render(table: PaperTable, fmt: str) -> str:
    if fmt == "markdown":
        return to_markdown(table)
    if fmt == "latex":
        return to_latex(table)
    if fmt == "csv":
        from emb_s_core.export import csv_frame

        return csv_frame(flat(table)).to_csv(index=False)
    raise EmbSError(f"unknown paper-table format {fmt!r}", fix=f"use one of: {', '.join(FORMATS)}.")
