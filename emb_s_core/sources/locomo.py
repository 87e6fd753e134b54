"""LoCoMo (Maharana et al., ACL 2024): a JSON array of conversations, each with ``sample_id``, ``conversation``
(``speaker_a``, ``speaker_b``, ``session_<n>`` = [{speaker, dia_id "D<n>:<turn>", text, [blip_caption]}],
``session_<n>_date_time``) and ``qa`` = [{question, answer, evidence: ["D<n>:<turn>", ...], category}].

One document per session, title "<sample_id> session <n> (<date time>)", text one "speaker: text" line per turn
(a shared image's caption is appended as "[image: caption]", since some evidence turns are only a photo).
Evidence turn ids map to their session's document (deduplicated). Some evidence strings hold several ids
("D8:6; D9:17"): they are split on ``;``, ``,`` and spaces; zero-padded turns ("D30:05") are read as numbers.
Ids that match no turn are skipped, counted and named in the notes; a question left without evidence, or without
an ``answer`` (adversarial category-5 items carry only ``adversarial_answer``), is skipped and counted.
task_type from ``category``; the file does not name the categories, the names follow the LoCoMo evaluation code:
1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial.

hard_negative_ids stay empty: the other sessions of the same conversation share speakers and topics but nobody
verified that they do not support the answer (LoCoMo facts recur across sessions), so calling them near-miss
distractors would make the hard-negative-intrusion diagnostic count correct evidence as intrusion.
"""
from __future__ import annotations

import re
from pathlib import Path

from emb_s_core.errors import EmbSError, at
from emb_s_core.schema import Bank, Document, Query
from emb_s_core.sources import validate
from emb_s_core.sources._io import load_json, require_field, require_file

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
_SESSION = re.compile(r"session_(\d+)")
_TURN = re.compile(r"D(\d+):(\d+)")


def read(path: Path, source: str = "locomo") -> Bank:
    if validate.input_path(path, "LoCoMo file").is_dir():
        files = sorted(path.glob("*.json"))
        if len(files) != 1:
            raise EmbSError(f"expected one .json file in {path}, found {len(files)}",
                            fix="point at the LoCoMo file itself (e.g. locomo10.json).")
        path = files[0]
    data = load_json(require_file(path, "LoCoMo file"))
    if not isinstance(data, list):
        raise EmbSError(f"expected a JSON array of conversations, got {type(data).__name__}", where=str(path),
                        fix="use LoCoMo's locomo10.json layout (see README, Data formats).")
    bank = Bank(source=source, documents=[], queries=[], renumber=True)
    for i, conv in enumerate(data, start=1):
        where = at(path.name, record=i)
        if not isinstance(conv, dict):
            raise EmbSError("conversation is not a JSON object", where=where,
                            fix="each array item is one conversation.")
        sample = validate.id_field(conv, "sample_id", where)
        where = f"{where} ({sample})"
        session_doc, turns = _sessions(bank, conv, sample, where)
        for j, qa in enumerate(require_field(conv, "qa", where, list)):
            _question(bank, qa, f"{sample}:q{j}", f"{where} qa[{j}]", session_doc, turns)
    return bank


def _sessions(bank: Bank, conv: dict, sample: str, where: str) -> tuple[dict[int, int], set[str]]:
    """Add one document per session; return session number -> doc id and the set of known turn ids."""
    talk = require_field(conv, "conversation", where, dict)
    numbers = sorted(int(m.group(1)) for k in talk if (m := _SESSION.fullmatch(k)))
    session_doc: dict[int, int] = {}
    turns: set[str] = set()
    for n in numbers:
        swhere = f"{where} session_{n}"
        lines = []
        for k, turn in enumerate(require_field(talk, f"session_{n}", swhere, list)):
            if not isinstance(turn, dict):
                raise EmbSError(f"turn {k} is not an object", where=swhere, fix="each turn needs speaker and text.")
            twhere = f"{swhere} turn {k}"
            text = (validate.text_field(turn, "text", twhere, required=False) or "").strip()
            caption = validate.text_field(turn, "blip_caption", twhere, required=False)
            if caption:
                text = f"{text} [image: {caption}]".strip()
            lines.append(f"{require_field(turn, 'speaker', f'{swhere} turn {k}', str)}: {text}")
            dia_id = validate.text_field(turn, "dia_id", twhere, required=False)
            if dia_id:
                turns.add(dia_id)
        if not lines:
            bank.skip("empty session")
            continue
        date = validate.text_field(talk, f"session_{n}_date_time", where, required=False)
        doc_id = len(bank.documents)
        bank.documents.append(Document(doc_id=doc_id, text="\n".join(lines), source=bank.source,
                                       title=f"{sample} session {n}" + (f" ({date})" if date else "")))
        bank.doc_locations[doc_id] = swhere
        session_doc[n] = doc_id
    return session_doc, turns


def _question(bank: Bank, qa: object, qid: str, where: str, session_doc: dict[int, int], turns: set[str]) -> None:
    if not isinstance(qa, dict):
        raise EmbSError("qa item is not a JSON object", where=where, fix="each qa item needs question and evidence.")
    answer = validate.text_field(qa, "answer", where, required=False, numbers=True)
    category = qa.get("category")
    if category is not None and not (isinstance(category, (int, str)) and not isinstance(category, bool)):
        validate.check_value(category, "an integer category 1-5", where, "category")
    if answer is None or answer.strip() == "":
        bank.skip("question without an answer (adversarial category 5)")
        return
    evidence = validate.text_list(qa, "evidence", where)
    ids = [t for e in evidence for t in re.split(r"[;,\s]+", e) if t]
    gold = []
    for turn_id in ids:
        m = _TURN.fullmatch(turn_id)
        canonical = f"D{int(m.group(1))}:{int(m.group(2))}" if m else turn_id  # "D30:05" names turn D30:5
        if m is None or canonical not in turns or int(m.group(1)) not in session_doc:
            bank.skip("evidence id matching no dialog turn")
            if len(bank.notes) < 50:
                bank.notes.append(f"{where}: evidence id {turn_id!r} matches no dialog turn; ignored")
            continue
        gold.append(session_doc[int(m.group(1))])
    if not gold:
        bank.skip("question without usable evidence")
        return
    bank.query_locations[qid] = where
    bank.queries.append(Query(qid=qid, text=require_field(qa, "question", where, str), answer=answer,
                              ref_ids=list(dict.fromkeys(gold)), source=bank.source,
                              task_type=CATEGORIES.get(category, f"category {category}" if category else None)))
