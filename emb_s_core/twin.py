"""The benign twin of the built ladder: the needle-in-a-haystack control (DESIGN §1, issue 11).

Same rungs, budgets, kept queries and gold documents as the built (adversarial) ladder, but everything else is
*irrelevant to every kept query*: no hard negative of any kept query and no document among the top-N of any kept
query under the reference retrievers (bm25 over the whole bank, plus every dense retriever whose vectors for the
whole bank are already cached: the twin never embeds the bank unless a dense reference is asked for by name).

One shared twin per rung (not per-query pools): every query of a rung searches the same documents, so a run scores
the twin exactly like the built ladder (one membership mask per rung, the rung's own BM25 statistics from the same
term-frequency matrix, the same cached vectors). The sampling mirrors ``ladder.build`` with its own seeded
permutations, so twin rungs nest the same way (64K/d ⊂ 128K/d ⊂ 256K/d ⊂ 512K ⊂ 1M ⊂ … ⊂ full). When the bank has too
few irrelevant documents, a twin rung is smaller than its built rung and its row says so (``composition["note"]``);
it is never padded with near documents.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np

from emb_s_core import bank, ladder, retrievers, runs
from emb_s_core.errors import EmbSError
from emb_s_core.store import Workspace

DEFAULT_TOP_N = 20
SPARSE_REFERENCE = "bm25"
#: a twin rung holding less than this share of its built rung's tokens is reported as short
FULL_ENOUGH = 0.98
_BATCH = 256


@dataclass
class NearDocuments:
    """What the twin leaves out: per kept query its hard negatives and its top-N under each reference retriever."""

    hard_negatives: set[int]
    neighbours: dict[str, set[int]]  # reference spec -> top-N documents of any kept query
    per_query: dict[str, set[int]]  # qid -> hard negatives ∪ top-N of that query (gold excepted)
    references: list[str]
    #: gold documents of some kept query that are hard negatives or top-N neighbours of another kept query: they
    #: stay in the twin (their own query needs them), the interference a shared twin cannot remove
    gold_near_other: set[int] = field(default_factory=set)

    @property
    def all(self) -> set[int]:
        return self.hard_negatives.union(*self.neighbours.values())


def cached_dense_references(ws: Workspace) -> list[tuple[str, int]]:
    """(spec, chunk size) of the dense retrievers whose vectors cover the whole bank already (from the workspace's
    runs, hybrid parts included): using them as references embeds nothing."""
    from emb_s_core.retrievers.dense import cache_table

    seen: list[tuple[str, int]] = []

    def collect(cfg: dict) -> None:
        if str(cfg.get("spec", "")).startswith("dense:") and cfg.get("chunk_size"):
            pair = (cfg["spec"], int(cfg["chunk_size"]))
            if pair not in seen:
                seen.append(pair)
        for part in cfg.get("parts", []) or []:
            collect(part)

    for cfg in runs.list_runs(ws)["config"]:
        collect(json.loads(cfg).get("retriever", {}))
    hashes = set(bank.documents(ws, ["content_hash"])["content_hash"])
    out = []
    for spec, chunk in seen:
        try:
            key = retrievers.get(spec, chunk_size=chunk).embedder.key
        except EmbSError:  # the model of an old run is not installed here: not a reference
            continue
        table = cache_table(key, chunk)
        if ws.has_table(table) and hashes <= set(ws.read(table, ["content_hash"])["content_hash"].to_pylist()):
            out.append((spec, chunk))
    return out


def near_documents(ws: Workspace, qids: list[str], top_n: int = DEFAULT_TOP_N,
                   references: list[str] | None = None) -> NearDocuments:
    """Hard negatives and top-``top_n`` neighbours (over the whole bank) of the queries ``qids``, gold excepted.

    ``references`` None: bm25 plus the dense retrievers with cached vectors; otherwise exactly those specs (a dense
    one named here is embedded if it must be).
    """
    if top_n < 0:
        raise EmbSError(f"--top-n must be 0 or more (got {top_n})", fix="pass e.g. --top-n 20.")
    qs = bank.queries(ws).set_index("qid").loc[qids]
    gold = {int(d) for refs in qs["ref_ids"] for d in refs}
    specs = [(SPARSE_REFERENCE, None)] + cached_dense_references(ws) if references is None else \
        [(s, None) for s in references]
    own = {q: {int(d) for d in refs} for q, refs in zip(qs.index, qs["ref_ids"])}
    per_query = {q: {int(d) for d in negs} - gold for q, negs in zip(qs.index, qs["hard_negative_ids"])}
    gold_near_other = {int(d) for q, negs in zip(qs.index, qs["hard_negative_ids"]) for d in negs
                       if int(d) in gold and int(d) not in own[q]}
    hard = set().union(*per_query.values()) if per_query else set()
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
                    near = top - gold
                    per_query[qid] |= near
                    found |= near
            neighbours[spec] = found
    return NearDocuments(hard, neighbours, per_query, [s for s, _ in specs], gold_near_other)


def build(ws: Workspace, top_n: int = DEFAULT_TOP_N, references: list[str] | None = None) -> ladder.Ladder:
    """Build and store the benign twin of the workspace's built ladder (which must be current)."""
    built = ladder.load(ws)
    built_from = ladder.bank_state(ws)
    opts = built.options
    seed = int(opts.get("seed", 0))
    docs = bank.documents(ws, ["doc_id", "domain", "source"])
    tok = bank.token_counts(ws, opts.get("encoding"))
    docs["n_tokens"] = tok.loc[docs["doc_id"]].to_numpy()
    qs = bank.queries(ws)
    kept_qids = list(built.kept.loc[built.kept["kept"], "qid"])
    gold = np.unique(np.concatenate([np.asarray(r, np.int64) for r in qs.loc[qs["qid"].isin(kept_qids), "ref_ids"]]
                                    or [np.empty(0, np.int64)]))
    near = near_documents(ws, kept_qids, top_n, references)
    near_ids = np.setdiff1d(np.fromiter(near.all, np.int64, len(near.all)), gold)
    irrelevant = np.setdiff1d(docs["doc_id"].to_numpy(np.int64), np.union1d(near_ids, gold))
    domain_of = docs.set_index("doc_id")["domain"]
    messages = [(f"benign twin: {len(irrelevant):,} of {len(docs):,} documents are irrelevant to every kept query "
                 f"({len(near.hard_negatives):,} hard negatives and the top-{top_n} under "
                 f"{', '.join(near.references) or 'no retriever'} left out; {len(gold):,} gold kept)"),
                f"benign twin: {len(near.gold_near_other):,} gold documents are also near another kept query (a "
                "hard negative or top-N neighbour of it); they stay, since their own query needs them: the "
                "interference a shared twin cannot remove"]

    def shuffled(ids: np.ndarray, *labels: str) -> np.ndarray:
        ids = np.sort(ids)
        return ids[ladder.seeded_rng(seed, "benign", *labels).permutation(len(ids))]

    base: dict[str, np.ndarray] = {}  # the twin 64K/<d> pools first: the mixed rungs of every domain draw on them
    exhausted: dict[str, bool] = {}
    for r in built.rungs:
        if r.kind == "domain":
            r_gold = np.intersect1d(r.doc_ids, gold)
            cand = shuffled(irrelevant[domain_of.loc[irrelevant].to_numpy() == r.domain], "fill", r.domain)
            fill = ladder.prefix_within(cand, tok, r.budget - int(tok.loc[r_gold].sum()))
            base[r.domain] = np.concatenate([r_gold, fill])
            exhausted[r.name] = len(fill) == len(cand)
    twins: list[ladder.Rung] = []
    for r in built.rungs:  # ladder order: domain and mixed rungs, then shared, global, full
        r_gold = np.intersect1d(r.doc_ids, gold)
        budget = r.budget
        if r.kind == "domain":
            ids = base[r.domain]
        elif r.kind == "mixed":
            own = np.union1d(base[r.domain], r_gold)  # the other domains' gold the built rung mixed in, too
            others = np.concatenate([v for d, v in base.items() if d != r.domain] or [np.empty(0, np.int64)])
            others = shuffled(np.setdiff1d(np.setdiff1d(others, own), gold), "mix", r.domain)
            fill = ladder.prefix_within(others, tok, budget - int(tok.loc[own].sum()))
            ids = np.concatenate([own, fill])
            exhausted[r.name] = len(fill) == len(others)
        elif r.kind == "shared":
            ids = np.unique(np.concatenate(list(base.values()) + [r_gold]))
            exhausted[r.name] = any(exhausted.get(b.name, False) for b in built.rungs if b.kind == "domain")
        else:  # global doubling rungs and full: the shared twin plus a prefix of ONE permutation of the rest
            shared = next(t for t in twins if t.kind == "shared")
            rest = shuffled(np.setdiff1d(irrelevant, shared.doc_ids), "global")
            if r.kind == "full":
                fill = rest
            else:
                fill = ladder.prefix_within(rest, tok, budget - shared.n_tokens)
            ids = np.unique(np.concatenate([shared.doc_ids, fill, r_gold]))
            exhausted[r.name] = len(fill) == len(rest)
        twin = ladder.make_rung(ladder.qualified(ladder.BENIGN, r.name), r.kind, r.domain, r.size, budget, ids,
                            r.qids, docs, qs)
        twin.order = r.order
        twin.composition["built_tokens"] = r.n_tokens
        twin.composition["fill"] = round(twin.n_tokens / r.n_tokens, 4) if r.n_tokens else 1.0
        twin.composition["near_present"] = int(np.isin(twin.doc_ids, near_ids).sum())  # 0 by construction
        if r.kind == "full":
            twin.composition["note"] = (f"the {len(irrelevant):,} irrelevant documents and the gold; "
                                        f"{len(near_ids):,} near documents left out")
        elif exhausted[r.name] and twin.n_tokens < FULL_ENOUGH * r.n_tokens:
            twin.composition["note"] = (f"short: {twin.n_tokens:,} of the built rung's {r.n_tokens:,} tokens "
                                        f"({twin.composition['fill']:.0%}); the bank has too few documents "
                                        "irrelevant to every kept query")
            messages.append(f"{twin.name}: {twin.composition['note']}")
        twins.append(twin)

    kept = built.kept.drop(columns=["ladder"], errors="ignore").copy()
    twin_ladder = ladder.Ladder(twins, kept, dict(opts), messages)
    settings = {"twin_of": ladder.fingerprint(ws, ladder.BUILT), "top_n": top_n, "references": near.references,
                "near_documents": len(near_ids), "irrelevant_documents": len(irrelevant),
                "gold_near_other_queries": len(near.gold_near_other)}
    twin_ladder.options.update(settings)
    ladder.store(ws, twin_ladder, built_from, kind=ladder.BENIGN, extra_settings=settings)
    return twin_ladder
