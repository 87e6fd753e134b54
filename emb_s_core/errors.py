"""The one error type a user can cause.

Every message says what was wrong, where (file and line, or record), and what to do, so the CLI and the dashboard
can show it verbatim instead of a traceback.
"""
from __future__ import annotations


class EmbSError(Exception):
    """A user-correctable problem: bad input file, unknown id, missing model, budget too small, ..."""

    def __init__(self, what: str, *, where: str | None = None, fix: str | None = None) -> None:
        self.what = what
        self.where = where
        self.fix = fix
        parts = [what if where is None else f"{where}: {what}"]
        if fix:
            parts.append(f"Fix: {fix}")
        super().__init__(" ".join(parts))


def at(path: object, line: int | None = None, record: object | None = None) -> str:
    """Format a location: ``file.jsonl line 12`` or ``data.pkl record 3``."""
    where = str(path)
    if line is not None:
        where += f" line {line}"
    if record is not None:
        where += f" record {record}"
    return where
