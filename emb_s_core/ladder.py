"""The reference-corpus ladder (paper §3.4, DESIGN.md §1): a fixed query set, a growing searchable pool.

With ``S(D, B)`` = take documents of ``D`` in one seeded random order until adding the next would pass budget ``B``:

- ``64K/<d>``: all gold documents of domain-``d`` queries, then their hard negatives (round-robin across the
  queries in a seeded order, each one that still fits, so no query's distractors crowd out another's), then
  ``S(other domain-d documents)``. If the gold sets and hard negatives do not all fit (the hard negatives counted up
  to ``hn_share`` of the budget, by default all of them), a seeded subset of the domain's queries whose gold and
  hard negatives fit is kept (``strict`` makes that an error); the kept queries are fixed on every rung. Queries
  are ordered by qid and documents by content (:func:`content_rank`, never doc_id) before every seeded draw, so
  membership depends on the bank's content and the seed only, whatever the order or number of imports.
- ``128K/<d>``, ``256K/<d>``: ``C_d^64K ∪ S(⋃_{d'≠d} C_{d'}^64K; B − |C_d^64K|)`` (inter-domain mixing); one
  permutation per domain, so ``128K/d ⊂ 256K/d``; not built when every other pool fits (it would be the shared rung).
- ``512K``: the union of the ``64K/<d>`` pools; with fewer than 8 domains that union is not 8 × 64K tokens, so the
  rung is named ``shared`` (its table row gives its real size).
- ``1M, 2M, 4M, …``: ``C^512K ∪ S(M \\ C^512K; B − |C^512K|)`` with ONE permutation of ``M \\ C^512K``, so each rung
  contains the one below; the doubling starts at the first power of two above what the shared rung stands for
  (domains × base) and holds, so a bank of any number of domains gets every scale up to its size; ``full`` is the
  whole bank. A rung that would hold the same documents as the one below is not built (``Ladder.absent`` says why).

Every budget is ``size − reserve`` tokens (the prompt/query reserve) and is never exceeded. A document costs what a
model is shown (:func:`serialized_tokens`: the ``[DocID=<id>]`` header line, title and text, and the separator), so
a 64K rung serialized for localization fits a 64K window with its prompt. A query is evaluated on
the domain rungs of its own domain and on every shared rung.

Ladder kinds (DESIGN §1): one workspace can hold several ladders over the same bank side by side — ``built`` (the
construction above), ``official`` (the published scales of a release) and ``benign`` (the benign twin of the built
ladder). They share the three ladder tables; a ``ladder`` column says which kind a row belongs to, rung names are
unique across kinds (``qualified``: built rungs keep their plain names, the others are ``<kind>:<name>``), and
storing one kind replaces that kind's rows only. Each kind records its options in its own workspace setting.
"""
from __future__ import annotations

import hashlib
import json
import shlex
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from emb_s_core import bank, tokens
from emb_s_core.errors import EmbSError
from emb_s_core.schema import DOC_HEADER, DOC_SEPARATOR
from emb_s_core.store import Workspace

DEFAULT_BASE = "64K"
DEFAULT_DOMAIN_SIZES = ("64K", "128K", "256K")
DEFAULT_RESERVE = 1024
DEFAULT_HN_SHARE = 1.0
LOW_COVERAGE = 0.9  # a base rung holding a smaller share of its kept queries' hard negatives is warned about
MAX_DOMAINS = 8
#: the name of the union of the base pools when it does not hold MAX_DOMAINS of them (so not 8 × base tokens)
SHARED = "shared"
SHARED_LABEL = "<shared>"  # stands for the shared rung's name in reasons written before that name is known
BANK_TABLES = ("documents", "queries")
BUILT, OFFICIAL, BENIGN = "built", "official", "benign"
LADDER_KINDS = (BUILT, OFFICIAL, BENIGN)
BUILD_FLAGS = {OFFICIAL: " --official", BENIGN: " --control benign"}  # the `emb-s ladder build` flag of each kind
#: the rule every seeded draw of the built ladder and its twin follows (stored with them): documents in content order
#: (:func:`content_rank`) before each seeded permutation, and one header cost for every document. A built or benign
#: ladder stored under another rule is stale: ``doc_id``-ordered draws depended on import order (issue 31 §2).
DRAW_RULE = "content_v1"

RUNGS_SCHEMA = pa.schema(
    [
        pa.field("order", pa.int32()),
        pa.field("rung", pa.string()),
        pa.field("kind", pa.string()),
        pa.field("domain", pa.string()),
        pa.field("size", pa.int64()),
        pa.field("budget", pa.int64()),
        pa.field("n_documents", pa.int64()),
        pa.field("n_tokens", pa.int64()),
        pa.field("n_queries", pa.int64()),
        pa.field("membership_hash", pa.string()),
        pa.field("qids", pa.list_(pa.string())),
        pa.field("composition", pa.string()),
        pa.field("ladder", pa.string()),
    ]
)
MEMBERS_SCHEMA = pa.schema([pa.field("rung", pa.string()), pa.field("doc_id", pa.int64())])
KEPT_SCHEMA = pa.schema(
    [pa.field("qid", pa.string()), pa.field("domain", pa.string()), pa.field("kept", pa.bool_()),
     pa.field("reason", pa.string()), pa.field("ladder", pa.string())]
)


