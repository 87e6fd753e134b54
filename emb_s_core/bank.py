"""The MemoryBank in a workspace: adding imported sources, reading documents and queries, summary counts.

Documents get their final integer ids here: sources with local ids are shifted past the largest id already in the
workspace, so several sources share one id space and re-importing the same file is a no-op (checksum match).
"""
from __future__ import annotations

import dataclasses
import datetime as _dt
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa

from emb_s_core import tokens
from emb_s_core.errors import EmbSError
from emb_s_core.schema import DOCUMENT_SCHEMA, QUERY_SCHEMA, UNKNOWN_DOMAIN, Bank, content_hash, render_document
from emb_s_core.store import Workspace

SOURCES_SCHEMA = pa.schema(
    [
        pa.field("source", pa.string()),
        pa.field("format", pa.string()),
        pa.field("path", pa.string()),
        pa.field("sha256", pa.string()),
        pa.field("n_documents", pa.int64()),
        pa.field("n_queries", pa.int64()),
        pa.field("first_doc_id", pa.int64()),
        pa.field("last_doc_id", pa.int64()),
        pa.field("skipped", pa.string()),
        pa.field("imported_at", pa.string()),
    ]
)


@dataclass
class ImportReport:
    source: str
    n_documents: int
    n_queries: int
    already_imported: bool = False
    skipped: dict[str, int] = dataclasses.field(default_factory=dict)
    notes: list[str] = dataclasses.field(default_factory=list)


def encoding_of(ws: Workspace) -> str:
    return ws.settings.get("encoding", tokens.DEFAULT_ENCODING)


