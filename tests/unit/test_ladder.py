"""The ladder's invariants on a generated bank: budgets, gold coverage, nesting, determinism, strictness."""
from __future__ import annotations

import json
import random

import numpy as np
import pytest

from emb_s_core import bank, ladder
from emb_s_core.errors import EmbSError
from emb_s_core.store import Workspace
from tests.conftest import write_jsonl

DOMAINS = ["medical", "history", "law"]


def make_bank(folder, n_docs=900, n_queries=60, seed=1):
    rnd = random.Random(seed)
    words = [f"w{i}" for i in range(2000)]
    docs = [{"doc_id": i, "text": " ".join(rnd.choice(words) for _ in range(rnd.randint(40, 400))),
             "domain": DOMAINS[i % 3], "source": "s1" if i % 2 else "s2"} for i in range(n_docs)]
    queries = []
    for j in range(n_queries):
        k = rnd.choice([1, 1, 2, 3])
        ids = rnd.sample(range(n_docs), k + 2)
        queries.append({"qid": f"q{j}", "text": "x", "answer": "y", "ref_ids": ids[:k],
                        "hard_negative_ids": ids[k:], "domain": DOMAINS[j % 3]})
    write_jsonl(folder / "documents.jsonl", docs)
    write_jsonl(folder / "queries.jsonl", queries)
    return folder


@pytest.fixture(scope="module")
def ws(tmp_path_factory):
    root = tmp_path_factory.mktemp("ladder")
    bank.import_path(root / "ws", "native", make_bank(root / "bank"))
    return Workspace(root / "ws")


OPTS = ladder.LadderOptions(base="16K", domain_sizes=("16K", "32K", "64K"), shared_size="128K")


def test_budgets_gold_and_nesting(ws):
    lad = ladder.build(ws, OPTS)
    tok = ladder.serialized_tokens(ws)
    assert (tok > bank.token_counts(ws)).all()  # the [DocID=<id>] header and separator count too
    qs = bank.queries(ws).set_index("qid")
    assert [r.kind for r in lad.rungs][:3] == ["domain", "mixed", "domain"]  # 64K/<d> would be the shared rung
    assert lad.rungs[-1].name == "full" and lad.rungs[-1].n_documents == len(tok)
    for r in lad.rungs:
        assert r.n_tokens == tok.loc[r.doc_ids].sum()
        if r.budget is not None:
            assert r.n_tokens <= r.budget, r.name
        members = set(r.doc_ids.tolist())
        for qid in r.qids:  # every kept query's gold is in every rung it is evaluated on
            assert set(qs.loc[qid, "ref_ids"]) <= members, (r.name, qid)
    for d in DOMAINS:
        assert f"64K/{d}" not in lad.names  # 3 pools of 16K fit a 64K rung whole: the shared rung's documents
        assert any(a["rung"] == f"64K/{d}" and "same documents as shared" in a["reason"] for a in lad.absent)
        chain = [lad.rung(f"{s}/{d}") for s in ("16K", "32K")]
        for small, big in zip(chain, chain[1:]):
            assert set(small.doc_ids) <= set(big.doc_ids)
        assert set(chain[0].doc_ids) <= set(lad.rung("shared").doc_ids)
        assert set(chain[0].qids) == set(qs[qs["domain"] == d].index) & set(lad.kept.query("kept")["qid"])
    shared = [r for r in lad.rungs if r.kind in ("shared", "global", "full")]
    # doubling starts above the 48K the shared rung stands for and goes up to the bank (512K would exceed it)
    assert [r.name for r in shared] == ["shared", "64K", "128K", "256K", "full"]
    assert lad.rung("shared").size == 3 * 16 * 1024  # three 16K pools, not the 128K asked for
    assert any("named 'shared': it is the union of 3 base pools (3 × 16K), not 128K" in m for m in lad.messages)
    for small, big in zip(shared, shared[1:]):
        assert set(small.doc_ids) <= set(big.doc_ids), (small.name, big.name)
        assert big.n_tokens > small.n_tokens
    assert any(m.startswith("rungs from 512K up are not built") for m in lad.messages)