@dataclass
class LadderOptions:
    base: str = DEFAULT_BASE
    domain_sizes: tuple[str, ...] = DEFAULT_DOMAIN_SIZES
    shared_size: str | None = None  # default: 8 × base ("512K")
    max_size: str | None = None  # largest doubling rung; default: up to the bank
    encoding: str | None = None  # default: the workspace's
    reserve: int = DEFAULT_RESERVE
    seed: int = 0
    strict: bool = False
    #: the most of a base budget the kept queries' hard negatives may reserve; 1.0 (default): every kept query's
    #: hard negatives fit its base pool (coverage 1.0); 0.0: the gold alone decides which queries are kept
    hn_share: float = DEFAULT_HN_SHARE

    def to_json(self) -> dict:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in self.__dict__.items()}


@dataclass
class Rung:
    name: str
    kind: str  # "domain" | "mixed" | "shared" | "global" | "full"
    domain: str | None
    size: int | None
    budget: int | None
    doc_ids: np.ndarray
    qids: list[str]
    n_tokens: int
    membership_hash: str
    composition: dict = field(default_factory=dict)
    order: int = 0
    ladder: str = BUILT  # which ladder kind the rung belongs to (LADDER_KINDS)

    @property
    def n_documents(self) -> int:
        return len(self.doc_ids)


@dataclass
class Ladder:
    rungs: list[Rung]
    kept: pd.DataFrame  # qid, domain, kept, reason
    options: dict
    messages: list[str] = field(default_factory=list)
    #: rungs not built because they would hold the same documents as the rung below: rung, after (the rung they
    #: would follow in the table), reason
    absent: list[dict] = field(default_factory=list)

    def rung(self, name: str) -> Rung:
        for r in self.rungs:
            if r.name == name:
                return r
        raise EmbSError(f"no rung named {name!r} in this ladder",
                        fix=f"use one of: {', '.join(r.name for r in self.rungs)}.")

    @property
    def names(self) -> list[str]:
        return [r.name for r in self.rungs]

    def rungs_of_query(self, qid: str) -> list[str]:
        return [r.name for r in self.rungs if qid in set(r.qids)]

    def table(self, absent: bool = False) -> pd.DataFrame:
        """The rung table printed by ``emb-s ladder show`` and drawn on the Ladder page: one row per rung, with its
        real size (``size``: its tokens, e.g. the ``shared`` rung's); ``absent`` adds a row per rung not built
        (same documents as the one below it) where it would stand, saying why."""
        rows = [{"rung": r.name, "kind": r.kind, "domain": r.domain or "", "size": real_size(r.n_tokens),
                 "budget": r.budget or "", "documents": r.n_documents, "tokens": r.n_tokens, "queries": len(r.qids),
                 "hn_coverage": _mean_coverage(r), "hash": r.membership_hash[:12],
                 "note": r.composition.get("note", "")} for r in self.rungs]
        if absent:
            for a in self.absent:
                at = next((i for i, row in enumerate(rows) if row["rung"] == a.get("after")), len(rows) - 1)
                while at + 1 < len(rows) and rows[at + 1]["kind"] == "absent":
                    at += 1
                rows.insert(at + 1, {"rung": a["rung"], "kind": "absent", "domain": "", "size": "", "budget": "",
                                     "documents": "", "tokens": "", "queries": "", "hn_coverage": "", "hash": "",
                                     "note": a["reason"]})
        table = pd.DataFrame(rows)
        if not len(table) or not (table["note"] != "").any():
            table = table.drop(columns=["note"], errors="ignore")
        return table


def real_size(n_tokens: int) -> str:
    """A rung's real size as people quote it: 64,511 tokens → ``63.0K`` (1K = 1,024), 1,468,006 → ``1.40M``."""
    if n_tokens >= tokens.M:
        return f"{n_tokens / tokens.M:.2f}M"
    return f"{n_tokens / tokens.K:.1f}K"


def _mean_coverage(r: Rung) -> float | str:
    """Mean share of a kept query's hard negatives present in the rung ("" when no query has any)."""
    mean = r.composition.get("hard_negative_coverage", {}).get("mean")
    return round(mean, 3) if mean is not None else ""


# --------------------------------------------------------------------------------------------- kinds
def _checked_kind(kind: str) -> str:
    if kind not in LADDER_KINDS:
        raise EmbSError(f"unknown ladder kind {kind!r}", fix=f"use one of: {', '.join(LADDER_KINDS)}.")
    return kind


def qualified(kind: str, name: str) -> str:
    """The workspace-wide rung name: built rungs keep their plain name, other kinds are ``<kind>:<name>``."""
    return name if _checked_kind(kind) == BUILT else f"{kind}:{name}"


def kind_of(rung_name: str) -> str:
    """The ladder kind a workspace-wide rung name belongs to (the inverse of ``qualified``)."""
    prefix, sep, _ = rung_name.partition(":")
    return prefix if sep and prefix in LADDER_KINDS else BUILT


def plain_name(rung_name: str) -> str:
    """The rung's name inside its own ladder (``benign:512K`` -> ``512K``)."""
    return rung_name.partition(":")[2] if kind_of(rung_name) != BUILT else rung_name


def setting_key(kind: str) -> str:
    """The workspace setting holding a kind's options (``ladder`` for built, as before kinds existed)."""
    return "ladder" if _checked_kind(kind) == BUILT else f"ladder:{kind}"


