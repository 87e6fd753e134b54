"""The one validation layer every importer goes through before anything is written (DESIGN §4).

Why one layer: a wrong type must never reach Arrow, a set or a loop (a string where a list is expected would be
iterated character by character), and every user error must read the same way: where (file, line or record, field),
what was found, what was expected. Rule for lists: a string where a list is expected is an error in every format
(none documents a scalar form, so nothing is wrapped). Work on untrusted input is bounded by :class:`Limits`; each
limit error names the limit, its value and the environment variable that raises it.
"""
from __future__ import annotations

import json
import math
import os
import re
import stat
import unicodedata
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Iterator

from emb_s_core.errors import EmbSError, at
from emb_s_core.schema import DocumentStream, normal_domain

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
FLOAT32_MAX = 3.4028234663852886e38  # a score is stored as float32: anything larger would be stored as inf
MAX_DOMAINS = 8  # broad domains per bank (the ladder's 64K/<d> pools; README, Native format)
_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f]")


@dataclass(frozen=True)
class Limits:
    """Bounds on the work one untrusted input may cause (defaults fit every public dataset we know by far)."""

    record_bytes: int = 16 << 20  # one JSON Lines record (one line); a document of a few MB fits
    references_per_query: int = 10_000  # gold + hard-negative ids of one query
    pickle_items: int = 50_000_000  # elements reachable in a loaded pickle, shared references counted each time
    json_depth: int = 200  # nesting of one JSON value
    run_lines: int = 10_000_000  # lines of one TREC run file (10,000 queries × 1,000 documents)


#: limit name -> environment variable that overrides it
LIMIT_ENV = {
    "record_bytes": "EMB_S_MAX_RECORD_BYTES",
    "references_per_query": "EMB_S_MAX_REFERENCES",
    "pickle_items": "EMB_S_MAX_PICKLE_ITEMS",
    "json_depth": "EMB_S_MAX_JSON_DEPTH",
    "run_lines": "EMB_S_MAX_RUN_LINES",
}


def limits() -> Limits:
    """The limits in force: defaults, each overridden by its environment variable (read on every call)."""
    values = {}
    for f in fields(Limits):
        raw = os.environ.get(LIMIT_ENV[f.name])
        if raw is None:
            continue
        try:
            values[f.name] = int(raw.replace("_", ""))
        except ValueError:
            raise EmbSError(f"{LIMIT_ENV[f.name]}={raw!r} is not an integer",
                            fix=f"set {LIMIT_ENV[f.name]} to a whole number, or unset it.") from None
    return Limits(**values)


def check_limit(name: str, found: int, where: str) -> None:
    """Raise when ``found`` exceeds limit ``name``, naming the limit and how to raise it."""
    value = getattr(limits(), name)
    if found > value:
        raise _limit_error(name, value, f"{found:,} exceeds", where, max(found, value * 2))


def _limit_error(name: str, value: int, found: str, where: str, suggest: int) -> EmbSError:
    return EmbSError(f"{found} the limit {name} = {value:,}", where=where,
                     fix=f"if the input is genuine, raise the limit: export {LIMIT_ENV[name]}={suggest} (or more) "
                         "and run again.")


def check_expansion(value: object, where: str, limit: int | None = None) -> int:
    """Count every element reachable from ``value`` (shared references once per reference, as code iterating it
    would meet them) and stop with the ``pickle_items`` error as soon as the count passes the limit."""
    bound = limits().pickle_items if limit is None else limit
    count = 0
    stack = [value]
    while stack:
        item = stack.pop()
        count += 1
        if count > bound:
            raise EmbSError(
                f"the data expands to more than {bound:,} elements (limit pickle_items; a pickle can reference one "
                "object many times)", where=where,
                fix=f"if the file is genuine, raise the limit: export {LIMIT_ENV['pickle_items']}={bound * 4}.",
            )
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple, set, frozenset)):
            stack.extend(item)
    return count


# ------------------------------------------------------------------------------------------- paths
def _kind(mode: int) -> str | None:
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return None


