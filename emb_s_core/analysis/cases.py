"""Shareable case lists: the cases of a filtered view (a cell's failures, a Compare "A gets, B misses" list, a tag)
as CSV / JSONL with everything a colleague needs to look again — qid, run, rung, the rank of each gold and
hard-negative document, the case's tags and notes, and a URL that reopens the case in the drill-down — and such a
list read back and stored as a tag.

Why here: the drill-down, Compare and the CLI export the same columns, and the import is the same validation and the
same one-transaction write (``notes.save_many``) wherever a list comes from.
"""
from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path
from typing import Sequence
from urllib.parse import urlencode

import pandas as pd

from emb_s_core import metrics
from emb_s_core import notes as notes_mod
from emb_s_core.errors import EmbSError, at

FORMATS = ("csv", "jsonl")
COLUMNS = ["qid", "run", "rung", "gold_ids", "gold_ranks", "hn_ids", "hn_ranks", "tags", "notes", "url"]
DEFAULT_BASE_URL = "http://localhost:8501"
DRILLDOWN_PATH = "query_drilldown"  # the drill-down page's url path (app.py: page title, lower case)
MAX_BYTES = 50 * 1024 * 1024
MAX_ROWS = 1_000_000


REPO = Path(__file__).resolve().parents[2]


def data_roots() -> tuple[Path, Path]:
    """The dashboard's data folder (``$EMB_S_DATA`` or the repository's ``data/``), resolved and as named (links
    placed there by whoever runs the server stay inside it)."""
    named = Path(os.environ.get("EMB_S_DATA", REPO / "data")).expanduser().absolute()
    return named.resolve(), Path(os.path.normpath(named))


def link_name(path: str | Path) -> str:
    """How a link names a workspace: relative to the data folder when under it (``demo``), so a shared link does not
    carry the server's folders and opens the same workspace on another server; the absolute path otherwise."""
    candidate = Path(os.path.normpath(Path(path).absolute()))
    for root in data_roots():
        if root in candidate.parents:
            return candidate.relative_to(root).as_posix()
    return str(candidate)


def drilldown_url(base_url: str, ws_path: str, qid: str, run: str | None, rung: str | None) -> str:
    """The link that reopens one case in the drill-down (the page reads ws, by, q, run, rung from the URL)."""
    params = {"ws": ws_path, "by": "search", "q": qid, **({"run": run} if run else {}),
              **({"rung": rung} if rung else {})}
    return f"{base_url.rstrip('/')}/{DRILLDOWN_PATH}?{urlencode(params)}"


def case_list(rows: pd.DataFrame, queries: pd.DataFrame, notes: pd.DataFrame, ws_path: str,
              base_url: str = DEFAULT_BASE_URL) -> pd.DataFrame:
    """One row per case of ``rows`` (per-query rows: qid, run, rung, gold_ranks, hn_ranks) with the ``COLUMNS``.

    The ranks are those of ``metrics.per_query`` (1-based, 0 = not in the stored list), in the order of the query's
    gold and hard-negative ids, which are listed next to them. A case's tags and notes are those of every note that
    covers it: on the query, on the query for that run, at that rung (or its pooled scale)."""
    qs = queries.drop_duplicates("qid").set_index("qid")
    cases = rows[["qid", "run", "rung"]].reset_index(drop=True).copy()
    for col in ("gold_ranks", "hn_ranks"):
        cases[col] = [list(map(int, r)) if r is not None else [] for r in rows[col]] if col in rows else [[]] * len(
            cases)
    cases["gold_ids"] = [list(dict.fromkeys(map(int, qs.at[q, "ref_ids"]))) for q in cases["qid"]]
    cases["hn_ids"] = [list(dict.fromkeys(map(int, v if v is not None else [])))
                       for v in qs["hard_negative_ids"].reindex(cases["qid"])] if "hard_negative_ids" in qs else \
        [[]] * len(cases)
    covering = _covering_notes(cases, notes)
    cases["tags"] = [c[0] for c in covering]
    cases["notes"] = [c[1] for c in covering]
    cases["url"] = [drilldown_url(base_url, ws_path, q, r, g) for q, r, g in
                    zip(cases["qid"], cases["run"], cases["rung"])]
    return cases[COLUMNS]


def _covering_notes(cases: pd.DataFrame, notes: pd.DataFrame) -> list[tuple[list[str], str]]:
    """(tags, note texts joined by newlines) of the notes covering each case."""
    by_qid: dict[str, list[dict]] = {}
    for n in notes.to_dict("records"):
        by_qid.setdefault(n["qid"], []).append(n)
    out = []
    for qid, run, rung in zip(cases["qid"], cases["run"], cases["rung"]):
        scale = str(rung).split("/", 1)[0] if rung else None
        tags: list[str] = []
        texts: list[str] = []
        for n in by_qid.get(qid, []):
            if n["run"] not in (None, run) or n["rung"] not in (None, rung, scale):
                continue
            tags += [t for t in n["tags"] if t not in tags]
            if n["text"]:
                texts.append(n["text"])
        out.append((tags, "\n".join(texts)))
    return out


