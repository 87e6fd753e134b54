"""The benign twin on hand-built banks: no hard negative and no top-N neighbour of any kept query in any twin rung
(gold excepted), the same rungs, budgets, queries and gold as the built ladder, nesting, short rungs said, staleness."""
from __future__ import annotations

import json
import random
import subprocess
import sys

import pytest

from emb_s_core import bank, ladder, retrievers, twin
from emb_s_core.errors import EmbSError
from emb_s_core.store import Workspace
from tests.conftest import write_jsonl
from tests.twin_invariants import assert_invariants

DOMAINS = ["medical", "history", "law"]
OPTS = ladder.LadderOptions(base="8K", domain_sizes=("8K", "16K"), shared_size="24K", reserve=256)


def make_bank(folder, n_docs=600, n_queries=24, seed=3):
    """Random-word documents; each query quotes words of its gold, so BM25 neighbours are real (gold first, then
    documents that share the quoted words by chance)."""
    rnd = random.Random(seed)
    words = [f"w{i}" for i in range(3000)]
    texts = [[rnd.choice(words) for _ in range(rnd.randint(30, 120))] for _ in range(n_docs)]
    docs = [{"doc_id": i, "text": " ".join(t), "domain": DOMAINS[i % 3], "source": "s1"} for i, t in enumerate(texts)]
    queries = []
    for j in range(n_queries):
        d = DOMAINS[j % 3]
        ids = rnd.sample([i for i in range(n_docs) if DOMAINS[i % 3] == d], 4)
        k = rnd.choice([1, 2])
        text = " ".join(w for g in ids[:k] for w in rnd.sample(texts[g], 5))
        queries.append({"qid": f"q{j}", "text": text, "answer": "y", "ref_ids": ids[:k],
                        "hard_negative_ids": ids[k:], "domain": d})
    write_jsonl(folder / "documents.jsonl", docs)
    write_jsonl(folder / "queries.jsonl", queries)
    return folder


@pytest.fixture(scope="module")
def ws(tmp_path_factory):
    root = tmp_path_factory.mktemp("twin")
    bank.import_path(root / "ws", "native", make_bank(root / "bank"))
    ws = Workspace(root / "ws")
    ladder.build(ws, OPTS)
    return ws


def reference_neighbours(ws, qids, n):
    """Top-n of each query over the whole bank under rank-bm25 (the reference implementation), gold and documents
    sharing no term with the query (score 0) excepted."""
    qs = bank.queries(ws).set_index("qid").loc[qids]
    r = retrievers.get("bm25-reference")
    r.prepare(ws, None)
    ranked = r.rank(qs["text"].tolist(), {"all": r.doc_ids}, n)["all"]
    gold = {int(d) for refs in qs["ref_ids"] for d in refs}
    return {int(d) for row, scores in zip(ranked.ids, ranked.scores) for d, s in zip(row, scores) if s > 0} - gold


def test_twin_pools_are_benign_for_every_query_full_and_nested(ws):
    built = ladder.load(ws)
    lad = twin.build(ws, top_n=10, references=["bm25-reference"])
    qs = bank.queries(ws).set_index("qid")
    kept = list(built.kept.query("kept")["qid"])
    gold = {int(d) for q in kept for d in qs.loc[q, "ref_ids"]}
    negatives = {int(d) for q in kept for d in qs.loc[q, "hard_negative_ids"]} - gold
    near = negatives | reference_neighbours(ws, kept, 10)
    assert len(near - negatives) > 20  # the neighbours are more than the hard negatives: the test can fail
    assert lad.names == [ladder.qualified("benign", n) for n in built.names]
    # one query's gold is another's near miss here, so no shared twin is clean: per-query pools on every rung
    assert lad.options["gold_near_other_queries"] > 0 and lad.options["pools"] == "per-query"
    counts = assert_invariants(ws, 10, ("bm25-reference",))
    assert counts["pairs"] == sum(len(r.qids) for r in built.rungs) and counts["queries_with_removals"] > 0
    again = ladder.load(ws, kind="benign")
    assert again.names == lad.names and set(again.kept["qid"]) == set(built.kept["qid"])
    for t, b in zip(again.rungs, built.rungs):
        assert t.composition["pools"] == "per-query" and t.composition["near_present"] == 0
        assert t.composition["fill"] >= 0.97 and t.composition["built_tokens"] == b.n_tokens, t.name
        assert t.composition["hard_negatives_present"] == 0
    # compact: a delta per (rung, query), far smaller than a membership per query
    stored = ws.read_pandas(twin.DELTAS)
    assert len(stored) == counts["pairs"]
    assert stored["removed"].map(len).sum() + stored["added"].map(len).sum() < \
        0.2 * sum(len(r.doc_ids) * len(r.qids) for r in built.rungs)


