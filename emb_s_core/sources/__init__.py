"""Importers: each format is one module with ``read(path, source) -> Bank`` and one entry in ``FORMATS``.

Modules are imported only when their format is used, so the CLI starts fast.
"""
from __future__ import annotations

import importlib
from pathlib import Path
from typing import Callable

from emb_s_core.errors import EmbSError
from emb_s_core.schema import Bank, DocumentStream

#: format name -> module under emb_s_core.sources
FORMATS: dict[str, str] = {
    "native": "native",
    "beir": "beir",
    "hotpotqa": "hotpotqa",
    "musique": "musique",
    "2wiki": "twowiki",
    "locomo": "locomo",
    "emb-s-release": "emb_s_release",
    "demo": "synthetic",
}


def reader(fmt: str) -> Callable[..., Bank]:
    if fmt not in FORMATS:
        raise EmbSError(f"unknown import format {fmt!r}", fix=f"use one of: {', '.join(sorted(FORMATS))}.")
    return importlib.import_module(f"emb_s_core.sources.{FORMATS[fmt]}").read


#: formats whose reader takes a ``split`` (which query file of the release to read)
SPLIT_FORMATS = ("emb-s-release",)


def read_bank(fmt: str, path: str | Path, source: str | None = None, domain: str | None = None,
              split: str | None = None) -> Bank:
    """Read and validate one source (through :mod:`validate`); raises EmbSError naming the file and line of the
    first problem.

    ``domain`` is set on every document and query that has none: most public datasets carry no domain, and the
    ladder builds its 64K/128K/256K rungs per domain. ``split`` chooses an EMB-S release's query file.
    """
    if domain is not None and not domain.strip():
        raise EmbSError("--domain is empty", fix="pass a domain name, e.g. --domain wikipedia, or leave it out.")
    from emb_s_core.schema import normal_domain
    from emb_s_core.sources.validate import input_path, validate_bank

    path = input_path(Path(path), "import path")  # a FIFO, link loop, unreadable path: their own words
    if split is not None and fmt not in SPLIT_FORMATS:
        raise EmbSError(f"--split applies to --format {' / '.join(SPLIT_FORMATS)} only, not {fmt!r}",
                        fix="leave --split out for this format.")
    read = reader(fmt)
    try:
        bank = read(path, source or fmt, **({"split": split} if split is not None else {}))
    except RecursionError:
        raise EmbSError("the input is nested too deeply to read", where=str(path),
                        fix="flatten the records (see the json_depth limit in README, Limits).") from None
    validate_bank(bank, path)  # types, ranges, invariants: the last gate before anything is written
    if domain:
        domain = normal_domain(domain)  # the one rule for domains (schema.normal_domain)
        if isinstance(bank.documents, DocumentStream):
            bank.documents.default_domain = domain
        for record in (*(() if isinstance(bank.documents, DocumentStream) else bank.documents), *bank.queries):
            record.domain = record.domain or domain
    return bank