def rows_of(per_query: pd.DataFrame, run: str, rung: str, qids: Sequence[str]) -> pd.DataFrame:
    """The per-query rows of ``run`` at ``rung`` for ``qids`` (e.g. the queries of a Compare list), in that order."""
    here = per_query[(per_query["run"] == run) & (per_query["rung"] == rung)].drop_duplicates("qid")
    return here.set_index("qid", drop=False).reindex([q for q in qids if q in set(here["qid"])]).reset_index(
        drop=True)


def to_text(cases: pd.DataFrame, fmt: str) -> str:
    """The list as CSV (lists as JSON arrays in their cells) or JSONL (one JSON object per case)."""
    if fmt not in FORMATS:
        raise EmbSError(f"unknown case-list format {fmt!r}", fix=f"use one of {', '.join(FORMATS)}.")
    if fmt == "jsonl":
        return "".join(json.dumps({k: _plain(v) for k, v in row.items()}, ensure_ascii=False) + "\n"
                       for row in cases.to_dict("records"))
    from emb_s_core.export import csv_cell

    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow([csv_cell(str(c)) for c in cases.columns])
    for row in cases.itertuples(index=False):  # a cell a spreadsheet would run as a formula is escaped (OWASP)
        writer.writerow([csv_cell(json.dumps(v, ensure_ascii=False) if isinstance(v, list) else
                                  ("" if v is None else v)) for v in row])
    return buf.getvalue()


def _plain(v):
    return None if v is None or (isinstance(v, float) and v != v) else v


def format_of(path: str | Path) -> str:
    suffix = Path(path).suffix.lower()
    fmt = {".csv": "csv", ".jsonl": "jsonl", ".json": "jsonl"}.get(suffix)
    if fmt is None:
        raise EmbSError(f"cannot tell the case-list format from the file name {Path(path).name!r}",
                        where=str(path), fix="end it in .csv or .jsonl.")
    return fmt


def read(source: str | Path | bytes, fmt: str | None = None, name: str = "case list") -> pd.DataFrame:
    """qid, run, rung of every case in a list file (or its bytes, e.g. an upload), validated record by record:
    a qid is required text, run and rung optional text; at most ``MAX_BYTES`` and ``MAX_ROWS``."""
    if isinstance(source, (str, Path)):
        path = Path(source)
        name = str(path)
        fmt = fmt or format_of(path)
        if not path.is_file():
            raise EmbSError("the case list does not exist", where=name, fix="check the path.")
        if path.stat().st_size > MAX_BYTES:
            raise EmbSError(f"the case list is larger than {MAX_BYTES // 2**20} MB", where=name,
                            fix="split it into smaller lists.")
        data = path.read_bytes()
    else:
        data = source
        if len(data) > MAX_BYTES:
            raise EmbSError(f"the case list is larger than {MAX_BYTES // 2**20} MB", where=name,
                            fix="split it into smaller lists.")
    if fmt not in FORMATS:
        raise EmbSError(f"unknown case-list format {fmt!r}", where=name, fix=f"use one of {', '.join(FORMATS)}.")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise EmbSError(f"the case list is not UTF-8 text ({exc.reason})", where=name,
                        fix="export it again from EMB-S (CSV or JSONL).") from exc
    records = _jsonl_records(text, name) if fmt == "jsonl" else _csv_records(text, name)
    if not records:
        raise EmbSError("the case list has no cases", where=name, fix="export a list with at least one case.")
    return pd.DataFrame(records, columns=["qid", "run", "rung"])


def _jsonl_records(text: str, name: str) -> list[dict]:
    from emb_s_core.sources import validate

    out = []
    for line_no, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = at(name, line_no)
        validate.check_limit("record_bytes", len(line.encode("utf-8")), where)
        obj = validate.parse_json(line, where)
        if not isinstance(obj, dict):
            raise EmbSError(f"a case must be a JSON object, found {type(obj).__name__}", where=where,
                            fix='write one object a line, e.g. {"qid": "q1", "run": "bm25", "rung": "full"}.')
        out.append(_case(obj, where))
        if len(out) > MAX_ROWS:
            raise EmbSError(f"more than {MAX_ROWS:,} cases", where=name, fix="split the list.")
    return out


