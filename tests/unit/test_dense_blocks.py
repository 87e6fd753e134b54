"""Dense scoring in blocks streamed from the Lance cache under a memory cap equals one-shot exact scoring; float16
storage is filled from the float32 cache and agrees with it; bad caps are clear errors."""
from __future__ import annotations

import numpy as np
import pytest

from emb_s_core import bank, ladder, retrievers
from emb_s_core.errors import EmbSError
from emb_s_core.retrievers.base import topk
from emb_s_core.retrievers.blocks import MIN_CAP, parse_cap
from emb_s_core.retrievers.dense import load_vectors
from testkit.retrieval_bank import copy_workspace, template

SPEC = "dense:minilm-l3"
CHUNK = 16  # many chunks per document, so a document's chunks straddle blocks


@pytest.fixture(scope="module")
def ws(tmp_path_factory):
    return copy_workspace(template(tmp_path_factory), tmp_path_factory.mktemp("blocks") / "ws")


def exact(r, queries: list[str]) -> np.ndarray:
    """Today's unbounded scoring: every vector in memory, one matrix product, MaxP by reduceat."""
    vectors, owner = load_vectors(r._ws, r.table, r.hashes)
    s = r.embedder.encode(queries) @ vectors.T
    starts = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
    return np.maximum.reduceat(s, starts, axis=1)


def test_block_scoring_under_a_tiny_cap_equals_exact_scoring(ws):
    big = retrievers.get(SPEC, chunk_size=CHUNK)
    big.prepare(ws, None)
    small = retrievers.get(SPEC, chunk_size=CHUNK, memory_cap=MIN_CAP)
    small.prepare(ws, None)
    assert small.embedded == 0  # the second retriever reads the same cache
    assert big.scorer.resident is not None and small.scorer.resident is None
    queries = bank.queries(ws)["text"].tolist()
    reference = exact(big, queries)
    streamed = small.score(queries)
    rows_per_block = small.scorer.block_rows(small.scorer.query_rows(len(queries)))
    assert small.scorer.blocks_read > 10 and rows_per_block < len(small.vectors) / 10
    assert small.scorer.query_rows(len(queries)) < len(queries)  # queries were split into passes too
    np.testing.assert_allclose(streamed, reference, atol=1e-6)
    np.testing.assert_allclose(big.score(queries), reference, atol=1e-6)
    lad = ladder.load(ws)
    pools = {r.name: r.doc_ids for r in lad.rungs}
    got = small.rank(queries, pools, 10)
    for name, ids in pools.items():
        want = topk(reference[:, big.positions(ids)], ids, 10)
        np.testing.assert_array_equal(got[name].ids, want.ids)
        np.testing.assert_allclose(got[name].scores, want.scores, atol=1e-6)


def test_float16_storage_is_converted_from_float32_and_agrees(ws):
    f32 = retrievers.get(SPEC, chunk_size=CHUNK)
    f32.prepare(ws, None)
    f16 = retrievers.get(SPEC, chunk_size=CHUNK, vector_dtype="float16", memory_cap=MIN_CAP)
    f16.prepare(ws, None)
    assert f16.embedded == 0 and f16.table != f32.table  # converted from the float32 cache, not re-embedded
    assert ws.table(f16.table).schema.field("vector").type.value_type == "halffloat"
    assert f16.config()["vector_dtype"] == "float16" and "vector_dtype" not in f32.config()
    queries = bank.queries(ws)["text"].tolist()
    a, b = f32.score(queries), f16.score(queries)
    assert np.abs(a - b).max() < 5e-3 and not np.array_equal(a, b)
    top_a = topk(a, f32.doc_ids, 10).ids
    top_b = topk(b, f16.doc_ids, 10).ids
    overlap = np.mean([len(set(x) & set(y)) / 10 for x, y in zip(top_a, top_b)])
    assert overlap >= 0.9


def test_bad_memory_caps_and_dtypes_are_errors():
    assert parse_cap("256M") == 256 << 20 and parse_cap("2GiB") == 2 << 30 and parse_cap(1 << 20) == 1 << 20
    assert parse_cap(None) >= MIN_CAP
    for bad in ("lots", "12Q", "1K", 10):
        with pytest.raises(EmbSError):
            parse_cap(bad)
    with pytest.raises(EmbSError, match="vector dtype"):
        retrievers.get(SPEC, vector_dtype="int8")


def test_default_cap_follows_the_environment(monkeypatch):
    monkeypatch.setenv("EMB_S_DENSE_MEMORY_CAP", "300M")
    assert parse_cap(None) == 300 << 20
    monkeypatch.setenv("EMB_S_DENSE_MEMORY_CAP", "nonsense")
    with pytest.raises(EmbSError, match="memory cap"):
        parse_cap(None)


def test_cli_bad_memory_cap_exits_2_and_writes_nothing(ws, capsys):
    from emb_s_core.cli import main

    version = ws.version
    assert main(["eval", "--workspace", str(ws.path), "-r", SPEC, "--memory-cap", "lots"]) == 2
    err = capsys.readouterr().err
    assert "memory cap 'lots'" in err and len(err.strip().splitlines()) == 1
    ws.refresh()
    assert ws.version == version
