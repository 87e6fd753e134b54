"""hybrid (reciprocal-rank fusion) and rerank (CrossEncoder over a base retriever's top-N).

No trained reranker ships offline: the rerank test builds a CrossEncoder from the offline MiniLM's BERT weights
with a fresh (seeded) classification head. Its relevance judgements mean nothing; the test checks the plumbing:
candidates come from the base top-N, their order follows the cross-encoder's scores, pairs are scored once.
"""
from __future__ import annotations

import numpy as np
import pytest

from emb_s_core import ladder, retrievers
from emb_s_core.errors import EmbSError
from emb_s_core.retrievers import embedders
from emb_s_core.retrievers.base import Ranking
from emb_s_core.retrievers.hybrid import Hybrid
from testkit.retrieval_bank import copy_workspace, template


class Fixed:
    """A stand-in base whose rankings are given (to hand-check the fusion formula)."""

    def __init__(self, ids):
        self.ids = np.asarray(ids)

    def rank(self, queries, pools, k):
        return {name: Ranking(self.ids[None, :k], np.zeros((1, min(k, len(self.ids))))) for name in pools}


def test_rrf_hand_computed():
    h = Hybrid("hybrid:a+b", [Fixed([3, 1, 2]), Fixed([2, 3, 0])])
    out = h.rank(["q"], {"p": np.array([0, 1, 2, 3])}, 4)["p"]
    expected = {3: 1 / 61 + 1 / 62, 2: 1 / 63 + 1 / 61, 1: 1 / 62, 0: 1 / 63}
    assert out.ids[0].tolist() == [3, 2, 1, 0]
    np.testing.assert_allclose(out.scores[0], [expected[d] for d in [3, 2, 1, 0]])


@pytest.fixture(scope="module")
def ws(tmp_path_factory):
    return copy_workspace(template(tmp_path_factory), tmp_path_factory.mktemp("fusion") / "ws")


def test_hybrid_of_real_retrievers(ws):
    lad = ladder.load(ws)
    h = retrievers.get("hybrid:bm25+dense:minilm-l3")
    h.check()
    h.prepare(ws, None)
    pools = {r.name: r.doc_ids for r in lad.rungs}
    out = h.rank(["When did Entity1 found the order of Q0fact?"], pools, 10)
    bm, de = (p.rank(["When did Entity1 found the order of Q0fact?"], pools, 100) for p in h.parts)
    for name, r in out.items():
        assert set(r.ids[0]) <= set(bm[name].ids[0]) | set(de[name].ids[0])
        assert np.all(np.diff(r.scores[0]) <= 0)
    assert h.config()["parts"][1]["model"] == "paraphrase-MiniLM-L3-v2"


@pytest.fixture(scope="module")
def cross_encoder(tmp_path_factory):
    import torch
    from sentence_transformers import CrossEncoder

    torch.manual_seed(0)
    ce = CrossEncoder(str(embedders.minilm_l6_path()), num_labels=1, device="cpu")
    folder = tmp_path_factory.mktemp("ce") / "tiny-ce"
    ce.save(str(folder))
    return folder


def test_rerank_plumbing(ws, cross_encoder):
    lad = ladder.load(ws)
    spec = f"rerank:{cross_encoder}:bm25"
    r = retrievers.get(spec)
    r.depth = 20
    r.check()
    r.prepare(ws, None)
    from emb_s_core.retrievers.rerank import _load_cross_encoder

    ce = _load_cross_encoder(str(cross_encoder))
    pairs = []
    original = ce.predict
    ce.predict = lambda p, **kw: pairs.extend(p) or original(p, **kw)
    try:
        q = "When did Entity1 found the order of Q0fact?"
        pools = {n: lad.rung(n).doc_ids for n in ("6K", "full")}
        out = r.rank([q], pools, 10)
    finally:
        ce.predict = original
    assert len(pairs) == len({t for _, t in pairs})  # each (query, document) pair scored once across rungs
    base = r.base.rank([q], pools, 20)
    for name in pools:
        head = base[name].ids[0]
        texts = [r.texts[i] for i in r.positions(head)]
        s = np.asarray(original([(q, t) for t in texts]))
        expect = head[np.lexsort((head, -s))][:10]
        np.testing.assert_array_equal(out[name].ids[0], expect)
    again = r.rank([q], pools, 10)
    np.testing.assert_array_equal(again["full"].ids, out["full"].ids)


def test_missing_reranker_is_a_clear_error(tmp_path):
    with pytest.raises(EmbSError, match="reranker model .* not found"):
        retrievers.get(f"rerank:{tmp_path / 'nope'}:bm25").check()