def _csv_records(text: str, name: str) -> list[dict]:
    from emb_s_core.export import csv_uncell

    reader = csv.DictReader(io.StringIO(text))
    if not reader.fieldnames or "qid" not in reader.fieldnames:
        raise EmbSError("the CSV has no qid column", where=at(name, 1),
                        fix="the first line must name the columns, including qid (as `emb-s cases export` writes).")
    out = []
    for row in reader:
        out.append(_case({k: (csv_uncell(v) if v != "" else None) for k, v in row.items()},
                         at(name, reader.line_num)))
        if len(out) > MAX_ROWS:
            raise EmbSError(f"more than {MAX_ROWS:,} cases", where=name, fix="split the list.")
    return out


def _case(obj: dict, where: str) -> dict:
    """qid (required text), run and rung (optional text; empty means any) through the one validation layer."""
    from emb_s_core.sources import validate

    qid = validate.text_field(obj, "qid", where)
    if not qid.strip():
        raise EmbSError("a case needs a qid, found an empty one", where=where, fix="give every case its qid.")
    qid = validate.check_identifier(qid.strip(), where, "qid")  # the one id rule: NFC, no control characters
    run = validate.text_field(obj, "run", where, required=False)
    rung = validate.text_field(obj, "rung", where, required=False)
    return {"qid": qid.strip(), "run": (run or "").strip() or None, "rung": (rung or "").strip() or None}


def import_as_tag(ws, source: str | Path | bytes, tag: str, fmt: str | None = None,
                  name: str = "case list") -> dict:
    """Tag every case of a list in this workspace, in one transaction. Cases whose query is not in this bank are
    skipped (counted); a run this workspace does not have is dropped from its case, leaving the query tagged
    (counted). Returns {"cases", "tagged", "unknown_queries", "runs_dropped"}."""
    from emb_s_core import bank, runs

    tag = notes_mod.clean_tags([tag], where="--tag")[0]
    cases = read(source, fmt, name)
    known_q = set(bank.queries(ws)["qid"]) if ws.has_table("queries") else set()
    known_runs = set(runs.list_runs(ws)["run"])
    keys: list[tuple[str, str | None, str | None]] = []
    dropped = 0
    for qid, run, rung in cases.itertuples(index=False):
        if qid not in known_q:
            continue
        if isinstance(run, str) and run not in known_runs:
            run, rung, dropped = None, None, dropped + 1
        keys.append((qid, run if isinstance(run, str) else None, rung if isinstance(rung, str) else None))
    keys = list(dict.fromkeys(keys))
    tagged = notes_mod.save_many(ws, keys, tag) if keys else 0
    return {"cases": len(cases), "tagged": tagged, "unknown_queries": int((~cases["qid"].isin(known_q)).sum()),
            "runs_dropped": dropped}


def for_workspace(ws, *, run: str | None = None, rung: str | None = None, metric: str = "SR@10",
                  tags: Sequence[str] = (), base_url: str = DEFAULT_BASE_URL) -> pd.DataFrame:
    """The case list of a view of ``ws`` (what ``emb-s cases export`` writes): with ``run`` and ``rung`` the failures
    of ``metric`` there (a rung, or a pooled scale), else the cases of ``tags`` (every run and rung, or the given
    ``run`` / ``rung``); tags also narrow the failures. An empty list of failures carries why in
    ``attrs["why_empty"]`` (``drilldown.no_failures_reason``)."""
    from emb_s_core import bank
    from emb_s_core.analysis import drilldown, views

    if not (run and rung) and not tags:
        raise EmbSError("say which cases to export", fix="pass --run RUN --rung RUNG (its failures) or --tag TAG.")
    pq = views.per_query(ws)
    notes = notes_mod.load(ws)
    pq = notes_mod.filter_by_tags(pq, notes, tags)
    if run and rung:
        if run not in set(pq["run"]):
            raise EmbSError(f"no results for run {run!r}", fix="see `emb-s runs list`.")
        x = "rung" if rung in set(pq["rung"]) else "scale"
        if rung not in set(pq[x]):
            raise EmbSError(f"no results at rung or scale {rung!r}", fix="see `emb-s ladder show` for the names.")
        rows = drilldown.failures(pq, run, rung, metrics.metric(metric).name, x=x)
        why = drilldown.no_failures_reason(pq, run, rung, metric, x=x) if rows.empty else ""
    else:
        rows = pq[(pq["run"] == run) if run else slice(None)]
        rows = rows[(rows["rung"] == rung) | (rows["scale"] == rung)] if rung else rows
        why = f"no query carries the tag{'s' * (len(tags) > 1)} {', '.join(tags)} here" if rows.empty else ""
    listed = case_list(rows, bank.queries(ws), notes, link_name(ws.path), base_url)
    listed.attrs["why_empty"] = why
    return listed
