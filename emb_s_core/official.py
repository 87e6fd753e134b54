"""The official ladder: an EMB-S release's published scales stored as rungs, exactly as published (DESIGN §1).

Why a ladder kind of its own: the release fixes each scale's searchable corpus (``data/<scale>/unique_reference.pkl``),
so rebuilding rungs with our own sampler would evaluate on other pools than the paper. The importer records each
scale's membership (table ``doc_sets``); this module turns it into the ``official`` ladder beside the built one, with
the same composition statistics, so runs, reports and pages treat it like any ladder.

What the paper promises is checked, not assumed: every kept query is evaluated on every official rung, so a query
whose gold is missing from any rung is dropped (and named); rungs that do not nest are reported, never "fixed".
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from emb_s_core import bank, ladder, tokens
from emb_s_core.errors import EmbSError
from emb_s_core.store import Workspace

#: Rung.kind of an official scale: every kept query is evaluated on it
SCALE = "scale"
#: gold documents named per dropped query in its reason
NAMED_GOLD = 3


def release_sources(ws: Workspace) -> list[str]:
    """Sources whose import recorded published scales (an EMB-S release)."""
    sets = bank.doc_sets(ws)
    details = bank.source_details(ws)
    return [s for s in dict.fromkeys(sets["source"]) if details.get(s, {}).get("format") == "emb-s-release"]


def _source(ws: Workspace, source: str | None) -> str:
    found = release_sources(ws)
    if source is not None:
        if source not in found:
            raise EmbSError(f"source {source!r} has no published scales in {ws.path}",
                            fix=f"use one of: {', '.join(found) or 'none (import an EMB-S release root first)'}.")
        return source
    if not found:
        raise EmbSError(f"the workspace {ws.path} holds no EMB-S release with published scales",
                        fix=f"import one first: `emb-s import --format emb-s-release ROOT --workspace {ws.cli}`.")
    if len(found) > 1:
        raise EmbSError(f"the workspace holds {len(found)} releases ({', '.join(found)})",
                        fix="choose one with --source NAME.")
    return found[0]


def build(ws: Workspace, source: str | None = None, encoding: str | None = None,
          progress: bool = False) -> ladder.Ladder:
    """Store the release's scales as the workspace's official ladder (one transaction; the built ladder stays)."""
    source = _source(ws, source)
    built_from = ladder.bank_state(ws)
    encoding = encoding or bank.encoding_of(ws)
    sets = bank.doc_sets(ws, source).sort_values(["set_order", "doc_id"])
    docs = bank.documents(ws, ["doc_id", "domain", "source"])
    tok = ladder.serialized_tokens(ws, encoding, progress=progress)  # as a model is shown them, like built rungs
    docs["n_tokens"] = tok.loc[docs["doc_id"]].to_numpy()
    qs = bank.queries(ws)
    qs = qs[qs["source"] == source]
    if qs.empty:
        raise EmbSError(f"source {source!r} has no queries", fix="import the release with its qar split first.")
    scales = [(name, np.sort(g["doc_id"].to_numpy(np.int64)))
              for name, g in sets.groupby("set", sort=False)]
    messages: list[str] = []
    kept, reasons = _gold_check(qs, scales)
    if reasons:
        messages.append(f"dropped {len(reasons)} of {len(qs)} queries whose gold is not in every official rung")
    for (lower, a), (upper, b) in zip(scales, scales[1:]):
        missing = np.setdiff1d(a, b, assume_unique=True)
        if len(missing):
            messages.append(f"official rungs do not nest: {upper} lacks {len(missing):,} of {lower}'s "
                            f"{len(a):,} documents (kept as published)")
    rungs = []
    for i, (name, ids) in enumerate(scales):
        size = tokens.parse_size(name) if name != "all" else None
        rung = ladder.make_rung(ladder.qualified(ladder.OFFICIAL, name), SCALE, None, size, None, ids, kept, docs,
                                qs)
        rung.order = i
        if size is not None and rung.n_tokens > size:
            messages.append(f"{name} holds {rung.n_tokens:,} tokens in {encoding} as serialized for a model "
                            f"(more than its label, {size:,}); kept as published")
        rungs.append(rung)
    kept_rows = [{"qid": q, "domain": d, "kept": q not in reasons, "reason": reasons.get(q, "")}
                 for q, d in zip(qs["qid"], qs["domain"])]
    lad = ladder.Ladder(rungs, pd.DataFrame(kept_rows, columns=ladder.KEPT_SCHEMA.names),
                        {"source": source, "encoding": encoding, "scales": [n for n, _ in scales]}, messages)
    ladder.store(ws, lad, built_from, kind=ladder.OFFICIAL)
    return lad


def _gold_check(qs: pd.DataFrame, scales: list[tuple[str, np.ndarray]]) -> tuple[list[str], dict[str, str]]:
    """(kept qids, qid -> why dropped): a query stays only when all its gold is in every scale."""
    qids = qs["qid"].to_numpy()
    lengths = qs["ref_ids"].map(len).to_numpy()
    flat = np.concatenate([np.asarray(r, np.int64) for r in qs["ref_ids"]])
    owner = np.repeat(np.arange(len(qs)), lengths)
    reasons: dict[str, str] = {}
    for name, ids in scales:
        absent = ~np.isin(flat, ids)
        for row in np.unique(owner[absent]):
            if qids[row] in reasons:
                continue
            gold = flat[(owner == row) & absent][:NAMED_GOLD]
            reasons[qids[row]] = f"gold document(s) {', '.join(map(str, gold))} not in official rung {name}"
    return [q for q in qids if q not in reasons], reasons