def test_a_clean_full_shared_twin_is_kept(tmp_path):
    """Queries whose near documents are all other queries' nothing: with no hard negatives and top-0, the shared
    twin is clean; it is full only if the bank has irrelevant documents enough, else per-query pools are used."""
    bank.import_path(tmp_path / "ws", "native", make_bank(tmp_path / "bank", n_docs=600, n_queries=6))
    ws = Workspace(tmp_path / "ws")
    ladder.build(ws, OPTS)
    lad = twin.build(ws, top_n=0)
    pools = {r.composition["pools"] for r in lad.rungs}
    assert len(pools) == 1  # all shared or all per-query: the pools must nest
    assert_invariants(ws, 0, ())
    if pools == {"shared"}:
        assert not twin.deltas(ws)
        assert any("shared twin is clean" in m for m in lad.messages)
    else:
        assert any("per-query pools" in m for m in lad.messages)


def test_twin_is_seeded(ws, tmp_path):
    first = twin.build(ws, top_n=10)  # built here: the test does not rely on another test having built it
    again = twin.build(ws, top_n=10)
    assert [r.membership_hash for r in again.rungs] == [r.membership_hash for r in first.rungs]


def test_a_rung_that_cannot_fill_says_so_and_is_not_padded(tmp_path):
    bank.import_path(tmp_path / "ws", "native", make_bank(tmp_path / "bank", n_docs=240, n_queries=24))
    ws = Workspace(tmp_path / "ws")
    ladder.build(ws, OPTS)
    lad = twin.build(ws, top_n=60, references=["bm25-reference"])  # 60 of 240 documents near each query
    short = [r for r in lad.rungs if r.composition.get("note", "").startswith("short")]
    assert short and any(r.kind == "full" for r in short)
    table = lad.table()
    for r in short:
        assert r.composition["near_present"] == 0 and r.composition["fill"] < 0.97
        assert "too few documents irrelevant" in table.set_index("rung").loc[r.name, "note"]
    assert "note" in ladder.load(ws, kind="benign").table().columns


def test_rebuilding_the_built_ladder_stales_the_twin(tmp_path):
    bank.import_path(tmp_path / "ws", "native", make_bank(tmp_path / "bank", n_docs=300, n_queries=12))
    ws = Workspace(tmp_path / "ws")
    ladder.build(ws, OPTS)
    twin.build(ws, top_n=5)
    assert ladder.stale_reason(ws, "benign") is None
    ladder.build(ws, ladder.LadderOptions(**{**OPTS.__dict__, "seed": 7}))
    assert "twin of was rebuilt" in ladder.stale_reason(ws, "benign")
    with pytest.raises(EmbSError, match="benign ladder .* is stale") as err:
        ladder.load(ws, kind="benign")
    assert "--control benign" in err.value.fix
    twin.build(ws, top_n=5)
    assert ladder.stale_reason(ws, "benign") is None


def test_bad_inputs(tmp_path, ws):
    with pytest.raises(EmbSError, match="top-n must be 0 or more"):
        twin.build(ws, top_n=-1)
    with pytest.raises(EmbSError, match="unknown retriever"):
        twin.build(ws, references=["nope"])
    bank.import_path(tmp_path / "empty", "native", make_bank(tmp_path / "bank", n_docs=60, n_queries=3))
    with pytest.raises(EmbSError, match="no ladder yet"):
        twin.build(Workspace(tmp_path / "empty"))


