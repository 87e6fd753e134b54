"""External runs: rankings produced by systems outside the workbench, imported into the one results shape.

Two file formats:

- TREC run files, one line per retrieved document: ``qid Q0 docid rank score tag`` (whitespace separated; the list
  is ordered by score, highest first, ties by rank). ``docid`` is the bank's integer doc id.
- JSONL, one ranking per line: ``{"qid": "...", "rung": "64K/law" (optional), "doc_ids": [...], "scores": [...]}``
  (``scores`` optional; ``doc_ids`` already ranked).

A ranking *with* a rung (``--rung`` for TREC, the ``rung`` field for JSONL) is stored for that rung; it must be one
of the query's rungs and hold only that rung's documents. A ranking *without* a rung is one ranking over the whole
bank, stored on every rung the query is evaluated on, filtered to the rung's members (order kept). The whole file is
checked before anything is written; any unknown qid, doc id or rung is an error naming the file and line. A doc id
repeated within one ranking is kept once, at its first (best) place, and the count of dropped repeats is reported:
a repeat is not a position (MRR and nDCG would otherwise count it, unlike pytrec_eval and ranx).
"""
from __future__ import annotations

import re
from array import array
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from emb_s_core import bank, ladder as ladder_mod, runs
from emb_s_core.errors import EmbSError, at
from emb_s_core.sources import validate
from emb_s_core.store import Workspace

FORMATS = ("trec", "jsonl")


@dataclass
class Ranked:
    qid: str
    rung: str | None
    doc_ids: list[int] | np.ndarray  # a TREC file's rankings stay arrays (10M lines in a few hundred MB)
    scores: list[float] | np.ndarray | None
    line: int
    repeats: int = 0  # repeated doc ids dropped from this ranking (the first, best-placed occurrence is kept)


def guess_format(path: Path) -> str:
    return "jsonl" if path.suffix.lower() in (".jsonl", ".json", ".ndjson") else "trec"


def read_trec(path: Path, rung: str | None = None) -> list[Ranked]:
    """Rankings per qid of a TREC run file (sorted by score desc, then rank asc).

    Streamed: each line is checked as it is read and kept as four numbers in compact arrays (about 28 bytes a line,
    not a Python tuple), and at most the ``run_lines`` limit of lines (README, Limits) is read, so a file far
    larger than any real run ends in one line naming the limit instead of minutes and gigabytes."""
    per_qid: dict[str, tuple[array, array, array]] = {}  # -score, rank, doc id
    first_line: dict[str, int] = {}
    bound = validate.limits().run_lines
    count = 0
    qids: dict[str, str] = {}  # as written -> as checked (NFC): each distinct qid is checked once
    for line_no, line in validate.read_lines(path):  # UTF-8 and a bounded line, or one clear error
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        count += 1
        if count > bound:
            validate.check_limit("run_lines", count, f"{path} (stopped reading at line {line_no:,})")
        parts = line.split()
        fast = _fast_fields(parts) if len(parts) == 6 else None
        if fast is None:  # something is wrong: the careful reading says what, where
            fast = _checked_fields(parts, at(path, line_no))
        raw_qid, doc, r, s = fast
        qid = qids.get(raw_qid)
        if qid is None:
            qid = qids[raw_qid] = validate.check_identifier(raw_qid, at(path, line_no), "qid", spaces=False)
        rows = per_qid.get(qid)
        if rows is None:
            rows = per_qid[qid] = (array("d"), array("q"), array("q"))
            first_line[qid] = line_no
        rows[0].append(-s)
        rows[1].append(r)
        rows[2].append(doc)
    out = []
    for qid, (neg_scores, ranks, docs) in per_qid.items():
        order = np.lexsort((np.frombuffer(ranks, np.int64), np.frombuffer(neg_scores, np.float64)))
        ids = np.frombuffer(docs, np.int64)[order]
        scores = -np.frombuffer(neg_scores, np.float64)[order]
        keep = np.sort(np.unique(ids, return_index=True)[1])  # first (best-placed) occurrence of each id
        out.append(Ranked(qid, rung, ids[keep], scores[keep], first_line[qid], len(ids) - len(keep)))
    return out


