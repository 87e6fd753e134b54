"""Runs and their results in the workspace: the single shape every system's output takes.

A *run* is one system with one configuration (a retriever, an external run file, an LLM localization, ...).
Its *results* are, per (rung, query), the ranked document ids and scores, or a status saying why there is no ranking
("does_not_fit" for a long-context model whose window the rung exceeds, never scored as zero). Results are appended
in batches, each batch one transaction, so a run killed at any point resumes from its finished (rung, qid) pairs.
"""
from __future__ import annotations

import datetime as _dt
import json
from typing import Any, Iterable, Iterator

import numpy as np
import pandas as pd
import pyarrow as pa

from emb_s_core.errors import EmbSError
from emb_s_core.schema import DOES_NOT_FIT, ERROR, OK  # noqa: F401 - runs.OK etc. name the row status
from emb_s_core.store import Workspace

RUNS_SCHEMA = pa.schema(
    [
        pa.field("run", pa.string(), nullable=False),
        pa.field("kind", pa.string()),
        pa.field("system", pa.string()),
        pa.field("config", pa.string()),
        pa.field("created_at", pa.string()),
    ]
)

RESULTS_SCHEMA = pa.schema(
    [
        pa.field("run", pa.string(), nullable=False),
        pa.field("rung", pa.string(), nullable=False),
        pa.field("qid", pa.string(), nullable=False),
        pa.field("doc_ids", pa.list_(pa.int64())),
        pa.field("scores", pa.list_(pa.float32())),
        pa.field("status", pa.string()),
        pa.field("detail", pa.string()),
    ]
)



def list_runs(ws: Workspace) -> pd.DataFrame:
    if not ws.has_table("runs"):
        return pd.DataFrame(columns=RUNS_SCHEMA.names)
    return ws.read_pandas("runs")


def get_run(ws: Workspace, name: str) -> dict[str, Any] | None:
    runs = list_runs(ws)
    hit = runs[runs["run"] == name]
    if not len(hit):
        return None
    row = hit.iloc[0].to_dict()
    row["config"] = json.loads(row["config"])
    return row


