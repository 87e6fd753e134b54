"""A damaged workspace in one line: which table, what is wrong, and the last version the store keeps that reads.

Why a module: a truncated Lance data file, a deleted table folder or a table the process may not write surfaces deep
inside pyarrow or lance (``ArrowInvalid: LanceError(IO) … failed to fill whole buffer``, ``ValueError``,
``PermissionError``), far from any name the user knows. The CLI and the dashboard hand such an exception to
:func:`explain`, which reads every table of the workspace at its committed version, names the one that fails and
looks back through the workspace's history for the newest version whose copy of that table reads in full; the fix
offers ``emb-s history --restore N`` (a new version with that version's content; nothing is deleted).
"""
from __future__ import annotations

import errno
import os
import sqlite3
from pathlib import Path

from emb_s_core.errors import EmbSError

#: exception types that storage damage surfaces as (pyarrow's ArrowInvalid/ArrowIOError derive from ValueError/OSError)
STORAGE_ERRORS = (OSError, ValueError, RuntimeError, sqlite3.DatabaseError)


def looks_like_storage(exc: BaseException) -> bool:
    """Whether ``exc`` came from reading the store (an OSError, pyarrow's ArrowInvalid/ArrowIOError, a lance error),
    so that diagnosing the tables (a full read of each) is worth it; any other ValueError is a bug, left as it is."""
    if isinstance(exc, OSError):
        return True
    name = type(exc).__name__
    text = str(exc)
    return isinstance(exc, STORAGE_ERRORS) and (name.startswith(("Arrow", "Lance")) or "LanceError" in text
                                                 or ".lance" in text or "manifest" in text.lower())


def _short(exc: BaseException, limit: int = 160) -> str:
    text = " ".join(str(exc).split("Traceback")[0].split())
    text = text.split(", /rustc/")[0]  # lance appends the Rust source location
    return f"{type(exc).__name__}: {text[:limit]}"


def _table_path(root: Path, name: str) -> Path:
    return root / "lance" / f"{name}.lance"


def read_problem(root: Path, name: str, version: int) -> str | None:
    """Why table ``name`` at ``version`` cannot be read in full (None when it can): a missing folder, a missing
    version, or a data file that is damaged."""
    folder = _table_path(root, name)
    if not folder.is_dir():
        return f"its folder lance/{name}.lance is missing"
    try:
        import lance

        dataset = lance.dataset(str(folder), version=version)
        for _ in dataset.to_batches(batch_size=65536):
            pass
    except Exception as exc:  # noqa: BLE001 - every way a read fails is the answer
        return f"it cannot be read ({_short(exc)})"
    return None


def damaged_tables(path: str | os.PathLike[str]) -> dict[str, str]:
    """table -> what is wrong, for every table of the workspace's committed manifest that does not read in full."""
    from emb_s_core.store import Workspace

    ws = Workspace(path)
    out = {}
    for name, version in sorted(ws.table_versions().items()):
        problem = read_problem(ws.path, name, version)
        if problem:
            out[name] = problem
    return out


def last_good_version(path: str | os.PathLike[str], table: str) -> int | None:
    """The newest workspace version (from ``history.jsonl``) whose copy of ``table`` reads in full, or None."""
    from emb_s_core.store import Workspace

    ws = Workspace(path)
    tried: set[int] = set()
    for entry in reversed(ws.history()[:-1]):
        version = entry.get("tables", {}).get(table)
        if version is None or version in tried:
            continue
        tried.add(version)
        if read_problem(ws.path, table, int(version)) is None:
            return int(entry["version"])
    return None


def explain(path: str | os.PathLike[str], exc: BaseException) -> EmbSError | None:
    """The one-line EmbSError for ``exc`` raised while using workspace ``path`` when the cause is a damaged or
    unwritable table or cache; None when the workspace reads in full and the error is something else."""
    root = Path(path)
    if isinstance(exc, PermissionError) or getattr(exc, "errno", None) in (errno.EACCES, errno.EROFS, errno.EPERM):
        where = getattr(exc, "filename", None) or root
        return EmbSError(f"the workspace {root} cannot be written: {exc.strerror or 'permission denied'} ({where})",
                         fix="make the workspace writable by this user (or copy it to a writable folder); nothing "
                             "was changed, and reading it (report, dashboard) still works.")
    if isinstance(exc, sqlite3.OperationalError) and "readonly" in str(exc).lower():
        return EmbSError(f"the response cache {root / 'llm_cache.sqlite'} cannot be written ({exc})",
                         fix="make llm_cache.sqlite writable by this user (or delete it: a rerun sends the calls "
                             "again); nothing was stored.")
    if not looks_like_storage(exc) or not (root / "workspace.json").is_file():
        return None
    try:
        damaged = damaged_tables(root)
    except Exception:  # noqa: BLE001 - the workspace is too broken to diagnose: leave the original error
        return None
    if not damaged:
        return None
    name, problem = next(iter(damaged.items()))
    others = f" (also damaged: {', '.join(list(damaged)[1:])})" if len(damaged) > 1 else ""
    good = last_good_version(root, name)
    if good is not None:
        fix = (f"restore version {good}, the newest whose {name} table reads in full: `emb-s history --workspace "
               f"{_quote(root)} --restore {good}` (a new version with its tables; the later versions stay in the "
               "history, nothing is deleted), or restore the folder from a backup.")
    else:
        fix = ("no earlier version of that table reads in full: restore the workspace folder from a backup, or "
               "import the bank again into a new workspace.")
    return EmbSError(f"table {name!r} of the workspace {root} is damaged: {problem}{others}", fix=fix)


def _quote(path: Path) -> str:
    import shlex

    return shlex.quote(str(path))
