"""The official EMB-S release layout (EverMind-AI/EverMemBench-Static): a folder with two pickles.

- ``unique_reference.pkl``: a list of document texts (the reference corpus);
- ``data.pkl``: a list of records with ``query``, ``answer`` and ``reference_list``; a reference is either an index
  into ``unique_reference`` or the document text itself (both occur). Optional keys: ``id``/``qid``, ``domain``,
  ``type``/``task_type``, ``answer_aliases``; other keys are ignored.
References that match no document are skipped, counted and the record is named in the notes; a record left with no
reference is skipped. Documents take the domain of the first query citing them (the release labels queries only).

Pickle can run arbitrary code on load, so the files are read by a restricted unpickler that builds only plain
containers and scalars (dict, list, tuple, set, str, int, float, bool, None, bytes) and refuses any other global or
class (e.g. ``os.system``) before it is called.
"""
from __future__ import annotations

import io
import pickle
from pathlib import Path
from typing import Any

from emb_s_core.errors import EmbSError, at
from emb_s_core.schema import Bank, Document, Query
from emb_s_core.sources._io import require_file

#: the only globals a plain-data pickle may name (older protocols build sets through them)
_SAFE_GLOBALS = {("builtins", "set"), ("builtins", "frozenset"), ("__builtin__", "set"),
                 ("__builtin__", "frozenset")}


class _Refused(pickle.UnpicklingError):
    """A pickle asked for something beyond plain data (told apart from a damaged file)."""


class _PlainUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _SAFE_GLOBALS:
            return super().find_class(module, name)
        raise _Refused(f"refused global {module}.{name}")

    def persistent_load(self, pid: Any) -> Any:
        raise _Refused("refused persistent id")


def load_plain_pickle(path: Path) -> Any:
    """Unpickle plain data only; a pickle naming any class or function raises EmbSError and is never executed."""
    data = require_file(path, "EMB-S release file").read_bytes()
    try:
        return _PlainUnpickler(io.BytesIO(data)).load()
    except _Refused as exc:
        raise EmbSError(f"pickle refused: {exc} (only plain lists, dicts and scalars are accepted)", where=str(path),
                        fix="re-save the file as plain Python lists/dicts of str and int, or get it from the "
                            "official release; never load pickles you do not trust.") from None
    except Exception as exc:  # truncated or corrupt data
        raise EmbSError(f"cannot read pickle ({type(exc).__name__}: {exc})", where=str(path),
                        fix="the file is damaged or not a pickle; download it again.") from None


def read(path: Path, source: str = "emb-s") -> Bank:
    if not path.is_dir():
        path = path.parent
    ref_path, data_path = path / "unique_reference.pkl", path / "data.pkl"
    refs = load_plain_pickle(ref_path)
    records = load_plain_pickle(data_path)
    for name, value in ((ref_path, refs), (data_path, records)):
        if not isinstance(value, (list, tuple)):
            raise EmbSError(f"expected a list, got {type(value).__name__}", where=str(name),
                            fix="unique_reference.pkl is a list of texts; data.pkl a list of records.")
    bank = Bank(source=source, documents=[], queries=[], renumber=True)
    by_text: dict[str, int] = {}
    for i, text in enumerate(refs):
        where = at(ref_path.name, record=i)
        if not isinstance(text, str) or not text.strip():
            raise EmbSError(f"reference {i} is {'empty' if isinstance(text, str) else type(text).__name__}, "
                            "not a document text", where=where, fix="every entry must be a non-empty string.")
        by_text.setdefault(text, i)
        bank.documents.append(Document(doc_id=i, text=text, source=source))
        bank.doc_locations[i] = where
    for i, rec in enumerate(records):
        where = at(data_path.name, record=i)
        _record(bank, rec, i, where, len(refs), by_text)
    return bank


def _resolve(ref: Any, n_refs: int, by_text: dict[str, int]) -> int | None:
    if isinstance(ref, int) and not isinstance(ref, bool):
        return ref if 0 <= ref < n_refs else None
    if isinstance(ref, str):
        return by_text.get(ref)
    return None


def _record(bank: Bank, rec: Any, i: int, where: str, n_refs: int, by_text: dict[str, int]) -> None:
    if not isinstance(rec, dict):
        raise EmbSError(f"record is {type(rec).__name__}, not a dict", where=where,
                        fix="each record is a dict with query, answer and reference_list.")
    for key in ("query", "answer", "reference_list"):
        if rec.get(key) is None:
            raise EmbSError(f"missing field {key!r}", where=where, fix="every record needs query, answer, "
                            "reference_list.")
    if not isinstance(rec["query"], str) or not isinstance(rec["reference_list"], (list, tuple)):
        raise EmbSError("query must be a string and reference_list a list", where=where,
                        fix="check the record's types.")
    qid = str(rec.get("qid", rec.get("id", f"emb-s-{i}")))
    gold, unmatched = [], 0
    for ref in rec["reference_list"]:
        doc = _resolve(ref, n_refs, by_text)
        if doc is None:
            unmatched += 1
        else:
            gold.append(doc)
    if unmatched:
        bank.skip("reference matching no document", unmatched)
        bank.notes.append(f"{where} ({qid}): {unmatched} reference(s) match no document in unique_reference.pkl")
    if not gold:
        bank.skip("record without a matching reference")
        return
    gold = list(dict.fromkeys(gold))
    domain = rec.get("domain") if isinstance(rec.get("domain"), str) else None
    if domain:
        for d in gold:
            bank.documents[d].domain = bank.documents[d].domain or domain
    aliases = rec.get("answer_aliases") or []
    bank.query_locations.setdefault(qid, where)
    bank.queries.append(Query(qid=qid, text=rec["query"], answer=str(rec["answer"]), ref_ids=gold,
                              domain=domain,
                              task_type=rec.get("task_type") or rec.get("type"), source=bank.source,
                              answer_aliases=[str(a) for a in aliases]))
