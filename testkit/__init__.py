"""Small real banks and workspaces shared by the tests and the benchmarks (bench/ imports this, never tests/).

Each module builds one kind of bank through the real importers and ladder: ``retrieval_bank`` (3 domains, gold and
hard negatives, for the retrievers), ``use_bank`` (a tiny fact bank whose rungs fit the local model's window, for
evidence use) and ``dashboard_factory`` (a bank plus word-overlap runs, for the dashboard). Not installed with the
package: it lives beside ``tests/`` and ``bench/`` in the repository.
"""
from __future__ import annotations

import json
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def write_jsonl(path: Path, rows: list[dict] | list[str]) -> Path:
    """Rows (dicts, or ready lines) as a JSONL file; parent folders are created."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(row if isinstance(row, str) else json.dumps(row))
            fh.write("\n")
    return path
