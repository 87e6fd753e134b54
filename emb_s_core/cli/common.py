"""Arguments and output helpers shared by the command groups."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def add_workspace(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--workspace", "-w", required=True, metavar="DIR", help="workspace folder")


def print_json(obj: Any) -> None:
    json.dump(obj, sys.stdout, indent=2, default=str)
    sys.stdout.write("\n")


def print_table(rows: list[dict[str, Any]], columns: list[str] | None = None) -> None:
    """Plain aligned text table for terminals."""
    if not rows:
        print("(no rows)")
        return
    columns = columns or list(rows[0])
    cells = [[_fmt(r.get(c)) for c in columns] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(columns)]
    print("  ".join(c.ljust(w) for c, w in zip(columns, widths)))
    print("  ".join("-" * w for w in widths))
    for row in cells:
        print("  ".join(v.ljust(w) for v, w in zip(row, widths)))


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4f}"
    if isinstance(value, int):
        return f"{value:,}"
    return "" if value is None else str(value)
