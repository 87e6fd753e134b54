"""Issue 31 §1 on a real imported bank: a native bank (HotpotQA paragraphs, three domains, documents carrying their
own source) whose per-query twin pools are uneven and smaller than a fusion's depth. ``eval -r hybrid --ladder
both`` used to end in a traceback there; a run that lost results is marked incomplete on the CLI, with its counts.
"""
from __future__ import annotations

import json
import shutil

import pytest

from emb_s_core import bank, evaluate, ladder, runs, twin
from emb_s_core.cli import main
from emb_s_core.store import Workspace
from tests.integration.test_eval_twin import assert_exact_per_query

pytestmark = pytest.mark.timeout(300)

HYBRID = "hybrid:bm25+dense:minilm-static"
DOMAINS = ("news", "science", "history")


def hotpot_native(shared_data, folder, n_questions: int = 45):
    """A native bank from the first HotpotQA questions: each question's paragraphs (gold and three distractors as
    hard negatives) in one of three domains, every document with a ``source`` of its own."""
    docs, queries, seen = [], [], {}
    with open(shared_data / "hotpotqa-dev-distractor-500" / "dev_subsampled.jsonl", encoding="utf-8") as f:
        for i, line in zip(range(n_questions), f):
            rec = json.loads(line)
            domain = DOMAINS[i % len(DOMAINS)]
            gold, negatives = [], []
            for c in rec["contexts"]:
                key = (c["title"], c["paragraph_text"])
                if key not in seen:
                    seen[key] = 1000 + len(seen)
                    docs.append({"doc_id": seen[key], "title": c["title"], "text": c["paragraph_text"],
                                 "domain": domain, "source": f"hotpot-{'ab'[len(seen) % 2]}"})
                (gold if c["is_supporting"] else negatives).append(seen[key])
            queries.append({"qid": rec["question_id"], "text": rec["question_text"],
                            "answer": rec["answers_objects"][0]["spans"][0], "ref_ids": gold,
                            "hard_negative_ids": negatives[:3], "domain": domain, "task_type": "multi-hop"})
    folder.mkdir(parents=True)
    for name, rows in (("documents", docs), ("queries", queries)):
        (folder / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def built(shared_data_module, tmp_path_factory):
    root = tmp_path_factory.mktemp("partial")
    bank.import_path(root / "ws", "native", hotpot_native(shared_data_module, root / "bank"))
    ws = Workspace(root / "ws")
    ladder.build(ws, ladder.LadderOptions(base="8K", domain_sizes=("8K", "16K"), reserve=256))
    twin.build(ws)
    return root / "ws"


@pytest.fixture(scope="module")
def shared_data_module():
    from tests.conftest import SHARED_DATA

    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared datasets not found at {SHARED_DATA}")
    return SHARED_DATA


@pytest.fixture()
def ws(built, tmp_path):
    shutil.copytree(built, tmp_path / "ws")
    return Workspace(tmp_path / "ws")


def test_hybrid_on_small_uneven_twin_pools(ws, capsys):
    benign = ladder.load(ws, kind="benign")
    deltas = twin.deltas(ws)
    small = [r for r in benign.rungs if r.n_documents < 100]
    sizes = {len(twin.pool(r.doc_ids, deltas.get(r.name, {}).get(q))) for r in small for q in r.qids}
    assert small and len(sizes) > 1  # pools smaller than the fusion's depth of 100, and of different sizes
    assert main(["eval", "--workspace", str(ws.path), "-r", HYBRID, "--ladder", "both"]) == 0
    ws = Workspace(ws.path)  # the version the CLI wrote
    res = runs.load_results(ws, runs=[HYBRID])
    built_lad = ladder.load(ws)
    assert len(res) == sum(len(r.qids) for r in built_lad.rungs + benign.rungs)  # nothing lost
    ks = evaluate.k_per_rung(benign.rungs, 100)  # K clamped to each twin rung's smallest pool
    for r in small:  # each query's list equals its own pool searched alone by the fusion
        assert_exact_per_query(ws, res, ladder.Ladder([r], benign.kept, benign.options), HYBRID, ks[r.name],
                               per_rung=2)
