"""What each rung is made of (Ladder page): documents and tokens per domain and per source, in long form, from the
compositions the ladder stored with every rung; the composition figure draws this frame.

Why here: a drop in a curve is traced to what a rung added; the table is analysis, the stacked bars only draw it.
"""
from __future__ import annotations

from typing import Iterable

import pandas as pd

from emb_s_core.ladder import Rung

COLUMNS = ["rung", "by", "group", "documents", "tokens"]


def table(rungs: Iterable[Rung]) -> pd.DataFrame:
    """Long form (rung, by, group, documents, tokens), ``by`` being domain or source."""
    rows = []
    for r in rungs:
        c = r.composition or {}
        for by in ("domain", "source"):
            docs = c.get(f"documents_per_{by}", {})
            toks = c.get(f"tokens_per_{by}", {})
            for group in sorted(set(docs) | set(toks)):
                rows.append({"rung": r.name, "by": by, "group": group, "documents": int(docs.get(group, 0)),
                             "tokens": int(toks.get(group, 0))})
    return pd.DataFrame(rows, columns=COLUMNS)
