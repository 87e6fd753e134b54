"""Sparse BM25: hand-computed scores, per-rung statistics, and identical top-10 to rank-bm25 (epsilon=0)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from emb_s_core import ladder, retrievers
from emb_s_core.errors import EmbSError
from emb_s_core.retrievers.text import tokenize
from testkit.retrieval_bank import copy_workspace, template, text_workspace


def test_tokenize_lowercases_splits_and_drops_stopwords():
    assert tokenize("The Capital of FRANCE, since 987!") == ["capital", "france", "since", "987"]


def test_hand_computed_scores_and_per_rung_idf(tmp_path):
    texts = ["apple banana", "cherry banana banana", "durian", "elder fig"]
    ws = text_workspace(tmp_path, texts)
    r = retrievers.get("bm25")
    r.prepare(ws, None)
    everything = np.arange(4)
    got = r.rank(["apple banana"], {"all": everything, "two": np.array([0, 1])}, k=4)
    # pool of 4: df(apple)=1, df(banana)=2 → idf(banana)=ln(2.5/2.5)=0; avgdl=(2+3+1+2)/4=2
    k1, b = 1.5, 0.75
    idf_apple = math.log((4 - 1 + 0.5) / (1 + 0.5))
    expected = idf_apple * 1 * (k1 + 1) / (1 + k1 * (1 - b + b * 2 / 2))
    assert got["all"].ids[0, 0] == 0
    assert got["all"].scores[0, 0] == pytest.approx(expected, rel=1e-12)
    # pool of 2 (the rung's own statistics): df(apple)=1 → idf=ln(1.5/1.5)=0, df(banana)=2 → negative → 0
    assert np.all(got["two"].scores == 0)
    # ties (all zero) go to the smaller doc id
    assert got["two"].ids[0].tolist() == [0, 1]


def test_top10_identical_to_rank_bm25_on_every_rung(tmp_path_factory, tmp_path):
    ws = copy_workspace(template(tmp_path_factory), tmp_path / "ws")
    lad = ladder.load(ws)
    from emb_s_core import bank

    queries = bank.queries(ws)["text"].tolist() + ["entity ledger court", "vaccine battle", "unknownword"]
    sparse, ref = retrievers.get("bm25"), retrievers.get("bm25-reference")
    sparse.prepare(ws, None)
    ref.prepare(ws, None)
    pools = {r.name: r.doc_ids for r in lad.rungs}
    a, b = sparse.rank(queries, pools, 10), ref.rank(queries, pools, 10)
    for name in pools:
        np.testing.assert_array_equal(a[name].ids, b[name].ids, err_msg=name)
        np.testing.assert_allclose(a[name].scores, b[name].scores, rtol=1e-9, atol=1e-12)
    # per-rung statistics are not a mask over one index: the small rung's scores differ from the full pool's
    small = lad.rungs[0]
    full_scores = sparse.rank(queries[:1], {"full": lad.rung("full").doc_ids}, 5)["full"].scores
    assert not np.allclose(a[small.name].scores[0, :5], full_scores[0])


def test_preparing_one_small_rung_reads_only_its_documents(tmp_path_factory, tmp_path):
    """``eval --rungs`` on a small rung: prepare reads that rung's rows, not every text of the bank, and ranks as
    the prepare over the whole bank does."""
    ws = copy_workspace(template(tmp_path_factory), tmp_path / "ws")
    small = ladder.load(ws).rungs[0]
    whole, part = retrievers.get("bm25"), retrievers.get("bm25")
    whole.prepare(ws, None)
    part.prepare(ws, small.doc_ids)
    n_bank = len(whole.doc_ids)
    assert whole.rows_read == n_bank and part.rows_read == len(small.doc_ids) < n_bank / 2
    queries = ["entity ledger court", "vaccine battle"]
    a, b = whole.rank(queries, {small.name: small.doc_ids}, 10), part.rank(queries, {small.name: small.doc_ids}, 10)
    np.testing.assert_array_equal(a[small.name].ids, b[small.name].ids)
    np.testing.assert_allclose(a[small.name].scores, b[small.name].scores, rtol=1e-12)


def test_unknown_and_malformed_specs_are_clear_errors():
    with pytest.raises(EmbSError, match="unknown retriever 'bm42'"):
        retrievers.get("bm42")
    with pytest.raises(EmbSError, match="bm25 takes no argument"):
        retrievers.get("bm25:x")
    with pytest.raises(EmbSError, match="cannot read hybrid spec"):
        retrievers.get("hybrid:bm25")
    with pytest.raises(EmbSError, match="cannot read rerank spec"):
        retrievers.get("rerank:onlymodel")


def test_compact_term_frequencies_and_no_per_rung_weight_cache(tmp_path):
    from emb_s_core import bank
    from testkit import write_jsonl

    # ids out of order in the file: the matrix rows must still follow sorted doc ids
    docs = [{"doc_id": 9, "text": "zebra zebra stripes"}, {"doc_id": 2, "text": "lion mane"},
            {"doc_id": 5, "text": "zebra crossing road"}, {"doc_id": 1, "text": "eagle wings " * 3}]
    write_jsonl(tmp_path / "bank" / "documents.jsonl", docs)
    write_jsonl(tmp_path / "bank" / "queries.jsonl", [{"qid": "q", "text": "x", "answer": "y", "ref_ids": [1]}])
    bank.import_path(tmp_path / "ws", "native", tmp_path / "bank")
    from emb_s_core.store import Workspace

    r = retrievers.get("bm25")
    r.prepare(Workspace(tmp_path / "ws"), None)
    assert r.doc_ids.tolist() == [1, 2, 5, 9] and r.lengths.tolist() == [6, 2, 3, 3]
    assert r.tf.dtype == np.uint16 and r.tf.indices.dtype == np.int32
    assert r.tf[3, r.vocab["zebra"]] == 2 and r.tf[0, r.vocab["eagle"]] == 3
    got = r.rank(["stripes", "crossing", "eagle", "lion"], {"all": r.doc_ids, "pair": np.array([5, 9])}, k=1)
    assert got["all"].ids[:, 0].tolist() == [9, 5, 1, 2]
    # the pair's own statistics: a word in one of two documents has idf ln(1.5/1.5) = 0, so all tie at 0
    assert got["pair"].ids[:, 0].tolist() == [5, 5, 5, 5] and not got["pair"].scores.any()
    # the per-rung state is one column map, two numbers and the weights of the queried terms only, not a weight matrix
    queried = [r.vocab[w] for w in ("stripes", "crossing", "eagle", "lion")]
    assert all(len(state) == 4 and state[0].dtype == np.int32 for state in r._pools.values())
    assert all(state[3].used <= r.tf[:, queried].nnz for state in r._pools.values())
    assert all((state[3].starts >= 0).sum() == len(queried) for state in r._pools.values())
    assert len(r._pools) == 2


def test_term_frequency_columns_equal_csr_to_csc():
    """The CSC filled batch by batch equals building the CSR of all rows and converting it (what it replaces)."""
    from scipy import sparse

    from emb_s_core.retrievers.bm25 import _columns

    rng = np.random.default_rng(0)
    n_terms, cols, tfs, per_row = 300, [], [], []
    for n_rows in (5, 1, 40, 0, 17):
        counts = rng.integers(0, 12, n_rows)
        rows = [np.sort(rng.choice(n_terms, k, replace=False)) for k in counts]
        cols.append(np.concatenate(rows).astype(np.int32) if rows else np.empty(0, np.int32))
        tfs.append(rng.integers(1, 9, int(counts.sum())).astype(np.uint16))
        per_row.append(counts)
    indptr = np.concatenate([[0], np.cumsum(np.concatenate(per_row))])
    expected = sparse.csr_matrix((np.concatenate(tfs), np.concatenate(cols), indptr),
                                 shape=(len(indptr) - 1, n_terms)).tocsc()
    got = _columns([c.copy() for c in cols], [t.copy() for t in tfs], per_row, n_terms)
    assert got.shape == expected.shape and got.dtype == np.uint16
    expected.sort_indices()
    np.testing.assert_array_equal(got.indptr, expected.indptr)
    np.testing.assert_array_equal(got.indices, expected.indices)
    np.testing.assert_array_equal(got.data, expected.data)


def test_ties_across_the_cut_keep_the_smaller_doc_ids(tmp_path):
    """60 identical documents (of 215: idf > 0) tie for every place: the compiled kernel keeps an arbitrary K + slack of them, so the
    exact order (smaller doc id first) must come from re-scoring those queries in full; zero scores pad by id."""
    texts = [f"filler{i} words{i}" for i in range(150)] + ["apple banana"] * 60 + ["banana cherry"] * 5
    ws = text_workspace(tmp_path, texts)
    sparse, ref = retrievers.get("bm25"), retrievers.get("bm25-reference")
    sparse.prepare(ws, None)
    ref.prepare(ws, None)
    pools = {"all": np.arange(len(texts)), "half": np.arange(0, len(texts), 2)}
    queries = ["apple", "banana cherry", "apple cherry", "filler3 nothing"]
    for k in (10, 80):
        a, b = sparse.rank(queries, pools, k), ref.rank(queries, pools, k)
        for name in pools:
            np.testing.assert_array_equal(a[name].ids, b[name].ids, err_msg=f"{name} k={k}")
            np.testing.assert_allclose(a[name].scores, b[name].scores, rtol=1e-9, atol=1e-12)
    assert sparse.rank(["apple"], {"all": pools["all"]}, 10)["all"].ids[0].tolist() == list(range(150, 160))


@pytest.mark.parametrize("n_docs, density", [(500, 0.3), (20000, 0.01)])
def test_compiled_kernel_keeps_the_m_best_of_every_query(n_docs, density, monkeypatch):
    """Both ways the kernel selects (a query reaching much of the pool scans its score row by blocks; a sparse one
    visits the documents it touched) keep the m best, and top_scores orders them as topk does, ties included."""
    from scipy import sparse as sp

    from emb_s_core.retrievers import bm25
    from emb_s_core.retrievers.bm25 import TIE_SLACK, top_scores
    from emb_s_core.retrievers.bm25_kernel import DENSE, top_m
    from emb_s_core.retrievers.base import topk

    rng = np.random.default_rng(4)
    q = sp.random(40, 30, density=0.15, format="csr", random_state=5, data_rvs=lambda s: rng.integers(1, 3, s) * 1.0)
    # weights on a coarse grid: many exact ties, some across the cut at k
    w = sp.random(30, n_docs, density=density, format="csr", random_state=6,
                  data_rvs=lambda s: rng.integers(1, 6, s) / 4)
    postings = np.array([np.diff(w.indptr)[q.indices[q.indptr[i]:q.indptr[i + 1]]].sum() for i in range(40)])
    dense_rows = postings * DENSE >= n_docs
    assert dense_rows.all() if n_docs == 500 else not dense_rows.any()
    dense = (q @ w).toarray()
    m = 7
    cols, vals, counts = np.zeros((40, m), np.int64), np.zeros((40, m)), np.zeros(40, np.int64)
    indptr = w.indptr.astype(np.int64)
    top_m(q.indptr.astype(np.int64), q.indices.astype(np.int32), q.data, indptr[:-1], indptr[1:],
          w.indices.astype(np.int32), w.data, n_docs, m, cols, vals, counts)
    for i in range(40):
        positive = np.sort(dense[i][dense[i] > 0])[::-1]
        assert counts[i] == min(m, len(positive))
        np.testing.assert_allclose(np.sort(vals[i, :counts[i]])[::-1], positive[:m], rtol=1e-12)
        np.testing.assert_allclose(dense[i, cols[i, :counts[i]]], vals[i, :counts[i]], rtol=1e-12)
        assert len(set(cols[i, :counts[i]].tolist())) == counts[i]
    ids = np.arange(1000, 1000 + n_docs) * 3
    rescored = []  # queries with more ties at the cut than the kernel keeps are scored in full
    full = bm25.topk_sparse
    monkeypatch.setattr(bm25, "topk_sparse", lambda s, *a: rescored.append(s.shape[0]) or full(s, *a))
    for k in (1, 10, 60):
        got, want = top_scores(q, w, ids, k), topk(dense, ids, k)
        np.testing.assert_array_equal(got.ids, want.ids, err_msg=f"k={k}")
        np.testing.assert_array_equal(got.scores, want.scores, err_msg=f"k={k}")
    assert TIE_SLACK > 0 and sum(rescored) > 0


def test_kernel_orders_by_the_same_rounding_as_numpy_near_every_rounding_boundary():
    """top_k rounds inside the kernel (the multiply, round-half-even and divide of ``np.round``): scores a hair either
    side of a rounding step, and on the half step, order as ``topk`` (NumPy) orders them, to the bit, with every
    candidate kept (m = n: nothing is handed to the full rescoring, so the kernel's own order is what is checked);
    and through ``top_scores`` (m = k + slack, the rarest term's floor) the lists are the same."""
    from scipy import sparse as sp

    from emb_s_core.retrievers.base import topk
    from emb_s_core.retrievers.bm25 import top_scores
    from emb_s_core.retrievers.bm25_kernel import top_k

    rng = np.random.default_rng(7)
    n_docs, n_q = 400, 30
    steps = 1.0 + rng.integers(0, 40, n_docs) / 1e6  # scores on the rounding grid, ten documents a step ...
    nudge = rng.choice([-1e-12, -5e-7, 0.0, 5e-7, 1e-12, 4.999999e-7], n_docs)  # ... a hair off, on the half step
    # one term holds every document (the dense scan); a second, rarer one (40 postings) sets the first floor
    rare = rng.choice(n_docs, 40, replace=False)
    rows = np.r_[np.zeros(n_docs, int), np.ones(40, int)]
    w = sp.csr_matrix((np.r_[steps + nudge, rng.integers(1, 4, 40) / 8], (rows, np.r_[np.arange(n_docs), rare])),
                      shape=(2, n_docs))
    q = sp.csr_matrix(np.column_stack([np.ones(n_q), rng.integers(0, 3, n_q)]).astype(float))
    dense = (q @ w).toarray()
    ids = rng.permutation(n_docs).astype(np.int64) * 7 + 3
    indptr = w.indptr.astype(np.int64)
    for k in (1, 5, 25, 60):
        want = topk(dense, ids, k)
        got_ids, got_scores, unsure = np.empty((n_q, k), np.int64), np.zeros((n_q, k)), np.empty(n_q, bool)
        top_k(q.indptr.astype(np.int64), q.indices.astype(np.int32), q.data, indptr[:-1], indptr[1:],
              w.indices.astype(np.int32), w.data, n_docs, n_docs, ids, k, 1e6, 1e-6, got_ids, got_scores, unsure)
        np.testing.assert_array_equal(got_ids, want.ids, err_msg=f"k={k}")
        np.testing.assert_array_equal(got_scores, want.scores, err_msg=f"k={k}")
        assert not unsure.any()
        got = top_scores(q, w, ids, k)
        np.testing.assert_array_equal(got.ids, want.ids, err_msg=f"k={k}")
        np.testing.assert_array_equal(got.scores, want.scores, err_msg=f"k={k}")


def test_rankings_bit_identical_to_the_numpy_formula(tmp_path):
    """Every pool's top-k (ids and scores, to the bit) equals the module's formula evaluated densely in NumPy and
    ordered by ``topk``: the compiled weights, accumulation, selection and ordering change nothing. Duplicated
    documents tie exactly (across the cut too), short queries leave lists to pad, a tiny pool floors idf at 0."""
    from emb_s_core.retrievers.base import topk
    from emb_s_core.retrievers.bm25 import B, K1

    rng = np.random.default_rng(11)
    vocab = [f"w{i}" for i in range(80)]
    zipf = 1 / np.arange(1, 81)
    texts = [" ".join(rng.choice(vocab, rng.integers(2, 30), p=zipf / zipf.sum())) for _ in range(260)]
    texts += texts[:40]  # exact duplicates: equal scores that only the doc id orders
    ws = text_workspace(tmp_path, texts)
    r = retrievers.get("bm25")
    r.prepare(ws, None)
    queries = [" ".join(rng.choice(vocab, rng.integers(1, 6))) for _ in range(60)]
    queries += ["w0 w0 w3", "w79", "nothing here", "the of and"]
    pools = {"all": r.doc_ids, "sub": np.sort(rng.choice(r.doc_ids, 150, replace=False)), "tiny": r.doc_ids[:6]}
    qm = r.query_matrix(queries)
    tf = r.tf.toarray().astype(np.float64)
    for k in (3, 10, 100):
        got = r.rank(queries, pools, k)
        for name, ids in pools.items():
            pos = r.positions(ids)
            n, dl = len(pos), r.lengths[pos].astype(np.float64)
            df = (tf[pos] > 0).sum(axis=0)
            idf = np.maximum(0.0, np.log(n - df + 0.5) - np.log(df + 0.5))
            norm = K1 * (1 - B + B * dl / (dl.sum() / n))
            scores = np.zeros((len(queries), n))
            for i in range(len(queries)):
                for j, c in zip(qm.indices[qm.indptr[i]:qm.indptr[i + 1]], qm.data[qm.indptr[i]:qm.indptr[i + 1]]):
                    t = tf[pos, j]
                    w = np.where(t > 0, idf[j] * t * (K1 + 1) / (t + norm), 0.0)
                    scores[i] += c * w
            want = topk(scores, ids, k)
            np.testing.assert_array_equal(got[name].ids, want.ids, err_msg=f"{name} k={k}")
            np.testing.assert_array_equal(got[name].scores, want.scores, err_msg=f"{name} k={k}")


def test_install_warm_compiles_every_signature_ranking_uses(tmp_path):
    """``scripts/install.sh`` runs ``warm()`` so no user process compiles: ranking (strided pools, short lists,
    k above the pool) must call each kernel with exactly the types warm() compiled, never a second specialisation."""
    from emb_s_core.retrievers import bm25_kernel

    bm25_kernel.warm()
    kernels = (bm25_kernel.missing_df, bm25_kernel.fill_cache, bm25_kernel.top_m, bm25_kernel.top_k,
               bm25_kernel.query_terms)
    assert [len(f.signatures) for f in kernels] == [1] * len(kernels)
    ws = text_workspace(tmp_path, ["apple banana", "cherry banana banana", "durian", "elder fig", "apple fig"])
    r = retrievers.get("bm25")
    r.prepare(ws, None)
    for k in (2, 10):
        r.rank(["apple fig", "banana", "nothing"], {"all": r.doc_ids, "every other": r.doc_ids[::2]}, k)
    assert [len(f.signatures) for f in kernels] == [1] * len(kernels)


def test_batches_through_the_weight_cache_rank_as_one_call(tmp_path, monkeypatch):
    """Issue 32 (BM25 in eval's batches): a pool's weights are cached across batches; batches of 7 (the cache filling
    up, and forced to start over by a tiny WEIGHT_CACHE) give the same ids and scores, to the bit, as one call on a
    fresh retriever; the query matrix equals the COO construction it replaced (duplicate tokens summed)."""
    from scipy import sparse as sp

    from emb_s_core.retrievers import bm25

    rng = np.random.default_rng(3)
    vocab = [f"w{i}" for i in range(120)]
    texts = [" ".join(rng.choice(vocab, rng.integers(3, 40))) for _ in range(300)]
    ws = text_workspace(tmp_path, texts)
    queries = [" ".join(rng.choice(vocab, rng.integers(1, 8))) + " w1 W1 the" for _ in range(50)] + ["zzz", ""]
    fresh = retrievers.get("bm25")
    fresh.prepare(ws, None)
    pools = {"all": fresh.doc_ids, "half": fresh.doc_ids[::2]}
    want = fresh.rank(queries, pools, 10)
    for cap in (bm25.WEIGHT_CACHE, 50):
        monkeypatch.setattr(bm25, "WEIGHT_CACHE", cap)
        r = retrievers.get("bm25")
        r.prepare(ws, None)
        got = [r.rank(queries[i:i + 7], pools, 10) for i in range(0, len(queries), 7)]
        for name in pools:
            np.testing.assert_array_equal(np.concatenate([g[name].ids for g in got]), want[name].ids)
            np.testing.assert_array_equal(np.concatenate([g[name].scores for g in got]), want[name].scores)
        held = sum(p[3].used for p in r._pools.values())
        every = sum(int((p[3].ends - p[3].starts)[p[3].starts >= 0].sum()) for p in r._pools.values())
        kept_all = sum(bm25.pool_weights(r, np.unique(r.query_matrix(queries).indices), *p[:3]).nnz
                       for p in r._pools.values())
        assert held == every  # no stale rows
        assert held == kept_all if cap > 1000 else 0 < held < kept_all  # all kept, or started over within the cap
    toks = [bm25.words(q) for q in queries]
    get = fresh.vocab.get
    per = [[j for j in map(get, t) if j is not None] for t in toks]
    rows = np.repeat(np.arange(len(per)), [len(p) for p in per])
    old = sp.csr_matrix((np.ones(len(rows)), (rows, [j for p in per for j in p])), shape=(len(per), len(fresh.vocab)))
    new = fresh.term_matrix(toks)
    for a in ("indptr", "indices", "data"):
        np.testing.assert_array_equal(getattr(new, a), getattr(old, a))


def test_the_ascii_fast_path_of_the_tokenizer_equals_the_regex():
    """words() takes a byte-level path for ASCII text: the same words as ``\\w+`` on the lowercased text, for every
    ASCII character, Unicode text (and a Unicode letter that lowercases to ASCII, the Kelvin sign)."""
    import random

    from emb_s_core.retrievers.text import WORD, words

    r = random.Random(1)
    cases = ["".join(map(chr, range(128))), "Hello, World! foo_bar 42 x-y", "Kelvin \u212a café naïve",
             "\t\n\x1c\x1dA\x1fb", "ΟΔΟΣ test", ""]
    cases += ["".join(chr(r.randrange(0, 300)) for _ in range(50)) for _ in range(500)]
    cases += ["".join(chr(r.randrange(0, 128)) for _ in range(80)) for _ in range(2000)]
    assert all(words(c) == WORD.findall(c.lower()) for c in cases)


def test_the_compiled_query_lookup_equals_words_then_the_vocabulary(tmp_path):
    """An ASCII batch of queries is split and looked up in one compiled pass over its bytes (the Lexicon's hash
    table); its term counts equal words() then the vocabulary, for every ASCII character, case, digits, underscores,
    stopwords, unknown words, repeated words, empty queries, words that share a prefix with a vocabulary word; a
    batch with any other character goes through words(), the same result; a thousand-word vocabulary probes past
    its hash collisions."""
    import random

    from emb_s_core.retrievers.text import words

    r = random.Random(5)
    letters = "abcdefghij_0123456789"
    vocab_words = sorted({"".join(r.choice(letters) for _ in range(r.randrange(1, 7))) for _ in range(1500)})
    texts = [" ".join(r.sample(vocab_words, 8)) for _ in range(400)] + ["naïve café résumé Kelvin \u212a"]
    ws = text_workspace(tmp_path, texts)
    bm = retrievers.get("bm25")
    bm.prepare(ws, None)
    assert len(bm.vocab) > 1000
    known = list(bm.vocab)
    pieces = known + ["the", "of", "ZZZ", "a", "_", "9", "", "Naïve"] + [w + "x" for w in known[:50]] + [w[:-1] for w in known[:50]]
    seps = [" ", "  ", ",", ".", "-", "\t", "\n", "'s ", "!?", "\x00", "\x7f", "(", ")"]
    queries = ["".join(r.choice(pieces).upper() if r.random() < .2 else r.choice(pieces) + r.choice(seps)
                       for _ in range(r.randrange(0, 25))) for _ in range(300)]
    queries += ["", "   ", "".join(map(chr, range(128))), known[0] * 3, f"{known[1]} {known[1]} {known[1].upper()}"]
    ascii_queries = [q for q in queries if q.isascii()]
    want = bm.term_arrays([words(q) for q in ascii_queries])
    for batch in (ascii_queries, ascii_queries[:1], ascii_queries[5:69]):
        got = bm.query_arrays(batch)
        expect = bm.term_arrays([words(q) for q in batch])
        for g, e in zip(got, expect):
            np.testing.assert_array_equal(g, e)
            assert g.dtype == e.dtype
    assert want[1].size > 500  # the batch did look words up
    mixed = ascii_queries[:10] + ["Naïve Kelvin \u212a " + known[2]]
    for g, e in zip(bm.query_arrays(mixed), bm.term_arrays([words(q) for q in mixed])):
        np.testing.assert_array_equal(g, e)


def test_sessions_ranking_on_one_retriever_at_once_get_what_each_would_alone(tmp_path, monkeypatch):
    """A dashboard's sessions share one live BM25 and rank from several threads; the kernels that fill a pool's
    weight cache release the GIL. Threads ranking different batches at once, over pools whose caches fill, grow and
    (a tiny WEIGHT_CACHE) start over under them, get exactly the lists a fresh retriever gives each batch alone."""
    import threading

    from emb_s_core.retrievers import bm25

    rng = np.random.default_rng(9)
    vocab = [f"w{i}" for i in range(400)]
    ws = text_workspace(tmp_path, [" ".join(rng.choice(vocab, rng.integers(5, 60))) for _ in range(1500)])
    batches = [[" ".join(rng.choice(vocab, rng.integers(1, 9))) for _ in range(16)] for _ in range(24)]
    fresh = retrievers.get("bm25")
    fresh.prepare(ws, None)
    pools = {"all": fresh.doc_ids, "half": fresh.doc_ids[::2], "third": fresh.doc_ids[::3]}
    want = [fresh.rank(b, pools, 10) for b in batches]
    monkeypatch.setattr(bm25, "WEIGHT_CACHE", 3000)
    shared = retrievers.get("bm25")
    shared.prepare(ws, None)
    wrong: list[str] = []

    def session(offset: int) -> None:
        for round_ in range(6):
            for i in range(offset, len(batches), 4):
                got = shared.rank(batches[i], pools, 10)
                for name in pools:
                    if not (np.array_equal(got[name].ids, want[i][name].ids)
                            and np.array_equal(got[name].scores, want[i][name].scores)):
                        wrong.append(f"batch {i} pool {name} round {round_}")

    threads = [threading.Thread(target=session, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not wrong, wrong[:5]
