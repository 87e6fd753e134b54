"""Progress of long steps, in honest units: ``progress(stage, fraction)`` callbacks, where ``stage`` names what is
counted ("embedding 4,858 documents (st:all-MiniLM-L6-v2)", "ranking 3,000 (rung, query) pairs").

Why a module: the engine reports, the CLI draws a bar in those units (done/total, per second, ETA) and the dashboard
shows the stage text; the stage format is written and read here only. Every step that can take more than a couple of
seconds reports fraction 0.0 before it starts (model loading, the first embedding batch), so a bar appears at once.
"""
from __future__ import annotations

import re
from typing import Callable

Progress = Callable[[str, float], None]
_COUNTED = re.compile(r"^(?P<verb>\S+) (?P<n>\d[\d,]*) (?P<unit>\(rung, query\) pairs|\S+)")


def counted(verb: str, n: int, unit: str, detail: str | None = None) -> str:
    """``counted("embedding", 4858, "documents", "minilm")`` → ``"embedding 4,858 documents (minilm)"``."""
    return f"{verb} {n:,} {unit}" + (f" ({detail})" if detail else "")


def units(stage: str) -> tuple[int, str] | None:
    """(total, unit) of a stage made by :func:`counted`, also when a caller prefixed it ("evaluating bm25: ranking
    3,000 (rung, query) pairs"); None for a stage without a count ("loading ...")."""
    m = _COUNTED.match(stage.rsplit(": ", 1)[-1])
    return (int(m.group("n").replace(",", "")), m.group("unit")) if m else None


def noop(stage: str, fraction: float) -> None:
    """The default callback: report nothing."""
    return None