# --------------------------------------------------------------------------------------------- building
def _membership_hash(doc_ids: np.ndarray, qids: list[str]) -> str:
    digest = hashlib.sha256(np.sort(doc_ids).astype("<i8").tobytes())
    digest.update("\n".join(sorted(qids)).encode())
    return digest.hexdigest()


def seeded_rng(seed: int, *labels: str) -> np.random.Generator:
    """A generator per (seed, purpose): rungs do not shift when another domain changes."""
    key = hashlib.sha256(json.dumps([seed, *labels]).encode()).digest()
    return np.random.default_rng(int.from_bytes(key[:8], "little"))


def serialized_tokens(ws: Workspace, encoding: str | None = None, progress: bool = False,
                      doc_ids: np.ndarray | None = None) -> pd.Series:
    """Tokens per document (index doc_id) as a model is shown it: header line + title + text + separator; only of
    ``doc_ids`` when given (the headers are counted for those alone, e.g. a summary of the gold documents).

    The header's tokens are counted per id (short strings, fast) and every document is charged the largest (so the
    counts do not depend on which id an importer gave a document); title + text come from the stored counts.
    Counting the pieces apart is an upper bound of counting the joined context (a merge across a boundary only saves
    tokens), so a budget kept with these counts holds for the serialized rung.
    """
    encoding = encoding or bank.encoding_of(ws)
    text = bank.token_counts(ws, encoding, progress=progress)
    largest = int(text.index.max()) if len(text) else 0
    if doc_ids is not None:
        text = text.reindex(np.unique(np.asarray(doc_ids, np.int64))).dropna().astype(np.int64)
    headers = tokens.count_batch([DOC_HEADER.format(doc_id=int(i)) + "\n" for i in [*text.index, largest]], encoding)
    # one header cost for every document (the largest any id of the bank takes): an id's digits follow import
    # order, and a budget that charged them per id would cut a content-ordered draw at another document
    return text + int(max(headers)) + tokens.count(DOC_SEPARATOR, encoding)


def content_rank(docs: pd.DataFrame) -> pd.Series:
    """doc_id -> place in content order: by the hash of title and text (``content_hash``), documents with the same
    title and text by source, then domain, then doc_id (interchangeable by content). Why: importers number documents
    in file order, so a draw that sorted by doc_id gave another ladder for the same datasets imported in another
    order or in several steps (issue 31 §2); ``docs`` needs doc_id, content_hash, source and domain."""
    ordered = docs.sort_values(["content_hash", "source", "domain", "doc_id"], kind="stable")
    return pd.Series(np.arange(len(ordered), dtype=np.int64), index=ordered["doc_id"].to_numpy(np.int64))


def content_sorted(ids: np.ndarray, rank: pd.Series) -> np.ndarray:
    """``ids`` in content order (:func:`content_rank`): what every seeded permutation of documents starts from."""
    ids = np.asarray(ids, np.int64)
    return ids[np.argsort(rank.loc[ids].to_numpy(), kind="stable")] if len(ids) else ids


def prefix_within(order: np.ndarray, tok: pd.Series, budget: int) -> np.ndarray:
    """S(D, B): the longest prefix of ``order`` whose tokens fit ``budget``."""
    if budget <= 0 or len(order) == 0:
        return order[:0]
    cum = np.cumsum(tok.loc[order].to_numpy())
    return order[: int(np.searchsorted(cum, budget, side="right"))]


def _domain_base(domain: str, qs: pd.DataFrame, docs: pd.DataFrame, tok: pd.Series, budget: int,
                 opts: LadderOptions, rank: pd.Series) -> tuple[np.ndarray, list[str], dict[str, str]]:
    """C_d^64K and the kept queries of domain ``d`` (with the reason for each dropped one).

    The kept set is the seeded greedy one whose gold plus hard negatives fit (the hard negatives counted up to
    ``hn_share`` of the budget), so near misses are in the base pool and scale alone changes between rungs. It is
    maximal (no dropped query fits beside it), not the largest possible, which would favour queries with few, short
    near misses. Queries are ordered by qid and documents by content (``rank``) before each seeded draw: content and
    seed decide, never import order.
    """
    dropped: dict[str, str] = {}
    qs = qs.sort_values("qid", kind="stable")
    qids = qs["qid"].tolist()
    refs = [[int(d) for d in dict.fromkeys(r)] for r in qs["ref_ids"]]
    negs = [[int(d) for d in dict.fromkeys(r)] for r in qs["hard_negative_ids"]]
    room = max(0.0, min(1.0, float(opts.hn_share))) * budget  # the most the kept queries' hard negatives reserve
    listed = np.unique(np.asarray([d for r in refs + negs for d in r], np.int64))
    cost = dict(zip(listed.tolist(), tok.loc[listed].to_numpy().tolist()))
    all_gold = {d for r in refs for d in r}
    gold_tokens = sum(cost[d] for d in all_gold)
    near_tokens = sum(cost[d] for d in {d for r in negs for d in r} - all_gold)
    why = "gold does not fit the base budget" if room == 0 else "gold and hard negatives do not fit the base budget"
    if gold_tokens + min(near_tokens, room) <= budget:
        kept = qids
    else:
        if opts.strict:
            what = "gold documents" if room == 0 else "gold documents and hard negatives"
            raise EmbSError(
                f"the {what} of domain {domain!r} need {int(gold_tokens + min(near_tokens, room)):,} tokens, more "
                f"than the {opts.base} base budget of {budget:,}",
                fix="drop --strict to keep a seeded subset of the queries, or raise --base"
                    + (" (or lower --hn-share)." if room else "."),
            )
        chosen: list[int] = []
        gold: set[int] = set()
        near: set[int] = set()
        g = h = 0
        for i in seeded_rng(opts.seed, "keep", domain).permutation(len(qs)):
            new_gold = [d for d in refs[i] if d not in gold]
            moved = sum(cost[d] for d in new_gold if d in near)  # a kept query's near miss that is gold here
            new_near = [d for d in negs[i] if d not in gold and d not in near and d not in new_gold]
            g2 = g + sum(cost[d] for d in new_gold)
            h2 = h - moved + sum(cost[d] for d in new_near)
            if g2 + min(h2, room) <= budget:
                chosen.append(int(i))
                gold.update(new_gold)
                near.difference_update(new_gold)
                near.update(new_near)
                g, h = g2, h2
            else:
                dropped[qids[i]] = why
        kept = [qids[i] for i in sorted(chosen)]
    kept_rows = qs[qs["qid"].isin(kept)]
    members: dict[int, None] = {}
    for r in kept_rows["ref_ids"]:
        members.update(dict.fromkeys(int(d) for d in r))
    used = int(tok.loc[list(members)].sum()) if members else 0
    for d in _round_robin(kept_rows["hard_negative_ids"].tolist(), seeded_rng(opts.seed, "negatives", domain)):
        if d not in members and used + tok.loc[d] <= budget:  # priority documents: each one that still fits
            members[d] = None
            used += int(tok.loc[d])
    pool = np.fromiter(members, np.int64, len(members))
    others = docs.loc[(docs["domain"] == domain) & ~docs["doc_id"].isin(pool), "doc_id"].to_numpy()
    others = content_sorted(others, rank)[seeded_rng(opts.seed, "fill", domain).permutation(len(others))]
    fill = prefix_within(others, tok, budget - used)
    return np.concatenate([pool, fill]), kept, dropped


