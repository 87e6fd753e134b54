"""The response cache: a rerun costs nothing.

SQLite in the workspace folder (``<workspace>/llm_cache.sqlite``), keyed by ``sha256(model, messages, parameters)``
(the gateway builds the key); a row is committed as soon as the reply arrives, so an interrupted run loses nothing.
"""
from __future__ import annotations

import os
import sqlite3
import threading
import time
from pathlib import Path

from emb_s_core.errors import EmbSError

CACHE_FILE = "llm_cache.sqlite"


class ResponseCache:
    """SQLite cache of model replies; one row per call, committed as soon as the reply arrives."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        with self._connect() as con:
            con.execute("CREATE TABLE IF NOT EXISTS responses (key TEXT PRIMARY KEY, model TEXT, text TEXT, "
                        "prompt_tokens INTEGER, completion_tokens INTEGER, cost REAL, created_at REAL)")

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=30)

    def get(self, key: str) -> dict | None:
        with self._lock, self._connect() as con:
            row = con.execute("SELECT text, prompt_tokens, completion_tokens, cost FROM responses WHERE key = ?",
                              (key,)).fetchone()
        if row is None:
            return None
        return {"text": row[0], "prompt_tokens": row[1], "completion_tokens": row[2], "cost": row[3]}

    def put(self, key: str, model: str, text: str, prompt_tokens: int, completion_tokens: int, cost: float) -> None:
        try:
            with self._lock, self._connect() as con:
                con.execute("INSERT OR REPLACE INTO responses VALUES (?, ?, ?, ?, ?, ?, ?)",
                            (key, model, text, prompt_tokens, completion_tokens, cost, time.time()))
        except sqlite3.OperationalError as exc:  # a read-only file or folder: one line, not a traceback
            if "readonly" not in str(exc).lower() and "read-only" not in str(exc).lower():
                raise
            raise EmbSError(f"the response cache cannot be written ({exc})", where=str(self.path),
                            fix=f"make {self.path.name} (and its folder) writable by this user, or delete it (a rerun "
                                "then sends the calls again); replies already cached are kept.") from None

    def __len__(self) -> int:
        with self._lock, self._connect() as con:
            return int(con.execute("SELECT COUNT(*) FROM responses").fetchone()[0])
