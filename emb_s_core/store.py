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
"""
from __future__ import annotations

import json
import os
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pandas as pd
import pyarrow as pa

from emb_s_core.errors import EmbSError

MANIFEST = "workspace.json"
HISTORY = "history.jsonl"
FORMAT_VERSION = 1
_LOCK = threading.RLock()


class Workspace:
    """A folder holding a LanceDB database and its manifest.

    Tables are read at their committed version; write only inside ``with ws.transaction():``.
    """

    def __init__(self, path: str | os.PathLike[str], *, create: bool = False, version: int | None = None) -> None:
        self.path = Path(path).expanduser().resolve()
        self.read_only = version is not None
        manifest = self.path / MANIFEST
        if not manifest.exists():
            if not create:
                hint = "it is empty" if self.path.is_dir() else "it does not exist"
                raise EmbSError(
                    f"no EMB-S workspace at {self.path} ({hint})",
                    fix="run `emb-s import ... --workspace DIR` or `emb-s demo --workspace DIR` to create one.",
                )
            if self.path.exists() and any(p.name != ".gitkeep" for p in self.path.iterdir()):
                raise EmbSError(
                    f"{self.path} exists and is not an EMB-S workspace (no {MANIFEST})",
                    fix="choose an empty or new folder for the workspace.",
                )
            self.path.mkdir(parents=True, exist_ok=True)
            initial = {"format": FORMAT_VERSION, "version": 0, "tables": {}, "settings": {}}
            self._append_history(initial)
            self._write_manifest(initial)
        self._manifest = self._read_manifest()
        if version is not None:
            self._manifest = self._historic_manifest(int(version))
        self._in_transaction = False
        import lancedb

        self.db = lancedb.connect(str(self.path / "lance"))

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
            raise EmbSError(f"the workspace {self.path} has no table {name!r}", fix=_fix_for(name))
        tbl = self.db.open_table(name)
        version = self._manifest["tables"][name]
        if tbl.version != version:
            tbl.checkout(version)
        return tbl

    def read(self, name: str, columns: list[str] | None = None, where: str | None = None) -> pa.Table:
        return self.table(name).to_lance().to_table(columns=columns, filter=where)

    def read_pandas(self, name: str, columns: list[str] | None = None, where: str | None = None) -> pd.DataFrame:
        return self.read(name, columns, where).to_pandas()

    # ----------------------------------------------------------------- writing
    @contextmanager
    def transaction(self) -> Iterator["Workspace"]:
        """All writes inside commit together or not at all."""
        if self.read_only:
            raise EmbSError(
                f"the workspace {self.path} is open read-only at version {self.version}",
                fix="open it without a version (`Workspace(path)`) to change it; old versions cannot be edited.",
            )
        with _LOCK:
            if self._in_transaction:
                yield self
                return
            self.refresh()
            self._rollback_uncommitted()
            before = self.table_versions()
            self._in_transaction = True
            try:
                yield self
            except BaseException:
                self._in_transaction = False
                self._rollback_to(before)
                raise
            self._in_transaction = False
            manifest = dict(self._manifest)
            manifest["tables"] = self._current_versions(before)
            manifest["version"] = self.version + 1
            self._append_history(manifest)
            self._write_manifest(manifest)
            self._manifest = manifest

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


def _fix_for(table: str) -> str:
    return {
        "documents": "import a bank first: `emb-s import --format ... PATH --workspace DIR`.",
        "queries": "import a bank first: `emb-s import --format ... PATH --workspace DIR`.",
        "rungs": "build the ladder first: `emb-s ladder build --workspace DIR`.",
    }.get(table, "run the step that creates it first.")


def open_workspace(path: str | os.PathLike[str], *, create: bool = False, version: int | None = None) -> Workspace:
    return Workspace(path, create=create, version=version)