def test_dropped_queries_are_reported_and_fixed(ws):
    lad = ladder.build(ws, OPTS)
    kept = lad.kept
    assert (~kept["kept"]).sum() > 0  # 16K cannot hold every domain's gold
    kept_ids = set(kept.query("kept")["qid"])
    for r in lad.rungs:
        assert set(r.qids) <= kept_ids
    assert set(lad.rung("full").qids) == kept_ids
    with pytest.raises(EmbSError, match="gold documents and hard negatives of domain .* more than the 16K base"):
        ladder.build(ws, ladder.LadderOptions(base="16K", domain_sizes=("16K",), strict=True))


def test_same_seed_same_hashes_other_seed_other(ws):
    a = [r.membership_hash for r in ladder.build(ws, OPTS).rungs]
    stored = [r.membership_hash for r in ladder.load(ws).rungs]
    b = [r.membership_hash for r in ladder.build(ws, OPTS).rungs]
    other = ladder.build(ws, ladder.LadderOptions(**{**OPTS.__dict__, "seed": 7}))
    c = [r.membership_hash for r in other.rungs]
    assert a == b == stored
    assert len(other.rung("full").doc_ids) == len(ladder.load(ws).rung("full").doc_ids)  # full: the whole bank
    assert all(x != y for x, y in zip(a, c))  # another seed keeps other queries and samples other documents


def test_load_round_trips_membership(ws):
    built = ladder.build(ws, OPTS)
    loaded = ladder.load(ws)
    assert loaded.names == built.names
    assert [r.domain for r in loaded.rungs] == [r.domain for r in built.rungs]  # shared rungs: None, not NaN
    for x, y in zip(built.rungs, loaded.rungs):
        assert np.array_equal(x.doc_ids, y.doc_ids) and x.qids == y.qids and x.composition == y.composition


def test_other_encoding_counts_once(ws):
    lad = ladder.build(ws, ladder.LadderOptions(**{**OPTS.__dict__, "encoding": "o200k_base"}))
    assert ws.has_table("tokens_o200k_base")
    tok = bank.token_counts(ws, "o200k_base")
    for r in lad.rungs:
        if r.budget is not None:
            assert tok.loc[r.doc_ids].sum() <= r.budget


def test_no_ladder_yet_is_a_clear_error(tmp_path):
    bank.import_path(tmp_path / "ws", "native", make_bank(tmp_path / "b", n_docs=30, n_queries=3))
    with pytest.raises(EmbSError, match="has no ladder yet"):
        ladder.load(Workspace(tmp_path / "ws"))
    with pytest.raises(EmbSError, match="not larger than the reserve"):
        ladder.build(Workspace(tmp_path / "ws"), ladder.LadderOptions(base="1K"))


def test_single_domain_bank_skips_mixed_rungs_with_a_message(tmp_path):
    folder = make_bank(tmp_path / "b", n_docs=200, n_queries=10)
    rows = [json.loads(line) for line in (folder / "queries.jsonl").read_text().splitlines()]
    write_jsonl(folder / "queries.jsonl", [dict(r, domain="medical") for r in rows])
    bank.import_path(tmp_path / "ws", "native", folder)
    lad = ladder.build(Workspace(tmp_path / "ws"), OPTS)
    assert "32K/medical" not in lad.names
    assert any("32K/medical skipped: no other domain's pool to mix in" in m for m in lad.messages)