def test_references_are_a_stated_default_not_what_is_cached(tmp_path):
    """The default references are bm25 alone whatever has been embedded or run (issue 31 §4): embedding a dense
    model before building the twin changes nothing; a dense reference is named, embedded if it must be, stored, and
    changing the references changes every twin rung's identity, so twin results made before are stale."""
    from emb_s_core import evaluate

    bank.import_path(tmp_path / "ws", "native", make_bank(tmp_path / "bank", n_docs=150, n_queries=6))
    ws = Workspace(tmp_path / "ws")
    ladder.build(ws, ladder.LadderOptions(base="4K", domain_sizes=("4K",), shared_size="12K", reserve=128))
    lad = twin.build(ws, top_n=5)
    assert lad.options["references"] == list(twin.DEFAULT_REFERENCES) == ["bm25"]
    before = {r.name: r.membership_hash for r in lad.rungs}
    evaluate.evaluate(ws, "dense:minilm-l3", name="dense", k=5, ladder="both")  # its vectors are now cached, it has a run
    assert evaluate.stale_twin_runs(ws) == {}
    again = twin.build(ws, top_n=5)
    assert again.options["references"] == ["bm25"]  # the cache and the runs do not change the default
    assert {r.name: r.membership_hash for r in again.rungs} == before and evaluate.stale_twin_runs(ws) == {}
    lad = twin.build(ws, top_n=5, references=["bm25", "dense:minilm-l3"])
    assert lad.options["references"] == ["bm25", "dense:minilm-l3"]
    assert ws.settings["ladder:benign"]["references"] == ["bm25", "dense:minilm-l3"]
    assert all(r.membership_hash != before[r.name] for r in lad.rungs)
    assert set(evaluate.stale_twin_runs(ws)) == {"dense"}  # made on the bm25-only twin
    assert_invariants(ws, 5, ("bm25", "dense:minilm-l3"), strict_full=False)  # 150 documents: full can be short
    with pytest.raises(EmbSError, match="no reference retriever named"):
        twin.build(ws, references=[])


def test_cli_builds_and_shows_the_twin(ws, tmp_path):
    out = subprocess.run([sys.executable, "-m", "emb_s_core.cli", "ladder", "build", "--workspace", str(ws.path),
                          "--control", "benign", "--top-n", "10"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "benign twin:" in out.stdout and "benign:24K" in out.stdout
    show = subprocess.run([sys.executable, "-m", "emb_s_core.cli", "ladder", "show", "--workspace", str(ws.path),
                           "--ladder", "benign"], capture_output=True, text=True)
    assert show.returncode == 0 and "benign:8K/law" in show.stdout
    bank.import_path(tmp_path / "fresh", "native", make_bank(tmp_path / "bank", n_docs=60, n_queries=3))
    bad = subprocess.run([sys.executable, "-m", "emb_s_core.cli", "ladder", "build", "--workspace",
                          str(tmp_path / "fresh"), "--control", "benign"], capture_output=True, text=True)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and "no ladder yet" in bad.stderr


@pytest.mark.parametrize("top_n, references", [(0, None), (10, ["bm25-reference"])])
def test_a_one_domain_ladder_without_a_shared_rung_has_its_twin(tmp_path, top_n, references):
    """One domain: the ladder has no ``shared`` rung (its base pool is that union), and the twin's global rungs
    stand on the base pools all the same, shared or per-query pools alike."""
    folder = make_bank(tmp_path / "bank", n_docs=600, n_queries=6 if top_n == 0 else 24)
    for name in ("documents.jsonl", "queries.jsonl"):
        rows = [json.loads(line) for line in (folder / name).read_text().splitlines()]
        write_jsonl(folder / name, [dict(r, domain="medical") for r in rows])
    bank.import_path(tmp_path / "ws", "native", folder)
    ws = Workspace(tmp_path / "ws")
    built = ladder.build(ws, OPTS)
    assert "shared" not in built.names and any(r.kind == "global" for r in built.rungs)
    lad = twin.build(ws, top_n=top_n, references=references)
    assert lad.names == [ladder.qualified("benign", n) for n in built.names]
    assert_invariants(ws, top_n, tuple(references or ()))
