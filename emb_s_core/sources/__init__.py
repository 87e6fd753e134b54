"""Importers: each format is one module with ``read(path, source) -> Bank`` and one entry in ``FORMATS``.

Modules are imported only when their format is used, so the CLI starts fast.
"""
from __future__ import annotations

import importlib
from pathlib import Path
from typing import Callable

from emb_s_core.errors import EmbSError
from emb_s_core.schema import Bank

#: format name -> module under emb_s_core.sources
FORMATS: dict[str, str] = {
    "native": "native",
    "demo": "synthetic",
}


def reader(fmt: str) -> Callable[..., Bank]:
    if fmt not in FORMATS:
        raise EmbSError(f"unknown import format {fmt!r}", fix=f"use one of: {', '.join(sorted(FORMATS))}.")
    return importlib.import_module(f"emb_s_core.sources.{FORMATS[fmt]}").read


def read_bank(fmt: str, path: str | Path, source: str | None = None) -> Bank:
    """Read and validate one source; raises EmbSError naming the file and line of the first problem."""
    bank = reader(fmt)(Path(path), source or fmt)
    bank.validate()
    return bank
