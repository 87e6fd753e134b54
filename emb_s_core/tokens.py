"""Token counting with tiktoken, offline (DESIGN.md §1 Tokens).

tiktoken downloads its BPE files on first use; litellm ships cached copies, so when the user has not set
``TIKTOKEN_CACHE_DIR`` we point it at litellm's folder (found without importing litellm, which is slow).
Budgets use 1K = 1,024 tokens and 1M = 1,048,576 tokens, the way context windows are quoted.
"""
from __future__ import annotations

import importlib.util
import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Sequence

from emb_s_core.errors import EmbSError

DEFAULT_ENCODING = "cl100k_base"
ENCODINGS = ("cl100k_base", "o200k_base")
K = 1024
M = 1024 * 1024


def _litellm_tokenizer_dir() -> Path | None:
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(list(spec.submodule_search_locations)[0]) / "litellm_core_utils" / "tokenizers"
    return folder if folder.is_dir() else None


def ensure_offline_cache() -> None:
    """Point tiktoken at litellm's bundled BPE files unless the user chose a cache folder."""
    if os.environ.get("TIKTOKEN_CACHE_DIR"):
        return
    folder = _litellm_tokenizer_dir()
    if folder is not None:
        os.environ["TIKTOKEN_CACHE_DIR"] = str(folder)


@lru_cache(maxsize=4)
def encoding(name: str = DEFAULT_ENCODING):
    """The tiktoken encoding ``name``; a clear error when it is unknown or its file cannot be had offline."""
    if name not in ENCODINGS:
        raise EmbSError(f"unknown token encoding {name!r}", fix=f"use one of {', '.join(ENCODINGS)}.")
    ensure_offline_cache()
    import tiktoken

    try:
        return tiktoken.get_encoding(name)
    except Exception as exc:  # network failure when no cached BPE file exists
        raise EmbSError(
            f"cannot load tiktoken encoding {name!r} offline ({type(exc).__name__}: {exc})",
            fix="install litellm (it ships the BPE files) or set TIKTOKEN_CACHE_DIR to a folder holding them.",
        ) from exc


def count(text: str, encoding_name: str = DEFAULT_ENCODING) -> int:
    return len(encoding(encoding_name).encode_ordinary(text))


def count_batch(texts: Sequence[str], encoding_name: str = DEFAULT_ENCODING, num_threads: int | None = None
                ) -> list[int]:
    """Token counts for many texts, on one thread per core (tiktoken encodes outside the GIL).

    Each thread takes a contiguous slice: tiktoken's own batch encoder submits one future per text, and that
    bookkeeping cost as much as the encoding itself on short documents (2× slower on 2 cores, bench/RESULTS.md).
    """
    enc = encoding(encoding_name)
    texts = list(texts)
    threads = max(1, min(num_threads or os.cpu_count() or 1, len(texts) // 64))
    if threads == 1:
        return [len(enc.encode_ordinary(t)) for t in texts]

    def part(chunk: list[str]) -> list[int]:
        return [len(enc.encode_ordinary(t)) for t in chunk]

    step = -(-len(texts) // threads)
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(threads) as pool:
        return [n for chunk in pool.map(part, [texts[i:i + step] for i in range(0, len(texts), step)]) for n in chunk]


def truncate(text: str, max_tokens: int, encoding_name: str = DEFAULT_ENCODING) -> str:
    enc = encoding(encoding_name)
    ids = enc.encode_ordinary(text)
    return text if len(ids) <= max_tokens else enc.decode(ids[:max_tokens])


_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KkMmGg]?)\s*$")


def parse_size(label: str) -> int:
    """``"64K"`` → 65,536; ``"1M"`` → 1,048,576; ``"5000"`` → 5,000."""
    m = _SIZE.match(str(label))
    if not m:
        raise EmbSError(f"cannot read token size {label!r}", fix="write it like 64K, 1M, 10M or a plain number.")
    value, unit = float(m.group(1)), m.group(2).upper()
    return int(value * {"": 1, "K": K, "M": M, "G": K * M}[unit])


def format_short(tokens: int) -> str:
    """A token count in at most 6 characters, in the units sizes are named in: 1,309,590 → ``"1.25M"`` (1M =
    1,048,576), 900 → ``"900"``; where a figure must fit a narrow box, with the exact count beside it."""
    units = (("", 1), ("K", K), ("M", M), ("G", K * M))
    i = max(j for j, (_, size) in enumerate(units) if tokens >= size or j == 0)
    if i + 1 < len(units) and tokens / units[i][1] >= 999.5:  # 1,023,500 is 0.976M, not "1e+03K"
        i += 1
    unit, size = units[i]
    return f"{tokens / size:.3g}{unit}" if size > 1 else str(int(tokens))


def format_size(tokens: int) -> str:
    """Inverse of :func:`parse_size` for exact multiples: 65,536 → ``"64K"``."""
    for unit, size in (("G", K * M), ("M", M), ("K", K)):
        if tokens >= size and tokens % size == 0:
            return f"{tokens // size}{unit}"
    return str(tokens)
