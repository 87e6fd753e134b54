"""Secrets: read keys from ``.streamlit/secrets.toml`` into the environment and mask them in every message.

Why a module of its own: API keys must never leak into logs, results or exceptions, so every text the gateway
records passes :func:`redact`; the rule of what counts as a secret is defined once, here: the value of an environment
variable whose name holds KEY/TOKEN/SECRET/PASSWORD (the gateway's cache key uses the same rule to leave secrets
out), the credentials inside a URL (``http://user:SECRET@host``), and every secret-shaped string wherever it came
from (:data:`SECRET_SHAPES`: provider key formats, bearer tokens, ``key=`` parameters).
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


#: strings that are secrets by their shape, whoever typed them: OpenAI/Anthropic ``sk-…``, Hugging Face ``hf_…``,
#: GitHub ``ghp_…``/``github_pat_…``, Slack ``xox?-…``, Google ``AIza…``, AWS ``AKIA…``, ``Bearer <token>``, and the
#: value of a ``key=``/``token=``/``secret=``/``password=`` parameter or option
SECRET_SHAPES = re.compile(
    r"\b(?:sk-[A-Za-z0-9_\-]{16,}|hf_[A-Za-z0-9]{20,}|gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}"
    r"|xox[abprs]-[A-Za-z0-9\-]{10,}|AIza[0-9A-Za-z_\-]{30,}|AKIA[0-9A-Z]{16})"
    r"|(?<=[Bb]earer )[A-Za-z0-9._~+/\-]{8,}=*"
    r"|(?<=://)[^/\s@]+(?=@)")
_PARAMETER = re.compile(r"(?i)((?:\b(?:api[_-]?key|access[_-]?token|token|secret|password|passwd)=)"
                        r"|(?:--(?:api-key|token|secret|password)(?:=|\s+)))([^&\s\"']{4,})")


def _secret_values() -> list[str]:
    return sorted({v for k, v in os.environ.items() if SECRET_NAME.search(k) and len(v) >= 8}, key=len, reverse=True)


def redact(text: object) -> str:
    """``text`` with every secret masked as ``***``: secret environment values (names with KEY/TOKEN/SECRET/
    PASSWORD), credentials inside URLs, and secret-shaped strings (:data:`SECRET_SHAPES`, ``--api-key X``)."""
    out = str(text)
    for value in _secret_values():
        out = out.replace(value, "***")
    out = SECRET_SHAPES.sub("***", out)
    return _PARAMETER.sub(lambda m: m.group(1) + "***", out)
