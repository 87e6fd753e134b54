"""Pickles from strangers, read as plain data only: a restricted unpickler, and a streaming reader for a list of texts.

Pickle can run arbitrary code on load, so files are read by an unpickler that builds only plain containers and
scalars and refuses any other global before it is called; what a pickle expands to is bounded (a memo bomb fails at
once with the limit named), and a Git LFS pointer file is recognized.

A release's corpus file is one flat list of texts, 1.3 GB at 326M tokens. :func:`iter_text_list` reads that shape
item by item straight from the opcodes (no list, no memo), so an import holds one text at a time; any other shape
raises :class:`NotATextList` and the caller loads the file whole with :func:`load_plain_pickle`.
"""
from __future__ import annotations

import pickle
import struct
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

from emb_s_core.errors import EmbSError
from emb_s_core.sources._io import require_file
from emb_s_core.sources.validate import check_expansion as count_elements

#: a pickle may expand to at most this many characters per byte of file (plain data: about one), plus a slack
EXPANSION_FACTOR = 16
EXPANSION_SLACK = 1 << 24
LFS_POINTER = b"version https://git-lfs.github.com/spec/"
_SAFE_GLOBALS = {("builtins", "set"), ("builtins", "frozenset"), ("__builtin__", "set"),
                 ("__builtin__", "frozenset")}


class _Refused(pickle.UnpicklingError):
    """A pickle asked for something beyond plain data (told apart from a damaged file)."""


class NotATextList(Exception):
    """The pickle is not one flat list of texts, each pickled once (read it whole instead)."""


#: elements a dict key or set member may nest (a tuple of tuples): hashing one costs each of them, shared ones
#: each time, and tuples do not cache their hash, so 130 bytes of nested pairs hash for minutes (a hash bomb)
MAX_KEY_ELEMENTS = 10_000


def _check_key(key: Any) -> None:
    """Refuse a key whose hash would visit more than MAX_KEY_ELEMENTS elements (counted before hashing)."""
    if not isinstance(key, (tuple, frozenset)):
        return
    stack, seen = [key], 0
    while stack:
        item = stack.pop()
        seen += 1
        if seen > MAX_KEY_ELEMENTS:
            raise _Refused(f"a dict key or set member nests more than {MAX_KEY_ELEMENTS:,} elements (hashing it "
                           "would take far longer than reading the file: a hash bomb)")
        if isinstance(item, tuple):  # frozensets cache their hash: their members were checked when they were built
            stack.extend(item)


class _PlainUnpickler(pickle._Unpickler):  # type: ignore[name-defined]
    """The pure-Python unpickler (so every opcode passes through here), restricted to plain data: no global but
    set/frozenset, no persistent ids, and each dict key and set member checked before it is hashed. About 7x slower
    than the C unpickler (5 s for 20 MB of records), which cannot be stopped mid-opcode; the corpus, the one large
    file, is streamed by :func:`iter_text_list` instead."""

    dispatch = dict(pickle._Unpickler.dispatch)  # type: ignore[attr-defined]

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _SAFE_GLOBALS:
            return super().find_class(module, name)
        raise _Refused(f"refused global {module}.{name}")

    def persistent_load(self, pid: Any) -> Any:
        raise _Refused("refused persistent id")



def _guard(opcode: bytes, keys: Callable[[Any], Iterable[Any]]) -> None:
    """Check ``keys(unpickler)`` before the opcode that hashes them runs."""
    original = pickle._Unpickler.dispatch[opcode[0]]  # type: ignore[attr-defined]

    def checked(self: _PlainUnpickler) -> None:
        for key in keys(self):
            _check_key(key)
        original(self)

    _PlainUnpickler.dispatch[opcode[0]] = checked


def _reduce_keys(u: "_PlainUnpickler") -> Iterable[Any]:
    """Members of ``set(x)``/``frozenset(x)`` (the only callables a plain pickle may reduce)."""
    func, args = u.stack[-2], u.stack[-1]
    if func in (set, frozenset) and isinstance(args, tuple) and args and isinstance(args[0], (list, tuple)):
        return args[0]
    return ()


# the pure-Python unpickler keeps the items since the last MARK in self.stack (the outer stack is in metastack)
for _opcode, _keys in ((pickle.SETITEM, lambda u: u.stack[-2:-1]), (pickle.SETITEMS, lambda u: u.stack[0::2]),
                       (pickle.ADDITEMS, lambda u: u.stack), (pickle.FROZENSET, lambda u: u.stack),
                       (pickle.REDUCE, _reduce_keys)):
    _guard(_opcode, _keys)


def _refuse_lfs_pointer(path: Path) -> None:
    require_file(path, "EMB-S release file")
    with open(path, "rb") as fh:
        if fh.read(len(LFS_POINTER)) == LFS_POINTER:
            raise EmbSError("this is a Git LFS pointer: run git lfs pull", where=str(path),
                            fix="run `git lfs pull` in the release's clone (or download the file itself), then "
                                "import again.")


def _damaged(path: Path, exc: Exception) -> EmbSError:
    return EmbSError(f"cannot read pickle ({type(exc).__name__}: {exc})", where=str(path),
                     fix="the file is damaged or not a pickle; download it again.")