def _round_robin(lists: list, rng: np.random.Generator) -> list[int]:
    """Hard negatives in fill order: the queries in one seeded order, then each query's first, each one's second, ...

    Why: filling query by query (in import order) gave the first-imported queries most of their distractors and the
    last ones few; round-robin gives every query the same share up to one document.
    """
    order = rng.permutation(len(lists))
    lists = [[int(d) for d in lists[i]] for i in order]
    depth = max((len(x) for x in lists), default=0)
    return [x[r] for r in range(depth) for x in lists if r < len(x)]


def build(ws: Workspace, options: LadderOptions | None = None, progress: bool = False) -> Ladder:
    """Build the ladder from the workspace's bank and store it (one transaction, replacing any previous one)."""
    opts = options or LadderOptions()
    built_from = bank_state(ws)
    encoding = opts.encoding or bank.encoding_of(ws)
    base = tokens.parse_size(opts.base)
    if not 0.0 <= opts.hn_share <= 1.0:
        raise EmbSError(f"the hard-negative share {opts.hn_share} is not a share of the base budget",
                        fix="pass --hn-share as a number from 0 to 1 (default 1.0).")
    if base <= opts.reserve:
        raise EmbSError(f"the base rung {opts.base} is not larger than the reserve of {opts.reserve:,} tokens",
                        fix="raise --base or lower --reserve.")
    docs = bank.documents(ws, ["doc_id", "domain", "source", "content_hash"])
    rank = content_rank(docs)
    qs = bank.queries(ws)
    if qs.empty:
        raise EmbSError("the bank has no queries", fix="import a bank with queries first.")
    tok = serialized_tokens(ws, encoding, progress=progress)
    docs["n_tokens"] = tok.loc[docs["doc_id"]].to_numpy()
    domains = sorted(qs["domain"].unique())
    if len(domains) > MAX_DOMAINS:
        raise EmbSError(f"the bank's queries span {len(domains)} domains; the ladder allows at most {MAX_DOMAINS}",
                        fix="relabel documents into at most 8 broad domains (`emb-s domains label`).")
    messages: list[str] = []
    rungs: list[Rung] = []
    kept_rows: list[dict] = []

    base_pools: dict[str, np.ndarray] = {}
    kept_by_domain: dict[str, list[str]] = {}
    for d in domains:
        pool, kept, dropped = _domain_base(d, qs[qs["domain"] == d], docs, tok, base - opts.reserve, opts, rank)
        base_pools[d], kept_by_domain[d] = pool, kept
        kept_rows += [{"qid": q, "domain": d, "kept": True, "reason": ""} for q in kept]
        kept_rows += [{"qid": q, "domain": d, "kept": False, "reason": why} for q, why in dropped.items()]
        if dropped:
            messages.append(f"domain {d}: kept {len(kept)} queries, dropped {len(dropped)} whose gold"
                            f"{' and hard negatives do' if opts.hn_share > 0 else ' does'} not fit {opts.base}")

    requested = {tokens.parse_size(s) for s in opts.domain_sizes}
    below = sorted(s for s in requested if s < base)
    if below:  # e.g. --base 512K for a one-domain bank: the 64K-256K domain rungs cannot exist
        messages.append(f"domain rung sizes below the {opts.base} base are left out: "
                        f"{', '.join(tokens.format_size(s) for s in below)}")
    sizes = sorted({s for s in requested if s >= base} | {base})
    shared_ids = np.unique(np.concatenate(list(base_pools.values())))
    absent: list[dict] = []
    for d in domains:
        others = np.setdiff1d(np.concatenate([base_pools[o] for o in domains if o != d] or [np.empty(0, np.int64)]),
                              base_pools[d])
        others = content_sorted(others, rank)[seeded_rng(opts.seed, "mix", d).permutation(len(others))]
        used = int(tok.loc[base_pools[d]].sum())
        below_name, below_n = None, 0
        for size in sizes:
            name = f"{tokens.format_size(size)}/{d}"
            if size == base:
                ids = base_pools[d]
            else:
                mixed_in = prefix_within(others, tok, size - opts.reserve - used)
                if len(others) == 0:
                    messages.append(f"{name} skipped: no other domain's pool to mix in")
                    continue
                ids = np.concatenate([base_pools[d], mixed_in])
                if len(mixed_in) == len(others):  # every other pool fits: the shared rung's documents
                    absent.append({"rung": name, "after": below_name,
                                   "reason": f"not built: same documents as {SHARED_LABEL} (every other domain's "
                                             f"pool fits {tokens.format_size(size)})"})
                    continue
                if len(ids) == below_n:
                    absent.append({"rung": name, "after": below_name,
                                   "reason": f"not built: same documents as {below_name}"})
                    continue
            kind = "domain" if size == base else "mixed"
            rungs.append(make_rung(name, kind, d, size, size - opts.reserve, ids, kept_by_domain[d], docs, qs))
            below_name, below_n = name, len(ids)

    all_kept = [q for d in domains for q in kept_by_domain[d]]
    shared_size = tokens.parse_size(opts.shared_size) if opts.shared_size else MAX_DOMAINS * base
    honest = len(domains) * base == shared_size  # the union of the base pools is sized as its name says
    shared_name = tokens.format_size(shared_size) if honest else SHARED
    shared_tokens = int(tok.loc[shared_ids].sum())
    absent = [dict(a, reason=a["reason"].replace(SHARED_LABEL, shared_name)) for a in absent]
    if not honest:
        messages.append(f"the shared rung is named {SHARED!r}: it is the union of {len(domains)} base pools "
                        f"({len(domains)} × {opts.base}), not {tokens.format_size(shared_size)}; it holds "
                        f"{shared_tokens:,} tokens")
    rungs.append(make_rung(shared_name, "shared", None, len(domains) * base, None, shared_ids, all_kept, docs, qs))
    rest = np.setdiff1d(docs["doc_id"].to_numpy(), shared_ids)
    rest = content_sorted(rest, rank)[seeded_rng(opts.seed, "global").permutation(len(rest))]
    total = int(docs["n_tokens"].sum())
    limit = tokens.parse_size(opts.max_size) if opts.max_size else None  # default: until the bank fits a budget
    # the shared rung stands for len(domains) × base (512K with 8 domains): injection starts above that and above
    # what it really holds
    size = first_global_size(shared_tokens, opts.reserve, max(len(domains) * base, shared_size if honest else 0))
    below_name, below_n = shared_name, len(shared_ids)
    while limit is None or size <= limit:
        name = tokens.format_size(size)
        injected = prefix_within(rest, tok, size - opts.reserve - shared_tokens)
        if len(injected) == len(rest):  # the whole bank fits: that is the full rung
            break
        if len(shared_ids) + len(injected) == below_n:
            absent.append({"rung": name, "after": below_name,
                           "reason": f"not built: same documents as {below_name} (no further document fits)"})
        else:
            ids = np.concatenate([shared_ids, injected])
            rungs.append(make_rung(name, "global", None, size, size - opts.reserve, ids, all_kept, docs, qs))
            below_name, below_n = name, len(ids)
        size *= 2
    messages.append(f"rungs from {tokens.format_size(size)} up are not built: "
                    + (f"above --max-size {opts.max_size}" if limit is not None and size > limit else
                       f"the bank holds {total:,} tokens (the full rung)"))
    rungs.append(make_rung("full", "full", None, None, None, docs["doc_id"].to_numpy(), all_kept, docs, qs))
    rungs, absent = _without_duplicates(rungs, absent)
    if shared_name not in {r.name for r in rungs}:  # one domain: its base pool is the shared rung
        messages = [m for m in messages if not m.startswith(f"the shared rung is named {SHARED!r}")]
    for a in absent:
        messages.append(f"{a['rung']} {a['reason']}")
    messages += low_coverage_warnings(rungs)
    for i, r in enumerate(rungs):
        r.order = i
    messages += few_queries_warnings(rungs)

    kept_df = pd.DataFrame(kept_rows, columns=KEPT_SCHEMA.names)
    ladder = Ladder(rungs, kept_df, dict(opts.to_json(), encoding=encoding), messages, absent)
    store(ws, ladder, built_from)
    return ladder


