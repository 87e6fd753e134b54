"""The built-in demo: generate the adversarial bank, build the ladder and its benign twin, evaluate the offline
retrievers on both.

This is what a fresh machine shows (the dashboard's Home page and ``emb-s demo``). Every step is resumable: the bank
import is idempotent (same size and seed → same checksum), the ladder is rebuilt only when missing, and evaluation
runs resume from their finished (rung, query) pairs.
"""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Callable

from emb_s_core import bank, ladder, runs, twin
from emb_s_core.store import Workspace

Progress = Callable[[str, float], None]

#: the offline retrievers a demo workspace is evaluated with by default: sparse, dense and their fusion. The dense
#: one is the static model distilled from MiniLM-L6 (dense:minilm-static): MiniLM-L6 itself takes about 4 minutes
#: quiet (and 20+ under load) to embed the default bank on a 2-core CPU, the static model a few seconds after a
#: one-time distillation (24 s quiet, install.sh does it), at a cost in quality: SR@10 0.02-0.10 below MiniLM-L6 on
#: the shared datasets and 0.18 below on the demo bank (bench/RESULTS.md, "A fast embedder for the demo"). MiniLM-L6 and L3 are opt-in: `emb-s demo --retrievers ...`.
DEMO_RETRIEVERS = ("bm25", "dense:minilm-static", "hybrid:bm25+dense:minilm-static")


def build(workspace_dir: str | Path, tokens: int | None = None, seed: int = 0, progress: Progress | None = None,
          retrievers: tuple[str, ...] = DEMO_RETRIEVERS, k: int = 100) -> Workspace:
    """Create (or finish) the demo workspace at ``workspace_dir``; ``progress(stage, fraction)`` reports each step."""
    from emb_s_core import evaluate
    from emb_s_core.sources import synthetic

    tokens = tokens or synthetic.DEFAULT_TOKENS
    report = progress or (lambda stage, fraction: None)
    path = Path(workspace_dir)
    ws = Workspace(path, create=not (path / "workspace.json").exists())
    identity = f"demo:tokens={tokens}:seed={seed}"
    if not _has_source(ws, identity):
        report(f"generating a {tokens:,}-token adversarial bank", 0.0)
        generated = synthetic.generate(tokens, seed)
        report("storing the bank", 0.5)
        bank.add_bank(ws, generated, fmt="demo", path=identity,
                      sha256=hashlib.sha256(identity.encode()).hexdigest())
    report("generating the bank", 1.0)
    if not ladder.exists(ws):
        report("building the ladder", 0.0)
        ladder.build(ws, ladder.LadderOptions(seed=seed))
    report("building the ladder", 1.0)
    k = min(k, min(r.n_documents for r in ladder.load(ws).rungs))  # small demo banks have small base rungs
    for spec in retrievers:
        stage = f"evaluating {spec}"
        evaluate.evaluate(ws, spec, name=spec, k=k,
                          progress=lambda s, f, stage=stage: report(f"{stage}: {s}", f))
        report(stage, 1.0)
    # the benign twin, with its stated default references (bm25): what was run or cached does not change it
    if not ladder.exists(ws, ladder.BENIGN) or ladder.stale_reason(ws, ladder.BENIGN):
        report("building the benign twin", 0.0)
        twin.build(ws)
    report("building the benign twin", 1.0)
    for spec in retrievers:  # the same run and k (a twin rung smaller than k is ranked whole)
        stage = f"evaluating {spec} on the benign twin"
        evaluate.evaluate(ws, spec, name=spec, k=k, ladder=ladder.BENIGN,
                          progress=lambda s, f, stage=stage: report(f"{stage}: {s}", f))
        report(stage, 1.0)
    return ws


def _has_source(ws: Workspace, identity: str) -> bool:
    return ws.has_table("sources") and identity in set(ws.read_pandas("sources", ["path"])["path"])


def is_complete(ws: Workspace, retrievers: tuple[str, ...] = DEMO_RETRIEVERS) -> bool:
    """True when the demo's bank, ladder, benign twin and every retriever run exist (the dashboard then skips
    building)."""
    names = set(runs.list_runs(ws)["run"])
    return ladder.exists(ws) and ladder.exists(ws, ladder.BENIGN) and all(spec in names for spec in retrievers)


def steps(retrievers: tuple[str, ...] = DEMO_RETRIEVERS) -> list[str]:
    """The build's steps in order, as its stages begin: generating the bank, building the ladder, one evaluation per
    retriever, the benign twin, one twin evaluation per retriever (what "step 3 of 9" counts)."""
    return ["generating the bank", "building the ladder", *(f"evaluating {spec}" for spec in retrievers),
            "building the benign twin", *(f"evaluating {spec} on the benign twin" for spec in retrievers)]


def step_of(stage: str, retrievers: tuple[str, ...] = DEMO_RETRIEVERS) -> int:
    """1-based step of a reported stage (see :func:`steps`); 0 when the stage is none of them."""
    if stage.startswith(("generating", "storing the bank")):
        return 1
    if stage.startswith("building the ladder"):
        return 2
    if stage.startswith("building the benign twin"):
        return 3 + len(retrievers)
    for i, spec in enumerate(retrievers):
        if stage.startswith(f"evaluating {spec} on the benign twin"):
            return 4 + len(retrievers) + i
    for i, spec in enumerate(retrievers):
        if stage.startswith(f"evaluating {spec}"):
            return 3 + i
    return 0
