"""The retriever protocol: every family answers ``check`` and ``can`` (optional abilities are declared, never probed
with hasattr / isinstance), and callers that need an ability refuse a retriever without it, by name."""
from __future__ import annotations

import pytest

from emb_s_core import collide, retrievers
from emb_s_core.errors import EmbSError
from emb_s_core.retrievers.base import EMBEDDINGS, Retriever

SPECS = ["bm25", "bm25-reference", "dense:minilm-l3", "hybrid:bm25+dense:minilm-l3"]


@pytest.mark.parametrize("spec", SPECS)
def test_every_family_follows_the_protocol(spec):
    r = retrievers.get(spec)
    assert isinstance(r, Retriever)
    assert r.can(EMBEDDINGS) == spec.startswith("dense:")  # fusion scores are ranks, not similarities
    r.check()  # no model missing offline: returns quietly


def test_a_caller_that_needs_embeddings_names_the_spec():
    with pytest.raises(EmbSError, match="collision testing needs a dense embedder, got 'bm25'"):
        collide.dense_retriever("bm25")
    with pytest.raises(EmbSError, match="needs a dense embedder"):
        collide.dense_retriever("hybrid:bm25+dense:minilm-l3")


def test_the_default_check_and_capabilities():
    class Plain(Retriever):
        spec = "plain"

    assert Plain().check() is None and not Plain().can(EMBEDDINGS) and Plain().capabilities == frozenset()
