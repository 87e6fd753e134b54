"""The bank at a glance (Home): tokens and queries per domain, and the imported sources, from ``bank.info``.

Why here: Home only lays out tables; the join of per-domain token and query counts is made once, for the page and
anyone else who shows the bank.
"""
from __future__ import annotations

import json

import pandas as pd

from emb_s_core import ladder as ladder_mod

#: the two token counts of a bank, one name each wherever they are shown
TEXT_TOKENS = "text tokens"
SERIALIZED_TOKENS = "serialized tokens"
TOKENS_NOTE = ("text tokens: each document's title and text, counted once at import (Home, `emb-s info`); "
               "serialized tokens: what a model is shown, the same plus a [DocID=<id>] header line and a separator "
               "per document (the ladder's rung sizes and budgets)")

_HIDDEN_SOURCE_COLUMNS = ("sha256", "path")  # long, and a local path says nothing to a reader of the table


def domains(info: dict) -> pd.DataFrame:
    """domain, text tokens, queries (0 for a domain whose documents no query targets)."""
    tokens = info.get("tokens_per_domain", {})
    queries = info.get("queries_per_domain", {})
    return pd.DataFrame({"domain": list(tokens), TEXT_TOKENS: [int(t) for t in tokens.values()],
                         "queries": [int(queries.get(d, 0)) for d in tokens]})


def serialized_total(info: dict, lad: ladder_mod.Ladder | None) -> int | None:
    """The bank's serialized tokens: the size of a built rung holding every document (``full``); None without one."""
    whole = [r for r in (lad.rungs if lad is not None else []) if r.ladder == ladder_mod.BUILT
             and r.n_documents == info["documents"]]
    return int(whole[-1].n_tokens) if whole else None


def tokens_help(info: dict, lad: ladder_mod.Ladder | None) -> str:
    """The exact text-token count, what it counts, and the serialized count the ladder shows beside it."""
    serialized = serialized_total(info, lad)
    out = f"{info['tokens']:,} {TEXT_TOKENS} ({info['encoding']})"
    if serialized is not None:
        out += f"; {serialized:,} {SERIALIZED_TOKENS} (the full rung)"
    return f"{out}. {TOKENS_NOTE}."


def _as_text(value) -> str:
    """A dict or list cell (skipped records, importer details) as one readable line; empty for none."""
    if isinstance(value, dict):
        return "; ".join(f"{k}: {_as_text(v)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return ", ".join(map(_as_text, value))
    if value is None:
        return ""
    return f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) else str(value)


def sources(info: dict) -> pd.DataFrame:
    """One row per imported source (what was read, what was skipped), or per document source when no import
    record exists. Dict and list cells (skipped records, importer details) are one line of text ("" for none)."""
    if info.get("sources"):
        src = pd.DataFrame(info["sources"])
        src = src.drop(columns=[c for c in _HIDDEN_SOURCE_COLUMNS if c in src])
        if "skipped" in src:  # stored as a JSON object: {"row without context": 1}
            src["skipped"] = src["skipped"].map(lambda v: (_as_text(json.loads(v)) if isinstance(v, str) and
                                                           v.startswith("{") else _as_text(v)) or "none")
        for col in src.columns:
            if src[col].map(lambda v: isinstance(v, (dict, list, tuple))).any():
                src[col] = src[col].map(_as_text)
        return src
    per = info.get("documents_per_source", {})
    return pd.DataFrame({"source": list(per), "documents": [int(n) for n in per.values()]})


def rung_count(lad: ladder_mod.Ladder | None) -> str:
    """Home's "Rungs": the view's ladder's rungs (built, else official), the others apart ("24 + 24 twin"): the
    benign twin is a companion of the ladder, not more of it."""
    from emb_s_core.analysis import views

    if lad is None:
        return "0"
    view = views.ladder_in_view(lad)
    apart = {kind: sum(ladder_mod.kind_of(n) == kind for n in lad.names) for kind in ladder_mod.LADDER_KINDS
             if kind != view.kind}
    label = {ladder_mod.BENIGN: "twin", ladder_mod.OFFICIAL: "official", ladder_mod.BUILT: "built"}
    return " + ".join([str(len(view.rungs))] + [f"{n} {label[k]}" for k, n in apart.items() if n])


def warnings(lad: ladder_mod.Ladder | None) -> list[str]:
    """The ladder build's warnings (low hard-negative coverage, thin domain rungs): what Home shows; the build's
    other notes (kept queries, rung names, how the twin was made) are for the Ladder page and ``ladder show``."""
    return [m for m in (lad.messages if lad is not None else []) if m.startswith("warning:")]
