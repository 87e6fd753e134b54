"""A small EMB-S release in the published layout (data/<scale>/{unique_reference,data}.pkl, qar/<split>.jsonl),
for the importer, official-ladder and CLI tests.

Scales nest (64K ⊂ 128K ⊂ 512K); ``qar/test.jsonl`` references documents as text (with extra whitespace, so the
importer must normalize), one row carries keys the reader does not know, two references match nothing, one query's
only reference matches nothing, and one query's gold is only in the largest scale (the official ladder drops it).
The scales' ``data.pkl`` hold index references into that scale's list.
"""
from __future__ import annotations

import json
import pickle
from pathlib import Path

TOPICS = ["aspirin", "ibuprofen", "paracetamol", "insulin", "penicillin", "morphine", "codeine", "heparin",
          "warfarin", "statin", "metformin", "lithium"]


def corpus(n: int, start: int = 0) -> list[str]:
    return [f"Document {i} about {TOPICS[i % len(TOPICS)]}: it was studied in trial number {i * 7} and found "
            f"{'effective' if i % 2 else 'inconclusive'} for condition {i % 5}." for i in range(start, start + n)]


SCALES = {"64K": corpus(12), "128K": corpus(12) + corpus(8, 12), "512K": corpus(12) + corpus(8, 12) + corpus(10, 20)}


def qar_rows() -> list[dict]:
    docs = SCALES["512K"]
    return [
        {"query": "Which trial studied aspirin?", "answer": "trial 0", "reference_list": ["  " + docs[0].replace(" ", "  ")],
         "category": "pharma", "difficulty": "easy", "source_ids": [3, 4]},
        {"query": "Compare ibuprofen and paracetamol.", "answer": "both", "reference_list": [docs[1], docs[2]],
         "category": "pharma", "id": "q-two"},
        {"query": "Partly broken?", "answer": "x", "reference_list": [docs[3], "A text that is in no scale at all."],
         "category": "pharma"},
        {"query": "All broken?", "answer": "y", "reference_list": ["Nothing like this exists."], "category": "pharma"},
        {"query": "Only in the largest scale?", "answer": "z", "reference_list": [docs[25]], "category": "pharma"},
    ]


def write_release(root: Path, with_qar: bool = True) -> Path:
    for label, refs in SCALES.items():
        folder = root / "data" / label
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "unique_reference.pkl").write_bytes(pickle.dumps(refs))
        records = [{"query": f"What did document {i} find?", "answer": "effective" if i % 2 else "inconclusive",
                    "reference_list": [i], "id": f"{label}-{i}"} for i in (1, 2)]
        (folder / "data.pkl").write_bytes(pickle.dumps(records))
    if with_qar:
        (root / "qar").mkdir(parents=True, exist_ok=True)
        (root / "qar" / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in qar_rows()))
        train = [{"query": "Train question?", "answer": "a", "reference_list": [SCALES["64K"][5]]}]
        (root / "qar" / "train_sft.jsonl").write_text("".join(json.dumps(r) + "\n" for r in train))
    return root
