"""Plumbing shared by the LLM protocols (localization, QA, judges): versioned prompts, the ``[DocID=<id>]`` context
serialization, and which rungs and queries a run covers.

Why shared: localization and GLOBAL QA must show the model the *same* serialized rung, and every protocol must pick
the same queries for ``--limit N`` (N per rung, in one seeded order) so their results join in the access-vs-use
table.
"""
from __future__ import annotations

from dataclasses import dataclass
from importlib import resources

import pandas as pd

from emb_s_core import bank, ladder
from emb_s_core.errors import EmbSError
from emb_s_core.schema import DOC_SEPARATOR, serialized_document
from emb_s_core.store import Workspace


@dataclass(frozen=True)
class Prompt:
    name: str  # e.g. "judge"
    version: str  # e.g. "judge_v1" (the file name): stored with every answer so prompts can change safely
    template: str

    @property
    def digest(self) -> str:
        """Hash of the template: stored in run configs, so editing a prompt without a new version cannot silently
        resume a run made with the old text."""
        import hashlib

        return hashlib.sha256(self.template.encode("utf-8")).hexdigest()[:12]

    def render(self, **fields: object) -> str:
        return self.template.format(**fields)


# the prompt each protocol sends now; older versions stay in prompts/ so stored rows can say what they were sent
# (judge_v2 asks for "Score: N", localize_v2 for a JSON list of ids: replies that cannot be confused; issue 22)
CURRENT_PROMPTS = {"judge": 2, "localize": 2}


def load_prompt(name: str, version: int | None = None) -> Prompt:
    """``emb_s_core/prompts/<name>_v<version>.txt`` (package data); the current version by default."""
    stem = f"{name}_v{CURRENT_PROMPTS.get(name, 1) if version is None else version}"
    try:
        text = resources.files("emb_s_core.prompts").joinpath(f"{stem}.txt").read_text(encoding="utf-8")
    except FileNotFoundError:
        raise EmbSError(f"no prompt file {stem}.txt", fix="use a prompt version that ships in emb_s_core/prompts/.") \
            from None
    return Prompt(name, stem, text.strip())


def serialize(docs: pd.DataFrame) -> str:
    """Documents in the given order, each after a ``[DocID=<id>]`` header line (paper §A.3)."""
    titles = docs["title"] if "title" in docs else [None] * len(docs)
    return DOC_SEPARATOR.join(serialized_document(i, t if isinstance(t, str) else None, x)
                              for i, t, x in zip(docs["doc_id"], titles, docs["text"]))


def documents_by_id(ws: Workspace) -> pd.DataFrame:
    """doc_id-indexed title/text, read once per run."""
    return bank.documents(ws, ["doc_id", "title", "text"]).set_index("doc_id", drop=False).sort_index()


def context_of(docs: pd.DataFrame, doc_ids: object) -> str:
    """Serialized context for ``doc_ids`` (kept in the given order: a ranking, or a rung sorted by id)."""
    return serialize(docs.loc[list(doc_ids)])


def select_rungs(lad: ladder.Ladder, rungs: list[str] | None) -> list[ladder.Rung]:
    """The requested rungs in ladder order (all by default); an unknown name is an error naming the choices."""
    if not rungs:
        return list(lad.rungs)
    chosen = [lad.rung(name) for name in rungs]
    return sorted(chosen, key=lambda r: r.order)


LIMIT_SEED = 0  # the seed of the query order behind --limit: fixed, so every protocol picks the same queries


def query_order(qids: list[str], seed: int = LIMIT_SEED) -> list[str]:
    """``qids`` in one seeded pseudo-random order (by ``sha256(seed:qid)``): the same for every rung and protocol,
    and independent of the other qids, so a query keeps its place when the bank changes."""
    import hashlib

    return sorted(qids, key=lambda q: hashlib.sha256(f"{seed}:{q}".encode("utf-8")).hexdigest())


def check_limit(limit: int | None) -> None:
    if limit is not None and limit <= 0:
        raise EmbSError(f"--limit must be positive, got {limit}", fix="pass --limit N with N ≥ 1, or omit it.")


def rung_queries(rung: ladder.Rung, limit: int | None, seed: int = LIMIT_SEED) -> list[str]:
    """The queries a run covers on ``rung``: all of them, or ``limit`` per rung in the seeded :func:`query_order`
    (the same ones for every protocol, so localization, QA and judging join in the access-vs-use table)."""
    check_limit(limit)
    if limit is None:
        return list(rung.qids)
    chosen = set(query_order(list(rung.qids), seed)[:limit])
    return [q for q in rung.qids if q in chosen]


def rungs_without_queries(rungs: list[ladder.Rung]) -> list[str]:
    """The rungs a run would cover that hold no query at all (a run there does nothing; the CLI says so)."""
    return [r.name for r in rungs if not len(r.qids)]


def parse_list(text: str | None) -> list[str] | None:
    """``"64K/a, 512K"`` → ``["64K/a", "512K"]``; None or empty → None."""
    if not text:
        return None
    return [part.strip() for part in text.split(",") if part.strip()]
