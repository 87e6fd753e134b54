"""Cached reads of a workspace through emb_s_core, keyed by (folder, committed version).

Why the version in every key: the manifest's version counts finished transactions, so a new run or ladder shows up
at once while an unchanged workspace is never re-read. Large frames are cached with ``st.cache_resource`` (returned
without copying — callers treat them as read-only); small ones with ``st.cache_data``.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import streamlit as st

from emb_s_core import bank, ladder, runs
from emb_s_core.errors import EmbSError
from emb_s_core.store import MANIFEST, Workspace

REPO = Path(__file__).resolve().parents[1]
METRIC_FAMILIES = ("SR@K", "FR@K", "R@1", "MRR", "nDCG@10", "HN-intrusion")
KS = (1, 5, 10, 20, 50, 100)
ENTRIES = 8


def data_dir() -> Path:
    """Where workspaces live: ``$EMB_S_DATA`` or the repository's ``data/``."""
    return Path(os.environ.get("EMB_S_DATA", REPO / "data")).expanduser().resolve()


def list_workspaces() -> list[str]:
    """Workspace folders directly under :func:`data_dir` (those with a manifest), by name."""
    root = data_dir()
    if not root.is_dir():
        return []
    return sorted(str(p) for p in root.iterdir() if (p / MANIFEST).is_file())


def version(path: str) -> int:
    """The committed version from the manifest (a cheap file read); EmbSError when the workspace is gone."""
    manifest = Path(path) / MANIFEST
    try:
        return int(json.loads(manifest.read_text())["version"])
    except FileNotFoundError:
        raise EmbSError(f"no EMB-S workspace at {path} (it was deleted or moved)",
                        fix="pick another workspace in the sidebar, or build the demo on Home.") from None
    except (ValueError, KeyError) as exc:
        raise EmbSError(f"the manifest {manifest} is unreadable ({exc})", fix="restore the workspace folder.") from exc


def metric_name(family: str, k: int | str) -> str:
    """``SR@K`` + 10 → ``SR@10``; other families have no K."""
    return family.replace("@K", f"@{k}") if family.endswith("@K") else family


def metric_column(metric: str) -> str:
    """The per-query column holding ``metric`` (the contract names hard-negative intrusion ``hn_intrusion``)."""
    return "hn_intrusion" if metric == "HN-intrusion" else metric


def scale_of(rung: str) -> str:
    """``64K/history`` → ``64K``: domain rungs of one size pooled into one scale; shared rungs keep their name."""
    return rung.split("/", 1)[0]


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
    return ladder.load(ws) if ladder.exists(ws) else None


@st.cache_resource(max_entries=ENTRIES, show_spinner=False)
def queries(path: str, v: int) -> pd.DataFrame:
    return bank.queries(_ws(path, v)).set_index("qid", drop=False)


@st.cache_resource(max_entries=ENTRIES, show_spinner=False)
def documents_meta(path: str, v: int) -> pd.DataFrame:
    """doc_id-indexed title, source, domain, n_tokens (no text: that is read per document on demand)."""
    return bank.documents(_ws(path, v), ["doc_id", "title", "source", "domain", "n_tokens"]).set_index("doc_id")


@st.cache_data(max_entries=256, show_spinner=False)
def document_texts(path: str, v: int, doc_ids: tuple[int, ...]) -> dict[int, dict]:
    if not doc_ids:
        return {}
    where = "doc_id IN (" + ", ".join(str(int(d)) for d in doc_ids) + ")"
    df = _ws(path, v).read_pandas("documents", ["doc_id", "title", "text", "source", "domain"], where=where)
    return {int(r.doc_id): r._asdict() for r in df.itertuples(index=False)}


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


@st.cache_resource(max_entries=ENTRIES, show_spinner="Scoring every query on every rung…")
def per_query(path: str, v: int) -> pd.DataFrame:
    """``metrics.per_query`` over all results, plus a ``scale`` column (domain rungs of one size pooled)."""
    from emb_s_core import metrics

    res = results(path, v)
    if res.empty:
        return pd.DataFrame(columns=["run", "rung", "qid", "status", "scale"])
    pq = metrics.per_query(res, bank.queries(_ws(path, v)))
    pq["scale"] = pq["rung"].map(scale_of)
    return pq


def _filtered(pq: pd.DataFrame, domains: tuple[str, ...], tasks: tuple[str, ...], sources: str) -> pd.DataFrame:
    mask = np.ones(len(pq), dtype=bool)
    if domains:
        mask &= pq["domain"].isin(domains).to_numpy()
    if tasks:
        mask &= pq["task_type"].isin(tasks).to_numpy()
    if sources == "single":
        mask &= ~pq["multi_source"].astype(bool).to_numpy()
    elif sources == "multi":
        mask &= pq["multi_source"].astype(bool).to_numpy()
    return pq[mask]


@st.cache_resource(max_entries=32, show_spinner=False)
def filtered(path: str, v: int, domains: tuple[str, ...], tasks: tuple[str, ...], sources: str) -> pd.DataFrame:
    return _filtered(per_query(path, v), domains, tasks, sources)


@st.cache_resource(max_entries=64, show_spinner="Aggregating with bootstrap intervals…")
def aggregate(path: str, v: int, x: str, metric: str, domains: tuple[str, ...], tasks: tuple[str, ...],
              sources: str) -> pd.DataFrame:
    """``metrics.aggregate`` by (run, x) for one metric on the filtered per-query rows."""
    from emb_s_core import metrics

    pq = filtered(path, v, domains, tasks, sources)
    if pq.empty:
        return pd.DataFrame(columns=["run", x, "metric", "value", "n", "ci_low", "ci_high"])
    return metrics.aggregate(pq, by=("run", x), metrics=[metric])


@st.cache_resource(max_entries=64, show_spinner=False)
def states(path: str, v: int, x: str, run_names: tuple[str, ...], cols: tuple[str, ...],
           domains: tuple[str, ...], tasks: tuple[str, ...], sources: str) -> pd.DataFrame:
    from emb_s_core.figures import heatmap

    return heatmap.cell_states(filtered(path, v, domains, tasks, sources), list(run_names), list(cols), x=x)


@st.cache_resource(max_entries=32, show_spinner="Paired tests per rung…")
def paired(path: str, v: int, run_a: str, run_b: str, metric: str, rung_names: tuple[str, ...],
           domains: tuple[str, ...], tasks: tuple[str, ...], sources: str) -> pd.DataFrame:
    """``metrics.paired_test`` of A vs B on each rung both ran (one row per rung)."""
    from emb_s_core import metrics

    pq = filtered(path, v, domains, tasks, sources)
    rows = []
    for rung in rung_names:
        t = metrics.paired_test(pq, run_a, run_b, rung, metric)
        rows.append({"rung": rung, **{k: t.get(k) for k in
                                      ("delta", "ci_low", "ci_high", "p_value", "n", "wins", "losses", "ties")}})
    return pd.DataFrame(rows)


@st.cache_resource(max_entries=ENTRIES, show_spinner=False)
def source_mixing(path: str, v: int, k: int = 10) -> pd.DataFrame:
    from emb_s_core.figures import mixing

    return mixing.distinct_sources(results(path, v), documents_meta(path, v)["source"], k=k)


def columns_in_order(lad: ladder.Ladder | None, pq: pd.DataFrame, x: str) -> list[str]:
    """Heatmap columns in ladder order: rung names, or scales (first appearance in the ladder)."""
    names = lad.names if lad is not None else sorted(pq["rung"].unique()) if "rung" in pq else []
    if x == "scale":
        return list(dict.fromkeys(scale_of(n) for n in names))
    return list(names)
