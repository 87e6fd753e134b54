"""The MemoryBank in a workspace: adding imported sources, reading documents and queries, summary counts.

Documents get their final integer ids here: sources with local ids are shifted past the largest id already in the
workspace, so several sources share one id space and re-importing the same file is a no-op (checksum match).
"""
from __future__ import annotations

import dataclasses
import datetime as _dt
import hashlib
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from emb_s_core import tokens
from emb_s_core.errors import EmbSError
from emb_s_core.schema import (DATASET, DOCUMENT_SCHEMA, HN_PROVENANCES, QUERY_SCHEMA, UNKNOWN_DOMAIN, Bank,
                               DocumentStream, content_hash, render_document)
from emb_s_core.sources import validate
from emb_s_core.store import Workspace

WRITE_BATCH = 50_000  # documents per write inside the import's one transaction

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


DOC_SETS_SCHEMA = pa.schema(
    [pa.field("source", pa.string()), pa.field("set", pa.string()), pa.field("set_order", pa.int32()),
     pa.field("doc_id", pa.int64())]
)
QUERY_EXTRA_SCHEMA = pa.schema([pa.field("qid", pa.string()), pa.field("extra", pa.string())])
HN_PROVENANCE_SCHEMA = pa.schema(
    [pa.field("qid", pa.string()), pa.field("doc_id", pa.int64()), pa.field("provenance", pa.string())]
)
HN_PROVENANCE_TABLE = "hard_negative_provenance"


@dataclass
class ImportReport:
    source: str
    n_documents: int
    n_queries: int
    already_imported: bool = False
    skipped: dict[str, int] = dataclasses.field(default_factory=dict)
    notes: list[str] = dataclasses.field(default_factory=list)
    details: dict = dataclasses.field(default_factory=dict)


def encoding_of(ws: Workspace) -> str:
    return ws.settings.get("encoding", tokens.DEFAULT_ENCODING)


def add_bank(ws: Workspace, bank: Bank, *, fmt: str, path: str | Path, sha256: str,
             progress: bool = False) -> ImportReport:
    """Write a validated bank into the workspace in one transaction (all or nothing).

    The checks run twice: first without the writer lock (a clash fails without touching the workspace, not even its
    lock file), then again under it together with the write, so two imports of the same files at once (two
    terminals, a retried script) give one source, not the bank twice.
    """
    done = _prior_import(ws, bank, fmt, sha256)
    if done is not None:
        return done
    with ws.writer():
        done = _prior_import(ws, bank, fmt, sha256)
        return done if done is not None else _add_bank(ws, bank, fmt=fmt, path=path, sha256=sha256,
                                                       progress=progress)


def _prior_import(ws: Workspace, bank: Bank, fmt: str, sha256: str) -> ImportReport | None:
    """The earlier import of the same files (None when there is none); raises when the bank clashes with the
    workspace (another source of that name, doc ids or qids it already holds)."""
    ws.refresh()
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
    if not bank.renumber:
        docs = bank.documents
        ids = docs.ids if isinstance(docs, DocumentStream) else np.fromiter((d.doc_id for d in docs), np.int64,
                                                                              len(docs))
        clash = np.intersect1d(ids, _existing_doc_ids(ws))
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
    return None


def _check_id_room(bank: Bank, offset: int, largest: int | None, path: str | Path) -> None:
    """Refuse, before anything is written, an import whose renumbered ids would pass the 64-bit range (they would
    wrap to negative values and one id would name two documents)."""
    if not bank.renumber:
        return
    docs = bank.documents
    local_max = int(docs.ids.max()) if isinstance(docs, DocumentStream) and len(docs.ids) else \
        max((int(d.doc_id) for d in docs), default=-1) if not isinstance(docs, DocumentStream) else -1
    if local_max >= 0 and offset + local_max > validate.INT64_MAX:
        raise EmbSError(f"the workspace's largest doc id is {largest:,}: the {local_max + 1:,} documents of this "
                        f"import would need ids up to {offset + local_max:,}, past the 64-bit range "
                        f"({validate.INT64_MAX:,})", where=str(path),
                        fix="import into a new workspace, or renumber the native bank's documents with smaller ids "
                            "(ids need not be large, only unique).")


