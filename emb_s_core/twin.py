"""The benign twin of the built ladder: the needle-in-a-haystack control (DESIGN §1, issues 11 and 21).

Same rungs, budgets, kept queries and gold documents as the built (adversarial) ladder, but benign for every query:
query q is scored on a pool holding none of ITS OWN near misses — its hard negatives and its top-N documents under
the reference retrievers, its own gold excepted — and as many tokens as the built rung (within 3%, never over the
budget). The references are chosen once, when the twin is built (default :data:`DEFAULT_REFERENCES`: bm25 over the
whole bank; ``--reference`` names others, a dense one is embedded if it must be), stored with it and part of every
twin rung's identity, so rebuilding with other references marks twin results stale. They never depend on which
vectors happen to be cached or which runs exist: every compared retriever shares that one twin. A reference's own
gap is partly by construction (its own top-N left each pool, which can only help it): tables say so.

One twin shared by every query cannot do this wherever one query's gold is another's near miss (on distractor-style
banks almost every paragraph is), and a shared twin that leaves out every near document shrinks to little more than
the gold. So a twin rung is either *shared* (kept only when that shared twin is clean for every query and full on
every rung) or *per-query*: the built rung's membership minus the query's near misses, refilled with documents not
near it (seeded, within the rung's domain rules, nested across the query's rungs). A per-query pool is stored as a
delta (removed ids, added ids) per (twin rung, query) in the ``twin_deltas`` table, never as a membership per query;
retrievers score it exactly through ``rank_each`` (dense: a per-query mask; BM25: the pool's statistics for the
query's terms from the shared term-frequency matrix).
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pyarrow as pa

from emb_s_core import bank, ladder, retrievers
from emb_s_core.errors import EmbSError
from emb_s_core.store import Workspace

DEFAULT_TOP_N = 20
SPARSE_REFERENCE = "bm25"
#: the twin's reference retrievers when none are named: fixed (no model, defined on every bank), never "whatever
#: vectors are cached", so the twin and the gap do not depend on the order in which things were run (issue 31 §4)
DEFAULT_REFERENCES: tuple[str, ...] = (SPARSE_REFERENCE,)
_BATCH = 256


@dataclass
class NearDocuments:
    """What the twin leaves out: per kept query its hard negatives and its top-N under each reference retriever."""

    hard_negatives: set[int]
    neighbours: dict[str, set[int]]  # reference spec -> top-N documents of any kept query
    per_query: dict[str, set[int]]  # qid -> hard negatives ∪ top-N of that query (its own gold excepted)
    references: list[str]
    #: gold documents of some kept query that are hard negatives or top-N neighbours of another kept query: they
    #: stay in the twin (their own query needs them), the interference a shared twin cannot remove
    gold_near_other: set[int] = field(default_factory=set)

    @property
    def all(self) -> set[int]:
        return self.hard_negatives.union(*self.neighbours.values())


def near_documents(ws: Workspace, qids: list[str], top_n: int = DEFAULT_TOP_N,
                   references: list[str] | None = None) -> NearDocuments:
    """Hard negatives and top-``top_n`` neighbours (over the whole bank) of the queries ``qids``, gold excepted.

    ``references`` None: :data:`DEFAULT_REFERENCES`; otherwise exactly those specs (a dense one named here is
    embedded if it must be).
    """
    if top_n < 0:
        raise EmbSError(f"--top-n must be 0 or more (got {top_n})", fix="pass e.g. --top-n 20.")
    qs = bank.queries(ws).set_index("qid").loc[qids]
    gold = {int(d) for refs in qs["ref_ids"] for d in refs}
    specs = [(s, None) for s in dict.fromkeys(DEFAULT_REFERENCES if references is None else references)]
    if not specs:
        raise EmbSError("no reference retriever named", fix="pass --reference bm25 (the default), or several "
                        "comma-separated specs, e.g. bm25,dense:minilm-l6.")
    own = {q: {int(d) for d in refs} for q, refs in zip(qs.index, qs["ref_ids"])}
    # a query's near misses exclude its OWN gold only: another query's gold near q is one of q's near misses
    per_query = {q: {int(d) for d in negs} - own[q] for q, negs in zip(qs.index, qs["hard_negative_ids"])}
    gold_near_other = {int(d) for q, negs in zip(qs.index, qs["hard_negative_ids"]) for d in negs
                       if int(d) in gold and int(d) not in own[q]}
    hard = set().union(*per_query.values()) - gold if per_query else set()
    neighbours: dict[str, set[int]] = {}
    if top_n:
        for spec, chunk in specs:
            r = retrievers.get(spec, **({"chunk_size": chunk} if chunk else {}))
            r.check()
            r.prepare(ws, None)
            found: set[int] = set()
            texts = qs["text"].tolist()
            for start in range(0, len(texts), _BATCH):
                ranked = r.rank(texts[start: start + _BATCH], {"bank": r.doc_ids}, top_n)["bank"]
                for qid, row, scores in zip(qs.index[start: start + _BATCH], ranked.ids, ranked.scores):
                    # a document scoring 0 shares nothing with the query (BM25 pads its lists with such documents)
                    top = {int(d) for d, s in zip(row, scores) if s > 0}
                    gold_near_other |= (top & gold) - own[qid]
                    per_query[qid] |= top - own[qid]
                    found |= top - gold
            neighbours[spec] = found
    return NearDocuments(hard, neighbours, per_query, [s for s, _ in specs], gold_near_other)


# --------------------------------------------------------------------------------------------- building
#: per-query pools are stored as a delta per (twin rung, query): the built rung's ids the query loses (its own near
#: misses) and the ids that refill it (never a full membership per query)
DELTAS = "twin_deltas"
DELTAS_SCHEMA = pa.schema([pa.field("rung", pa.string()), pa.field("qid", pa.string()),
                           pa.field("removed", pa.list_(pa.int64())), pa.field("added", pa.list_(pa.int64()))])
SHARED_POOLS, PER_QUERY = "shared", "per-query"  # composition["pools"] of a twin rung
#: a twin rung's tokens must be within this share of its built rung's (and never over its budget)
FILL_TOLERANCE = 0.03
#: refilling stops once what is left to fill is below this share of the target (well inside FILL_TOLERANCE)
_REFILL_SLACK = 0.005
_WALK = 256  # candidates examined per step of a refill walk

Delta = tuple[np.ndarray, np.ndarray]  # (removed ids, added ids), each sorted


@dataclass
class _Tokens:
    """Serialized tokens and domains of every document, aligned with the sorted doc ids."""

    ids: np.ndarray
    tokens: np.ndarray
    domains: np.ndarray

    def of(self, ids: np.ndarray) -> np.ndarray:
        return self.tokens[np.searchsorted(self.ids, ids)]

    def sum(self, ids: np.ndarray) -> int:
        return int(self.of(ids).sum()) if len(ids) else 0


def member(sorted_ids: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """Which of ``ids`` are in ``sorted_ids`` (sorted, unique), by binary search: O(|ids| log |sorted_ids|)."""
    ids = np.asarray(ids, dtype=np.int64)
    if not len(sorted_ids) or not len(ids):
        return np.zeros(len(ids), bool)
    pos = np.minimum(np.searchsorted(sorted_ids, ids), len(sorted_ids) - 1)
    return sorted_ids[pos] == ids


def pool(base: np.ndarray, delta: Delta | None) -> np.ndarray:
    """A query's twin pool (sorted ids): the rung's stored membership, minus ``removed``, plus ``added``."""
    if delta is None:
        return base
    removed, added = delta
    return np.union1d(base[~member(removed, base)], added)


def build(ws: Workspace, top_n: int = DEFAULT_TOP_N, references: list[str] | None = None) -> ladder.Ladder:
    """Build and store the benign twin of the workspace's built ladder (which must be current).

    The shared twin (one pool per rung, every query) is kept when it is clean for every kept query (none of their
    near documents, gold included) and within :data:`FILL_TOLERANCE` of every built rung's tokens; otherwise every
    rung gets per-query pools (mixing the two would break nesting: a query's pool on one rung must lie inside its pool
    on the next). A per-query pool is the built rung minus the query's own near misses, refilled to the built rung's
    tokens with documents not near it, drawn within the rung's domain rules (a domain rung from its own domain) from
    one seeded order per rung, starting at a seeded place per query; documents refilled on one rung are carried to
    every larger one, so the query's pools nest.
    """
    built = ladder.load(ws)
    built_from = ladder.bank_state(ws)
    opts = built.options
    seed = int(opts.get("seed", 0))
    docs = bank.documents(ws, ["doc_id", "domain", "source", "content_hash"]).sort_values("doc_id")
    docs = docs.reset_index(drop=True)
    rank = ladder.content_rank(docs)  # every refill draws in content order, as the built ladder does
    tok = ladder.serialized_tokens(ws, opts.get("encoding"))  # what the built ladder counts (header included)
    docs["n_tokens"] = tok.loc[docs["doc_id"]].to_numpy()
    table = _Tokens(docs["doc_id"].to_numpy(np.int64), docs["n_tokens"].to_numpy(np.int64),
                    docs["domain"].to_numpy(object))
    qs = bank.queries(ws)
    kept_qids = list(built.kept.loc[built.kept["kept"], "qid"])
    near = near_documents(ws, kept_qids, top_n, references)
    near_q = {q: np.array(sorted(near.per_query.get(q, ())), np.int64) for q in kept_qids}
    shared, messages = _shared_twin(built, near, docs, tok, qs, seed, top_n, rank)
    problems = _shared_problems(built, shared, near_q, table)
    deltas: dict[str, dict[str, Delta]] = {}
    if problems:
        messages.append(f"benign twin: per-query pools on every rung (the shared twin is not clean and full: "
                        f"{'; '.join(problems[:3])}{' …' if len(problems) > 3 else ''})")
        twins, deltas = _per_query_twin(built, near_q, table, docs, qs, seed, rank)
    else:
        messages.append("benign twin: the shared twin is clean for every kept query and full on every rung: one "
                        "pool per rung")
        twins = shared
        for t, r in zip(twins, built.rungs):
            t.composition.update(_pool_summary(t, r, {q: None for q in r.qids}, near_q, qs, table))
    for t in twins:  # the references are part of what a twin rung is: other references, other results
        t.membership_hash = _reference_hash(t.membership_hash, near.references, top_n)
        if t.composition.get("fill", 1.0) < 1 - FILL_TOLERANCE:
            messages.append(f"{t.name}: {t.composition['fill_note']}")
    kept = built.kept.drop(columns=["ladder"], errors="ignore").copy()
    twin_ladder = ladder.Ladder(twins, kept, dict(opts), messages)
    settings = {"twin_of": ladder.fingerprint(ws, ladder.BUILT), "top_n": top_n, "references": near.references,
                "near_documents": len(near.all - set(_gold(qs, kept_qids).tolist())),
                "gold_near_other_queries": len(near.gold_near_other),
                "pools": PER_QUERY if deltas else SHARED_POOLS}
    twin_ladder.options.update(settings)
    rows = [(rung, q, d[0], d[1]) for rung, per in deltas.items() for q, d in per.items()]
    table_out = pa.table({"rung": [r[0] for r in rows], "qid": [r[1] for r in rows],
                          "removed": [r[2] for r in rows], "added": [r[3] for r in rows]}, schema=DELTAS_SCHEMA)
    with ws.transaction():  # the rungs and their deltas commit together
        ladder.store(ws, twin_ladder, built_from, kind=ladder.BENIGN, extra_settings=settings)
        ws.write(DELTAS, table_out, mode="overwrite", schema=DELTAS_SCHEMA)
    return twin_ladder


def _shared_twin(built: ladder.Ladder, near: NearDocuments, docs: pd.DataFrame, tok: pd.Series, qs: pd.DataFrame,
                 seed: int, top_n: int, rank: pd.Series) -> tuple[list[ladder.Rung], list[str]]:
    """One pool per rung, irrelevant to every kept query (gold kept): the twin used when it is clean and full. Its
    sampling mirrors ``ladder.build`` with its own seeded permutations, so its rungs nest the same way."""
    kept_qids = list(built.kept.loc[built.kept["kept"], "qid"])
    gold = _gold(qs, kept_qids)
    near_ids = np.setdiff1d(np.fromiter(near.all, np.int64, len(near.all)), gold)
    irrelevant = np.setdiff1d(docs["doc_id"].to_numpy(np.int64), np.union1d(near_ids, gold))
    domain_of = docs.set_index("doc_id")["domain"]
    messages = [(f"benign twin: {len(irrelevant):,} of {len(docs):,} documents are irrelevant to every kept query "
                 f"({len(near.hard_negatives):,} hard negatives and the top-{top_n} under "
                 f"{', '.join(near.references) or 'no retriever'} left out; {len(gold):,} gold kept)"),
                f"benign twin: {len(near.gold_near_other):,} gold documents are also near another kept query (a "
                "hard negative or top-N neighbour of it): a twin shared by all queries would keep them"]

    def shuffled(ids: np.ndarray, *labels: str) -> np.ndarray:
        ids = ladder.content_sorted(ids, rank)
        return ids[ladder.seeded_rng(seed, "benign", *labels).permutation(len(ids))]

    base: dict[str, np.ndarray] = {}  # the twin 64K/<d> pools first: the mixed rungs of every domain draw on them
    for r in built.rungs:
        if r.kind == "domain":
            r_gold = np.intersect1d(r.doc_ids, gold)
            cand = shuffled(irrelevant[domain_of.loc[irrelevant].to_numpy() == r.domain], "fill", r.domain)
            base[r.domain] = np.concatenate([r_gold, ladder.prefix_within(cand, tok,
                                                                          r.budget - int(tok.loc[r_gold].sum()))])
    union = np.unique(np.concatenate(list(base.values()) or [np.empty(0, np.int64)]))  # the shared pool
    twins: list[ladder.Rung] = []
    for r in built.rungs:  # ladder order: domain and mixed rungs, then shared, global, full
        r_gold = np.intersect1d(r.doc_ids, gold)
        if r.kind == "domain":
            ids = base[r.domain]
        elif r.kind == "mixed":
            own = np.union1d(base[r.domain], r_gold)  # the other domains' gold the built rung mixed in, too
            others = np.concatenate([v for d, v in base.items() if d != r.domain] or [np.empty(0, np.int64)])
            others = shuffled(np.setdiff1d(np.setdiff1d(others, own), gold), "mix", r.domain)
            ids = np.concatenate([own, ladder.prefix_within(others, tok, r.budget - int(tok.loc[own].sum()))])
        elif r.kind == "shared":
            ids = np.unique(np.concatenate(list(base.values()) + [r_gold]))
        else:  # global doubling rungs and full: the shared twin plus a prefix of ONE permutation of the rest
            # a one-domain ladder has no shared rung (its base pool is that union): the union stands in for it
            shared = next((t.doc_ids for t in twins if t.kind == "shared"), union)
            rest = shuffled(np.setdiff1d(irrelevant, shared), "global")
            fill = rest if r.budget is None else ladder.prefix_within(rest, tok, r.budget - int(tok.loc[shared].sum()))
            ids = np.unique(np.concatenate([shared, fill, r_gold]))
        twin = ladder.make_rung(ladder.qualified(ladder.BENIGN, r.name), r.kind, r.domain, r.size, r.budget, ids,
                                r.qids, docs, qs)
        twin.order = r.order
        twins.append(twin)
    return twins, messages


def deltas(ws: Workspace, rungs: list[str] | None = None) -> dict[str, dict[str, Delta]]:
    """The stored per-query deltas: twin rung -> qid -> (removed, added); rungs with shared pools have none."""
    if not ws.has_table(DELTAS):
        return {}
    t = ws.read_pandas(DELTAS)
    if rungs is not None:
        t = t[t["rung"].isin(rungs)]
    out: dict[str, dict[str, Delta]] = {}
    for rung, qid, removed, added in zip(t["rung"], t["qid"], t["removed"], t["added"]):
        out.setdefault(rung, {})[qid] = (np.asarray(removed, np.int64), np.asarray(added, np.int64))
    return out


def _gold(qs: pd.DataFrame, qids: list[str]) -> np.ndarray:
    refs = [np.asarray(r, np.int64) for r in qs.loc[qs["qid"].isin(qids), "ref_ids"]]
    return np.unique(np.concatenate(refs)) if refs else np.empty(0, np.int64)


def _shared_problems(built: ladder.Ladder, shared: list[ladder.Rung], near_q: dict[str, np.ndarray],
                     table: _Tokens) -> list[str]:
    """Why the shared twin cannot serve (empty when it is clean for every kept query and full on every rung)."""
    problems = []
    for t, r in zip(shared, built.rungs):
        dirty = sum(int(member(t.doc_ids, near_q[q]).sum()) for q in r.qids if q in near_q)
        target = table.sum(r.doc_ids)
        if dirty:
            problems.append(f"{t.name} holds {dirty:,} near misses of its own queries")
        if not (1 - FILL_TOLERANCE) * target <= t.n_tokens <= target:
            problems.append(f"{t.name} holds {t.n_tokens:,} of {target:,} tokens")
    return problems


def _refill(candidates: np.ndarray, start: int, exclude: np.ndarray, table: _Tokens, room: int,
            slack: int) -> np.ndarray:
    """Walk ``candidates`` from ``start`` (wrapping), skipping ``exclude`` (sorted), taking each document that still
    fits ``room``, until what is left is at most ``slack`` or the candidates run out."""
    taken: list[int] = []
    n = len(candidates)
    at = 0
    while at < n and room > slack:
        block = candidates[(start + np.arange(at, min(at + _WALK, n))) % n]
        at += len(block)
        block = block[~member(exclude, block)]
        for d, k in zip(block.tolist(), table.of(block).tolist()):
            if k <= room:
                taken.append(d)
                room -= k
                if room <= slack:
                    break
    return np.array(sorted(taken), np.int64)


def _per_query_twin(built: ladder.Ladder, near_q: dict[str, np.ndarray], table: _Tokens, docs: pd.DataFrame,
                    qs: pd.DataFrame, seed: int, rank: pd.Series) -> tuple[list[ladder.Rung], dict[str, dict[str, Delta]]]:
    """Per-query pools on every rung: the twin rungs (membership = the built rung) and their deltas."""
    candidates = {}
    for r in built.rungs:  # documents outside the built rung, within its domain rules, in one seeded order
        outside = ~member(r.doc_ids, table.ids)
        if r.kind == "domain":
            outside &= table.domains == r.domain
        c = ladder.content_sorted(table.ids[outside], rank)
        candidates[r.name] = c[ladder.seeded_rng(seed, "benign", "refill", r.name).permutation(len(c))]
    targets = {r.name: table.sum(r.doc_ids) for r in built.rungs}
    chains: dict[str, list[ladder.Rung]] = {}
    for r in built.rungs:  # ladder order is each query's nesting order (64K/d ⊂ 128K/d ⊂ … ⊂ shared ⊂ … ⊂ full)
        for q in r.qids:
            chains.setdefault(q, []).append(r)
    out: dict[str, dict[str, Delta]] = {r.name: {} for r in built.rungs}  # built rung name -> qid -> delta
    for q, chain in chains.items():
        near = near_q.get(q, np.empty(0, np.int64))
        added = np.empty(0, np.int64)
        for r in chain:
            removed = near[member(r.doc_ids, near)]
            carry = added[~member(r.doc_ids, added)]  # refilled below: kept, so the query's pools nest
            target = targets[r.name]
            room = table.sum(removed) - table.sum(carry)  # the pool holds target − removed + carry so far
            cand = candidates[r.name]
            start = int(ladder.seeded_rng(seed, "benign", "refill", r.name, q).integers(max(len(cand), 1)))
            refill = _refill(cand, start, np.union1d(near, carry), table, room, int(_REFILL_SLACK * target))
            added = np.union1d(carry, refill)
            out[r.name][q] = (removed, added)
    twins = []
    for r in built.rungs:
        twin = ladder.make_rung(ladder.qualified(ladder.BENIGN, r.name), r.kind, r.domain, r.size, r.budget,
                                r.doc_ids, r.qids, docs, qs)
        twin.order = r.order
        twin.composition.update(_pool_summary(twin, r, out[r.name], near_q, qs, table))
        twin.n_tokens = twin.composition["tokens_max"]
        twin.membership_hash = _delta_hash(twin.membership_hash, out[r.name])
        twins.append(twin)
    return twins, {t.name: out[r.name] for t, r in zip(twins, built.rungs)}


def _reference_hash(base_hash: str, references: list[str], top_n: int) -> str:
    """A twin rung's identity with the references and top-N that defined "near": rebuilding the twin with other
    references changes it even where the pools happen to be equal, so results made on the old twin are stale."""
    return hashlib.sha256(json.dumps([base_hash, list(references), int(top_n)]).encode()).hexdigest()


def _delta_hash(base_hash: str, per_query: dict[str, Delta]) -> str:
    """The twin rung's identity: its membership and every query's delta (a rebuilt twin with other pools differs)."""
    digest = hashlib.sha256(base_hash.encode())
    for q in sorted(per_query):
        removed, added = per_query[q]
        digest.update(q.encode() + b"\0" + removed.astype("<i8").tobytes() + b"\1" + added.astype("<i8").tobytes())
    return digest.hexdigest()


def _pool_summary(twin: ladder.Rung, built_rung: ladder.Rung, per_query: dict[str, Delta | None],
                  near_q: dict[str, np.ndarray], qs: pd.DataFrame, table: _Tokens) -> dict:
    """What a row says about a twin rung, measured on each query's own pool: fill (tokens against the built rung's),
    residual near misses (0 by construction), gold present, hard-negative coverage, pool sizes."""
    target = table.sum(built_rung.doc_ids)
    base_tokens = table.sum(twin.doc_ids)
    by_q = qs.set_index("qid")
    tokens_q, sizes, residual, gold_missing, coverage, negs_present = [], [], 0, 0, [], 0
    for q in built_rung.qids:
        delta = per_query.get(q)
        removed, added = delta if delta is not None else (np.empty(0, np.int64), np.empty(0, np.int64))
        tokens_q.append(base_tokens - table.sum(removed) + table.sum(added))
        sizes.append(len(twin.doc_ids) - len(removed) + len(added))

        def present(ids: np.ndarray) -> np.ndarray:
            return (member(twin.doc_ids, ids) & ~member(removed, ids)) | member(added, ids)

        residual += int(present(near_q.get(q, np.empty(0, np.int64))).sum())
        gold = np.asarray(by_q.loc[q, "ref_ids"], np.int64)
        gold_missing += int((~present(gold)).sum())
        negs = np.setdiff1d(np.asarray(by_q.loc[q, "hard_negative_ids"], np.int64), gold)
        if len(negs):
            coverage.append(float(present(negs).mean()))
            negs_present += int(present(negs).sum())
    tokens_arr = np.asarray(tokens_q or [base_tokens], np.int64)
    fill = float(tokens_arr.min() / target) if target else 1.0
    pools = SHARED_POOLS if all(d is None for d in per_query.values()) else PER_QUERY
    summary = {"pools": pools, "built_tokens": target, "fill": round(fill, 4),
               "fill_mean": round(float(tokens_arr.mean() / target), 4) if target else 1.0,
               "tokens_min": int(tokens_arr.min()), "tokens_max": int(tokens_arr.max()),
               "min_documents": int(min(sizes or [len(twin.doc_ids)])), "near_present": residual,
               "gold_missing": gold_missing, "hard_negatives_present": negs_present,
               "hard_negative_coverage": ({"queries_with_hard_negatives": len(coverage),
                                           "mean": float(np.mean(coverage)), "max": float(np.max(coverage))}
                                          if coverage else {"queries_with_hard_negatives": 0})}
    if fill < 1 - FILL_TOLERANCE:
        summary["fill_note"] = (f"short: {int(tokens_arr.min()):,} of the built rung's {target:,} tokens "
                                f"({fill:.0%}) for some query; the bank has too few documents irrelevant to it")
        summary["note"] = summary["fill_note"]
    return summary