def _without_duplicates(rungs: list[Rung], absent: list[dict]) -> tuple[list[Rung], list[dict]]:
    """The rungs without any that holds the same documents and queries as an earlier one (one domain: the shared
    rung is its base pool; a base that holds the whole bank: every larger rung), each listed in ``absent`` instead,
    and the absent rows that named a left-out rung naming the rung kept in its place. Two identical columns would
    say nothing twice, in every table and figure."""
    first: dict[str, str] = {}
    alias: dict[str, str] = {}
    out: list[Rung] = []
    for r in rungs:
        same = first.setdefault(r.membership_hash, r.name)
        if same != r.name:
            alias[r.name] = same
            absent.append({"rung": r.name, "after": out[-1].name if out else None,
                           "reason": f"not built: same documents and queries as {same}"})
        else:
            out.append(r)

    def renamed(a: dict) -> dict:
        reason = a["reason"]
        for old, new in alias.items():
            reason = reason.replace(f"as {old}", f"as {new}")
        return dict(a, after=alias.get(a.get("after"), a.get("after")), reason=reason)

    return out, [renamed(a) for a in absent]


def first_global_size(shared_tokens: int, reserve: int, floor: int = 0) -> int:
    """The first power-of-two size (1K, 2K, 4K, ...) above ``floor`` (the size the shared rung stands for) whose
    budget holds more than the shared pool: where global injection starts, so a bank of any number of domains gets
    every scale it can hold (8 domains of 64K: 1M; one domain of 64K: 128K)."""
    size = tokens.K
    while size <= floor or size - reserve <= shared_tokens:
        size *= 2
    return size


