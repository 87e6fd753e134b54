"""One small valid input per import format, and the typed fields a malformed record can break.

Shared by the validation tests and the property-based test: ``CASES[fmt].write(folder, mutate)`` writes the valid
input with ``mutate(records)`` applied to its record list first; ``fields`` lists (record index, key path, accepts)
where ``accepts(value)`` says whether a value is valid there (the property test only plants values it rejects).
"""
from __future__ import annotations

import copy
import json
import math
import pickle
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

INT64 = 2**63


def _int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and -INT64 <= v < INT64


def _unicode(v: Any) -> bool:
    """A string that is valid Unicode text (no lone UTF-16 surrogate)."""
    return isinstance(v, str) and not re.search("[\ud800-\udfff]", v)


def _text(v: Any) -> bool:
    return _unicode(v)


def _text_or_none(v: Any) -> bool:
    return v is None or _unicode(v)


def _nonempty_text(v: Any) -> bool:
    return _unicode(v) and bool(v.strip())


def _id(v: Any) -> bool:
    """Non-blank printable text (no NUL, newline or other control character), or a 64-bit integer."""
    return (_nonempty_text(v) and not re.search("[\x00-\x1f\x7f-\x9f]", v)) or _int(v)


def _index_below(n: int) -> Callable[[Any], bool]:
    """A sentence index into a paragraph of ``n`` sentences."""
    return lambda v: _int(v) and 0 <= v < n


def _answer(v: Any) -> bool:
    return _unicode(v) or _int(v) or (isinstance(v, float) and math.isfinite(v))


def _answer_or_none(v: Any) -> bool:
    return v is None or _answer(v)


def _text_list(v: Any) -> bool:
    return v is None or (isinstance(v, list) and all(_answer(x) for x in v))


def _ids(v: Any) -> bool:
    return isinstance(v, list) and all(_int(x) for x in v) and len(set(v)) == len(v)


def _bool_or_none(v: Any) -> bool:
    return v is None or isinstance(v, bool)


Field = tuple[int, tuple, Callable[[Any], bool]]


@dataclass
class Case:
    fmt: str
    records: list[dict]
    fields: list[Field]
    writer: Callable[[Path, list[dict]], Path]

    def write(self, folder: Path, mutate: Callable[[list[dict]], None] | None = None) -> Path:
        records = copy.deepcopy(self.records)
        if mutate is not None:
            mutate(records)
        folder.mkdir(parents=True, exist_ok=True)
        return self.writer(folder, records)


def _jsonl(path: Path, rows: list) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


# --------------------------------------------------------------------------------------------- native
def _native(folder: Path, recs: list[dict]) -> Path:
    _jsonl(folder / "documents.jsonl", recs[:2])
    _jsonl(folder / "queries.jsonl", recs[2:])
    return folder


NATIVE = Case("native", [
    {"doc_id": 1, "text": "Paris is the capital of France.", "title": "Paris", "domain": "geo", "source": "s"},
    {"doc_id": 2, "text": "Berlin is the capital of Germany.", "title": "Berlin", "domain": "geo"},
    {"qid": "q1", "text": "Capital of France?", "answer": "Paris", "ref_ids": [1], "hard_negative_ids": [2],
     "domain": "geo", "task_type": "fact", "answer_aliases": ["Paris, France"]},
], [
    (0, ("doc_id",), _int), (0, ("text",), _nonempty_text), (0, ("title",), _text_or_none),
    (0, ("domain",), _text_or_none), (0, ("source",), _text_or_none),
    (2, ("qid",), _id), (2, ("text",), _text), (2, ("answer",), _answer), (2, ("ref_ids",), _ids),
    (2, ("hard_negative_ids",), lambda v: v is None or _ids(v)), (2, ("domain",), _text_or_none),
    (2, ("task_type",), _text_or_none), (2, ("answer_aliases",), _text_list),
], _native)