def create_run(ws: Workspace, name: str, kind: str, system: str, config: dict[str, Any]) -> str:
    """Register run ``name``; reusing a name is fine with the same configuration (that is a resume).

    Checked and written under the writer lock, so two processes starting the same run register it once.
    """
    from emb_s_core.sources.validate import check_name

    check_name(name, "run name")
    canonical = json.dumps(config, sort_keys=True, default=str)
    with ws.writer():
        existing = get_run(ws, name)
        if existing is not None:
            if json.dumps(existing["config"], sort_keys=True, default=str) != canonical:
                raise EmbSError(
                    f"run {name!r} already exists with another configuration",
                    fix=f"pass another --name, or delete it first (`emb-s runs delete {name}`).",
                )
            return name
        row = pa.table(
            {"run": [name], "kind": [kind], "system": [system], "config": [canonical],
             "created_at": [_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")]},
            schema=RUNS_SCHEMA,
        )
        with ws.transaction():
            ws.write("runs", row, schema=RUNS_SCHEMA)
    return name


def update_config(ws: Workspace, name: str, config: dict[str, Any]) -> None:
    """Replace run ``name``'s configuration in one transaction (a run extended to another ladder kind records the
    new rungs' membership hashes); everything else about the run stays."""
    existing = get_run(ws, name)
    if existing is None:
        raise EmbSError(f"no run named {name!r}", fix="see `emb-s runs list` for the runs in this workspace.")
    row = pa.table(
        {"run": [name], "kind": [existing["kind"]], "system": [existing["system"]],
         "config": [json.dumps(config, sort_keys=True, default=str)], "created_at": [existing["created_at"]]},
        schema=RUNS_SCHEMA,
    )
    quoted = name.replace("'", "''")
    ws.check_writable(["runs", "results", MEASUREMENTS])
    with ws.transaction():
        ws.delete_rows("runs", f"run = '{quoted}'")
        ws.write("runs", row, schema=RUNS_SCHEMA)


def delete_run(ws: Workspace, name: str) -> None:
    if get_run(ws, name) is None:
        raise EmbSError(f"no run named {name!r}", fix="see `emb-s runs list` for the runs in this workspace.")
    quoted = name.replace("'", "''")
    ws.check_writable(["runs", "results", MEASUREMENTS])
    with ws.transaction():
        ws.delete_rows("runs", f"run = '{quoted}'")
        ws.delete_rows("results", f"run = '{quoted}'")
        ws.delete_rows(MEASUREMENTS, f"run = '{quoted}'")


def drop_rungs(ws: Workspace, run: str, rungs: list[str]) -> None:
    """Delete ``run``'s results on ``rungs`` (one transaction): a rebuilt benign twin's old results, redone next."""
    if not rungs or not ws.has_table("results"):
        return
    quoted = run.replace("'", "''")
    names = ", ".join("'" + r.replace("'", "''") + "'" for r in rungs)
    with ws.transaction():
        ws.delete_rows("results", f"run = '{quoted}' AND rung IN ({names})")


def finished(ws: Workspace, run: str) -> set[tuple[str, str]]:
    """(rung, qid) pairs already stored for ``run``: what a resumed run skips."""
    if not ws.has_table("results"):
        return set()
    quoted = run.replace("'", "''")
    done = ws.read("results", ["rung", "qid"], where=f"run = '{quoted}'")
    return set(zip(done["rung"].to_pylist(), done["qid"].to_pylist()))


def save_results(ws: Workspace, run: str, rows: pd.DataFrame | Iterable[dict[str, Any]]) -> int:
    """Append one batch of results (columns: rung, qid, doc_ids, scores, [status], [detail]) atomically.

    Cells another writer of the same run stored meanwhile are dropped under the writer lock, so a (run, rung, qid)
    is stored once however many processes work on the run; returns the number of rows written.
    """
    df = pd.DataFrame(rows)
    if df.empty:
        return 0
    df["run"] = run
    # a row without a status has a ranking: ok (also when other rows of the batch name theirs)
    df["status"] = df["status"].fillna(OK) if "status" in df else OK
    if "detail" not in df:
        df["detail"] = None
    if "scores" not in df:
        df["scores"] = [None] * len(df)
    df["doc_ids"] = [np.asarray(ids if ids is not None else [], dtype=np.int64) for ids in df["doc_ids"]]
    df["scores"] = [None if s is None else np.asarray(s, dtype=np.float32) for s in df["scores"]]
    df["detail"] = [d if d is None or isinstance(d, str) else json.dumps(d, default=str) for d in df["detail"]]
    df = df.drop_duplicates(["rung", "qid"], keep="last")
    with ws.writer():
        stored = _stored_status(ws, run)
        if stored:  # a finished cell stays; an error cell is replaced by its retry
            df = df[[stored.get((r, q), ERROR) == ERROR for r, q in zip(df["rung"], df["qid"])]]
        if df.empty:
            return 0
        retried = [(r, q) for r, q in zip(df["rung"], df["qid"]) if (r, q) in stored]
        table = pa.Table.from_pandas(df[RESULTS_SCHEMA.names], schema=RESULTS_SCHEMA, preserve_index=False)
        with ws.transaction():
            for where in _cells_where(run, retried):
                ws.delete_rows("results", where)
            ws.write("results", table, schema=RESULTS_SCHEMA)
    return len(df)


def _stored_status(ws: Workspace, run: str) -> dict[tuple[str, str], str]:
    """The status stored for each (rung, qid) of ``run`` (read under the writer lock by save_results)."""
    if not ws.has_table("results"):
        return {}
    quoted = run.replace("'", "''")
    done = ws.read("results", ["rung", "qid", "status"], where=f"run = '{quoted}'")
    return dict(zip(zip(done["rung"].to_pylist(), done["qid"].to_pylist()), done["status"].to_pylist()))


def _cells_where(run: str, cells: list[tuple[str, str]], chunk: int = 200) -> Iterator[str]:
    """SQL filters selecting the given cells of ``run``, a bounded number of cells per filter."""
    def q(v: str) -> str:
        return "'" + v.replace("'", "''") + "'"
    for start in range(0, len(cells), chunk):
        part = " OR ".join(f"(rung = {q(r)} AND qid = {q(i)})" for r, i in cells[start:start + chunk])
        yield f"run = {q(run)} AND ({part})"


def load_results(ws: Workspace, runs: list[str] | None = None, rungs: list[str] | None = None) -> pd.DataFrame:
    """Results as a DataFrame (run, rung, qid, doc_ids, scores, status, detail); one row per (run, rung, qid)."""
    if not ws.has_table("results"):
        return pd.DataFrame(columns=RESULTS_SCHEMA.names)
    clauses = []
    if runs is not None:
        clauses.append("run IN (" + ", ".join("'" + r.replace("'", "''") + "'" for r in runs) + ")")
    if rungs is not None:
        clauses.append("rung IN (" + ", ".join("'" + r.replace("'", "''") + "'" for r in rungs) + ")")
    if any(c.endswith("IN ()") for c in clauses):
        return pd.DataFrame(columns=RESULTS_SCHEMA.names)
    df = ws.read_pandas("results", where=" AND ".join(clauses) or None)
    # a batch re-saved after a crash between commit and bookkeeping keeps its last copy
    return df.drop_duplicates(["run", "rung", "qid"], keep="last").reset_index(drop=True)


# ------------------------------------------------------------------------------------------- measurements
#: what a run carries besides its rankings (an approximate search's recall against exact scoring, per rung)
MEASUREMENTS = "run_measurements"
MEASUREMENTS_SCHEMA = pa.schema([pa.field("run", pa.string(), nullable=False), pa.field("values", pa.string()),
                                 pa.field("measured_at", pa.string())])


def save_measurements(ws: Workspace, run: str, values: dict[str, Any]) -> None:
    """Store ``values`` (JSON-able) with run ``run``, replacing what it had."""
    if get_run(ws, run) is None:
        raise EmbSError(f"no run named {run!r}", fix="see `emb-s runs list` for the runs in this workspace.")
    quoted = run.replace("'", "''")
    row = pa.table({"run": [run], "values": [json.dumps(values, sort_keys=True, default=str)],
                    "measured_at": [_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")]},
                   schema=MEASUREMENTS_SCHEMA)
    with ws.transaction():
        ws.delete_rows(MEASUREMENTS, f"run = '{quoted}'")
        ws.write(MEASUREMENTS, row, schema=MEASUREMENTS_SCHEMA)


def measurements(ws: Workspace, run: str | None = None) -> dict[str, dict[str, Any]]:
    """run → its stored measurements (all runs, or just ``run``); runs without any are absent."""
    if not ws.has_table(MEASUREMENTS):
        return {}
    where = None if run is None else "run = '" + run.replace("'", "''") + "'"
    table = ws.read(MEASUREMENTS, where=where)
    return {r: json.loads(v) for r, v in zip(table["run"].to_pylist(), table["values"].to_pylist())}


def approximate_summary(values: dict[str, Any]) -> str:
    """One line for listings: '' for an exact run, else the ANN recall@10 against exact scoring (min over rungs)."""
    found = [values] if "ann_recall@10" in values else [v for v in values.values()
                                                         if isinstance(v, dict) and "ann_recall@10" in v]
    parts = []
    for v in found:
        recall = v["ann_recall@10"]
        ann_rungs = [r for r, how in v.get("ann_scoring", {}).items() if how == "ann"]
        low = min(recall.values()) if recall else float("nan")
        fallback = [v.get("ann_exact_fallback_share", {}).get(r, 0.0) for r in ann_rungs]
        parts.append(f"ANN: recall@10 vs exact min {low:.3f} over {len(recall)} rungs "
                     f"({len(ann_rungs)} searched approximately"
                     + (f"; up to {max(fallback):.0%} of their sampled queries fell back to exact scoring"
                        if fallback and max(fallback) > 0 else "") + ")")
    return "; ".join(parts)


def prompt_summary(config: dict[str, Any] | str | None) -> str:
    """One line for listings and report headers: the query/document prompts a retriever run used (and where they
    came from), a served reranker's template and instruction, and half precision where a model ran in it (on a
    GPU); '' for a run without any. Prompts are shown as Python string literals, so a newline or a trailing space is
    visible."""
    if isinstance(config, str):
        try:
            config = json.loads(config)
        except ValueError:
            return ""
    parts: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if "query_prompt" in node or "input_type" in node:
                text = f"query {node.get('query_prompt', '')!r}, document {node.get('document_prompt', '')!r}"
                kinds = node.get("input_type") or {}
                if kinds:
                    text += f", input_type {kinds.get('query')!r}/{kinds.get('document')!r}"
                parts.append(f"{text} ({node.get('prompt_source', 'given')})")
            if "template" in node and "instruction" in node:
                parts.append(f"reranker template {node['template']}, instruction {node['instruction']!r}")
            if node.get("precision") == "float16":
                parts.append(f"{'reranker' if 'reranker' in node else 'embedder'} in half precision (float16)")
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk((config or {}).get("retriever") if isinstance(config, dict) else None)
    return "; ".join(dict.fromkeys(parts))