def low_coverage_warnings(rungs: list[Rung]) -> list[str]:
    """A warning per base rung whose kept queries find under LOW_COVERAGE of their hard negatives in it."""
    out = []
    for r in rungs:
        mean = r.composition.get("hard_negative_coverage", {}).get("mean")
        if r.kind == "domain" and mean is not None and mean < LOW_COVERAGE:
            out.append(f"warning: base rung {r.name} holds {mean:.0%} of its kept queries' hard negatives (below "
                       f"{LOW_COVERAGE:.0%}): near misses then enter with scale, and the effect of scale mixes with "
                       "where they enter (raise --hn-share, or see the base that keeps every query with full "
                       "coverage in the summary)")
    return out


def make_rung(name: str, kind: str, domain: str | None, size: int | None, budget: int | None, ids: np.ndarray,
              qids: list[str], docs: pd.DataFrame, qs: pd.DataFrame) -> Rung:
    """A rung with its composition statistics (every ladder kind: built, official, benign)."""
    ids = np.sort(np.asarray(ids, dtype=np.int64))
    members = docs[docs["doc_id"].isin(ids)]
    n_tokens = int(members["n_tokens"].sum())
    if budget is not None and n_tokens > budget:  # a bug, never a user error
        raise AssertionError(f"rung {name} holds {n_tokens} tokens, over its budget {budget}")
    kept = qs[qs["qid"].isin(qids)]
    gold = np.unique(np.concatenate([np.asarray(r, np.int64) for r in kept["ref_ids"]] or [np.empty(0, np.int64)]))
    negs = np.unique(np.concatenate([np.asarray(r, np.int64) for r in kept["hard_negative_ids"]]
                                    or [np.empty(0, np.int64)]))
    composition = {
        "documents_per_domain": {k: int(v) for k, v in members.groupby("domain").size().items()},
        "tokens_per_domain": {k: int(v) for k, v in members.groupby("domain")["n_tokens"].sum().items()},
        "documents_per_source": {k: int(v) for k, v in members.groupby("source").size().items()},
        "tokens_per_source": {k: int(v) for k, v in members.groupby("source")["n_tokens"].sum().items()},
        "gold_documents": int(np.isin(gold, ids).sum()),
        "hard_negatives_present": int(np.isin(negs, ids).sum()),
        "hard_negatives_total": int(len(negs)),
        "hard_negative_coverage": _coverage_summary(kept["hard_negative_ids"], ids),
    }
    return Rung(name, kind, domain, size, budget, ids, list(qids), n_tokens, _membership_hash(ids, list(qids)),
                composition)


FEW_QUERIES = 10  # a domain rung with fewer kept queries gives SR/FR intervals too wide to compare


def few_queries_warnings(rungs: list[Rung]) -> list[str]:
    """A warning per domain rung holding fewer than FEW_QUERIES queries (e.g. after arbitrary domain labels)."""
    few = [r for r in rungs if r.domain is not None and len(r.qids) < FEW_QUERIES]
    if not few:
        return []
    listed = ", ".join(f"{r.name} ({len(r.qids)})" for r in few[:12]) + (" ..." if len(few) > 12 else "")
    return [f"warning: {len(few)} domain rung(s) hold fewer than {FEW_QUERIES} queries: {listed}; their scores "
            "have wide intervals (check the bank's domains: `emb-s domains label`)"]


def _coverage_per_query(negatives: pd.Series, ids: np.ndarray) -> np.ndarray:
    """Share of each query's hard negatives that are in ``ids`` (NaN for a query without any)."""
    lengths = negatives.map(len).to_numpy()
    if not lengths.sum():
        return np.full(len(lengths), np.nan)
    present = np.isin(np.concatenate([np.asarray(n, np.int64) for n in negatives]), ids)
    counts = np.bincount(np.repeat(np.arange(len(lengths)), lengths), weights=present, minlength=len(lengths))
    return np.where(lengths > 0, counts / np.maximum(lengths, 1), np.nan)


def _coverage_summary(negatives: pd.Series, ids: np.ndarray) -> dict:
    cov = _coverage_per_query(negatives, ids)
    cov = cov[~np.isnan(cov)]
    if not len(cov):
        return {"queries_with_hard_negatives": 0}
    q = np.quantile(cov, [0, 0.25, 0.5, 0.75, 1])
    return {"queries_with_hard_negatives": int(len(cov)), "mean": float(cov.mean()), "min": float(q[0]),
            "p25": float(q[1]), "median": float(q[2]), "p75": float(q[3]), "max": float(q[4])}


