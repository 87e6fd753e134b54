"""Notes and tags on cases: what a researcher reading failures writes down, kept in the workspace's ``notes`` table.

A *case* is a query, optionally narrowed to one run and one rung (or pooled scale). Each case has at most one note
record: its tags (free text, no commas) and its text. Why a table of its own, keyed by qid (not by row position or
doc id): a ladder rebuild, a new run or a new import rewrites other tables, never this one, so notes survive them;
after a bank edit drops a query its notes stay stored but are listed only with ``include_orphans`` (they come back
if the query does). Every write goes through ``ws.transaction()`` (one writer at a time per workspace).

The note id is a hash of the case key, so the same case has the same id in a copy of the workspace (case lists
exported from one workspace import into another as the same cases).
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import json
from typing import Iterable, Sequence

import pandas as pd
import pyarrow as pa

from emb_s_core.errors import EmbSError
from emb_s_core.store import Workspace

TABLE = "notes"
NOTES_SCHEMA = pa.schema(
    [
        pa.field("note_id", pa.string(), nullable=False),
        pa.field("qid", pa.string(), nullable=False),
        pa.field("run", pa.string()),
        pa.field("rung", pa.string()),
        pa.field("tags", pa.list_(pa.string())),
        pa.field("text", pa.string()),
        pa.field("created_at", pa.string()),
        pa.field("updated_at", pa.string()),
    ]
)
COLUMNS = NOTES_SCHEMA.names
MAX_TAG = 64
MAX_TAGS = 32
MAX_TEXT = 20_000


def note_id(qid: str, run: str | None = None, rung: str | None = None) -> str:
    """Stable id of the case (qid, run, rung): the same in every copy of the workspace."""
    key = json.dumps([qid, run or None, rung or None])
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:20]


def clean_tags(tags: object, where: str | None = None) -> list[str]:
    """Validated tags: a list of non-empty strings of at most ``MAX_TAG`` characters, without commas (tags travel
    comma-joined in URLs) or control characters; duplicates dropped, order kept. A bare string is an error, never
    iterated letter by letter."""
    if isinstance(tags, str) or not isinstance(tags, (list, tuple)):
        raise EmbSError(f"tags must be a list of strings, got {type(tags).__name__} {str(tags)[:40]!r}",
                        where=where, fix='pass e.g. ["hard negative wins", "date confusion"].')
    out: list[str] = []
    for tag in tags:
        if not isinstance(tag, str):
            raise EmbSError(f"a tag must be a string, got {type(tag).__name__} {tag!r}", where=where,
                            fix="write each tag as text.")
        tag = " ".join(tag.split())
        if not tag:
            raise EmbSError("a tag is empty", where=where, fix="drop it or give it a name.")
        if len(tag) > MAX_TAG or "," in tag or any(ord(ch) < 32 for ch in tag):
            raise EmbSError(f"tag {tag[:80]!r} is longer than {MAX_TAG} characters or has a comma",
                            where=where, fix=f"use a short label (≤ {MAX_TAG} characters, no commas).")
        if tag not in out:
            out.append(tag)
    if len(out) > MAX_TAGS:
        raise EmbSError(f"{len(out)} tags on one case (at most {MAX_TAGS})", where=where, fix="keep fewer tags.")
    return out


def _clean_text(text: object, where: str | None = None) -> str:
    if text is None:
        return ""
    if not isinstance(text, str):
        raise EmbSError(f"a note must be text, got {type(text).__name__}", where=where, fix="write the note as text.")
    if len(text) > MAX_TEXT:
        raise EmbSError(f"the note has {len(text):,} characters (at most {MAX_TEXT:,})", where=where,
                        fix="shorten it.")
    return text.strip()


def _check_case(ws: Workspace, qid: object, run: str | None, rung: str | None) -> None:
    """The query must exist in the bank, the run in the workspace, the rung in the ladder (or be a pooled scale)."""
    from emb_s_core import bank, runs

    if not isinstance(qid, str) or not qid:
        raise EmbSError(f"a case needs a query id (qid), got {qid!r}", fix="pass the qid of a bank query.")
    known = set(bank.queries(ws)["qid"]) if ws.has_table("queries") else set()
    if qid not in known:
        raise EmbSError(f"no query {qid!r} in the bank", where=str(ws.path), fix="use a qid of this workspace's bank.")
    if run and runs.get_run(ws, run) is None:
        raise EmbSError(f"no run named {run!r}", fix="see `emb-s runs list` for the runs in this workspace.")
    if rung and ws.has_table("rungs"):  # rungs of every ladder kind, and their pooled scales
        names = set(ws.read_pandas("rungs", ["rung"])["rung"])
        if rung not in names and rung not in {n.split("/", 1)[0] for n in names}:
            raise EmbSError(f"no rung or scale named {rung!r}", fix="see `emb-s ladder show` for the rung names.")


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="microseconds")


def load(ws: Workspace, include_orphans: bool = False) -> pd.DataFrame:
    """Every note (COLUMNS, tags as lists), oldest first; notes of queries no longer in the bank only with
    ``include_orphans`` (then an ``orphan`` column says which)."""
    if not ws.has_table(TABLE):
        df = pd.DataFrame(columns=COLUMNS)
    else:
        df = ws.read_pandas(TABLE)
        df["tags"] = [list(t) if t is not None else [] for t in df["tags"]]
        for col in ("run", "rung"):  # None, never NaN: a missing run or rung means "any"
            df[col] = pd.Series([v if isinstance(v, str) else None for v in df[col]], index=df.index, dtype=object)
        df["text"] = [v if isinstance(v, str) else "" for v in df["text"]]
        df = df.sort_values(["created_at", "note_id"], kind="stable").reset_index(drop=True)
    known = set(ws.read_pandas("queries", ["qid"])["qid"]) if ws.has_table("queries") else set()
    orphan = ~df["qid"].isin(known)
    if include_orphans:
        return df.assign(orphan=orphan.to_numpy())
    return df[~orphan].reset_index(drop=True)


def get(ws: Workspace, qid: str, run: str | None = None, rung: str | None = None) -> dict | None:
    """The note of exactly this case, or None."""
    df = load(ws, include_orphans=True)
    hit = df[df["note_id"] == note_id(qid, run, rung)]
    return None if hit.empty else hit.iloc[0].to_dict()


def save(ws: Workspace, qid: str, tags: Sequence[str] = (), text: str | None = "", run: str | None = None,
         rung: str | None = None, *, merge: bool = False) -> dict:
    """Write the note of case (qid, run, rung): with ``merge`` the tags are added to the existing ones and a None
    text keeps the old text (``emb-s notes add``); without, tags and text replace what was there (the editor)."""
    run, rung = run or None, rung or None
    where = f"case qid={qid!r} run={run!r} rung={rung!r}"
    tags = clean_tags(list(tags) if not isinstance(tags, str) else tags, where)
    new_text = None if text is None else _clean_text(text, where)
    _check_case(ws, qid, run, rung)
    nid = note_id(qid, run, rung)
    with ws.transaction():
        old = get(ws, qid, run, rung)
        if merge and old is not None:
            tags = clean_tags([*old["tags"], *tags], where)
        if new_text is None:
            new_text = old["text"] if old is not None else ""
        row = {"note_id": nid, "qid": qid, "run": run, "rung": rung, "tags": tags, "text": new_text,
               "created_at": old["created_at"] if old is not None else _now(), "updated_at": _now()}
        if old is not None:
            ws.delete_rows(TABLE, f"note_id = '{nid}'")
        ws.write(TABLE, pa.Table.from_pylist([row], schema=NOTES_SCHEMA), schema=NOTES_SCHEMA)
    return row


def save_many(ws: Workspace, cases: Iterable[tuple[str, str | None, str | None]], tag: str) -> int:
    """Add ``tag`` to many cases in one transaction (a case list imported as a tag); returns how many changed."""
    tag = clean_tags([tag])[0]
    wanted = {note_id(q, r or None, g or None): (q, r or None, g or None) for q, r, g in cases}
    with ws.transaction():
        existing = load(ws, include_orphans=True).set_index("note_id")
        rows, replaced = [], []
        now = _now()
        for nid, (qid, run, rung) in wanted.items():
            if nid in existing.index:
                old = existing.loc[nid]
                if tag in old["tags"]:
                    continue
                replaced.append(nid)
                rows.append({"note_id": nid, "qid": qid, "run": run, "rung": rung, "tags": [*old["tags"], tag],
                             "text": old["text"], "created_at": old["created_at"], "updated_at": now})
            else:
                rows.append({"note_id": nid, "qid": qid, "run": run, "rung": rung, "tags": [tag], "text": "",
                             "created_at": now, "updated_at": now})
        if replaced:
            ws.delete_rows(TABLE, "note_id IN (" + ", ".join(f"'{n}'" for n in replaced) + ")")
        if rows:
            ws.write(TABLE, pa.Table.from_pylist(rows, schema=NOTES_SCHEMA), schema=NOTES_SCHEMA)
    return len(rows)


def delete(ws: Workspace, qid: str, run: str | None = None, rung: str | None = None) -> None:
    """Remove the note of this case (an error when there is none)."""
    if get(ws, qid, run, rung) is None:
        raise EmbSError(f"no note on case qid={qid!r} run={run!r} rung={rung!r}", fix="see `emb-s notes list`.")
    with ws.transaction():
        ws.delete_rows(TABLE, f"note_id = '{note_id(qid, run or None, rung or None)}'")


def all_tags(ws: Workspace) -> pd.DataFrame:
    """tag, cases (how many notes carry it), queries (how many distinct qids), most used first."""
    df = load(ws)
    if df.empty:
        return pd.DataFrame(columns=["tag", "cases", "queries"])
    ex = df[["qid", "tags"]].explode("tags").dropna(subset=["tags"])
    out = ex.groupby("tags").agg(cases=("qid", "size"), queries=("qid", "nunique")).reset_index()
    return out.rename(columns={"tags": "tag"}).sort_values(["cases", "tag"], ascending=[False, True],
                                                          kind="stable").reset_index(drop=True)


def query_tags(notes: pd.DataFrame) -> pd.DataFrame:
    """qid, tag: one row per tag any note of the query carries (a case's tag tags its query)."""
    if notes.empty:
        return pd.DataFrame(columns=["qid", "tag"])
    ex = notes[["qid", "tags"]].explode("tags").dropna(subset=["tags"]).rename(columns={"tags": "tag"})
    return ex.drop_duplicates().reset_index(drop=True)


def filter_by_tags(rows: pd.DataFrame, notes: pd.DataFrame, tags: Sequence[str]) -> pd.DataFrame:
    """Rows (any frame with a qid column) of queries carrying any of ``tags``; no tags = all rows. A filter over
    queries, like the domain and task-type filters, so paired comparisons keep the same queries for every run."""
    if not tags:
        return rows
    qt = query_tags(notes)
    keep = set(qt.loc[qt["tag"].isin(list(tags)), "qid"])
    return rows[rows["qid"].isin(keep)]


def by_tag(rows: pd.DataFrame, notes: pd.DataFrame, untagged: str = "(untagged)") -> pd.DataFrame:
    """``rows`` with a ``tag`` column, one copy per tag of its query (``untagged`` when it has none): the input of a
    breakdown by tag, where a query with two tags counts in both groups."""
    qt = query_tags(notes)
    out = rows.merge(qt, on="qid", how="left")
    out["tag"] = out["tag"].fillna(untagged)
    return out