def input_path(path: Path, what: str) -> Path:
    """``path`` exists and is a regular file or a folder; other kinds of path get their own words."""
    path = Path(path)
    try:
        st = path.stat()
    except FileNotFoundError:
        if path.is_symlink():
            raise EmbSError(f"{what} is a broken symbolic link: {path} -> {os.readlink(path)}",
                            fix="point the link at an existing file, or pass the file itself.") from None
        raise EmbSError(f"{what} not found: {path}", fix="check the path (and the --format).") from None
    except OSError as exc:
        if exc.errno == 40:  # ELOOP
            raise EmbSError(f"{what} is a symbolic link loop: {path}",
                            fix="fix the links, or pass the real file.") from None
        if isinstance(exc, PermissionError):
            raise EmbSError(f"{what} cannot be read (permission denied): {path}",
                            fix="check the file's permissions.") from None
        raise EmbSError(f"{what} cannot be opened: {path} ({exc.strerror})", fix="check the path.") from None
    kind = _kind(st.st_mode)
    if kind:
        raise EmbSError(f"{what} is {kind}, not a regular file: {path}",
                        fix="save the data to a regular file and import that file.")
    if not os.access(path, os.R_OK) and os.geteuid() != 0:
        raise EmbSError(f"{what} cannot be read (permission denied): {path}", fix="check the file's permissions.")
    return path


def input_file(path: Path, what: str) -> Path:
    """Like :func:`input_path`, and it must be a regular file."""
    path = input_path(path, what)
    if path.is_dir():
        raise EmbSError(f"{what} is a folder, expected a file: {path}", fix="point at the file itself.")
    return path


# ------------------------------------------------------------------------------------------- reading
def _decode(raw: bytes, where: str) -> str:
    if b"\x00" in raw:
        raise EmbSError(f"binary data (a NUL byte at byte {raw.index(0) + 1})", where=where,
                        fix="the file must be UTF-8 text; check that you passed the right file.")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise EmbSError(f"invalid UTF-8 (byte {exc.start + 1} of the line is 0x{raw[exc.start]:02x})", where=where,
                        fix="re-save the file as UTF-8 (e.g. `iconv -f latin1 -t utf-8`).") from None


def read_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, text) of a UTF-8 text file; each line bounded by the ``record_bytes`` limit."""
    bound = limits().record_bytes
    with open(input_file(path, "input file"), "rb") as fh:
        line_no = 0
        while True:
            raw = fh.readline(bound + 1)
            if not raw:
                return
            line_no += 1
            if len(raw) > bound and not raw.endswith(b"\n"):
                raise _limit_error("record_bytes", bound, "a record (line) longer than", at(path.name, line_no),
                                   bound * 4)
            yield line_no, _decode(raw, at(path.name, line_no))


def read_text(path: Path, what: str) -> str:
    """A whole UTF-8 text file (one JSON document); decoding errors name the line."""
    with open(input_file(path, what), "rb") as fh:
        raw = fh.read()
    try:
        return _decode(raw, str(path.name)) if b"\x00" in raw else raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise EmbSError(f"invalid UTF-8 (byte 0x{raw[exc.start]:02x})", where=at(path.name, line),
                        fix="re-save the file as UTF-8 (e.g. `iconv -f latin1 -t utf-8`).") from None


def _depth_ok(text: str, bound: int) -> int:
    """Deepest bracket nesting outside strings (cheap scan, so json never recurses past the limit)."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > bound:
                    return deepest
        elif ch in "]}":
            depth -= 1
    return deepest


def _int64(text: str) -> int:
    value = int(text)
    if not INT64_MIN <= value <= INT64_MAX:
        raise OverflowError(text)
    return value


def parse_json(text: str, where: str) -> Any:
    """``json.loads`` with every failure a clear error: malformed, nested too deep, an integer outside int64."""
    return _parse(text, lambda line: where)


def load_json_file(path: Path, what: str) -> Any:
    """One JSON document from a UTF-8 file; a syntax error names its line in the file."""
    return _parse(read_text(path, what), lambda line: at(path, line))


