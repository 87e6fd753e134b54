"""Secrets: read keys from ``.streamlit/secrets.toml`` into the environment and mask them in every message.

Why a module of its own: API keys must never leak into logs, results or exceptions, so every text the gateway
records passes :func:`redact`; the rule of what counts as a secret (a variable name with KEY/TOKEN/SECRET/PASSWORD)
is defined once, here, and the gateway's cache key uses the same rule to leave secrets out.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

from emb_s_core.errors import EmbSError

SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD)", re.I)
NO_KEY = "not-needed"  # sent to a local server given with --api-base when no key is set: it ignores it, but
# litellm's OpenAI client refuses to start without one (and reports that as a 500, which would be retried in vain)


def load_secrets(path: str | os.PathLike[str] | None = None) -> list[str]:
    """Copy keys from ``.streamlit/secrets.toml`` into the environment (the environment wins); return their names.

    Only top-level string values are read (``OPENAI_API_KEY = "..."``); values are never printed.
    """
    import tomllib

    candidates = [Path(path)] if path else [Path.cwd() / ".streamlit" / "secrets.toml",
                                            Path.home() / ".streamlit" / "secrets.toml"]
    names: list[str] = []
    for candidate in candidates:
        if not candidate.is_file():
            continue
        try:
            data = tomllib.loads(candidate.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError):
            # the parser's message can quote the line (a key): say where, not what
            raise EmbSError("cannot parse the secrets file", where=str(candidate),
                            fix="check its TOML syntax (KEY = \"value\" per line).") from None
        for key, value in data.items():
            if isinstance(value, str):
                os.environ.setdefault(key, value)
                names.append(key)
    return names


def _secret_values() -> list[str]:
    return sorted({v for k, v in os.environ.items() if SECRET_NAME.search(k) and len(v) >= 8}, key=len, reverse=True)


def redact(text: object) -> str:
    """``text`` with every secret-looking environment value (names with KEY/TOKEN/SECRET/PASSWORD) masked."""
    out = str(text)
    for value in _secret_values():
        out = out.replace(value, "***")
    return out