def hard_negative_coverage(lad: Ladder, queries: pd.DataFrame) -> pd.DataFrame:
    """Per (rung, query): hard negatives listed, present in the rung, and their share (the Ladder page's table)."""
    qs = queries.set_index("qid")
    frames = []
    for r in lad.rungs:
        negs = qs.loc[[q for q in r.qids if q in qs.index], "hard_negative_ids"]
        cov = _coverage_per_query(negs, r.doc_ids)
        n = negs.map(len).to_numpy()
        frames.append(pd.DataFrame({"rung": r.name, "qid": negs.index, "hard_negatives": n,
                                    "present": np.rint(np.nan_to_num(cov) * n).astype(int), "coverage": cov}))
    cols = ["rung", "qid", "hard_negatives", "present", "coverage"]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=cols)


def bank_state(ws: Workspace) -> dict:
    """What a ladder is built from: the workspace version and the committed versions of the bank's tables.

    Any commit that rewrites documents or queries (an import, ``collide --apply``, ``domains label --apply``) moves
    a table version, so a ladder whose recorded state differs is stale.
    """
    tables = ws.table_versions()
    return {"version": ws.version, "tables": {t: tables.get(t) for t in BANK_TABLES}}


def _with_kind(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows written before ladder kinds existed belong to the built ladder."""
    if "ladder" not in frame.columns:
        frame = frame.assign(ladder=BUILT)
    return frame.assign(ladder=frame["ladder"].fillna(BUILT))


def store(ws: Workspace, ladder: Ladder, built_from: dict | None = None, kind: str = BUILT,
          extra_settings: dict | None = None) -> None:
    """Store ``ladder`` as the workspace's ladder of ``kind``, replacing that kind's rungs only (one transaction).

    Rung names must already be qualified for ``kind``; other kinds' rows are kept as they are.
    """
    _checked_kind(kind)
    for r in ladder.rungs:
        if kind_of(r.name) != kind:
            raise AssertionError(f"rung {r.name} is not named for the {kind} ladder")  # a bug, never a user error
        r.ladder = kind
    rungs = pa.table(
        {
            "order": [r.order for r in ladder.rungs], "rung": [r.name for r in ladder.rungs],
            "kind": [r.kind for r in ladder.rungs], "domain": [r.domain for r in ladder.rungs],
            "size": [r.size for r in ladder.rungs], "budget": [r.budget for r in ladder.rungs],
            "n_documents": [r.n_documents for r in ladder.rungs], "n_tokens": [r.n_tokens for r in ladder.rungs],
            "n_queries": [len(r.qids) for r in ladder.rungs],
            "membership_hash": [r.membership_hash for r in ladder.rungs], "qids": [r.qids for r in ladder.rungs],
            "composition": [json.dumps(r.composition) for r in ladder.rungs],
            "ladder": [kind] * len(ladder.rungs),
        },
        schema=RUNGS_SCHEMA,
    )
    members = pa.table(
        {"rung": np.concatenate([np.full(r.n_documents, r.name, dtype=object) for r in ladder.rungs]),
         "doc_id": np.concatenate([r.doc_ids for r in ladder.rungs])},
        schema=MEMBERS_SCHEMA,
    )
    kept = pa.Table.from_pandas(ladder.kept.assign(ladder=kind)[KEPT_SCHEMA.names], schema=KEPT_SCHEMA,
                                preserve_index=False)
    if ws.has_table("rungs"):  # keep the other kinds' rows
        old = _with_kind(ws.read_pandas("rungs"))
        other_rungs = old[old["ladder"] != kind]
        if len(other_rungs):
            rungs = pa.concat_tables([pa.Table.from_pandas(other_rungs[RUNGS_SCHEMA.names], schema=RUNGS_SCHEMA,
                                                           preserve_index=False), rungs])
            old_members = ws.read("rung_members")
            other_members = old_members.filter(pc.is_in(old_members["rung"], pa.array(list(other_rungs["rung"]))))
            members = pa.concat_tables([other_members.cast(MEMBERS_SCHEMA), members])
        old_kept = _with_kind(ws.read_pandas("ladder_queries"))
        old_kept = old_kept[old_kept["ladder"] != kind]
        if len(old_kept):
            kept = pa.concat_tables([pa.Table.from_pandas(old_kept[KEPT_SCHEMA.names], schema=KEPT_SCHEMA,
                                                          preserve_index=False), kept])
    with ws.transaction():
        ws.write("rungs", rungs, mode="overwrite", schema=RUNGS_SCHEMA)
        ws.write("rung_members", members, mode="overwrite", schema=MEMBERS_SCHEMA)
        ws.write("ladder_queries", kept, mode="overwrite", schema=KEPT_SCHEMA)
        ws.set_setting(setting_key(kind), {**ladder.options, "messages": ladder.messages, "absent": ladder.absent,
                                           "bank": built_from, **(extra_settings or {}),
                                           **({} if kind == OFFICIAL else {"draws": DRAW_RULE})})


# --------------------------------------------------------------------------------------------- reading
def kinds(ws: Workspace) -> list[str]:
    """The ladder kinds the workspace holds, in LADDER_KINDS order."""
    if not ws.has_table("rungs"):
        return []
    present = set(_with_kind(ws.read_pandas("rungs"))["ladder"])
    return [k for k in LADDER_KINDS if k in present]


def exists(ws: Workspace, kind: str = BUILT) -> bool:
    return _checked_kind(kind) in kinds(ws)


def fingerprint(ws: Workspace, kind: str = BUILT) -> str | None:
    """The identity of the stored ladder of ``kind`` (its rung names and membership hashes); None when absent.
    A benign twin records its built ladder's fingerprint (``twin_of``), so rebuilding the built ladder stales it."""
    if not exists(ws, kind):
        return None
    meta = _with_kind(ws.read_pandas("rungs"))
    meta = meta[meta["ladder"] == kind]
    pairs = sorted(zip(meta["rung"].tolist(), meta["membership_hash"].tolist()))
    return hashlib.sha256(json.dumps(pairs).encode()).hexdigest()


def stale_reason(ws: Workspace, kind: str = BUILT) -> str | None:
    """Why the stored ladder no longer matches the bank (None when it does, or when it predates this record); a
    twin is also stale when the ladder it twins was rebuilt since."""
    if not exists(ws, kind):
        return None
    settings = ws.settings.get(setting_key(kind), {})
    if kind != OFFICIAL and settings.get("draws") != DRAW_RULE:
        what = "twin" if kind == BENIGN else "ladder"
        return (f"the {what} was built before its draws were ordered by content (they followed doc ids, which "
                "importers assign in file order, so the same datasets imported in another order gave other rungs)")
    built = settings.get("bank")
    if not built:
        return None
    now = bank_state(ws)
    changed = [t for t in BANK_TABLES if built["tables"].get(t) != now["tables"].get(t)]
    if not changed:
        if settings.get("twin_of") and settings["twin_of"] != fingerprint(ws, BUILT):
            return ("the built ladder it is the twin of was rebuilt since (or removed); rebuild the twin: "
                    "`emb-s ladder build --control benign`")
        return None
    return (f"the ladder was built from the bank at workspace version {built['version']}; the bank's "
            f"{' and '.join(changed)} changed since (now version {now['version']}: an import, `emb-s collide --apply` "
            "or `emb-s domains label --apply`)")


def load(ws: Workspace, allow_stale: bool = False, kind: str | tuple[str, ...] | list[str] = BUILT) -> Ladder:
    """The stored ladder of ``kind`` (or of several kinds, one after the other), rungs in order (domain rungs first,
    then shared, global, full).

    A ladder built from an older bank is refused (its rungs would miss new gold documents or keep retired queries)
    unless ``allow_stale`` (pages that only show it, with a warning).
    """
    wanted = [kind] if isinstance(kind, str) else list(kind)
    held = kinds(ws)
    where = shlex.quote(str(ws.path))  # hints name the real workspace, not a placeholder
    for k in wanted:
        if k not in held:
            what = "ladder" if k == BUILT else f"{k} ladder"
            raise EmbSError(f"the workspace {ws.path} has no {what} yet",
                            fix=f"run `emb-s ladder build --workspace {where}` first." if k == BUILT else
                            f"build it first: `emb-s ladder build --workspace {where}{BUILD_FLAGS[k]}`; it holds: "
                            f"{', '.join(held) or 'none'}.")
        stale = None if allow_stale else stale_reason(ws, k)
        if stale:
            raise EmbSError(f"the {'' if k == BUILT else k + ' '}ladder of {ws.path} is stale: {stale}",
                            fix=f"rebuild it: `emb-s ladder build --workspace {where}{BUILD_FLAGS.get(k, '')}` "
                                "(then rerun the evaluations).")
    meta = _with_kind(ws.read_pandas("rungs"))
    meta = meta[meta["ladder"].isin(wanted)]
    meta = meta.assign(_k=meta["ladder"].map(wanted.index)).sort_values(["_k", "order"])
    members = ws.read("rung_members")
    by_rung = pd.Series(members["doc_id"].to_numpy()).groupby(members["rung"].to_numpy()).apply(np.asarray)
    rungs = [
        Rung(
            name=row.rung, kind=row.kind, domain=row.domain if isinstance(row.domain, str) else None, size=None if pd.isna(row.size) else int(row.size),
            budget=None if pd.isna(row.budget) else int(row.budget),
            doc_ids=np.sort(by_rung.get(row.rung, np.empty(0, np.int64)).astype(np.int64)),
            qids=list(row.qids), n_tokens=int(row.n_tokens), membership_hash=row.membership_hash,
            composition=json.loads(row.composition), order=int(row.order), ladder=row.ladder,
        )
        for row in meta.itertuples()
    ]
    settings = ws.settings.get(setting_key(wanted[0]), {})
    kept = _with_kind(ws.read_pandas("ladder_queries"))
    kept = kept[kept["ladder"].isin(wanted)].reset_index(drop=True)
    messages = [m for k in wanted for m in ws.settings.get(setting_key(k), {}).get("messages", [])]
    absent = [a for k in wanted for a in ws.settings.get(setting_key(k), {}).get("absent", [])
              if kind_of(a["rung"]) == k]
    return Ladder(rungs, kept, settings, messages, absent)


def load_all(ws: Workspace, allow_stale: bool = False) -> Ladder | None:
    """Every ladder kind the workspace holds, one after the other (None when it holds none): what tables, figures and
    pages show, so a release's official rungs appear beside (or instead of) the built ones."""
    held = kinds(ws)
    return load(ws, allow_stale=allow_stale, kind=tuple(held)) if held else None
