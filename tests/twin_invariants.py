"""The benign twin's invariants, checked from the bank with code independent of ``twin.build``: for every kept query
and every twin rung it is on, its pool holds none of its own hard negatives and none of its own top-N neighbours
under each reference retriever (its own gold excepted), holds its gold, holds the built rung's tokens within 3% and
never over the budget, and its pools nest along its rungs."""
from __future__ import annotations

import numpy as np

from emb_s_core import bank, ladder, retrievers, twin


def neighbours(ws, qids: list[str], n: int, spec: str) -> dict[str, set[int]]:
    """Top-n of each query over the whole bank under ``spec`` (documents scoring 0 share nothing: left out)."""
    qs = bank.queries(ws).set_index("qid").loc[qids]
    r = retrievers.get(spec)
    r.check()
    r.prepare(ws, None)
    ranked = r.rank(qs["text"].tolist(), {"all": r.doc_ids}, n)["all"]
    return {q: {int(d) for d, s in zip(row, sc) if s > 0} for q, row, sc in zip(qids, ranked.ids, ranked.scores)}


def assert_invariants(ws, top_n: int, references: tuple[str, ...] = ("bm25",), tolerance: float = 0.03,
                      strict_full: bool = True) -> dict:
    """Assert every invariant; returns counts (pairs checked, per-query rungs) so a caller can see it was not
    vacuous. ``strict_full=False``: the ``full`` rung (the whole bank, nothing left to refill from) may be short
    on a tiny bank, provided its row says so."""
    built, benign = ladder.load(ws), ladder.load(ws, kind="benign")
    qs = bank.queries(ws).set_index("qid")
    kept = list(built.kept.query("kept")["qid"])
    near = {q: {int(d) for d in qs.loc[q, "hard_negative_ids"]} for q in kept}
    for spec in references:
        for q, top in neighbours(ws, kept, top_n, spec).items():
            near[q] |= top
    for q in kept:
        near[q] -= {int(d) for d in qs.loc[q, "ref_ids"]}
    tok = ladder.serialized_tokens(ws)
    deltas = twin.deltas(ws)
    pairs, removed_any = 0, 0
    previous: dict[str, np.ndarray] = {}
    for b, t in zip(built.rungs, benign.rungs):
        assert t.name == ladder.qualified("benign", b.name) and t.qids == b.qids and t.budget == b.budget
        target = int(tok.loc[b.doc_ids].sum())
        for q in b.qids:
            delta = deltas.get(t.name, {}).get(q)
            pool = twin.pool(t.doc_ids, delta)
            members = set(pool.tolist())
            assert not members & near[q], (t.name, q, sorted(members & near[q])[:5])
            assert {int(d) for d in qs.loc[q, "ref_ids"]} <= members, (t.name, q)
            tokens = int(tok.loc[pool].sum())
            assert tokens <= (b.budget if b.budget is not None else target), (t.name, q, tokens, b.budget)
            if strict_full or b.kind != "full":
                assert abs(tokens - target) <= tolerance * target, (t.name, q, tokens, target)
            elif abs(tokens - target) > tolerance * target:
                assert t.composition["note"].startswith("short"), t.name
            if q in previous:
                assert set(previous[q].tolist()) <= members, (t.name, q)
            previous[q] = pool
            pairs += 1
            removed_any += int(delta is not None and len(delta[0]) > 0)
        assert t.composition["near_present"] == 0 and t.composition["gold_missing"] == 0, t.name
    return {"pairs": pairs, "queries_with_removals": removed_any}
