"""The bank at a glance (Home): tokens and queries per domain, and the imported sources, from ``bank.info``.

Why here: Home only lays out tables; the join of per-domain token and query counts is made once, for the page and
anyone else who shows the bank.
"""
from __future__ import annotations

import pandas as pd

_HIDDEN_SOURCE_COLUMNS = ("sha256", "path")  # long, and a local path says nothing to a reader of the table


def domains(info: dict) -> pd.DataFrame:
    """domain, tokens, queries (0 for a domain whose documents no query targets)."""
    tokens = info.get("tokens_per_domain", {})
    queries = info.get("queries_per_domain", {})
    return pd.DataFrame({"domain": list(tokens), "tokens": [int(t) for t in tokens.values()],
                         "queries": [int(queries.get(d, 0)) for d in tokens]})


def sources(info: dict) -> pd.DataFrame:
    """One row per imported source (what was read, what was skipped), or per document source when no import
    record exists."""
    if info.get("sources"):
        src = pd.DataFrame(info["sources"])
        return src.drop(columns=[c for c in _HIDDEN_SOURCE_COLUMNS if c in src])
    per = info.get("documents_per_source", {})
    return pd.DataFrame({"source": list(per), "documents": [int(n) for n in per.values()]})
