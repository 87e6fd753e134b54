"""Import order does not decide the ladder (issue 31 §2): HotpotQA numbers its documents in file order, so the same
file imported forward, reversed and in two steps gives other doc ids; every seeded draw orders documents by content,
so the rungs (compared by title and text) and the twin's per-query pools are the same."""
from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from emb_s_core import bank, ladder, twin
from emb_s_core.store import Workspace
from tests.conftest import SHARED_DATA

HOTPOT = SHARED_DATA / "hotpotqa-dev-distractor-500" / "dev_subsampled.jsonl"


def _synthetic_lines(n_questions: int = 40) -> list[str]:
    """IRCoT-style HotpotQA records: 2 gold and 6 distractor paragraphs each, a few paragraphs shared by two
    questions (deduplicated at import), words drawn so BM25 finds neighbours."""
    rnd = random.Random(7)
    vocab = [f"w{i}" for i in range(300)]
    shared = [{"title": f"Shared {i}", "paragraph_text": " ".join(rnd.choices(vocab, k=60))} for i in range(6)]
    lines = []
    for q in range(n_questions):
        contexts = [{"title": f"Q{q} gold {g}", "paragraph_text": " ".join(rnd.choices(vocab, k=50 + 7 * g)),
                     "is_supporting": True} for g in range(2)]
        contexts += [{"title": f"Q{q} other {k}", "paragraph_text": " ".join(rnd.choices(vocab, k=40 + 5 * k)),
                      "is_supporting": False} for k in range(6)]
        if q % 7 == 0:
            contexts.append({**shared[q % len(shared)], "is_supporting": False})
        lines.append(json.dumps({"question_id": f"h{q:03d}", "question_text": " ".join(rnd.choices(vocab, k=8)),
                                 "answers_objects": [{"spans": [f"a{q}"]}], "contexts": contexts}))
    return lines


def _two_parts(lines: list[str]) -> tuple[list[str], list[str]]:
    """The records split in two imports that share no paragraph (each paragraph is imported once either way)."""
    groups: dict[str, set[int]] = {}  # a paragraph -> the records holding it
    for i, line in enumerate(lines):
        for c in json.loads(line)["contexts"]:
            groups.setdefault(c["title"] + "\0" + c["paragraph_text"].strip(), set()).add(i)
    part_a: set[int] = set()
    todo = [len(lines) - 1]
    while todo or len(part_a) < len(lines) // 2:  # grow part A from the last records, closed under sharing
        if not todo:
            todo = [max(set(range(len(lines))) - part_a)]
        i = todo.pop()
        if i in part_a:
            continue
        part_a.add(i)
        for c in json.loads(lines[i])["contexts"]:
            todo += list(groups[c["title"] + "\0" + c["paragraph_text"].strip()] - part_a)
    b = [line for i, line in enumerate(lines) if i not in part_a]
    assert b, "no record left for the second import"
    return [lines[i] for i in sorted(part_a)], b


def _import_variants(lines: list[str], root: Path) -> dict[str, Workspace]:
    out = {}
    first, second = _two_parts(lines)
    for label, parts in {"forward": [lines], "reversed": [lines[::-1]], "split": [second[::-1], first]}.items():
        target = root / f"ws-{label}"
        for i, part in enumerate(parts):
            path = root / f"{label}-{i}.jsonl"
            path.write_text("\n".join(part) + "\n", encoding="utf-8")
            bank.import_path(target, "hotpotqa", path, domain="wiki", source=f"hotpot{i}")
        out[label] = Workspace(target)
    return out


def _contents(ws: Workspace) -> dict[int, tuple[str, str]]:
    docs = bank.documents(ws, ["doc_id", "title", "text"])
    return {int(d): (t or "", x) for d, t, x in zip(docs["doc_id"], docs["title"], docs["text"])}


def _rungs_by_content(ws: Workspace, lad: ladder.Ladder) -> dict[str, tuple]:
    content = _contents(ws)
    return {r.name: (sorted(content[int(d)] for d in r.doc_ids), sorted(r.qids)) for r in lad.rungs}


def test_hotpotqa_forward_reversed_and_split_give_the_same_rungs_and_twin(tmp_path):
    variants = _import_variants(_synthetic_lines(), tmp_path)
    ids = {label: _contents(ws) for label, ws in variants.items()}
    assert ids["forward"] != ids["reversed"]  # the importer numbers by file order: the same content, other ids
    opts = ladder.LadderOptions(base="4K", domain_sizes=("4K",), reserve=256, hn_share=0.5)
    got = {label: _rungs_by_content(ws, ladder.build(ws, opts)) for label, ws in variants.items()}
    assert len(got["forward"]) >= 3  # base, shared and global rungs, each drawn from a seeded order
    assert got["reversed"] == got["forward"]
    assert got["split"] == got["forward"]
    pools = {}
    for label, ws in variants.items():  # the twin's refills too: every query's pool on every twin rung
        lad = twin.build(ws, top_n=3, references=["bm25"])
        content = _contents(ws)
        per = twin.deltas(ws)
        pools[label] = {(r.name, q): sorted(content[int(d)] for d in twin.pool(r.doc_ids, per.get(r.name, {}).get(q)))
                        for r in lad.rungs for q in r.qids}
    assert pools["reversed"] == pools["forward"] and pools["split"] == pools["forward"]


def test_a_ladder_built_before_content_ordered_draws_is_stale(tmp_path):
    ws = _import_variants(_synthetic_lines(12), tmp_path)["forward"]
    ladder.build(ws, ladder.LadderOptions(base="4K", domain_sizes=("4K",), reserve=256))
    assert ladder.stale_reason(ws) is None
    settings = dict(ws.settings["ladder"])
    settings.pop("draws")  # what a ladder stored by an earlier version holds
    with ws.transaction():
        ws.set_setting("ladder", settings)
    reason = ladder.stale_reason(ws)
    assert reason and "ordered by content" in reason
    with pytest.raises(Exception, match="stale"):
        ladder.load(ws)


@pytest.mark.realdata
def test_real_hotpotqa_imported_in_any_order_gives_the_same_rungs(tmp_path):
    if not HOTPOT.is_file():
        pytest.skip(f"shared HotpotQA not found at {HOTPOT}")
    lines = [line for line in HOTPOT.read_text(encoding="utf-8").splitlines() if line.strip()]
    variants = _import_variants(lines, tmp_path)
    opts = ladder.LadderOptions(base="32K", domain_sizes=("32K", "64K"), hn_share=0.5)
    got = {label: _rungs_by_content(ws, ladder.build(ws, opts)) for label, ws in variants.items()}
    assert {"32K/wiki", "full"} <= set(got["forward"]) and len(got["forward"]) >= 5
    assert got["reversed"] == got["forward"]
    assert got["split"] == got["forward"]
