"""The LanceDB workspace: one database per folder, committed atomically through a manifest.

Why a manifest: an import or a run writes several tables (documents, queries, sources, results...). LanceDB commits
each table on its own, so ``workspace.json`` records the table versions of the last *finished* transaction and is
replaced atomically (write + rename). Readers open tables at those versions (snapshot isolation for the dashboard);
a transaction that fails, or a process killed mid-write, leaves versions past the manifest, and the next transaction
restores them first. ``Workspace.version`` counts finished transactions: it is what "the workspace did not change"
means in tests.

History: every committed manifest is also appended to ``history.jsonl`` (one line per version, written before the
manifest is replaced, so a line whose commit never happened is superseded by the next commit's line for the same
version). ``Workspace(path, version=N)`` opens a read-only view with tables checked out at version N's table versions;
LanceDB keeps old table versions until someone calls ``cleanup_old_versions``.

Concurrency: one writer at a time per workspace, across processes. Every transaction (and the rollback of a dead
writer's leftovers that starts it) holds an OS file lock (``fcntl.flock`` on ``writer.lock`` in the workspace); the OS
frees it when its holder exits, even by SIGKILL, so no stale lock ever blocks. ``ws.writer()`` holds it across
several transactions (a whole eval run), so a second writer of the same run waits and then resumes it. The lock file
records the holder (pid, command, since when) so a waiting writer can say whom it waits for; ``--no-wait`` (or
``configure_writers(wait=False)``) fails at once instead. Readers never lock: they read the committed manifest.
"""
from __future__ import annotations

import datetime as _dt
import errno
import fcntl
import json
import os
import shlex
import shutil
import sys
import threading
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator

import pandas as pd
import pyarrow as pa

from emb_s_core.errors import EmbSError

MANIFEST = "workspace.json"
HISTORY = "history.jsonl"
LOCK_FILE = "writer.lock"
FORMAT_VERSION = 1
#: files a new workspace folder may already hold (a concurrent creator's lock file, a repository placeholder)
_IGNORABLE = {".gitkeep", LOCK_FILE}
#: what a creation killed before its manifest was in place leaves (with a history of version 0 only)
_CREATION_LEFTOVERS = _IGNORABLE | {HISTORY, f".{MANIFEST}.tmp"}
#: how the libraries underneath say the disk is full (lance's RuntimeError, SQLite's OperationalError)
_DISK_FULL_WORDS = ("No space left on device", "database or disk is full")


def is_disk_full(exc: BaseException) -> bool:
    """Whether ``exc`` (or what it was raised from) is a full disk: ENOSPC/EDQUOT, or a library's words for it."""
    seen = 0
    while exc is not None and seen < 5:
        if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        if isinstance(exc, (OSError, RuntimeError)) or type(exc).__name__ in ("OperationalError", "LanceError"):
            if any(word in str(exc) for word in _DISK_FULL_WORDS):
                return True
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return False


def disk_full_error(path: str | os.PathLike[str]) -> EmbSError:
    """The one line a full disk gets: which workspace, how much is free, and that finished work is kept."""
    folder = Path(path)
    probe = next((p for p in (folder, *folder.parents) if p.exists()), folder)
    try:
        free = f"{shutil.disk_usage(probe).free / 2**20:,.1f} MiB free"
    except OSError:
        free = "free space unknown"
    return EmbSError(f"the disk holding the workspace {folder} is full ({free}): the write in progress was undone "
                     "and everything finished before it is kept",
                     fix="free some space on that disk (or move the workspace), then rerun the same command: it "
                         "resumes from the last finished write.")


def _print_wait(message: str) -> None:
    print(f"emb-s: {message}", file=sys.stderr, flush=True)


class WorkspaceBusy(EmbSError):
    """Another writer holds the workspace and the caller asked not to wait (``--no-wait``, a dashboard save)."""


@dataclass
class _WriterSettings:
    wait: bool = True
    on_wait: Callable[[str], None] = _print_wait


_SETTINGS = _WriterSettings()