def _fast_fields(parts: list[str]) -> tuple[str, int, int, float] | None:
    """(qid, doc id, rank, score) of a well-formed line, or None for any line :func:`_checked_fields` must read."""
    qid, _, docid, rank, score, _ = parts
    if not (docid.isascii() and docid.isdigit() and rank.isascii() and rank.isdigit() and score.isascii()
            and "_" not in score and len(docid) < 19 and len(rank) < 19):
        return None
    try:
        value = float(score)
    except ValueError:
        return None
    if not abs(value) <= validate.FLOAT32_MAX:  # also NaN
        return None
    return qid, int(docid), int(rank), value


def _checked_fields(parts: list[str], where: str) -> tuple[str, int, int, float]:
    """The fields of one TREC line, or the EmbSError saying what is wrong with it."""
    if len(parts) != 6:
        raise EmbSError(f"expected 6 fields `qid Q0 docid rank score tag`, got {len(parts)}", where=where,
                        fix="write one retrieved document per line in TREC format.")
    qid, _, docid, rank, score, _ = parts
    doc = _trec_int(docid, where, "docid", "use the bank's integer doc ids (see documents.jsonl / `emb-s info`).")
    r = _trec_int(rank, where, "rank", "rank must be an integer.")
    try:
        if not score.isascii() or "_" in score:  # float() reads "1_0" and other scripts' digits too
            raise ValueError(score)
        s = float(score)
    except ValueError:
        raise EmbSError(f"score {score!r} is not a number", where=where, fix="score must be a number.") from None
    validate.check_score(s, where)
    return qid, doc, r, s


#: a TREC integer: ASCII digits with an optional sign, nothing else (``int()`` would also take ``1_0``, ``١٠``
#: and fullwidth ``１２`` and silently read another id)
_ASCII_INT = re.compile(r"[+-]?[0-9]+")


def _trec_int(text: str, where: str, field: str, fix: str) -> int:
    """A 64-bit integer field of a TREC line, plain ASCII decimal (a larger one would overflow the stored int64)."""
    if not _ASCII_INT.fullmatch(text):
        raise EmbSError(f"{field} {text[:40]!r} is not an integer (plain ASCII decimal digits 0-9)", where=where,
                        fix=fix)
    value = int(text)
    if not validate.INT64_MIN <= value <= validate.INT64_MAX:
        raise EmbSError(f"{field} {text[:30]} is outside the 64-bit range", where=where, fix=fix)
    return value


def read_jsonl(path: Path) -> list[Ranked]:
    from emb_s_core.sources._io import iter_jsonl, require_field

    out = []
    for line_no, obj in iter_jsonl(path):
        where = at(path, line_no)
        qid = validate.id_field(obj, "qid", where)
        ids = require_field(obj, "doc_ids", where, list)
        if not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
            raise EmbSError("doc_ids must be a list of integer doc ids", where=where,
                            fix="use the bank's integer doc ids, best first.")
        scores = obj.get("scores")
        if scores is not None:
            if not isinstance(scores, list) or len(scores) != len(ids) or not all(
                    isinstance(s, (int, float)) and not isinstance(s, bool) for s in scores):
                raise EmbSError("scores must be a list of finite numbers, one per doc id", where=where,
                                fix="drop scores or give one number per entry of doc_ids.")
            for s in scores:
                validate.check_score(float(s), where)
        rung = obj.get("rung")
        if rung is not None and not isinstance(rung, str):
            raise EmbSError("rung must be a string", where=where, fix='e.g. "rung": "64K/law".')
        keep = _first_occurrences(ids)
        out.append(Ranked(qid, rung, [ids[i] for i in keep], None if scores is None else
                          [float(scores[i]) for i in keep], line_no, len(ids) - len(keep)))
    return out


def _first_occurrences(ids: list[int]) -> list[int]:
    """Positions of the first occurrence of each id, in order: a repeated id is dropped (it is not a second
    position; pytrec_eval and ranx count a document once), and ``import_run`` reports how many were."""
    seen: set[int] = set()
    keep = []
    for i, d in enumerate(ids):
        if d not in seen:
            seen.add(d)
            keep.append(i)
    return keep


def _place(placed: dict[tuple[str, str], int], path: Path, rk: Ranked, rung: str) -> None:
    if (rung, rk.qid) in placed:
        raise EmbSError(f"query {rk.qid!r} gets two rankings on rung {rung} (lines {placed[(rung, rk.qid)]} and "
                        f"{rk.line}): a per-rung ranking and a whole-bank ranking overlap", where=at(path, rk.line),
                        fix="give each query either per-rung rankings or one ranking over the bank.")
    placed[(rung, rk.qid)] = rk.line


