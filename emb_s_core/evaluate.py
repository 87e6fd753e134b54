"""Evaluate a retriever on the ladder: one resumable run, results per (rung, query) in the workspace.

Cost follows the bank, not the number of rungs: the retriever is prepared once over the union of the evaluated rungs
(the ladder is nested, so that is the largest one), each query is scored once, and each rung's top-K is taken by
membership mask (BM25 applies each rung's own statistics to the shared term-frequency matrix). Queries are grouped
by the set of rungs they still need and ranked in batches; every batch is saved in one transaction, so a run killed
at any point resumes on the next call with its finished (rung, qid) pairs kept.
"""
from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pandas as pd

from emb_s_core import bank, ladder as ladder_mod, runs, retrievers, twin
from emb_s_core.errors import EmbSError
from emb_s_core.progress import counted
from emb_s_core.retrievers.base import EMBEDDINGS, MEASURED, QueryPools
from emb_s_core.retrievers.hybrid import Hybrid
from emb_s_core.store import Workspace

Progress = Callable[[str, float], None]
DEFAULT_K = 100
DEFAULT_BATCH = 64


#: ``--ladder`` choices: one ladder kind, or ``both`` = the built ladder and its benign twin
LADDER_CHOICES = (*ladder_mod.LADDER_KINDS, "both")


def ladder_kinds(ws: Workspace, choice: str | None = None) -> tuple[str, ...]:
    """The ladder kinds a run covers, from ``--ladder``: by default the built ladder when the workspace has one,
    else the official one (a release imported without rebuilding); ``both`` = built + benign twin."""
    if choice is None:
        held = ladder_mod.kinds(ws)
        choice = ladder_mod.OFFICIAL if ladder_mod.BUILT not in held and ladder_mod.OFFICIAL in held \
            else ladder_mod.BUILT
    if choice not in LADDER_CHOICES:
        raise EmbSError(f"unknown ladder {choice!r}", fix=f"use one of: {', '.join(LADDER_CHOICES)}.")
    return (ladder_mod.BUILT, ladder_mod.BENIGN) if choice == "both" else (choice,)


def default_name(spec: str, k: int = DEFAULT_K, chunk_size: int | None = None,
                 kinds: tuple[str, ...] = (ladder_mod.BUILT,), ann: str | None = None,
                 vector_dtype: str | None = None) -> str:
    """The spec, plus ``@chunkN`` / ``@float16`` / ``@ann-<index>`` / ``@kN`` when not default and ``@<kind>`` for a
    ladder other than the built one and its benign twin (the twin's rungs join the built run of the same name, so the
    illusion gap pairs them; a run's identity includes its rungs, so one name cannot cover two ladders run
    separately)."""
    name = spec
    if chunk_size:
        name += f"@chunk{chunk_size}"
    if vector_dtype and vector_dtype != "float32":
        name += f"@{vector_dtype}"
    if ann:
        name += f"@ann-{ann}"
    if k != DEFAULT_K:
        name += f"@k{k}"
    other = [k for k in kinds if k not in (ladder_mod.BUILT, ladder_mod.BENIGN)]
    if other:
        name += "@" + "+".join(other)
    return name


def k_per_rung(rungs: list[ladder_mod.Rung], k: int) -> dict[str, int]:
    """K clamped to each rung's size (a twin rung with per-query pools: its smallest pool): a rung smaller than K is
    ranked whole (recorded in the run's config)."""
    return {r.name: min(k, int(r.composition.get("min_documents", r.n_documents))) for r in rungs}


def _checked_retriever(spec: str, options: dict[str, Any]) -> retrievers.Retriever:
    r = retrievers.get(spec, **options)
    r.check()  # load models now: a missing one fails before anything is written
    return r