def configure_writers(*, wait: bool | None = None, on_wait: Callable[[str], None] | None = None) -> None:
    """Process-wide: whether a writer waits for the lock (default) or fails at once, and how waiting is announced."""
    if wait is not None:
        _SETTINGS.wait = wait
    if on_wait is not None:
        _SETTINGS.on_wait = on_wait


@contextmanager
def writer_settings(*, wait: bool) -> Iterator[None]:
    """``configure_writers(wait=...)`` for one block (the CLI's ``--no-wait``), restored afterwards."""
    before = _SETTINGS.wait
    _SETTINGS.wait = wait
    try:
        yield
    finally:
        _SETTINGS.wait = before


@dataclass
class _HeldLock:
    """This process's hold on one workspace's writer lock: reentrant across threads' turns and nested calls."""

    pid: int
    guard: threading.RLock = field(default_factory=threading.RLock)
    fd: int | None = None
    depth: int = 0


_HELD: dict[Path, _HeldLock] = {}
_HELD_GUARD = threading.Lock()


def _held_lock(path: Path) -> _HeldLock:
    with _HELD_GUARD:
        held = _HELD.get(path)
        if held is None or held.pid != os.getpid():  # a forked child does not inherit its parent's hold
            held = _HELD[path] = _HeldLock(pid=os.getpid())
        return held


def lock_holder(path: str | os.PathLike[str]) -> dict | None:
    """Who holds (or last held) the writer lock of workspace ``path``: {pid, command, since}, or None."""
    try:
        info = json.loads((Path(path) / LOCK_FILE).read_text(encoding="utf-8") or "null")
    except (OSError, ValueError):
        return None
    return info if isinstance(info, dict) else None


def _command_label() -> str:
    """What the lock file says is writing: the program and its subcommand (``emb-s eval``), never the rest of the
    command line, which may hold a key or a URL with credentials and outlives a killed process."""
    from emb_s_core.llm.secrets import redact

    program = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else Path(sys.executable).name
    if program in ("__main__.py", "cli", "-m", "-c"):
        program = "emb-s"
    words = [w for w in sys.argv[1:] if not w.startswith("-")][:1]
    return redact(" ".join([program, *words]))[:80]


def _describe(holder: dict | None) -> str:
    if not holder:
        return "another process"
    from emb_s_core.llm.secrets import redact  # a lock file written before commands were stored short

    command = redact(str(holder.get("command", "?")).split(" -")[0])[:80]
    return f"pid {holder.get('pid')} ({command}) since {holder.get('since', '?')}"