# --------------------------------------------------------------------------------------------- hotpotqa
HOTPOT = Case("hotpotqa", [
    {"_id": "a1", "question": "Where was Ann Bee born?", "answer": "Lyon", "type": "bridge", "level": "hard",
     "context": [["Film X", ["Film X is a 1990 film", " directed by Ann Bee."]],
                 ["Ann Bee", ["Ann Bee was born in Lyon."]], ["Film Y", ["Film Y is a 1991 film."]]],
     "supporting_facts": [["Film X", 1], ["Ann Bee", 0]]},
], [
    (0, ("_id",), _id), (0, ("question",), _text), (0, ("answer",), _answer), (0, ("type",), _text_or_none),
    (0, ("context",), lambda v: False), (0, ("context", 0), lambda v: False), (0, ("context", 0, 0), _text),
    (0, ("context", 1, 1), lambda v: isinstance(v, list) and all(_text(s) for s in v)),
    (0, ("supporting_facts",), lambda v: False), (0, ("supporting_facts", 0), lambda v: False),
    (0, ("supporting_facts", 0, 1), _index_below(2)),  # "Film X" has two sentences
], lambda folder, recs: _jsonl(folder / "hotpot.json", recs))

HOTPOT_IRCOT = Case("hotpotqa", [
    {"question_id": "i1", "question_text": "Who directed Film X?", "type": "bridge",
     "contexts": [{"title": "Film X", "paragraph_text": "Film X was directed by Ann Bee.", "is_supporting": True},
                  {"title": "Film Y", "paragraph_text": "Film Y is a 1991 film.", "is_supporting": False}],
     "answers_objects": [{"number": "", "spans": ["Ann Bee"]}]},
], [
    (0, ("question_id",), _id), (0, ("question_text",), _text), (0, ("type",), _text_or_none),
    (0, ("contexts", 0, "title"), _text_or_none), (0, ("contexts", 0, "paragraph_text"), _text),
    (0, ("contexts", 0, "is_supporting"), _bool_or_none), (0, ("contexts",), lambda v: False),
    (0, ("answers_objects",), lambda v: False), (0, ("answers_objects", 0, "spans"), lambda v: isinstance(v, list) and bool(v) and all(_answer(x) for x in v)),
], lambda folder, recs: _jsonl(folder / "ircot.jsonl", recs))

# --------------------------------------------------------------------------------------------- musique
MUSIQUE = Case("musique", [
    {"id": "2hop__1_2", "question": "Where is Stanley?", "answer": "Stanley", "answer_aliases": ["Stanley, ND"],
     "answerable": True,
     "paragraphs": [{"idx": 0, "title": "Stanley", "paragraph_text": "Stanley is a city.", "is_supporting": True},
                    {"idx": 1, "title": "Other", "paragraph_text": "Another place.", "is_supporting": False}]},
], [
    (0, ("id",), _id), (0, ("question",), _text), (0, ("answer",), _answer), (0, ("answer_aliases",), _text_list),
    (0, ("answerable",), _bool_or_none), (0, ("paragraphs",), lambda v: False),
    (0, ("paragraphs", 0, "title"), _text_or_none), (0, ("paragraphs", 0, "paragraph_text"), _text),
    (0, ("paragraphs", 0, "is_supporting"), _bool_or_none),
], lambda folder, recs: _jsonl(folder / "musique.jsonl", recs))

# --------------------------------------------------------------------------------------------- 2wiki
TWOWIKI = Case("2wiki", [
    {"_id": "w1", "type": "comparison", "question": "Which film is older?", "answer": "Film Z",
     "context": [["Film Y", ["Film Y is a 1991 film."]], ["Film Z", ["Film Z is a 1985 film."]],
                 ["Other", ["Unrelated."]]],
     "supporting_facts": [["Film Y", 0], ["Film Z", 0]]},
], [
    (0, ("_id",), _id), (0, ("type",), _text_or_none), (0, ("question",), _text), (0, ("answer",), _answer),
    (0, ("context", 0, 0), _text), (0, ("context", 0), lambda v: False),
    (0, ("supporting_facts",), lambda v: False), (0, ("supporting_facts", 0), lambda v: False),
    (0, ("supporting_facts", 0, 1), _index_below(1)),  # "Film Y" has one sentence
], lambda folder, recs: _jsonl(folder / "2wiki.jsonl", recs))