def add_bank(ws: Workspace, bank: Bank, *, fmt: str, path: str | Path, sha256: str,
             progress: bool = False) -> ImportReport:
    """Write a validated bank into the workspace in one transaction (all or nothing)."""
    if ws.has_table("sources"):
        done = ws.read_pandas("sources")
        hit = done[(done["sha256"] == sha256) & (done["format"] == fmt)]
        if len(hit):
            row = hit.iloc[0]
            return ImportReport(row["source"], int(row["n_documents"]), int(row["n_queries"]), already_imported=True)
        if bank.source in set(done["source"]):
            raise EmbSError(
                f"the workspace already holds a different import named source {bank.source!r}",
                fix="pass --source NAME to give this import its own name, or use a new workspace.",
            )
    existing_ids = _existing_doc_ids(ws)
    docs = bank.documents
    offset = 0
    if bank.renumber:
        offset = int(existing_ids.max()) + 1 if len(existing_ids) else 0
    else:
        clash = np.intersect1d(np.fromiter((d.doc_id for d in docs), np.int64, len(docs)), existing_ids)
        if len(clash):
            first = int(clash[0])
            raise EmbSError(
                f"doc_id {first} ({len(clash)} ids in all) already exists in the workspace",
                where=bank.doc_locations.get(first),
                fix="use ids that do not overlap the workspace's documents, or import into a new workspace.",
            )
    existing_qids = set(ws.read_pandas("queries", ["qid"])["qid"]) if ws.has_table("queries") else set()
    clash_q = [q.qid for q in bank.queries if q.qid in existing_qids]
    if clash_q:
        raise EmbSError(
            f"qid {clash_q[0]!r} ({len(clash_q)} in all) already exists in the workspace",
            where=bank.query_locations.get(clash_q[0]),
            fix="give the queries distinct qids, or import into a new workspace.",
        )
    encoding = encoding_of(ws)
    if bank.encoding == encoding and all(d.n_tokens is not None for d in docs):
        counts = [int(d.n_tokens) for d in docs]  # counted by the importer in this encoding: count once
    else:
        counts = _count_tokens([render_document(d.title, d.text) for d in docs], encoding, progress)
    doc_table = pa.table(
        {
            "doc_id": [d.doc_id + offset for d in docs],
            "text": [d.text for d in docs],
            "title": [d.title for d in docs],
            "domain": [d.domain or UNKNOWN_DOMAIN for d in docs],
            "source": [d.source or bank.source for d in docs],
            "n_tokens": counts,
            "content_hash": [content_hash(d.title, d.text) for d in docs],
        },
        schema=DOCUMENT_SCHEMA,
    )
    domain_of = dict(zip(doc_table["doc_id"].to_pylist(), doc_table["domain"].to_pylist()))
    query_table = pa.table(
        {
            "qid": [q.qid for q in bank.queries],
            "text": [q.text for q in bank.queries],
            "answer": [q.answer for q in bank.queries],
            "answer_aliases": [q.answer_aliases for q in bank.queries],
            "ref_ids": [[i + offset for i in q.ref_ids] for q in bank.queries],
            "hard_negative_ids": [[i + offset for i in q.hard_negative_ids] for q in bank.queries],
            "domain": [q.domain or majority_domain([domain_of[i + offset] for i in q.ref_ids]) for q in bank.queries],
            "task_type": [q.task_type or ("multi-source" if len(q.ref_ids) > 1 else "single-source")
                          for q in bank.queries],
            "source": [q.source or bank.source for q in bank.queries],
        },
        schema=QUERY_SCHEMA,
    )
    ids = doc_table["doc_id"].to_numpy()
    source_row = pa.table(
        {
            "source": [bank.source], "format": [fmt], "path": [str(path)], "sha256": [sha256],
            "n_documents": [len(docs)], "n_queries": [len(bank.queries)],
            "first_doc_id": [int(ids.min()) if len(ids) else -1], "last_doc_id": [int(ids.max()) if len(ids) else -1],
            "skipped": [pd.Series(bank.skipped).to_json()],
            "imported_at": [_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")],
        },
        schema=SOURCES_SCHEMA,
    )
    with ws.transaction():
        if not ws.settings.get("encoding"):
            ws.set_setting("encoding", encoding)
        ws.write("documents", doc_table, schema=DOCUMENT_SCHEMA)
        ws.write("queries", query_table, schema=QUERY_SCHEMA)
        ws.write("sources", source_row, schema=SOURCES_SCHEMA)
    return ImportReport(bank.source, len(docs), len(bank.queries), skipped=dict(bank.skipped), notes=list(bank.notes))


def import_path(ws: Workspace | str | Path, fmt: str, path: str | Path, *, source: str | None = None,
                domain: str | None = None, progress: bool = False) -> ImportReport:
    """Read ``path`` in format ``fmt`` and add it to the workspace; the one entry point for CLI and UI.

    The file is read and validated before the workspace is opened (or created), so a bad file leaves no trace.
    """
    from emb_s_core.sources import read_bank
    from emb_s_core.sources._io import sha256_of

    path = Path(path)
    bank = read_bank(fmt, path, source, domain)
    created: Path | None = None
    if not isinstance(ws, Workspace):
        target = Path(ws).expanduser().absolute()
        missing = [p for p in (target, *target.parents) if not p.exists()]
        created = missing[-1] if missing else None  # the topmost folder this import creates
        ws = Workspace(target, create=True)
    try:
        return add_bank(ws, bank, fmt=fmt, path=path, sha256=sha256_of(path), progress=progress)
    except BaseException:
        if created is not None and ws.version == 0:  # an import into a new path leaves nothing behind
            shutil.rmtree(created, ignore_errors=True)
        raise


def majority_domain(values: list[str]) -> str:
    """The most common domain of a query's gold documents (ties: the first in sorted order); the unknown domain for
    none. How a query without a domain gets one, on import and after relabeling."""
    return pd.Series(values).mode().iloc[0] if values else UNKNOWN_DOMAIN


def _existing_doc_ids(ws: Workspace) -> np.ndarray:
    if not ws.has_table("documents"):
        return np.empty(0, dtype=np.int64)
    return ws.read("documents", ["doc_id"])["doc_id"].to_numpy()


def _count_tokens(texts: list[str], encoding: str, progress: bool) -> list[int]:
    from tqdm import tqdm

    out: list[int] = []
    step = 2048
    with tqdm(total=len(texts), desc="counting tokens", unit="doc", disable=not progress, leave=False) as bar:
        for start in range(0, len(texts), step):
            out.extend(tokens.count_batch(texts[start : start + step], encoding))
            bar.update(min(step, len(texts) - start))
    return out


# ------------------------------------------------------------------------------------------- reading
def documents(ws: Workspace, columns: list[str] | None = None) -> pd.DataFrame:
    return ws.read_pandas("documents", columns)


def queries(ws: Workspace) -> pd.DataFrame:
    df = ws.read_pandas("queries")
    df["n_gold"] = df["ref_ids"].map(len)
    df["multi_source"] = df["n_gold"] > 1
    return df


def info(ws: Workspace) -> dict:
    """The bank summary shown by ``emb-s info`` and the dashboard's Home page."""
    docs = documents(ws, ["doc_id", "domain", "source", "n_tokens"])
    qs = queries(ws)
    srcs = ws.read_pandas("sources") if ws.has_table("sources") else pd.DataFrame(columns=SOURCES_SCHEMA.names)
    return {
        "workspace": str(ws.path),
        "version": ws.version,
        "encoding": encoding_of(ws),
        "documents": int(len(docs)),
        "tokens": int(docs["n_tokens"].sum()),
        "queries": int(len(qs)),
        "single_source_queries": int((~qs["multi_source"]).sum()),
        "multi_source_queries": int(qs["multi_source"].sum()),
        "gold_per_query": {str(k): int(v) for k, v in qs["n_gold"].value_counts().sort_index().items()},
        "tokens_per_source": {k: int(v) for k, v in docs.groupby("source")["n_tokens"].sum().items()},
        "documents_per_source": {k: int(v) for k, v in docs.groupby("source").size().items()},
        "queries_per_source": {k: int(v) for k, v in qs.groupby("source").size().items()},
        "tokens_per_domain": {k: int(v) for k, v in docs.groupby("domain")["n_tokens"].sum().items()},
        "queries_per_domain": {k: int(v) for k, v in qs.groupby("domain").size().items()},
        "sources": [
            {"source": r.source, "format": r.format, "path": r.path, "sha256": r.sha256,
             "documents": int(r.n_documents), "queries": int(r.n_queries), "skipped": r.skipped}
            for r in srcs.itertuples()
        ],
    }


def token_counts(ws: Workspace, encoding: str | None = None, progress: bool = False) -> pd.Series:
    """Tokens per document (index doc_id) in ``encoding``: stored at import for the workspace's encoding; other
    encodings are counted once and cached in the table ``tokens_<encoding>`` keyed by content hash."""
    encoding = encoding or encoding_of(ws)
    tokens.encoding(encoding)  # validates the name before any work
    if encoding == encoding_of(ws):
        docs = documents(ws, ["doc_id", "n_tokens"])
        return pd.Series(docs["n_tokens"].to_numpy(np.int64), index=docs["doc_id"].to_numpy(), name="n_tokens")
    docs = documents(ws, ["doc_id", "title", "text", "content_hash"])
    table = f"tokens_{encoding}"
    cached = ws.read_pandas(table) if ws.has_table(table) else pd.DataFrame({"content_hash": [], "n_tokens": []})
    known = dict(zip(cached["content_hash"], cached["n_tokens"]))
    todo = docs[~docs["content_hash"].isin(known)].drop_duplicates("content_hash")
    if len(todo):
        counts = _count_tokens([render_document(t, x) for t, x in zip(todo["title"], todo["text"])], encoding, progress)
        new = pa.table({"content_hash": todo["content_hash"].tolist(), "n_tokens": counts},
                       schema=pa.schema([("content_hash", pa.string()), ("n_tokens", pa.int32())]))
        with ws.transaction():
            ws.write(table, new)
        known.update(zip(todo["content_hash"], counts))
    return pd.Series(docs["content_hash"].map(known).to_numpy(np.int64), index=docs["doc_id"].to_numpy(),
                     name="n_tokens")


def documents_by_id(ws: Workspace, doc_ids: Iterable[int],
                    columns: Sequence[str] = ("doc_id", "title", "text", "source", "domain")) -> dict[int, dict]:
    """The named documents as ``{doc_id: {column: value}}`` (ids not in the bank are simply absent): one filtered
    read, for pages that show a few documents' texts."""
    ids = sorted({int(d) for d in doc_ids})
    if not ids:
        return {}
    cols = list(dict.fromkeys(["doc_id", *columns]))
    df = ws.read_pandas("documents", cols, where="doc_id IN (" + ", ".join(map(str, ids)) + ")")
    return {int(r["doc_id"]): r for r in df.to_dict("records")}