def _acquire_file_lock(path: Path, wait: bool) -> int:
    """Open ``path/writer.lock`` and flock it exclusively; returns the descriptor (closing it releases the lock)."""
    lock_path = path / LOCK_FILE
    while True:
        try:
            fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise EmbSError(
                f"cannot write to the workspace {path}: {exc.strerror} ({lock_path})",
                fix="a workspace on a read-only mount can be read (dashboard, report) but not changed; copy it to a "
                    "writable folder to change it." if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM)
                    else "check the folder and its permissions.",
            ) from None
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _describe(lock_holder(path))
                if not wait:
                    raise WorkspaceBusy(
                        f"the workspace {path} is being written by {holder}",
                        fix="wait for that command to finish (or stop it), or run without --no-wait to queue "
                            "behind it; readers (dashboard, report) are not blocked.",
                    ) from None
                _SETTINGS.on_wait(f"waiting for the writer lock of {path}, held by {holder}")
                fcntl.flock(fd, fcntl.LOCK_EX)
            try:  # the file we locked must still be the one at the path (not unlinked by a cleanup meanwhile)
                same = os.stat(lock_path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if not same:
                os.close(fd)
                continue
            info = {"pid": os.getpid(), "command": _command_label(),
                    "since": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")}
            os.ftruncate(fd, 0)
            os.pwrite(fd, json.dumps(info).encode("utf-8"), 0)
            return fd
        except BaseException:
            try:
                os.close(fd)
            except OSError:
                pass
            raise


def _release_file_lock(fd: int) -> None:
    try:
        os.ftruncate(fd, 0)  # no stale holder shown to the next waiter
    except OSError:
        pass
    os.close(fd)  # releases the flock


class Workspace:
    """A folder holding a LanceDB database and its manifest.

    Tables are read at their committed version; write only inside ``with ws.transaction():``.
    """

    @property
    def cli(self) -> str:
        """The folder as a shell argument, for the commands hints name (never a placeholder)."""
        return shlex.quote(str(self.path))

    def __init__(self, path: str | os.PathLike[str], *, create: bool = False, version: int | None = None) -> None:
        self.path = Path(path).expanduser().resolve()
        self.read_only = version is not None
        self._in_transaction = False
        self._touched = set()
        if self.path.exists() and not self.path.is_dir():
            raise EmbSError(f"the workspace path {self.path} is a file, not a folder",
                            fix="pass the workspace folder (or a new folder name) as --workspace.")
        if not (self.path / MANIFEST).exists():
            if not create:
                hint = "it is empty" if self.path.is_dir() else "it does not exist"
                raise EmbSError(
                    f"no EMB-S workspace at {self.path} ({hint})",
                    fix=f"run `emb-s import ... --workspace {self.cli}` or `emb-s demo --workspace {self.cli}` to "
                        "create one.",
                )
            self._create()
        self._manifest = self._read_manifest()
        if version is not None:
            self._manifest = self._historic_manifest(int(version))
        self._db = None

    @property
    def db(self):
        """The LanceDB connection, opened on first use: only writes need it (importing lancedb costs 2-3 s; reads go
        through the ``lance`` datasets directly, so ``emb-s info`` or a report starts in about a second)."""
        if self._db is None:
            import lancedb

            self._db = lancedb.connect(str(self.path / "lance"))
        return self._db

    def _create(self) -> None:
        """Write version 0 of a new workspace, under the writer lock (two creators: one writes, the other opens)."""
        self._refuse_foreign_folder()
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise EmbSError(f"cannot create the workspace folder {self.path}: {exc.strerror}",
                            fix="choose a folder you can write to.") from None
        self.read_only = False
        self._manifest = {"tables": {}}
        with self.writer():
            if (self.path / MANIFEST).exists():
                return
            self._refuse_foreign_folder()
            initial = {"format": FORMAT_VERSION, "version": 0, "tables": {}, "settings": {}}
            self._append_history(initial)
            self._write_manifest(initial)

    def _refuse_foreign_folder(self) -> None:
        if self._interrupted_creation():
            return
        if self.path.is_dir() and any(p.name not in _IGNORABLE for p in self.path.iterdir()):
            raise EmbSError(
                f"{self.path} exists and is not an EMB-S workspace (no {MANIFEST})",
                fix="choose an empty or new folder for the workspace.",
            )

    def _interrupted_creation(self) -> bool:
        """A folder a creation was killed in before its manifest was replaced: only the lock file, a temporary
        manifest and a history of version 0 with no tables. Creating the workspace there again is safe."""
        if not self.path.is_dir() or (self.path / MANIFEST).exists():
            return False
        names = {p.name for p in self.path.iterdir()}
        if not names <= _CREATION_LEFTOVERS or HISTORY not in names:
            return False
        try:
            lines = (self.path / HISTORY).read_text("utf-8").splitlines()
            versions = [json.loads(line) for line in lines if line.strip()]
        except (OSError, ValueError):
            return False
        return all(isinstance(v, dict) and v.get("version") == 0 and not v.get("tables") for v in versions)

    # ----------------------------------------------------------------- manifest
    def _read_manifest(self) -> dict:
        try:
            return json.loads((self.path / MANIFEST).read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise EmbSError(
                f"cannot read the workspace manifest {self.path / MANIFEST}: {exc}",
                fix="restore it from a backup or start a new workspace.",
            ) from exc

    def _write_manifest(self, manifest: dict) -> None:
        tmp = self.path / f".{MANIFEST}.tmp"
        tmp.write_text(json.dumps(manifest, indent=1, sort_keys=True))
        os.replace(tmp, self.path / MANIFEST)

    def refresh(self) -> None:
        """Re-read the manifest (another process may have committed); a view of an old version stays put."""
        if not self.read_only:
            self._manifest = self._read_manifest()

    def _append_history(self, manifest: dict) -> None:
        """One line per committed version, in one O_APPEND write (a reader never sees half a line)."""
        line = (json.dumps(manifest, sort_keys=True, separators=(",", ":")) + "\n").encode("utf-8")
        path = self.path / HISTORY
        if path.exists() and path.stat().st_size:
            with open(path, "rb") as fh:  # a killed writer's torn last line must not swallow this one
                fh.seek(-1, os.SEEK_END)
                if fh.read(1) != b"\n":
                    line = b"\n" + line
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, line)
            os.fsync(fd)
        finally:
            os.close(fd)

    def history(self) -> list[dict]:
        """The committed manifests, oldest first, one per version (a later line for a version wins)."""
        current = self._read_manifest()
        by_version: dict[int, dict] = {}
        path = self.path / HISTORY
        if path.exists():
            for line in path.read_text(encoding="utf-8").splitlines():
                try:
                    entry = json.loads(line)
                except json.JSONDecodeError:  # a torn last line of a killed writer
                    continue
                if int(entry.get("version", -1)) <= int(current["version"]):
                    by_version[int(entry["version"])] = entry
        by_version[int(current["version"])] = current
        return [by_version[v] for v in sorted(by_version)]

    def _historic_manifest(self, version: int) -> dict:
        entries = {int(e["version"]): e for e in self.history()}
        if version not in entries:
            known = sorted(entries)
            raise EmbSError(
                f"the workspace {self.path} has no recorded version {version}",
                fix=f"open one of the recorded versions {known[0]}..{known[-1]} (the history starts when this "
                    "release first wrote the workspace).",
            )
        return entries[version]

    @property
    def version(self) -> int:
        """Number of finished transactions; unchanged by a failed or interrupted one."""
        return int(self._manifest["version"])

    def table_versions(self) -> dict[str, int]:
        return dict(self._manifest["tables"])

    @property
    def settings(self) -> dict:
        return dict(self._manifest.get("settings", {}))

    # ----------------------------------------------------------------- reading
    def has_table(self, name: str) -> bool:
        return name in self._manifest["tables"]

    def table(self, name: str):
        """The LanceDB table ``name`` checked out at its committed version (read-only view)."""
        if not self.has_table(name):
            raise EmbSError(f"the workspace {self.path} has no table {name!r}", fix=_fix_for(name, self.cli))
        tbl = self.db.open_table(name)
        version = self._manifest["tables"][name]
        if tbl.version != version:
            tbl.checkout(version)
        return tbl

    def dataset(self, name: str):
        """The Lance dataset of table ``name`` at its committed version (read directly, without lancedb): for
        streaming reads in batches or row ranges."""
        if not self.has_table(name):
            raise EmbSError(f"the workspace {self.path} has no table {name!r}", fix=_fix_for(name, self.cli))
        import lance

        return lance.dataset(str(self.path / "lance" / f"{name}.lance"), version=self._manifest["tables"][name])

    def read(self, name: str, columns: list[str] | None = None, where: str | None = None) -> pa.Table:
        """Rows of table ``name`` at its committed version (the Lance dataset read directly, without lancedb)."""
        return self.dataset(name).to_table(columns=columns, filter=where)

    def read_pandas(self, name: str, columns: list[str] | None = None, where: str | None = None) -> pd.DataFrame:
        return self.read(name, columns, where).to_pandas()

    # ----------------------------------------------------------------- writing
    @contextmanager
    def writer(self, *, wait: bool | None = None) -> Iterator["Workspace"]:
        """Hold the cross-process writer lock for the block (reentrant); on first entry re-read the manifest, so
        what the block reads (e.g. a run's finished cells) is what the last writer committed."""
        if self.read_only:
            raise EmbSError(
                f"the workspace {self.path} is open read-only at version {self.version}",
                fix="open it without a version (`Workspace(path)`) to change it; old versions cannot be edited.",
            )
        wait = _SETTINGS.wait if wait is None else wait
        held = _held_lock(self.path)
        if not held.guard.acquire(blocking=wait):
            raise WorkspaceBusy(f"the workspace {self.path} is being written by another thread of this process",
                                fix="wait for that write to finish.")
        try:
            if held.depth == 0:
                held.fd = _acquire_file_lock(self.path, wait)
            held.depth += 1
            try:
                if held.depth == 1 and (self.path / MANIFEST).exists():
                    self.refresh()
                yield self
            finally:
                held.depth -= 1
                if held.depth == 0 and held.fd is not None:
                    _release_file_lock(held.fd)
                    held.fd = None
        finally:
            held.guard.release()

    @contextmanager
    def transaction(self) -> Iterator["Workspace"]:
        """All writes inside commit together or not at all (under the writer lock)."""
        with self.writer():
            if self._in_transaction:
                yield self
                return
            self.refresh()
            self._rollback_uncommitted()
            before = self.table_versions()
            self._in_transaction = True
            try:
                yield self
            except BaseException as exc:
                self._in_transaction = False
                self._undo(before, exc)
                raise
            self._in_transaction = False
            manifest = dict(self._manifest)
            try:
                manifest["tables"] = self._current_versions(before)
                manifest["version"] = self.version + 1
                self._append_history(manifest)
                self._write_manifest(manifest)
            except (OSError, RuntimeError) as exc:  # the commit itself could not be written
                self._undo(before, exc)
                raise
            self._manifest = manifest

    def _undo(self, before: dict[str, int], exc: BaseException) -> None:
        """Roll a failed transaction back; a full disk becomes one line (raised from here), anything else is
        re-raised by the caller. A rollback the full disk itself stops is finished by the next transaction."""
        full = is_disk_full(exc)
        try:
            self._rollback_to(before)
        except Exception:  # noqa: BLE001 - only a full disk may stop a rollback quietly
            if not full:
                raise
        if full:
            raise disk_full_error(self.path) from None

    def check_writable(self, tables: Iterable[str]) -> None:
        """Refuse, before anything is registered, a run or edit that could not write ``tables``: each existing
        table's folder must accept a new file (a read-only ``results.lance`` would otherwise fail after the run
        was recorded, or mid-run)."""
        for name in tables:
            folder = self.path / "lance" / f"{name}.lance"
            for sub in (folder, folder / "data"):
                if not sub.is_dir():
                    continue
                try:
                    _probe(sub)
                except OSError as exc:
                    raise EmbSError(f"table {name!r} of the workspace {self.path} cannot be written: "
                                    f"{exc.strerror or exc} ({sub})",
                                    fix="make the workspace writable by this user (or copy it to a writable "
                                        "folder); nothing was changed or registered.") from None

    def restore(self, version: int) -> int:
        """A new version whose tables and settings are those of recorded ``version`` (the way back from a damaged
        table: Lance keeps the old table versions, so nothing is copied and nothing is deleted: the later versions
        stay in the history, and a table made after ``version`` — notes, labels — is kept as it is now). Returns the
        new version number."""
        with self.writer():
            self.refresh()
            self._rollback_uncommitted()
            target = self._historic_manifest(int(version))
            tables = dict(self.table_versions())
            for name, table_version in target.get("tables", {}).items():
                tbl = self.db.open_table(name)
                if tbl.version != int(table_version):
                    tbl.restore(int(table_version))
                tables[name] = tbl.version
            manifest = dict(self._manifest)
            manifest["tables"] = tables
            manifest["settings"] = dict(target.get("settings", {}))
            manifest["version"] = self.version + 1
            self._append_history(manifest)
            self._write_manifest(manifest)
            self._manifest = manifest
        return self.version

    def _require_transaction(self) -> None:
        if not self._in_transaction:
            raise RuntimeError("workspace writes must happen inside `with ws.transaction():`")

    def write(self, name: str, data: pa.Table, *, mode: str = "append", schema: pa.Schema | None = None) -> None:
        """Append to (or overwrite) table ``name``, creating it with ``schema`` if needed."""
        self._require_transaction()
        if schema is not None:
            data = data.select(schema.names).cast(schema)
        existing = name in self._existing_tables()
        if not existing:
            self.db.create_table(name, data=data, schema=schema or data.schema)
            self._touched.add(name)
            return
        tbl = self.db.open_table(name)
        if mode == "overwrite":
            tbl.delete("true")
        if data.num_rows:
            tbl.add(data)
        self._touched.add(name)

    def delete_rows(self, name: str, where: str) -> None:
        self._require_transaction()
        if name in self._existing_tables():
            self.db.open_table(name).delete(where)
            self._touched.add(name)

    def create_vector_index(self, name: str, **options: object) -> None:
        """Build a LanceDB vector index on table ``name`` (``Table.create_index`` options); a new table version."""
        self._require_transaction()
        self.db.open_table(name).create_index(**options)
        self._touched.add(name)

    def set_setting(self, key: str, value: object) -> None:
        self._require_transaction()
        self._manifest.setdefault("settings", {})[key] = value

    # ----------------------------------------------------------------- internals
    _touched: set[str]

    def _existing_tables(self) -> list[str]:
        return list(self.db.list_tables().tables)

    def _current_versions(self, before: dict[str, int]) -> dict[str, int]:
        versions = dict(before)
        for name in self._touched:
            versions[name] = self.db.open_table(name).version
        return versions

    def _rollback_to(self, versions: dict[str, int]) -> None:
        self.refresh()  # drops in-memory setting changes too
        if self.table_versions() != versions:  # another process committed meanwhile; keep its work
            versions = self.table_versions()
        self._manifest["tables"] = versions
        self._rollback_uncommitted()

    def _rollback_uncommitted(self) -> None:
        """Undo what a killed process wrote after the last manifest (tables past, or absent from, it)."""
        self._touched = set()
        committed = self.table_versions()
        for name in self._existing_tables():
            if name not in committed:
                self.db.drop_table(name)
                continue
            tbl = self.db.open_table(name)
            if tbl.version != committed[name]:
                tbl.restore(committed[name])
                # restore() adds a version with the old content; commit that number so readers follow it
                committed[name] = tbl.version
        if committed != self.table_versions():
            self._manifest["tables"] = committed
            self._write_manifest(self._manifest)


def _probe(folder: Path) -> None:
    """Create and remove one empty file in ``folder``: OSError when this process may not write there."""
    import tempfile

    fd, name = tempfile.mkstemp(dir=folder, prefix=".emb-s-probe-")
    os.close(fd)
    os.unlink(name)


def _fix_for(table: str, workspace: str) -> str:
    return {
        "documents": f"import a bank first: `emb-s import --format ... PATH --workspace {workspace}`.",
        "queries": f"import a bank first: `emb-s import --format ... PATH --workspace {workspace}`.",
        "rungs": f"build the ladder first: `emb-s ladder build --workspace {workspace}`.",
    }.get(table, "run the step that creates it first.")


def open_workspace(path: str | os.PathLike[str], *, create: bool = False, version: int | None = None) -> Workspace:
    return Workspace(path, create=create, version=version)


def is_workspace(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` holds an EMB-S workspace (a manifest), without opening LanceDB."""
    return (Path(path) / MANIFEST).is_file()


def committed_version(path: str | os.PathLike[str]) -> int:
    """The committed version of the workspace at ``path`` from its manifest alone (one small file read, no
    LanceDB): what the dashboard keys its caches by. EmbSError when the workspace is gone or unreadable."""
    manifest = Path(path) / MANIFEST
    try:
        return int(json.loads(manifest.read_text())["version"])
    except FileNotFoundError:
        raise EmbSError(f"no EMB-S workspace at {path} (it was deleted or moved)",
                        fix="pick another workspace in the sidebar, or build the demo on Home.") from None
    except NotADirectoryError:
        raise EmbSError(f"{path} is a file, not an EMB-S workspace folder",
                        fix="pick a workspace folder in the sidebar.") from None
    except (OSError, ValueError, KeyError) as exc:
        raise EmbSError(f"the manifest {manifest} is unreadable ({exc})", fix="restore the workspace folder.") from exc