def test_no_rung_is_built_twice_with_the_same_documents_and_queries(tmp_path, capsys):
    """One domain: the union of the base pools IS the base rung, so no ``shared`` rung beside it (the README's own
    HotpotQA example showed two identical columns); a base that holds the whole bank leaves only the base rung."""
    folder = make_bank(tmp_path / "b", n_docs=200, n_queries=10)
    rows = [json.loads(line) for line in (folder / "queries.jsonl").read_text().splitlines()]
    write_jsonl(folder / "queries.jsonl", [dict(r, domain="medical") for r in rows])
    bank.import_path(tmp_path / "ws", "native", folder)
    w = Workspace(tmp_path / "ws")
    lad = ladder.build(w, OPTS)
    hashes = [r.membership_hash for r in lad.rungs]
    assert len(set(hashes)) == len(hashes), lad.table()
    assert lad.names[0] == "16K/medical" and "shared" not in lad.names and lad.names[-1] == "full"
    absent = {a["rung"]: a for a in lad.absent}
    assert absent["shared"]["reason"] == "not built: same documents and queries as 16K/medical"
    assert absent["shared"]["after"] == "16K/medical"
    assert not any("named 'shared'" in m for m in lad.messages)
    assert "not built: same documents and queries as 16K/medical" in lad.table(absent=True).set_index("rung").loc[
        "shared", "note"]
    stored = ladder.load(w)
    assert stored.names == lad.names and [r.order for r in stored.rungs] == list(range(len(lad.rungs)))
    from emb_s_core.cli import main

    capsys.readouterr()
    assert main(["ladder", "show", "--workspace", str(tmp_path / "ws")]) == 0
    shown = [line.split() for line in capsys.readouterr().out.splitlines()]
    assert ["shared", "absent", "not", "built:", "same", "documents", "and", "queries", "as", "16K/medical"] in shown
    docs = [json.loads(line) for line in (folder / "documents.jsonl").read_text().splitlines()]
    write_jsonl(tmp_path / "one" / "documents.jsonl", [dict(d, domain="medical") for d in docs])
    (tmp_path / "one" / "queries.jsonl").write_text((folder / "queries.jsonl").read_text())
    bank.import_path(tmp_path / "ws1", "native", tmp_path / "one")
    whole = ladder.build(Workspace(tmp_path / "ws1"), ladder.LadderOptions(base="1M", domain_sizes=("1M",)))
    assert whole.names == ["1M/medical"]  # the base holds the whole bank: shared and full would be it again
    assert {a["rung"]: a["reason"] for a in whole.absent} == {
        "shared": "not built: same documents and queries as 1M/medical",
        "full": "not built: same documents and queries as 1M/medical"}


def test_ladder_is_refused_once_the_bank_changes(tmp_path):
    from tests.conftest import native_bank

    bank.import_path(tmp_path / "ws", "native", native_bank(tmp_path / "b1"))
    w = Workspace(tmp_path / "ws")
    ladder.build(w, ladder.LadderOptions(base="2K", domain_sizes=("2K",), reserve=64))
    assert ladder.stale_reason(w) is None
    ladder.load(w)
    docs = [{"doc_id": 50, "text": "Another bank about tides.", "domain": "history"}]
    qs = [{"qid": "other", "text": "tides?", "answer": "x", "ref_ids": [50]}]
    bank.import_path(w, "native", native_bank(tmp_path / "b2", docs, qs), source="more")
    w = Workspace(tmp_path / "ws")
    assert "documents and queries changed" in ladder.stale_reason(w)
    with pytest.raises(EmbSError, match="stale.*ladder build"):
        ladder.load(w)
    assert ladder.load(w, allow_stale=True).names  # pages may still show it, with a warning
    from emb_s_core import evaluate

    with pytest.raises(EmbSError, match="stale"):  # evaluation refuses it before any work
        evaluate.evaluate(w, "bm25", k=1)
    assert Workspace(tmp_path / "ws").version == w.version
    ladder.build(w, ladder.LadderOptions(base="2K", domain_sizes=("2K",), reserve=64))
    assert ladder.stale_reason(Workspace(tmp_path / "ws")) is None


def test_shared_rung_keeps_its_size_name_when_it_holds_that_size(ws):
    lad = ladder.build(ws, ladder.LadderOptions(base="16K", domain_sizes=("16K",), shared_size="48K"))
    assert "48K" in lad.names and "shared" not in lad.names