def _parse(text: str, where_at: Any) -> Any:
    where = where_at(None)
    bound = limits().json_depth
    if text.count("[") + text.count("{") > bound and _depth_ok(text, bound) > bound:
        raise EmbSError(f"JSON nested deeper than {bound} levels (limit json_depth)", where=where,
                        fix=f"flatten the record; if it is genuine, export {LIMIT_ENV['json_depth']}={bound * 4}.")
    try:
        value = json.loads(text, parse_int=_int64, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise EmbSError(f"malformed JSON ({exc.msg} at column {exc.colno})", where=where_at(exc.lineno),
                        fix="each record must be one complete JSON value; fix or remove it.") from None
    except OverflowError as exc:
        raise EmbSError(f"integer {str(exc)[:30]} is outside the 64-bit range", where=where,
                        fix="ids and counts must fit in 64 bits; write a large id as a string.") from None
    except ValueError as exc:
        raise EmbSError(f"malformed JSON ({exc})", where=where, fix="write plain JSON numbers.") from None
    except RecursionError:
        raise EmbSError("JSON nested too deep to read", where=where, fix="flatten the record.") from None
    if _SURROGATE_ESCAPE.search(text):  # a \\uD800-\\uDFFF escape: json joins a pair, a lone one is no text
        _no_surrogates(value, where)
    return value


def _no_surrogates(value: Any, where: str) -> None:
    """Raise for the first string (key or value) holding a lone UTF-16 surrogate, which no UTF-8 file can hold."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            check_text(item, where, "a string")
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def check_text(value: str, where: str, field: str) -> str:
    """``value`` when it is valid Unicode text; a lone surrogate (``"\\ud800"`` in JSON) is an error naming it."""
    found = None if value.isascii() else _SURROGATE.search(value)  # isascii is O(1); the search ~8 ms per MB
    if found:
        label = field if field == "a string" else f"field {field!r}"
        raise EmbSError(f"{label}: a lone surrogate \\u{ord(found.group()):04x} at character {found.start() + 1} is "
                        "not text", where=where,
                        fix="write valid Unicode (a UTF-16 surrogate pair must come as a pair); re-export the file.")
    return value


#: Unicode categories no id or name may hold: control, format (bidi overrides, zero-width), line and paragraph
#: separators (U+2028, U+2029), private use, unassigned and surrogates
_UNPRINTABLE = frozenset({"Cc", "Cf", "Zl", "Zp", "Co", "Cn", "Cs"})


def check_identifier(value: str, where: str, field: str, *, spaces: bool = True) -> str:
    """The one rule for ids and names, in every format (README, "Ids and names"): NFC-normalized (so NFC and NFD
    "café" are one id), no control or format character (newline, U+2028, a right-to-left override, a zero-width
    space), which would break one-line outputs, TREC files, CSV lists and URLs; an id (``spaces=False``: query ids,
    record ids) is stripped of surrounding blanks and holds no whitespace inside, since a TREC run cannot carry it.
    Returns the normalized value."""
    check_text(value, where, field)
    if not value.strip():
        check_value(value, "a non-empty string", where, field)
    value = unicodedata.normalize("NFC", value if spaces else value.strip())
    if value.isascii():
        found = _CONTROL.search(value)
        position = found.start() if found else -1
    else:
        position = next((i for i, c in enumerate(value) if unicodedata.category(c) in _UNPRINTABLE), -1)
    if position >= 0:
        char = value[position]
        name = unicodedata.name(char, "")
        raise EmbSError(f"field {field!r}: {value[:40]!r} holds the control character U+{ord(char):04X}"
                        f"{f' ({name})' if name else ''} at character {position + 1}", where=where,
                        fix="ids and names must be printable text: remove newlines, tabs, NUL bytes, line "
                            "separators and direction overrides.")
    if not spaces and any(c.isspace() for c in value):
        position = next(i for i, c in enumerate(value) if c.isspace())
        raise EmbSError(f"field {field!r}: {value[:40]!r} holds whitespace at character {position + 1}",
                        where=where, fix="an id is one word (a TREC run cannot carry spaces): write it without "
                                         "spaces, e.g. with '_' instead.")
    return value




def check_name(name: object, what: str) -> str:
    """A name the user gives (a run, a tag): non-blank printable text."""
    if not isinstance(name, str):
        check_value(name, "a string", what, "name")
    return check_identifier(name, what, "name")  # type: ignore[arg-type]


def check_score(value: float, where: str, field: str = "score") -> float:
    """A finite score that float32 (how scores are stored) holds: 1e39 would be stored as inf."""
    if not math.isfinite(value) or abs(value) > FLOAT32_MAX:
        raise EmbSError(f"{field} {value!r} is not finite (scores are stored as 32-bit floats: at most "
                        f"{FLOAT32_MAX:.3g} in size)", where=where, fix="use finite scores within that range.")
    return value


def check_index(index: int, size: int, where: str, what: str, of: str) -> int:
    """``0 <= index < size``, else an error saying how many ``of`` holds (e.g. a sentence of a paragraph)."""
    if not 0 <= index < size:
        raise EmbSError(f"{what} {index} is out of range ({of} has {size}; indices count from 0)", where=where,
                        fix="correct the index, or drop the entry.")
    return index


def check_domains(domains: set, where: str) -> None:
    """At most MAX_DOMAINS broad domains per bank (the ladder has one 64K/<d> pool per domain)."""
    names = sorted(str(d) for d in domains if d is not None)
    if len(names) > MAX_DOMAINS:
        shown = ", ".join(repr(n) for n in names[:MAX_DOMAINS + 1])
        raise EmbSError(f"{len(names)} domains ({shown}{' ...' if len(names) > MAX_DOMAINS + 1 else ''}): a bank "
                        f"holds at most {MAX_DOMAINS}", where=where,
                        fix=f"merge them into at most {MAX_DOMAINS} broad domains (or drop the field and label them "
                            "with `emb-s domains label`).")


def _no_constant(name: str) -> float:
    raise ValueError(f"{name} is not valid JSON")


def require_records(count: int, path: Path) -> None:
    """An input without any record is an error, never an empty new version."""
    if count == 0:
        raise EmbSError(f"no records in {path}", fix="check that you passed the right file and that it is not empty.")


# ------------------------------------------------------------------------------------------- fields
def _type_name(value: object) -> str:
    if value is None:
        return "null"
    return {bool: "boolean", int: "integer", float: "number", str: "string", list: "list", dict: "object",
            tuple: "list"}.get(type(value), type(value).__name__)


def check_value(value: object, expected: str, where: str, field: str) -> None:
    """Raise the one "field F: expected X, found T v" error."""
    shown = repr(value)
    if len(shown) > 40:
        shown = shown[:37] + "..."
    raise EmbSError(f"field {field!r}: expected {expected}, found {_type_name(value)} {shown}", where=where,
                    fix=f"write {field!r} as {expected}.")


def _get(obj: dict, key: str, where: str, required: bool) -> Any:
    if not isinstance(obj, dict):
        check_value(obj, "an object", where, key)
    value = obj.get(key)
    if value is None and required:
        raise EmbSError(f"missing field {key!r}", where=where, fix=f"every record needs {key!r}.")
    return value


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def text_field(obj: dict, key: str, where: str, *, required: bool = True, numbers: bool = False,
               blank: bool = True) -> str | None:
    """A string field (numbers=True: an int or finite float is accepted and written as text, e.g. answers;
    blank=False: empty or whitespace-only text is an error, e.g. a document's body)."""
    value = _get(obj, key, where, required)
    if isinstance(value, str) and not blank and not value.strip():
        check_value(value, "non-empty text", where, key)
    if value is None or isinstance(value, str):
        return value if value is None else check_text(value, where, key)
    if numbers and (_is_int(value) or (isinstance(value, float) and math.isfinite(value))):
        return str(value)
    check_value(value, "a string" + (" or a number" if numbers else ""), where, key)
    return None  # unreachable


def int_field(obj: dict, key: str, where: str, *, required: bool = True, minimum: int | None = None) -> int | None:
    """An integer (not a boolean) in the 64-bit range, at least ``minimum``."""
    value = _get(obj, key, where, required)
    if value is None:
        return None
    if not _is_int(value):
        check_value(value, "an integer", where, key)
    if not INT64_MIN <= value <= INT64_MAX:
        check_value(value, "an integer in the 64-bit range", where, key)
    if minimum is not None and value < minimum:
        check_value(value, f"an integer ≥ {minimum}", where, key)
    return value


def id_field(obj: dict, key: str, where: str) -> str:
    """A record id: a non-empty string, or an integer in the 64-bit range; returned as a string."""
    value = _get(obj, key, where, True)
    if isinstance(value, str) and value.strip():
        return check_identifier(value, where, key, spaces=False)
    if _is_int(value) and INT64_MIN <= value <= INT64_MAX:
        return str(value)
    check_value(value, "a non-empty string or a 64-bit integer", where, key)
    return ""  # unreachable


def list_field(obj: dict, key: str, where: str, *, required: bool = True) -> list:
    """A JSON array; a string is an error (never iterated character by character)."""
    value = _get(obj, key, where, required)
    if value is None:
        return []
    if not isinstance(value, (list, tuple)):
        check_value(value, "a list", where, key)
    return list(value)


def object_field(obj: dict, key: str, where: str, *, required: bool = True) -> dict:
    value = _get(obj, key, where, required)
    if value is None:
        return {}
    if not isinstance(value, dict):
        check_value(value, "an object", where, key)
    return value


def int_list(obj: dict, key: str, where: str, *, required: bool = True) -> list[int]:
    """A list of distinct 64-bit integer ids, at most ``references_per_query`` long (an id listed twice would count
    one gold document twice)."""
    values = list_field(obj, key, where, required=required)
    check_limit("references_per_query", len(values), f"{where} field {key!r}")
    for v in values:
        if not _is_int(v) or not INT64_MIN <= v <= INT64_MAX:
            check_value(v, "a list of integer ids, e.g. [12, 40]; this element is not one", where, key)
    if len(set(values)) != len(values):
        twice = next(v for i, v in enumerate(values) if v in values[:i])
        raise EmbSError(f"field {key!r}: id {twice} is listed twice", where=where,
                        fix=f"list each document once in {key!r}.")
    return values


def text_list(obj: dict, key: str, where: str, *, required: bool = False, numbers: bool = False) -> list[str]:
    """A list of strings (numbers=True: numbers are written as text)."""
    values = list_field(obj, key, where, required=required)
    out = []
    for v in values:
        if isinstance(v, str):
            out.append(check_text(v, where, key))
        elif numbers and (_is_int(v) or (isinstance(v, float) and math.isfinite(v))):
            out.append(str(v))
        else:
            check_value(v, "a list of strings; this element is not one", where, key)
    return out


def bool_field(obj: dict, key: str, where: str, *, default: bool = False) -> bool:
    value = _get(obj, key, where, False)
    if value is None:
        return default
    if not isinstance(value, bool):
        check_value(value, "true or false", where, key)
    return value


# ------------------------------------------------------------------------------------------- bank
def validate_bank(bank: Any, path: Path) -> None:
    """The last gate before writing: field types of every Document and Query, a non-empty input, then the
    benchmark invariants of ``Bank.validate`` (unique ids, non-empty RefList, ids that exist)."""
    if not bank.queries:  # documents alone (every question skipped) are no bank either
        skipped = f" ({sum(bank.skipped.values())} skipped: {', '.join(bank.skipped)})" if bank.skipped else ""
        what = "no records" if not bank.documents else "no usable query"
        raise EmbSError(f"{what} in {path}{skipped}",
                        fix="check that you passed the right file (and --format) and that it is not empty.")
    if isinstance(bank.documents, DocumentStream):
        bank.documents.domains = [normal_domain(d) for d in bank.documents.domains]
        bank.documents.default_domain = normal_domain(bank.documents.default_domain)
    for doc in () if isinstance(bank.documents, DocumentStream) else bank.documents:  # a stream checks as it reads
        where = bank.doc_locations.get(doc.doc_id, f"{bank.source} document {doc.doc_id!r}")
        _check_attrs(doc, where, ints=("doc_id",), texts=("text",), optional=("title", "domain", "source"))
        doc.domain = normal_domain(doc.domain)
        if doc.n_tokens is not None and (not _is_int(doc.n_tokens) or not 0 <= doc.n_tokens < 2**31):
            check_value(doc.n_tokens, "a token count", where, "n_tokens")
    for q in bank.queries:
        where = bank.query_locations.get(q.qid, f"{bank.source} query {q.qid!r}")
        _check_attrs(q, where, ints=(), texts=("qid", "text", "answer"),
                     optional=("domain", "task_type", "source"))
        q.qid = check_identifier(q.qid, where, "qid", spaces=False)  # the one rule for every format
        q.domain = normal_domain(q.domain)
        for key in ("ref_ids", "hard_negative_ids"):
            int_list({key: getattr(q, key)}, key, where, required=False)
        text_list({"answer_aliases": q.answer_aliases}, "answer_aliases", where)
    check_domains(_bank_domains(bank), f"{bank.source} (documents and queries)")
    bank.validate()


def _bank_domains(bank: Any) -> set:
    docs = bank.documents
    named = set(docs.domains) if isinstance(docs, DocumentStream) else {d.domain for d in docs}
    return (named | {q.domain for q in bank.queries}) - {None}


def _check_attrs(record: Any, where: str, *, ints: tuple[str, ...], texts: tuple[str, ...],
                 optional: tuple[str, ...]) -> None:
    for key in ints:
        int_field({key: getattr(record, key)}, key, where)
    for key in texts:
        value = getattr(record, key)
        if not isinstance(value, str):
            check_value(value, "a string", where, key)
        check_text(value, where, key)
    for key in optional:
        text_field({key: getattr(record, key)}, key, where, required=False)
