"""Dense retrievers: the offline MiniLMs, MaxP chunking, the content-hash embedding cache, model errors."""
from __future__ import annotations

import numpy as np
import pytest

from emb_s_core import retrievers
from emb_s_core.errors import EmbSError
from emb_s_core.retrievers import embedders
from emb_s_core.retrievers.dense import cache_table
from testkit.retrieval_bank import text_workspace

TEXTS = [
    "Paris has been the capital of France since 987.",
    "Berlin is the capital of Germany.",
    "Insulin regulates blood sugar in the body.",
    "The treaty ended the war between the two empires.",
    # a long document whose answer sits past the model's 256-token window
    "Gardening notes. " + " ".join(["Tomatoes need sun and water every day in summer."] * 40)
    + " The lighthouse keeper of Alexandria was named Sostratus.",
]


@pytest.fixture(scope="module")
def ws(tmp_path_factory):
    return text_workspace(tmp_path_factory.mktemp("dense"), TEXTS)


def test_minilm_l6_matches_a_bare_sentence_transformer(ws):
    r = retrievers.get("dense:minilm-l6")
    r.prepare(ws, None)
    model = embedders._load_st(str(embedders.minilm_l6_path()))
    bare = model.encode(TEXTS[:4], normalize_embeddings=True)
    np.testing.assert_allclose(r.vectors[:4], bare, atol=1e-5)
    scores = r.score(["What is the capital of Germany?"])
    assert scores.shape == (1, 5) and int(np.argmax(scores)) == 1


def test_maxp_chunking_finds_evidence_past_the_window(ws):
    r = retrievers.get("dense:minilm-l6")
    r.prepare(ws, None)
    assert r.chunk_size == 256 and r.multi_chunk
    assert len(r.vectors) > len(TEXTS)  # the long document has several chunks
    q = "Who was the lighthouse keeper of Alexandria?"
    assert int(np.argmax(r.score([q]))) == 4
    # the document's score is its best chunk's score
    e = r.embedder
    pieces = e.chunks([TEXTS[4]], 256)[0]
    assert len(pieces) > 1 and all(len(e._fast_tokenizer().encode(p, add_special_tokens=False)) <= 254 for p in pieces)
    best = max(float((e.encode([q]) @ e.encode([p]).T)[0, 0]) for p in pieces)
    assert r.score([q])[0, 4] == pytest.approx(best, abs=1e-5)
    # chunk size is part of the identity and of the cache key
    small = retrievers.get("dense:minilm-l6", chunk_size=64)
    assert small.config()["chunk_size"] == 64 and r.config()["chunk_size"] == 256
    assert cache_table("st:all-MiniLM-L6-v2", 64) != cache_table("st:all-MiniLM-L6-v2", 256)


def test_second_prepare_embeds_nothing(tmp_path):
    ws = text_workspace(tmp_path, TEXTS[:4] + [TEXTS[0]])  # a duplicate text is embedded once
    calls = []

    def counting(r):
        original = r.embedder.encode
        r.embedder.encode = lambda texts: calls.append(len(texts)) or original(texts)
        return r

    first = counting(retrievers.get("dense:minilm-l6"))
    first.prepare(ws, None)
    assert sum(calls) == 4 and first.embedded == 4
    version = ws.version
    calls.clear()
    second = counting(retrievers.get("dense:minilm-l6"))
    second.prepare(ws, None)
    assert calls == [] and second.embedded == 0 and ws.version == version
    np.testing.assert_array_equal(first.vectors, second.vectors)


def test_minilm_l3_onnx_mean_pooling(ws):
    r = retrievers.get("dense:minilm-l3")
    r.prepare(ws, None)
    e = r.embedder
    assert e.max_tokens == 128 and r.vectors.shape[1] == 384
    np.testing.assert_allclose(np.linalg.norm(r.vectors, axis=1), 1.0, atol=1e-5)
    # the graph's own pooled output (2-D, 384 wide) agrees with our masked mean pooling
    enc = e.tokenizer.encode_batch(TEXTS[:2])
    ids = np.array([x.ids for x in enc])
    mask = np.array([x.attention_mask for x in enc])
    outs = e.session.run(None, {"input_ids": ids, "attention_mask": mask})
    pooled = next(o for o in outs if o.ndim == 2 and o.shape[1] == 384)
    pooled = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
    np.testing.assert_allclose(e.encode(TEXTS[:2]), pooled, atol=1e-5)
    assert int(np.argmax(r.score(["What is the capital of Germany?"]))) == 1
    # a genuinely different model from L6
    l6 = retrievers.get("dense:minilm-l6")
    l6.prepare(ws, None)
    assert not np.allclose(l6.score(["capital"]), r.score(["capital"]), atol=1e-3)


def test_missing_model_is_a_clear_error(tmp_path):
    r = retrievers.get(f"dense:{tmp_path / 'no-such-model'}")
    with pytest.raises(EmbSError, match="embedding model .*no-such-model.* not found"):
        r.check()
    (tmp_path / "empty-model").mkdir()
    with pytest.raises(EmbSError, match="cannot load embedding model"):
        retrievers.get(f"dense:{tmp_path / 'empty-model'}").check()


def test_use_threads_keeps_the_vectors():
    """A Ray actor computes on its share of the cores; the vectors do not change with the thread count."""
    import torch

    texts = ["The 2014 trial of zeloritinib at the Kessingford site.", "A separate trial took place in 2015."] * 20
    onnx = embedders.OnnxMiniLMEmbedder()  # its own instance: the retriever's cached one stays as it is
    expected = onnx.encode(texts)
    onnx.use_threads(1)
    assert onnx.session.get_session_options().intra_op_num_threads == 1
    np.testing.assert_allclose(onnx.encode(texts), expected, atol=1e-5)
    st = retrievers.get("dense:minilm-l6").embedder
    expected, threads = st.encode(texts), torch.get_num_threads()
    try:
        st.use_threads(1)
        assert torch.get_num_threads() == 1
        np.testing.assert_allclose(st.encode(texts), expected, atol=1e-5)
    finally:
        torch.set_num_threads(threads)