def test_serialized_64K_rungs_fit_a_64K_window_with_the_localize_prompt(tmp_path):
    """What a long-context model is shown (prompt + [DocID] headers + documents) fits 65,536 tokens."""
    import litellm

    from emb_s_core import localize, protocol

    bank.import_path(tmp_path / "ws", "native", make_bank(tmp_path / "b", n_docs=1200, n_queries=30))
    w = Workspace(tmp_path / "ws")
    lad = ladder.build(w, ladder.LadderOptions(base="64K", domain_sizes=("64K",)))
    docs = protocol.documents_by_id(w)
    prompt = protocol.load_prompt("localize")
    question = "Which of these documents mention w12 and w1999 together, and in which order do they appear?"
    base_rungs = [r for r in lad.rungs if r.kind == "domain"]
    assert len(base_rungs) == 3
    for r in base_rungs:
        messages = localize.messages_for(prompt, question, protocol.context_of(docs, r.doc_ids), 10)
        n = litellm.token_counter(model="gpt-4", messages=messages)  # cl100k_base, with the chat overhead
        assert 60_000 < n <= 65_536, (r.name, n)  # full, and it fits


def test_hard_negative_fill_is_fair_across_queries(tmp_path):
    """With no budget share reserved for hard negatives (``hn_share=0``), every query gets the same share of its
    hard negatives (up to one document), and the same documents whatever the import order."""
    def build(order):
        words = [f"w{i}" for i in range(1000, 2000)]
        docs = [{"doc_id": i, "text": " ".join(words[(i * 7 + j) % 1000] for j in range(200)), "domain": "d"}
                for i in range(400)]
        queries = [{"qid": f"q{j:02d}", "text": "x", "answer": "y", "ref_ids": [j],
                    "hard_negative_ids": list(range(100 + 10 * j, 110 + 10 * j)), "domain": "d"} for j in range(20)]
        folder = tmp_path / f"b{order}"
        write_jsonl(folder / "documents.jsonl", docs)
        write_jsonl(folder / "queries.jsonl", queries if order == "forward" else queries[::-1])
        bank.import_path(tmp_path / f"ws{order}", "native", folder)
        w = Workspace(tmp_path / f"ws{order}")
        lad = ladder.build(w, ladder.LadderOptions(base="24K", domain_sizes=("24K",), reserve=256, hn_share=0.0))
        cov = ladder.hard_negative_coverage(lad, bank.queries(w))
        return cov[cov["rung"] == "24K/d"].set_index("qid")["present"].sort_index()

    forward, backward = build("forward"), build("backward")
    assert 0 < forward.mean() < 10  # the budget holds part of the hard negatives
    assert forward.max() - forward.min() <= 1 and backward.max() - backward.min() <= 1
    assert abs(forward.iloc[:10].mean() - forward.iloc[10:].mean()) <= 1  # first-imported are not favoured
    assert forward.equals(backward)  # ordered by qid before the seeded draw: the import order does not matter
    assert ladder.load(Workspace(tmp_path / "wsforward")).rung("24K/d").membership_hash == \
        ladder.load(Workspace(tmp_path / "wsbackward")).rung("24K/d").membership_hash
    lad = ladder.load(Workspace(tmp_path / "wsforward"))
    summary = lad.rung("24K/d").composition["hard_negative_coverage"]
    assert summary["queries_with_hard_negatives"] == 20 and summary["max"] - summary["min"] <= 0.1


def test_global_rungs_start_above_the_shared_pool(tmp_path):
    """Three 8K pools under an 8K shared size: global injection starts at the first power of two above the
    ~15.6K-token shared pool (32K), never at a rung that cannot hold it (16K used to fail the budget assertion)."""
    bank.import_path(tmp_path / "ws", "native", make_bank(tmp_path / "b", n_docs=60, n_queries=9))
    lad = ladder.build(Workspace(tmp_path / "ws"),
                       ladder.LadderOptions(base="8K", domain_sizes=("8K",), shared_size="8K"))
    shared = next(r for r in lad.rungs if r.kind == "shared")
    glob = [r for r in lad.rungs if r.kind == "global"]
    assert glob and glob[0].name == "32K" and 16 * 1024 - 1024 < shared.n_tokens
    for r in glob:
        assert set(shared.doc_ids) < set(r.doc_ids) and r.n_tokens <= r.budget
    assert ladder.first_global_size(15_000, 1024, 24 * 1024) == 32 * 1024
    assert ladder.first_global_size(63_000, 1024, 512 * 1024) == 1024 * 1024  # 8 × 64K: the paper's 1M
    assert ladder.first_global_size(64_000, 1024, 64 * 1024) == 128 * 1024  # one 64K domain: 128K