def import_run(ws: Workspace, name: str, path: str | Path, fmt: str | None = None,
               rung: str | None = None) -> dict:
    """Validate the whole file, then store it as run ``name`` (kind "external") in one transaction."""
    from emb_s_core.sources._io import require_file, sha256_of

    validate.check_name(name, "run name")
    path = require_file(Path(path), "run file")
    fmt = fmt or guess_format(path)
    if fmt not in FORMATS:
        raise EmbSError(f"unknown run format {fmt!r}", fix=f"use one of {', '.join(FORMATS)}.")
    if rung is not None and fmt != "trec":
        raise EmbSError("--rung applies to TREC files only", fix="give each JSONL line a \"rung\" field instead.")
    rankings = read_trec(path, rung) if fmt == "trec" else read_jsonl(path)
    if not rankings:
        raise EmbSError("the run file holds no rankings", where=str(path), fix="check the file.")
    lad = ladder_mod.load(ws)
    qids = set(bank.queries(ws)["qid"])
    all_docs = bank.documents(ws, ["doc_id"])["doc_id"].to_numpy(np.int64)
    rungs_of: dict[str, list[str]] = {}
    for r in lad.rungs:
        for q in r.qids:
            rungs_of.setdefault(q, []).append(r.name)
    rows = []
    seen: set[tuple[str, str | None]] = set()
    placed: dict[tuple[str, str], int] = {}  # (rung, qid) -> line that filled it
    for rk in rankings:
        where = at(path, rk.line)
        if rk.qid not in qids:
            raise EmbSError(f"unknown query id {rk.qid!r}", where=where,
                            fix="use the qids of the workspace's bank (see queries.jsonl or `emb-s info`).")
        ids = np.asarray(rk.doc_ids, dtype=np.int64)
        unknown = ids[~np.isin(ids, all_docs)]
        if len(unknown):
            raise EmbSError(f"unknown doc id {int(unknown[0])} in the ranking of query {rk.qid!r}", where=where,
                            fix="use the bank's integer doc ids.")
        key = (rk.qid, rk.rung)
        if key in seen:
            raise EmbSError(f"a second ranking for query {rk.qid!r}" + (f" on rung {rk.rung}" if rk.rung else ""),
                            where=where, fix="give one ranking per query (and rung).")
        seen.add(key)
        scores = np.asarray(rk.scores, dtype=np.float32) if rk.scores is not None else None
        if rk.rung is not None:
            r = lad.rung(rk.rung)
            if rk.qid not in set(r.qids):
                raise EmbSError(f"query {rk.qid!r} is not evaluated on rung {rk.rung}", where=where,
                                fix=f"its rungs are: {', '.join(rungs_of.get(rk.qid, [])) or 'none (not kept)'}.")
            outside = ids[~np.isin(ids, r.doc_ids)]
            if len(outside):
                raise EmbSError(f"doc id {int(outside[0])} is not a member of rung {rk.rung}", where=where,
                                fix="rank only the rung's documents, or import without a rung to filter a "
                                    "ranking over the whole bank.")
            _place(placed, path, rk, rk.rung)
            rows.append({"rung": rk.rung, "qid": rk.qid, "doc_ids": ids, "scores": scores})
            continue
        for rung_name in rungs_of.get(rk.qid, []):
            _place(placed, path, rk, rung_name)
            keep = np.isin(ids, lad.rung(rung_name).doc_ids)
            rows.append({"rung": rung_name, "qid": rk.qid, "doc_ids": ids[keep],
                         "scores": None if scores is None else scores[keep]})
    if not rows:
        raise EmbSError("none of the file's queries is evaluated on the ladder (all dropped from the kept set)",
                        where=str(path), fix="check the qids against `emb-s ladder show`.")
    config = {"format": fmt, "file": path.name, "sha256": sha256_of(path), "rung": rung,
              "ladder": {r.name: r.membership_hash for r in lad.rungs}}
    repeats = {"duplicates_dropped": sum(rk.repeats for rk in rankings),
               "rankings_with_duplicates": sum(rk.repeats > 0 for rk in rankings)}
    existing = runs.get_run(ws, name)
    if existing is not None and existing["config"] == config:
        return {"run": name, "rows": 0, "queries": len({r["qid"] for r in rows}), "already_imported": True, **repeats}
    with ws.transaction():
        runs.create_run(ws, name, "external", path.name, config)
        runs.save_results(ws, name, rows)
    return {"run": name, "rows": len(rows), "queries": len({r["qid"] for r in rows}), "already_imported": False,
            **repeats}