def load_plain_pickle(path: Path) -> Any:
    """Unpickle plain data only (streamed from the file); a pickle naming any class or function raises EmbSError and
    is never executed; an LFS pointer or a memo bomb raises a clear error (see :func:`check_expansion`)."""
    _refuse_lfs_pointer(path)
    with open(path, "rb") as fh:
        try:
            value = _PlainUnpickler(fh).load()
        except _Refused as exc:
            raise EmbSError(f"pickle refused: {exc} (only plain lists, dicts and scalars are accepted)",
                            where=str(path),
                            fix="re-save the file as plain Python lists/dicts of str and int, or get it from the "
                                "official release; never load pickles you do not trust.") from None
        except Exception as exc:  # truncated or corrupt data
            raise _damaged(path, exc) from None
    check_expansion(value, path)
    return value


def check_expansion(value: Any, path: Path) -> None:
    """Refuse a pickle that expands far beyond its file size (memo references to one object, repeated).

    Plain data costs at least a byte per element and per character on disk; a memo bomb reuses one object millions
    of times. Counting elements and characters is cheap (lengths only) and stops at the first limit passed, so such a
    file fails in about a second instead of running for minutes.
    """
    size = path.stat().st_size
    max_items, max_chars = size + EXPANSION_SLACK, EXPANSION_FACTOR * size + EXPANSION_SLACK
    items = chars = 0
    stack = [value]
    while stack:
        obj = stack.pop()
        if isinstance(obj, (str, bytes)):
            chars += len(obj)
            if chars > max_chars:
                break
        elif isinstance(obj, dict):
            items += len(obj)
            stack.extend(obj.keys())
            stack.extend(obj.values())
        elif isinstance(obj, (list, tuple, set, frozenset)):
            items += len(obj)
            if all(type(x) is str for x in obj):  # the corpus: a flat list of texts, summed in C
                chars += sum(map(len, obj))
                if chars > max_chars:
                    break
            else:
                stack.extend(obj)
        if items > max_items:
            break
    if items <= max_items and chars <= max_chars:
        count_elements(value, str(path))  # the shared element limit (pickle_items), shared references counted
        return
    what = f"{items:,} elements" if items > max_items else f"{chars:,} characters"
    raise EmbSError(f"the pickle expands to more than {what} from a {size:,}-byte file (limit: "
                    f"{EXPANSION_FACTOR} characters and 1 element per byte, plus {EXPANSION_SLACK:,}): a memo "
                    "bomb or a damaged file", where=str(path),
                    fix="get the file from the official release; plain data never repeats one object that often.")


# ------------------------------------------------------------------------------------------ streaming a text list
# The opcodes a flat list of texts is made of (protocols 1-5); anything else means another shape.
_PROTO, _FRAME, _STOP = 0x80, 0x95, ord(".")
_EMPTY_LIST, _MARK, _APPENDS, _APPEND = ord("]"), ord("("), ord("e"), ord("a")
_SHORT_TEXT, _TEXT, _TEXT8 = 0x8C, ord("X"), 0x8D  # SHORT_BINUNICODE, BINUNICODE, BINUNICODE8
_MEMOIZE, _BINPUT, _LONG_BINPUT = 0x94, ord("q"), ord("r")
_SKIP = {_FRAME: 8, _PROTO: 1, _MEMOIZE: 0, _BINPUT: 1, _LONG_BINPUT: 4}
_LENGTH = {_SHORT_TEXT: ("<B", 1), _TEXT: ("<I", 4), _TEXT8: ("<Q", 8)}


def iter_text_list(path: Path) -> Iterator[str]:
    """The texts of a pickled flat list of strings, one at a time, read from the opcodes (nothing is executed, no
    memo is kept, so memory is one text whatever the file's size).

    Raises :class:`NotATextList` at the first opcode outside that shape (another container, a non-text item, an
    object pickled twice and referenced from the memo) — possibly after some texts were yielded — and EmbSError for
    an LFS pointer or a truncated file. The texts equal what :func:`load_plain_pickle` returns for the same file.
    """
    _refuse_lfs_pointer(path)
    with open(path, "rb", buffering=1 << 20) as fh:
        read = fh.read
        started = in_mark = single = False  # single: a text outside MARK, which APPEND must follow (a batch of one)
        while True:
            code = read(1)
            if not code:
                raise _damaged(path, EOFError("the file ends before the pickle's STOP"))
            op = code[0]
            if op in _LENGTH and started and not single:
                single = not in_mark
                fmt, width = _LENGTH[op]
                raw = read(width)
                size = struct.unpack(fmt, raw)[0] if len(raw) == width else -1
                data = read(size) if size >= 0 else b""
                if size < 0 or len(data) != size:
                    raise _damaged(path, EOFError(f"a text before byte {fh.tell()} is cut short"))
                try:
                    yield data.decode("utf-8", "surrogatepass")
                except UnicodeDecodeError as exc:
                    raise _damaged(path, exc) from None
            elif op in _SKIP:
                if _SKIP[op] and len(read(_SKIP[op])) != _SKIP[op]:
                    raise _damaged(path, EOFError("the file is cut short"))
            elif op == _APPEND and single:
                single = False
            elif op == _EMPTY_LIST and not started:
                started = True
            elif op == _MARK and started and not in_mark and not single:
                in_mark = True
            elif op == _APPENDS and in_mark:
                in_mark = False
            elif op == _STOP and started and not in_mark and not single:
                return
            else:
                raise NotATextList(f"opcode {code!r} at byte {fh.tell() - 1}")