def _ladder_identity(existing: dict | None, name: str, hashes: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    """The run's ladder identity after this call (the rungs it already had plus those of newly evaluated kinds),
    and the run's stale twin rungs, whose results this call drops and redoes.

    A kind the run was already evaluated on must have exactly the same rungs (else the ladder was rebuilt since),
    except the benign twin: a rebuilt twin leaves the built results as they are, and its old results are redone.
    """
    if existing is None:
        return hashes, []
    old = existing["config"].get("ladder", {})
    stale: list[str] = []
    for kind in {ladder_mod.kind_of(n) for n in hashes}:
        mine = {n: h for n, h in hashes.items() if ladder_mod.kind_of(n) == kind}
        before = {n: h for n, h in old.items() if ladder_mod.kind_of(n) == kind}
        if before and before != mine:
            if kind == ladder_mod.BENIGN:
                stale += list(before)
                old = {n: h for n, h in old.items() if n not in before}
                continue
            what = "ladder" if kind == ladder_mod.BUILT else f"{kind} ladder"
            raise EmbSError(f"run {name!r} was made on another {what} (it was rebuilt since; membership "
                            "hashes differ)",
                            fix=f"pass a new --name, or delete the old run first (`emb-s runs delete {name}`).")
    return {**old, **hashes}, stale


def stale_twin_runs(ws: Workspace) -> dict[str, list[str]]:
    """Runs whose benign-twin results were made on another twin than the stored one (it was rebuilt since):
    run -> its stale twin rungs. Their built results stand; ``eval --ladder benign`` redoes only these."""
    if not ladder_mod.exists(ws, ladder_mod.BENIGN):
        return {}
    current = {r.name: r.membership_hash for r in ladder_mod.load(ws, allow_stale=True, kind=ladder_mod.BENIGN).rungs}
    out = {}
    listed = runs.list_runs(ws)
    for name, cfg in zip(listed["run"], listed["config"]):
        had = {n: h for n, h in json.loads(cfg).get("ladder", {}).items()
               if ladder_mod.kind_of(n) == ladder_mod.BENIGN}
        if any(current.get(n) != h for n, h in had.items()):
            out[name] = sorted(had)
    return out


def evaluate(ws: Workspace, spec: str, name: str | None = None, k: int = DEFAULT_K, rungs: list[str] | None = None,
             progress: Progress | None = None, batch_size: int = DEFAULT_BATCH, ladder: str | None = None,
             **options: Any) -> str:
    """Run retriever ``spec`` on the rungs (all, or ``rungs``) of ``ladder`` (see :func:`ladder_kinds`); returns the
    run name.

    Options: ``chunk_size`` (dense, tokens of the model's tokenizer; default the model's max length),
    ``api_base`` (dense:litellm). The run's identity is (spec, retriever config, k, ladder membership hashes);
    rerunning with the same name resumes, with another identity it is an error. A rung smaller than ``k`` is ranked
    whole; the clamped K of each such rung is stored in the config (``k_per_rung``). Evaluating a run on the benign
    twin later (``--ladder benign`` after ``built``) adds the twin's rungs to the same run, so the illusion gap pairs
    them.
    """
    retriever = retrievers.get(spec, **options)  # an unknown spec fails first, before any loading
    kinds = ladder_kinds(ws, ladder)
    lad = ladder_mod.load(ws, kind=kinds)
    selected = [lad.rung(r) for r in (rungs or lad.names)]  # unknown names raise EmbSError
    if k < 1:
        raise EmbSError(f"k must be at least 1 (got {k})", fix="pass --k 1 or more.")
    ks = k_per_rung(selected, k)
    # one writer per workspace, taken before any loading (so --no-wait fails at once): a second eval of this run
    # waits here, then resumes it
    with ws.writer():
        if progress:
            progress(f"loading {spec}", 0.0)  # a model load can take tens of seconds on a busy machine: say so
        retriever.check()  # load models now: a missing one fails before anything is written
        if progress:
            progress(f"loading {spec}", 1.0)
        name = name or default_name(spec, k, options.get("chunk_size"), kinds, options.get("ann"),
                                    options.get("vector_dtype"))
        config = {"spec": spec, "retriever": retriever.config(), "k": k,
                  "ladder": {r.name: r.membership_hash for r in lad.rungs}}
        clamped = {n: v for n, v in k_per_rung(lad.rungs, k).items() if v < k}
        if clamped:  # only then, so runs made before clamping existed keep their identity
            config["k_per_rung"] = clamped
        return _run(ws, retriever, name, config, kinds, selected, ks, progress, batch_size)


def _run(ws: Workspace, retriever: retrievers.Retriever, name: str, config: dict[str, Any], kinds: tuple[str, ...],
         selected: list, ks: dict[str, int], progress: Progress | None, batch_size: int) -> str:
    """The run itself, under the writer lock: what is finished is read after the lock is held."""
    hashes = config["ladder"]
    if {r.name: r.membership_hash for r in ladder_mod.load(ws, kind=kinds).rungs} != hashes:
        raise EmbSError("the ladder was rebuilt while this eval waited for the writer lock",
                        fix="run the eval again: it will use the new ladder.")
    existing = runs.get_run(ws, name)
    identity, stale = _ladder_identity(existing, name, hashes)
    config = dict(config, ladder=identity)
    if stale:  # the twin was rebuilt: its old results go, the built ones stay, and this call redoes the twin
        runs.drop_rungs(ws, name, stale)
    if existing is not None:  # the same run on another ladder kind: its rungs (and clamped Ks) join the identity
        clamped = {**existing["config"].get("k_per_rung", {}), **config.get("k_per_rung", {})}
        if clamped:
            config["k_per_rung"] = clamped
        if existing["config"] != config and {**existing["config"], "ladder": config["ladder"],
                                             **({"k_per_rung": clamped} if clamped else {})} == config:
            runs.update_config(ws, name, config)
    ws.check_writable(["runs", "results"])  # never register a run that could not store its results
    from emb_s_core.sources.validate import check_name

    check_name(name, "run name")
    pending = existing is None  # a new run is registered with its first stored results, never before them

    def store(write: Callable[[], None]) -> None:
        nonlocal pending
        if pending:  # one transaction: a run that failed before any result (a damaged table) leaves no trace
            with ws.transaction():
                runs.create_run(ws, name, "retriever", config["spec"], config)
                write()
            pending = False
        else:
            write()

    if not pending:
        runs.create_run(ws, name, "retriever", config["spec"], config)  # a resume: the same configuration

    done = runs.finished(ws, name)
    need: dict[str, tuple[str, ...]] = {}
    for r in selected:
        for qid in r.qids:
            if (r.name, qid) not in done:
                need[qid] = need.get(qid, ()) + (r.name,)
    total = sum(len(v) for v in need.values())
    stage = counted("ranking", total, "(rung, query) pairs")
    measure = retriever.can(MEASURED) and not runs.measurements(ws, name)
    if not total and not measure:
        if pending:
            runs.create_run(ws, name, "retriever", config["spec"], config)
        if progress:
            progress(stage, 1.0)
        return name
    per_query = twin.deltas(ws, [r.name for r in selected if r.composition.get("pools") == twin.PER_QUERY])
    added = [d[1] for per in per_query.values() for d in per.values()]
    retriever.prepare(ws, np.unique(np.concatenate([r.doc_ids for r in selected] + added)), progress)
    if progress:
        progress(stage, 0.0)
    texts = bank.queries(ws).set_index("qid")["text"]
    if measure:  # an approximate run is never silently approximate: its recall is stored before any ranking
        values = retriever.measurements({r.name: r.doc_ids for r in selected},
                                        {r.name: texts.loc[list(r.qids)].to_dict() for r in selected})
        if pending:  # measured, so the workspace reads: the run and then its recall
            runs.create_run(ws, name, "retriever", config["spec"], config)
            pending = False
        runs.save_measurements(ws, name, values)
    members = {r.name: r.doc_ids for r in selected}
    groups: dict[tuple[str, ...], list[str]] = {}
    for qid in sorted(need):
        groups.setdefault(need[qid], []).append(qid)
    finished = 0
    for rung_names, qids in sorted(groups.items()):
        pools = {n: members[n] for n in rung_names}
        for start in range(0, len(qids), batch_size):
            batch = qids[start: start + batch_size]
            ranked = {}
            batch_texts = texts.loc[batch].tolist()
            for depth in sorted({ks[n] for n in pools}):
                shared = {n: p for n, p in pools.items() if ks[n] == depth and n not in per_query}
                if shared:
                    ranked.update(retriever.rank(batch_texts, shared, depth))
                each = {n: QueryPools(p, [per_query[n][q][0] for q in batch], [per_query[n][q][1] for q in batch])
                        for n, p in pools.items() if ks[n] == depth and n in per_query}
                if each:  # twin rungs with per-query pools: each query searches its own
                    ranked.update(retriever.rank_each(batch_texts, each, depth))
            rows = [{"rung": rn, "qid": qid, "doc_ids": rk.ids[i], "scores": rk.scores[i]}
                    for rn, rk in ranked.items() for i, qid in enumerate(batch)]
            store(lambda: runs.save_results(ws, name, rows))
            finished += len(rows)
            if progress:
                progress(stage, finished / total)
    return name


# ------------------------------------------------------------------------------------------- live queries
_LIVE: dict[tuple, Any] = {}
_LIVE_LOCK = threading.RLock()  # re-entered: a fusion's parts are prepared through it


#: first-use costs of a live retriever, measured on the demo bank (4,614 documents, 1.31M text tokens) on 2 shared CPU
#: cores (bench/RESULTS.md, "Live box: what a retriever costs before it runs"); estimates, stated as such
MODEL_LOAD_S = 20.0  # loading MiniLM-L6 through sentence-transformers: 14-18 s there
EMBED_DOCS_PER_S = 20.0  # MiniLM-L6 embedding the demo's documents: 4,614 in 3 min 47 s
BM25_TOKENS_PER_S = 700_000.0  # BM25 indexing the demo bank: 1.8 s
READY, LOADS, EMBEDS = "ready", "loads", "embeds"


@dataclass(frozen=True)
class LiveCost:
    """What a live retriever costs before it runs: ``state`` READY (prepared in this server process: milliseconds),
    LOADS (its first question loads a model or an index from the workspace's caches, about ``seconds``) or EMBEDS (a
    model with no run here: its ``to_embed`` documents probably have no cached vectors, which ``emb-s eval`` makes;
    a live query would load the model and then refuse)."""

    spec: str
    state: str
    seconds: float
    to_embed: int
    note: str

    @property
    def estimate(self) -> str:
        """The first-use estimate in words ("about 20 s")."""
        return about(self.seconds)

    @property
    def at_once(self) -> bool:
        """Whether it may run on Enter (its cost said first): ready, or loading what the workspace has cached. One that
        would embed the bank waits for an explicit go: a page must not start minutes of work unasked."""
        return self.state != EMBEDS


def about(seconds: float) -> str:
    return f"about {seconds:.0f} s" if seconds < 90 else f"about {seconds / 60:.0f} min"


def live_cost(ws: Workspace, spec: str, **options: Any) -> LiveCost:
    """:class:`LiveCost` of ``spec`` on ``ws``, found without loading any model: a retriever part that embeds is
    taken as cached when the workspace holds a retriever run of it (``eval`` caches every document's vectors)."""
    if _live_key(ws, spec, options) in _LIVE:
        return LiveCost(spec, READY, 0.0, 0, f"{spec}: loaded, milliseconds per question")
    try:
        r = retrievers.get(spec, **options)  # constructing one loads nothing
    except EmbSError:  # a spec no retriever answers to: the live query says why, in its own place
        return LiveCost(spec, LOADS, 0.0, 0, "")
    parts = list(r.parts) if isinstance(r, Hybrid) else [r]
    listed = runs.list_runs(ws)
    done = set(listed.loc[listed["kind"] == "retriever", "system"].dropna().astype(str))
    done |= {p.spec for s in done if s.startswith("hybrid:") for p in _parts_of(s)}
    info = bank.info(ws)
    n_docs, n_tokens = int(info["documents"]), int(info["tokens"])
    vectors = [p for p in parts if p.can(EMBEDDINGS)]
    seconds = sum(MODEL_LOAD_S for _ in vectors) + sum(n_tokens / BM25_TOKENS_PER_S for p in parts
                                                        if not p.can(EMBEDDINGS))
    uncached = [p.spec for p in vectors if p.spec not in done and _live_key(ws, p.spec, options) not in _LIVE]
    if uncached:
        embed = n_docs / EMBED_DOCS_PER_S
        return LiveCost(spec, EMBEDS, seconds + embed, n_docs,
                        f"{spec}: {', '.join(uncached)} has no run on this workspace, so its {n_docs:,} documents "
                        f"({n_tokens:,} tokens) have no cached vectors to search: embedding them first takes "
                        f"{about(embed)} at MiniLM-L6's rate on 2 CPU cores (more on a busy machine), plus up to "
                        f"{about(seconds)} to load. Run `emb-s eval --workspace {ws.cli} --retriever {spec}` once; live questions "
                        "then take milliseconds.")
    what = "the model and its cached vectors" if vectors else "an index of the bank"
    return LiveCost(spec, LOADS, seconds, 0,
                    f"{spec}: the first question loads {what}, up to {about(seconds)} once; then milliseconds")


def _parts_of(spec: str) -> list[retrievers.Retriever]:
    try:
        r = retrievers.get(spec)
    except EmbSError:  # a run of a retriever this version cannot name: nothing to learn from it
        return []
    return list(r.parts) if isinstance(r, Hybrid) else [r]


def _live_key(ws: Workspace, spec: str, options: dict[str, Any]) -> tuple:
    return (str(ws.path), ws.table_versions().get("documents"), spec, tuple(sorted(options.items())))


def prepared(ws: Workspace, spec: str, **options: Any) -> retrievers.Retriever:
    """A retriever prepared over the whole bank from what the workspace has cached, kept per (workspace, bank
    version, spec, options) in-process. A dense retriever whose document vectors ``eval`` has not cached yet is an
    EmbSError (embedding a bank takes minutes; it belongs in ``emb-s eval``, not in a page request)."""
    key = _live_key(ws, spec, options)
    with _LIVE_LOCK:
        if key not in _LIVE:
            r = _checked_retriever(spec, options)
            missing = r.uncached(ws, None)
            if missing:
                total = len(bank.documents(ws, ["doc_id"]))
                raise EmbSError(f"{spec} has not been evaluated on this workspace yet: {missing:,} of {total:,} "
                                "documents have no cached vectors",
                                fix=f"run `emb-s eval --workspace {ws.cli} --retriever {spec}` once (it embeds the bank "
                                    "and caches the vectors); live queries then take milliseconds.")
            if isinstance(r, Hybrid):
                # its parts are the live retrievers of their own specs: one index and one set of resident vectors
                # per part, and a what-if that asks a part and the fusion scores the typed text once
                r.adopt([prepared(ws, p.spec, **options) for p in r.parts])
            else:
                r.prepare(ws, None)
            _LIVE[key] = r
        return _LIVE[key]


_LADDERS: dict[tuple, Any] = {}


def _ladder(ws: Workspace):
    """Every ladder the workspace holds (built, official and the twin), loaded once per membership version."""
    key = (str(ws.path), ws.table_versions().get("rung_members"))
    if key not in _LADDERS:
        lad = ladder_mod.load_all(ws)
        if lad is None:
            raise EmbSError(f"the workspace {ws.path} has no ladder yet",
                            fix=f"run `emb-s ladder build --workspace {ws.cli}` first.")
        _LADDERS[key] = lad
    return _LADDERS[key]


def live_query(ws: Workspace, spec: str, text: str, rung: str, k: int = 10, **options: Any) -> pd.DataFrame:
    """Ranking of a typed question on one rung: DataFrame(rank, doc_id, score). The first call prepares the bank from
    the workspace's caches (BM25 indexes it; dense reads the vectors ``eval`` stored, never embeds); later calls reuse
    it, so a query takes milliseconds."""
    if not text or not text.strip():
        raise EmbSError("the question is empty", fix="type a question.")
    if ladder_mod.kind_of(rung) == ladder_mod.BENIGN:
        raise EmbSError(f"{rung} is a benign-twin rung: its pools are made for the bank's queries (their near misses "
                        "removed), so a typed question has no twin pool",
                        fix="search a rung of the built or official ladder; the twin's scores are in the stored runs.")
    r = _ladder(ws).rung(rung)
    ranking = prepared(ws, spec, **options).rank([text], {rung: r.doc_ids}, k)[rung]
    return pd.DataFrame({"rank": np.arange(1, ranking.ids.shape[1] + 1), "doc_id": ranking.ids[0],
                         "score": ranking.scores[0].astype(float)})