def _add_bank(ws: Workspace, bank: Bank, *, fmt: str, path: str | Path, sha256: str,
              progress: bool = False) -> ImportReport:
    existing_ids = _existing_doc_ids(ws)
    docs = bank.documents
    offset = int(existing_ids.max()) + 1 if bank.renumber and len(existing_ids) else 0
    _check_id_room(bank, offset, int(existing_ids.max()) if len(existing_ids) else None, path)
    encoding = encoding_of(ws)
    if isinstance(docs, DocumentStream):  # ids and domains known before the texts are read again
        doc_ids = docs.ids + offset
        domains = np.array([d or docs.default_domain or UNKNOWN_DOMAIN for d in docs.domains], dtype=object)
    else:
        doc_ids = np.fromiter((d.doc_id + offset for d in docs), np.int64, len(docs))
        domains = np.array([d.domain or UNKNOWN_DOMAIN for d in docs], dtype=object)
    validate.check_domains(_existing_domains(ws) | set(domains.tolist()) | {q.domain for q in bank.queries},
                           f"the workspace {ws.path} with {path}")
    domain_of = _lookup(doc_ids, domains)
    query_table = pa.table(
        {
            "qid": [q.qid for q in bank.queries],
            "text": [q.text for q in bank.queries],
            "answer": [q.answer for q in bank.queries],
            "answer_aliases": [q.answer_aliases for q in bank.queries],
            "ref_ids": [[i + offset for i in q.ref_ids] for q in bank.queries],
            "hard_negative_ids": [[i + offset for i in q.hard_negative_ids] for q in bank.queries],
            "domain": [q.domain or majority_domain(domain_of([i + offset for i in q.ref_ids])) for q in bank.queries],
            "task_type": [q.task_type or ("multi-source" if len(q.ref_ids) > 1 else "single-source")
                          for q in bank.queries],
            "source": [q.source or bank.source for q in bank.queries],
        },
        schema=QUERY_SCHEMA,
    )
    source_row = pa.table(
        {
            "source": [bank.source], "format": [fmt], "path": [str(path)], "sha256": [sha256],
            "n_documents": [len(docs)], "n_queries": [len(bank.queries)],
            "first_doc_id": [int(doc_ids.min()) if len(doc_ids) else -1],
            "last_doc_id": [int(doc_ids.max()) if len(doc_ids) else -1],
            "skipped": [pd.Series(bank.skipped).to_json()],
            "imported_at": [_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")],
        },
        schema=SOURCES_SCHEMA,
    )
    with ws.transaction():
        if not ws.settings.get("encoding"):
            ws.set_setting("encoding", encoding)
        _write_documents(ws, bank, doc_ids, domains, encoding, progress)
        if not len(docs):
            ws.write("documents", DOCUMENT_SCHEMA.empty_table(), schema=DOCUMENT_SCHEMA)
        ws.write("queries", query_table, schema=QUERY_SCHEMA)
        ws.write("sources", source_row, schema=SOURCES_SCHEMA)
        _write_source_extras(ws, bank, offset)
    return ImportReport(bank.source, len(docs), len(bank.queries), skipped=dict(bank.skipped), notes=list(bank.notes),
                        details=dict(bank.details))


def _write_source_extras(ws: Workspace, bank: Bank, offset: int) -> None:
    """What some sources carry beyond documents and queries: named document sets (a release's scales), per-query
    extra keys, and the importer's summary (setting ``source:<name>``)."""
    if bank.doc_sets:
        sets = [(name, np.unique(np.asarray(ids, np.int64)) + offset) for name, ids in bank.doc_sets.items()]
        ws.write("doc_sets", pa.table(
            {"source": np.full(sum(len(i) for _, i in sets), bank.source, dtype=object),
             "set": np.concatenate([np.full(len(i), n, dtype=object) for n, i in sets]),
             "set_order": np.concatenate([np.full(len(i), k, dtype=np.int32) for k, (_, i) in enumerate(sets)]),
             "doc_id": np.concatenate([i for _, i in sets])}, schema=DOC_SETS_SCHEMA), schema=DOC_SETS_SCHEMA)
    extras = [(q.qid, json.dumps(q.extra, ensure_ascii=False, default=str)) for q in bank.queries if q.extra]
    if extras:
        ws.write("query_extra", pa.table({"qid": [q for q, _ in extras], "extra": [e for _, e in extras]},
                                         schema=QUERY_EXTRA_SCHEMA), schema=QUERY_EXTRA_SCHEMA)
    if bank.details:
        ws.set_setting(f"source:{bank.source}", bank.details)
    pairs = [(q.qid, int(d) + offset) for q in bank.queries for d in q.hard_negative_ids]
    if pairs:
        record_provenance(ws, pairs, bank.hard_negative_provenance)


def record_provenance(ws: Workspace, pairs: list[tuple[str, int]], provenance: str) -> None:
    """Record where hard negatives (qid, doc_id) came from (inside the caller's transaction)."""
    if provenance not in HN_PROVENANCES:
        raise AssertionError(f"unknown hard-negative provenance {provenance!r}")  # a bug, never a user error
    ws.write(HN_PROVENANCE_TABLE, pa.table({"qid": [q for q, _ in pairs], "doc_id": [d for _, d in pairs],
                                            "provenance": [provenance] * len(pairs)}, schema=HN_PROVENANCE_SCHEMA),
             schema=HN_PROVENANCE_SCHEMA)


def hard_negatives(ws: Workspace, queries: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per (qid, hard negative) of the bank with its provenance; one not recorded (a workspace from before
    provenance was kept) reads as ``dataset``, and the latest record of a pair wins (collision after import)."""
    qs = queries if queries is not None else ws.read_pandas("queries", ["qid", "hard_negative_ids"])
    lengths = qs["hard_negative_ids"].map(len).to_numpy()
    frame = pd.DataFrame({"qid": np.repeat(qs["qid"].to_numpy(), lengths),
                          "doc_id": np.concatenate([np.asarray(x, np.int64) for x in qs["hard_negative_ids"]]
                                                   or [np.empty(0, np.int64)])})
    if ws.has_table(HN_PROVENANCE_TABLE):
        rec = ws.read_pandas(HN_PROVENANCE_TABLE).drop_duplicates(["qid", "doc_id"], keep="last")
        frame = frame.merge(rec, on=["qid", "doc_id"], how="left")
    else:
        frame["provenance"] = None
    frame["provenance"] = frame["provenance"].fillna(DATASET)
    return frame


def with_hard_negatives_of(ws: Workspace, queries: pd.DataFrame, provenances: list[str] | tuple[str, ...]
                           ) -> pd.DataFrame:
    """``queries`` with only the hard negatives of the given provenances (for HN-intrusion by provenance)."""
    unknown = [p for p in provenances if p not in HN_PROVENANCES]
    if unknown:
        raise EmbSError(f"unknown hard-negative provenance {unknown[0]!r}",
                        fix=f"use some of: {', '.join(HN_PROVENANCES)}.")
    hn = hard_negatives(ws, queries)
    hn = hn[hn["provenance"].isin(list(provenances))]
    keep = hn.groupby("qid")["doc_id"].apply(list)
    out = queries.copy()
    out["hard_negative_ids"] = [keep.get(q, []) for q in out["qid"]]
    return out


def gold_sources(ws: Workspace, queries: pd.DataFrame) -> list[tuple[str, ...]]:
    """Per row of ``queries``: the sources of its gold documents (sorted, distinct); the query's own ``source`` where
    none of its gold is in the bank. Why: a query's source is where its evidence comes from; the import's name is
    no document's source on a native bank whose documents carry their own (issue 31 §3)."""
    docs = ws.read("documents", ["doc_id", "source"])
    source_of = dict(zip(docs["doc_id"].to_numpy(), docs["source"].to_pylist()))
    out = []
    for refs, own in zip(queries["ref_ids"], queries["source"] if "source" in queries else [None] * len(queries)):
        found = sorted({source_of[int(d)] for d in refs if source_of.get(int(d)) is not None})
        out.append(tuple(found) if found else ((own,) if own is not None else ()))
    return out


def with_gold_source(ws: Workspace, queries: pd.DataFrame) -> pd.DataFrame:
    """``queries`` with ``source`` = the sources of its gold documents (:func:`gold_sources`), joined by " + " when
    the gold spans several: what every per-source breakdown groups by."""
    out = queries.copy()
    out["source"] = [" + ".join(s) if s else None for s in gold_sources(ws, queries)]
    return out


def doc_sets(ws: Workspace, source: str | None = None) -> pd.DataFrame:
    """The named document sets sources defined (source, set, set_order, doc_id); empty when there are none."""
    if not ws.has_table("doc_sets"):
        return pd.DataFrame(columns=DOC_SETS_SCHEMA.names)
    frame = ws.read_pandas("doc_sets")
    return frame[frame["source"] == source] if source is not None else frame


def query_extra(ws: Workspace) -> dict[str, dict]:
    """qid -> the source keys the importer kept (empty for sources without any)."""
    if not ws.has_table("query_extra"):
        return {}
    frame = ws.read_pandas("query_extra")
    return {q: json.loads(e) for q, e in zip(frame["qid"], frame["extra"])}


def source_details(ws: Workspace) -> dict[str, dict]:
    """source name -> the importer's summary (scales, splits, references matched ...), for sources that give one."""
    return {k.partition(":")[2]: v for k, v in ws.settings.items() if k.startswith("source:")}


def import_path(ws: Workspace | str | Path, fmt: str, path: str | Path, *, source: str | None = None,
                domain: str | None = None, progress: bool = False, split: str | None = None) -> ImportReport:
    """Read ``path`` in format ``fmt`` and add it to the workspace; the one entry point for CLI and UI.

    The file is read and validated before the workspace is opened (or created), so a bad file leaves no trace.
    """
    from emb_s_core.sources import read_bank
    from emb_s_core.sources._io import sha256_of

    path = Path(path)
    bank = read_bank(fmt, path, source, domain, split=split)
    created: Path | None = None
    if not isinstance(ws, Workspace):
        target = Path(ws).expanduser().absolute()
        missing = [p for p in (target, *target.parents) if not p.exists()]
        created = missing[-1] if missing else None  # the topmost folder this import creates
        ws = Workspace(target, create=True)
    digest = sha256_of(path)
    if split:  # another split of the same files is another import
        digest = hashlib.sha256(f"{digest}:split={split}".encode()).hexdigest()
    try:
        return add_bank(ws, bank, fmt=fmt, path=path, sha256=digest, progress=progress)
    except BaseException:
        if created is not None and ws.version == 0:  # an import into a new path leaves nothing behind
            shutil.rmtree(created, ignore_errors=True)
        raise


def _lookup(ids: np.ndarray, values: np.ndarray):
    """``f(list of ids) -> their values`` by binary search (a dict of a million documents costs ~100 MB)."""
    order = np.argsort(ids, kind="stable")
    sorted_ids, sorted_values = ids[order], values[order]

    def get(wanted: list[int]) -> list:
        wanted = np.asarray(wanted, np.int64)
        pos = np.minimum(np.searchsorted(sorted_ids, wanted), max(len(sorted_ids) - 1, 0))
        if len(wanted) and (not len(sorted_ids) or (sorted_ids[pos] != wanted).any()):
            raise KeyError(wanted[sorted_ids[pos] != wanted][:1].tolist() if len(sorted_ids) else wanted[:1])
        return sorted_values[pos].tolist()

    return get


def majority_domain(values: list[str]) -> str:
    """The most common domain of a query's gold documents (ties: the first in sorted order); the unknown domain for
    none. How a query without a domain gets one, on import and after relabeling."""
    return pd.Series(values).mode().iloc[0] if values else UNKNOWN_DOMAIN


def _existing_domains(ws: Workspace) -> set:
    """The domains the workspace's documents and queries already carry."""
    found: set = set()
    for table in ("documents", "queries"):
        if ws.has_table(table):
            found |= set(pc.unique(ws.read(table, columns=["domain"]).column("domain")).to_pylist())
    return found - {None}


def _existing_doc_ids(ws: Workspace) -> np.ndarray:
    if not ws.has_table("documents"):
        return np.empty(0, dtype=np.int64)
    return ws.read("documents", ["doc_id"])["doc_id"].to_numpy()


def _count_tokens(texts: list[str], encoding: str, progress: bool) -> list[int]:
    from tqdm import tqdm

    out: list[int] = []
    step = 8192
    with tqdm(total=len(texts), desc="counting tokens", unit="doc", disable=not progress, leave=False) as bar:
        for start in range(0, len(texts), step):
            out.extend(tokens.count_batch(texts[start: start + step], encoding))
            bar.update(min(step, len(texts) - start))
    return out


def _write_documents(ws: Workspace, bank: Bank, doc_ids: np.ndarray, domains: np.ndarray, encoding: str,
                     progress: bool) -> None:
    """Documents in slices of WRITE_BATCH (inside the caller's transaction), each counted and hashed as it is written:
    no second copy of every text, and a :class:`DocumentStream` is read only here, once."""
    from tqdm import tqdm

    docs = bank.documents
    batches = (docs.batches(WRITE_BATCH) if isinstance(docs, DocumentStream)
               else (docs[a: a + WRITE_BATCH] for a in range(0, len(docs), WRITE_BATCH)))
    start = 0
    with tqdm(total=len(docs), desc="writing documents", unit="doc", disable=not progress, leave=False) as bar:
        for part in batches:
            if bank.encoding == encoding and all(d.n_tokens is not None for d in part):
                counts = [int(d.n_tokens) for d in part]  # counted by the importer in this encoding: count once
            else:
                counts = tokens.count_batch([render_document(d.title, d.text) for d in part], encoding)
            end = start + len(part)
            ws.write("documents", pa.table(
                {"doc_id": doc_ids[start:end], "text": [d.text for d in part], "title": [d.title for d in part],
                 "domain": domains[start:end].tolist(), "source": [d.source or bank.source for d in part],
                 "n_tokens": counts, "content_hash": [content_hash(d.title, d.text) for d in part]},
                schema=DOCUMENT_SCHEMA), schema=DOCUMENT_SCHEMA)
            start = end
            bar.update(len(part))


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
    details = source_details(ws)
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
             "documents": int(r.n_documents), "queries": int(r.n_queries), "skipped": r.skipped,
             **({"details": details[r.source]} if r.source in details else {})}
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
