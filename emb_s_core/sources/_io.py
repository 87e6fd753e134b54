"""Reading helpers shared by the importers: every failure names the file and line."""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Iterable, Iterator, TypeVar

import numpy as np

from emb_s_core.errors import EmbSError, at
from emb_s_core.sources import validate


T = TypeVar("T")


def batched(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """Lists of at most ``size`` items, in order (what a :class:`DocumentStream`'s reader yields)."""
    batch: list[T] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def require_file(path: Path, what: str) -> Path:
    """``path`` is a readable regular file (not a folder, FIFO, link loop, ...); see :func:`validate.input_file`."""
    return validate.input_file(path, what)


#: files larger than this show a reading progress bar on stderr (smaller ones read in about a second)
PROGRESS_BYTES = 32 << 20


def iter_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for every non-blank line; malformed JSON, bad UTF-8, an over-long line raise with
    file and line; a file without any record is an error."""
    from tqdm import tqdm

    size = require_file(path, "input file").stat().st_size
    count = 0
    with tqdm(total=size, unit="B", unit_scale=True, desc=f"reading {path.name}", disable=size < PROGRESS_BYTES,
              leave=False) as bar:
        for line_no, line in validate.read_lines(path):
            bar.update(len(line.encode("utf-8")) if size >= PROGRESS_BYTES else 0)
            if not line.strip():
                continue
            obj = validate.parse_json(line, at(path, line_no))
            if not isinstance(obj, dict):
                raise EmbSError(
                    f"expected a JSON object, got {type(obj).__name__}", where=at(path, line_no),
                    fix="each line must be one JSON object.",
                )
            count += 1
            yield line_no, obj
    validate.require_records(count, path)


def load_json(path: Path) -> Any:
    """One JSON document from a UTF-8 file, with nesting and integer range checked."""
    return validate.load_json_file(path, "input file")


def iter_json_records(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """(location, object) from a JSON Lines file or a file holding one JSON array of objects.

    Why both: the same dataset ships either way (official HotpotQA is one array, processed copies are JSONL);
    the first non-blank character decides. Locations read ``file line N`` or ``file record N`` (1-based).
    """
    with open(require_file(path, "input file"), "rb") as fh:
        head = fh.read(4096).lstrip()
    if head.startswith(b"["):
        data = load_json(path)
        if not isinstance(data, list):
            raise EmbSError(f"expected a JSON array of records, got {type(data).__name__}", where=str(path),
                            fix="the file must hold one JSON array of objects, or one object per line.")
        validate.require_records(len(data), path)
        for i, obj in enumerate(data, start=1):
            where = at(path.name, record=i)
            if not isinstance(obj, dict):
                raise EmbSError(f"expected a JSON object, got {type(obj).__name__}", where=where,
                                fix="the array must hold one JSON object per question.")
            yield where, obj
    else:
        for line, obj in iter_jsonl(path):
            yield at(path.name, line), obj


def data_files(path: Path, what: str) -> list[Path]:
    """The file itself, or every ``*.jsonl`` / ``*.json`` file in a folder (sorted), for one-file datasets."""
    path = validate.input_path(path, what)
    if path.is_file():
        return [path]
    files = sorted(p for p in path.iterdir() if p.suffix in (".jsonl", ".json") and not p.is_dir())
    if not files:
        raise EmbSError(f"no .jsonl or .json file in {path}", fix=f"point at the {what} file itself.")
    return files


def iter_data_records(path: Path, what: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """(location, object) over every JSON / JSONL file of :func:`data_files`: one record per question."""
    for file in data_files(path, what):
        yield from iter_json_records(file)


def iter_records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Rows of a JSONL or Parquet file as (line or row number, dict)."""
    if path.suffix == ".parquet":
        yield from iter_parquet(path)
    else:
        yield from iter_jsonl(path)


#: rows decoded at a time from a Parquet file (each checked for size before it is turned into Python objects)
PARQUET_BATCH = 256
#: decoded text a Parquet file may hold: at least this, else ``PARQUET_EXPANSION`` × the file's size
PARQUET_MIN_TOTAL = 64 << 20
PARQUET_EXPANSION = 100


def iter_parquet(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Rows of a Parquet file as (row number, dict), bounded before anything is decoded.

    Why: Parquet compresses and dictionary-encodes, so a 7 KB file can hold a 200 MB cell and a 23 KB file gigabytes
    of repeated text. From the metadata first: distinct column names (pyarrow would silently keep one of two
    ``text`` columns) and no column chunk whose uncompressed size passes the file's bound. Then every byte column,
    nested ones too (a list of strings), is read as a dictionary, a few rows at a time, and each row's decoded size
    (computed from value lengths, indices and list offsets, without decoding) is checked against the record limit
    (``record_bytes``, as for a JSON Lines line) and the running total against ``PARQUET_EXPANSION`` × the file size
    (at least ``PARQUET_MIN_TOTAL``), before a row becomes Python objects."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    require_file(path, "Parquet file")
    cell_limit = validate.limits().record_bytes
    total_limit = max(PARQUET_MIN_TOTAL, PARQUET_EXPANSION * path.stat().st_size)
    try:
        pf = pq.ParquetFile(path)
        names = pf.schema_arrow.names
        meta = pf.metadata
    except Exception as exc:  # noqa: BLE001 - any unreadable footer is one clear line
        raise EmbSError(f"cannot read Parquet file ({validate_message(exc)})", where=str(path),
                        fix="check that it is a valid Parquet file.") from None
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise EmbSError(f"the Parquet file has {len(repeated)} column name(s) twice: {', '.join(map(repr, repeated))}",
                        where=str(path), fix="give every column its own name (which of two is meant is unknowable).")
    validate.require_records(meta.num_rows, path)
    for g in range(meta.num_row_groups):
        group = meta.row_group(g)
        for c in range(group.num_columns):
            column = group.column(c)
            if column.total_uncompressed_size > total_limit:
                raise EmbSError(f"column {column.path_in_schema!r} of row group {g} holds "
                                f"{column.total_uncompressed_size:,} bytes uncompressed, more than the "
                                f"{total_limit:,} a {path.stat().st_size:,}-byte file may expand to", where=str(path),
                                fix="write the bank as JSON Lines, or as Parquet without extreme compression.")
    byte_columns = [c.path for c in pf.schema if c.physical_type in ("BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY")]
    total = 0
    i = 0
    try:
        pf = pq.ParquetFile(path, read_dictionary=byte_columns)  # repeated text stays one value until checked
        for batch in pf.iter_batches(batch_size=PARQUET_BATCH):
            sizes = np.zeros(batch.num_rows, dtype=np.int64)
            for column in batch.columns:
                sizes += _decoded_sizes(column, pa, pc)
            if len(sizes) and int(sizes.max()) > cell_limit:
                row = i + int(sizes.argmax()) + 1
                validate.check_limit("record_bytes", int(sizes.max()), f"{path} row {row}")
            total += int(sizes.sum())
            if total > total_limit:
                raise EmbSError(f"the Parquet file's text passes {total_limit:,} bytes by row {i + batch.num_rows:,} "
                                f"({PARQUET_EXPANSION}× its {path.stat().st_size:,} bytes on disk: a compression "
                                "or dictionary bomb, or a file to import as JSON Lines)", where=str(path),
                                fix="write the bank as JSON Lines (checked line by line), or split the file.")
            for row in batch.to_pylist():
                i += 1
                yield i, row
    except EmbSError:
        raise
    except Exception as exc:  # noqa: BLE001
        raise EmbSError(f"cannot read Parquet file ({validate_message(exc)})", where=str(path),
                        fix="check that it is a valid Parquet file.") from None


def _decoded_sizes(array, pa, pc) -> np.ndarray:
    """Bytes each row of ``array`` takes once decoded, computed without decoding: a dictionary's value lengths
    taken by index, text lengths, lists summed through their offsets, structs field by field (numbers count 0)."""
    n = len(array)
    if isinstance(array, pa.ChunkedArray):
        return np.concatenate([_decoded_sizes(c, pa, pc) for c in array.chunks]) if array.num_chunks else \
            np.zeros(0, np.int64)
    kind = array.type
    if pa.types.is_dictionary(kind):
        lengths = _decoded_sizes(array.dictionary, pa, pc)
        index = array.indices.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
        return lengths[index] if len(lengths) else np.zeros(n, np.int64)
    if pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_binary(kind) \
            or pa.types.is_large_binary(kind):
        return pc.binary_length(array).fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        inner = np.concatenate([[0], np.cumsum(_decoded_sizes(array.values, pa, pc))])
        offsets = array.offsets.to_numpy(zero_copy_only=False).astype(np.int64)
        return inner[offsets[1:]] - inner[offsets[:-1]]
    if pa.types.is_struct(kind):
        out = np.zeros(n, np.int64)
        for f in range(kind.num_fields):
            out += _decoded_sizes(array.field(f), pa, pc)
        return out
    return np.zeros(n, np.int64)


def validate_message(exc: BaseException) -> str:
    return " ".join(str(exc).split())[:200]


def require_field(obj: dict, key: str, where: str, kind: type | tuple[type, ...] | None = None) -> Any:
    """``obj[key]``, present and (when ``kind`` is given) of that type; ints must fit 64 bits."""
    if not isinstance(obj, dict):
        validate.check_value(obj, "an object", where, key)
    if key not in obj or obj[key] is None:
        raise EmbSError(f"missing field {key!r}", where=where, fix=f"every record needs {key!r}.")
    value = obj[key]
    if kind is not None and (not isinstance(value, kind) or isinstance(value, bool)):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        validate.check_value(value, names, where, key)
    if isinstance(value, int) and not validate.INT64_MIN <= value <= validate.INT64_MAX:
        validate.check_value(value, "an integer in the 64-bit range", where, key)
    return value


def sha256_of(path: Path) -> str:
    """Checksum of a file, or of every file in a folder (sorted by name), for idempotent re-imports.

    Hidden folders and files (``.git`` of a cloned release, holding a second copy of every LFS file) are left out.
    """
    digest = hashlib.sha256()
    files = sorted(p for p in path.rglob("*") if p.is_file()
                   and not any(part.startswith(".") for part in p.relative_to(path).parts)) \
        if path.is_dir() else [path]
    for file in files:
        digest.update(str(file.relative_to(path) if path.is_dir() else file.name).encode())
        with open(file, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
    return digest.hexdigest()


class DocumentKeys:
    """Assigns local integer ids to documents deduplicated by a key, e.g. (title, text)."""

    def __init__(self) -> None:
        self.ids: dict[object, int] = {}

    def get(self, key: object) -> tuple[int, bool]:
        """(id, is_new)."""
        if key in self.ids:
            return self.ids[key], False
        self.ids[key] = len(self.ids)
        return self.ids[key], True
