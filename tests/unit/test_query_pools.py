"""Per-query pools (the benign twin's): ``rank_each`` equals each query's pool searched alone, with BM25 statistics
of that pool and zero-score documents filling a short list by smallest id."""
from __future__ import annotations

import numpy as np
import pytest

from emb_s_core import retrievers
from emb_s_core.retrievers.base import QueryPools
from testkit.retrieval_bank import text_workspace

WORDS = ["apple", "pear", "plum", "fig", "kiwi", "lime", "date", "peach"]


@pytest.fixture(scope="module")
def ws(tmp_path_factory):
    rng = np.random.default_rng(1)
    texts = [" ".join(rng.choice(WORDS, size=int(rng.integers(3, 12)))) + f" filler{i}" for i in range(40)]
    texts[7] = "quince quince apple"
    texts[23] = "quince rare"
    return text_workspace(tmp_path_factory.mktemp("pools"), texts)


@pytest.mark.parametrize("spec", ["bm25", "bm25-reference"])
def test_rank_each_equals_each_pool_alone(ws, spec):
    queries = ["quince apple", "plum fig fig", "quince", "nothing matches"]
    base = np.arange(0, 30, dtype=np.int64)
    removed = [np.array([7], np.int64), np.array([], np.int64), np.array([3, 23], np.int64),
               np.array([0, 1], np.int64)]
    added = [np.array([31, 35], np.int64), np.array([39], np.int64), np.array([], np.int64),
             np.array([30], np.int64)]
    qp = QueryPools(base, removed, added)
    r = retrievers.get(spec)
    r.prepare(ws, None)
    k = 12  # more than the documents sharing a word with "quince": the list is filled with zero scores
    got = r.rank_each(queries, {"rung": qp}, k)["rung"]
    for i, q in enumerate(queries):
        pool = qp.pool(i)
        assert not np.isin(removed[i], pool).any() and np.isin(added[i], pool).all()
        alone = retrievers.get(spec)
        alone.prepare(ws, pool)
        want = alone.rank([q], {"p": pool}, k)["p"]
        np.testing.assert_array_equal(got.ids[i], want.ids[0], err_msg=q)
        np.testing.assert_allclose(got.scores[i], want.scores[0], rtol=1e-9, atol=1e-12)
    # the pool's own statistics matter: the same query on the shared membership scores differently
    shared = r.rank([queries[0]], {"rung": base}, k)["rung"]
    assert not np.allclose(shared.scores[0][:2], got.scores[0][:2])
