"""Per-query pools (the benign twin's): ``rank_each`` equals each query's pool searched alone, with BM25 statistics
of that pool and zero-score documents filling a short list by smallest id."""
from __future__ import annotations

import numpy as np
import pytest

from emb_s_core import retrievers
from emb_s_core.retrievers.base import QueryPools
from testkit.retrieval_bank import text_workspace
from tests.unit.test_retrievers_fusion import cross_encoder  # noqa: F401 - the fixture, shared

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


@pytest.fixture(scope="module")
def ce_spec(cross_encoder):
    return f"rerank:{cross_encoder}:bm25"


@pytest.mark.parametrize("spec", ["bm25", "dense:minilm-static", "hybrid:bm25+dense:minilm-static", "rerank"])
def test_pools_smaller_than_the_depth_asked(ws, spec, request):
    """Per-query pools of different sizes, all smaller than K (and than a fusion's or reranker's depth of 100): each
    query's list is its whole pool, rows of different lengths stacked once by ``base.stacked``, and equal to that
    pool searched alone (issue 31: a hybrid on small twin pools crashed here, 54 vs 49 documents)."""
    if spec == "rerank":
        spec = request.getfixturevalue("ce_spec")
    queries = ["quince apple", "plum fig fig", "quince"]
    base = np.arange(0, 24, dtype=np.int64)
    removed = [np.array([7], np.int64), np.array([0, 1, 2, 3, 4], np.int64), np.array([], np.int64)]
    added = [np.array([], np.int64), np.array([39], np.int64), np.array([30, 31, 35], np.int64)]
    qp = QueryPools(base, removed, added)
    r = retrievers.get(spec)
    r.check()
    r.prepare(ws, None)
    got = r.rank_each(queries, {"rung": qp}, 100)["rung"]
    sizes = [len(qp.pool(i)) for i in range(len(queries))]
    assert len(set(sizes)) == 3 and max(sizes) < 100
    assert got.lengths is not None and got.lengths.tolist() == sizes
    for i, q in enumerate(queries):
        pool = qp.pool(i)
        ids, scores = got.row(i)
        assert sorted(ids.tolist()) == pool.tolist()  # the whole pool, each document once, no padding
        want_ids, want_scores = r.rank([q], {"p": pool}, 100)["p"].row(0)  # the pool searched alone
        np.testing.assert_array_equal(ids, want_ids, err_msg=q)
        np.testing.assert_allclose(scores, want_scores, rtol=1e-5, atol=1e-6)


def test_stacked_pads_rows_and_keeps_their_lengths():
    from emb_s_core.retrievers.base import PAD_ID, Ranking, stacked

    a = Ranking(np.array([[-5, 3, 9]]), np.array([[3.0, 2.0, 1.0]]))  # a negative doc id is an id, not padding
    b = Ranking(np.array([[4, -1]]), np.array([[2.0, 0.5]]))
    c = stacked([a, b, stacked([b, Ranking(np.array([[8]]), np.array([[1.0]]))])])
    assert c.ids.shape == (4, 3) and c.lengths.tolist() == [3, 2, 2, 1]
    assert c.row(0)[0].tolist() == [-5, 3, 9] and c.row(1)[0].tolist() == [4, -1] and c.row(3)[0].tolist() == [8]
    assert c.ids[3, 1] == PAD_ID and np.isnan(c.scores[3, 1])
    assert [len(ids) for ids, _ in c.rows()] == [3, 2, 2, 1]
    same = stacked([a, a])
    assert same.lengths is None and same.ids.shape == (2, 3)  # equal lengths: a plain matrix, as before


def test_fusion_reads_ragged_part_lists_without_padding():
    """A fusion whose part returns rows of different lengths (a stacked ranking) fuses each row's own list only:
    the padding never counts as a document (a negative doc id is a real one here)."""
    from emb_s_core.retrievers.base import Ranking, stacked
    from emb_s_core.retrievers.hybrid import Hybrid

    class Given:
        spec = "given"

        def __init__(self, rows):
            self.rows = rows

        def rank(self, queries, pools, k):
            return {name: stacked([Ranking(np.array([r[:k]]), np.zeros((1, len(r[:k])))) for r in self.rows])
                    for name in pools}

    pool = np.array([-3, 0, 1, 2, 5], np.int64)
    a, b = Given([[-3, 0, 1], [5]]), Given([[1, -3], [2, 5, 0, 1]])
    both = Hybrid("hybrid:a+b", [a, b]).rank(["q0", "q1"], {"p": pool}, 5)["p"]
    for i in range(2):
        alone = Hybrid("hybrid:a+b", [Given([a.rows[i]]), Given([b.rows[i]])]).rank([f"q{i}"], {"p": pool}, 5)["p"]
        np.testing.assert_array_equal(both.row(i)[0], alone.row(0)[0])
        np.testing.assert_allclose(both.row(i)[1], alone.row(0)[1])
    s = dict(zip(*both.row(1)))
    assert s[5] == 1 / 61 + 1 / 62 and s[-3] == 0.0  # q1: 5 is first in a's list and second in b's; -3 in neither