# --------------------------------------------------------------------------------------------- locomo
LOCOMO = Case("locomo", [
    {"sample_id": "conv-1",
     "conversation": {"speaker_a": "Ann", "speaker_b": "Bo", "session_1_date_time": "1:56 pm on 8 May, 2023",
                      "session_1": [{"speaker": "Ann", "dia_id": "D1:1", "text": "I went to the support group."},
                                    {"speaker": "Bo", "dia_id": "D1:2", "text": "Nice!"}]},
     "qa": [{"question": "When did Ann go?", "answer": "7 May 2023", "evidence": ["D1:1"], "category": 2}]},
], [
    (0, ("sample_id",), _id), (0, ("conversation",), lambda v: False), (0, ("qa",), lambda v: v == []),
    (0, ("qa", 0, "question"), _text), (0, ("qa", 0, "answer"), _answer_or_none),
    (0, ("qa", 0, "evidence"), lambda v: v is None or (isinstance(v, list) and all(_text(x) for x in v))),
    (0, ("qa", 0, "category"), lambda v: v is None or (_int(v) or isinstance(v, str))),
    (0, ("conversation", "session_1"), lambda v: False),
    (0, ("conversation", "session_1", 0, "speaker"), _text),
    (0, ("conversation", "session_1", 0, "text"), _text_or_none),  # a number is no turn text
    (0, ("conversation", "session_1", 0, "dia_id"), _text_or_none),
    (0, ("conversation", "session_1_date_time"), _text_or_none),
], lambda folder, recs: (folder / "locomo10.json").write_text(json.dumps(recs)) and folder / "locomo10.json")


# --------------------------------------------------------------------------------------------- beir
def _beir(folder: Path, recs: list[dict]) -> Path:
    _jsonl(folder / "corpus.jsonl", recs[:2])
    _jsonl(folder / "queries.jsonl", recs[2:])
    (folder / "qrels").mkdir(exist_ok=True)
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    return folder


BEIR = Case("beir", [
    {"_id": "d1", "title": "Aspirin", "text": "Aspirin thins blood."},
    {"_id": "d2", "title": "Ibuprofen", "text": "Ibuprofen reduces fever."},
    {"_id": "q1", "text": "what thins blood"},
], [
    (0, ("_id",), _id), (0, ("title",), _text_or_none), (0, ("text",), _text_or_none),
    (2, ("_id",), _id), (2, ("text",), _text),
], _beir)


# --------------------------------------------------------------------------------------------- release
def _release(folder: Path, recs: list[dict]) -> Path:
    (folder / "unique_reference.pkl").write_bytes(pickle.dumps(["Aspirin thins blood.", "Ibuprofen cures."]))
    (folder / "data.pkl").write_bytes(pickle.dumps(recs))
    return folder


def _pickled_text(v: Any) -> bool:
    """Text, or a number written as text: a pickle's ints are not bounded by JSON's 64-bit parse."""
    return _unicode(v) or (isinstance(v, int) and not isinstance(v, bool)) or (
        isinstance(v, float) and math.isfinite(v))


# the release reader takes numbers as text for answer and the labels (domain, category, type: the release numbers
# some); references that match nothing are skipped by design, so any list is accepted there
RELEASE = Case("emb-s-release", [
    {"query": "What thins blood?", "answer": "Aspirin", "reference_list": [0], "domain": "medical", "type": "fact"},
], [
    (0, ("query",), _nonempty_text), (0, ("reference_list",), lambda v: isinstance(v, (list, tuple))),
    (0, ("answer",), _pickled_text), (0, ("domain",), lambda v: v is None or _pickled_text(v)),
    (0, ("type",), lambda v: v is None or _pickled_text(v)),
], _release)

CASES: dict[str, Case] = {c.fmt if c is not HOTPOT_IRCOT else "hotpotqa-ircot": c
                          for c in (NATIVE, HOTPOT, HOTPOT_IRCOT, MUSIQUE, TWOWIKI, LOCOMO, BEIR, RELEASE)}


def set_path(records: list, index: int, path: tuple, value: Any) -> None:
    """``records[index][path[0]][path[1]]... = value``."""
    target = records[index]
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
