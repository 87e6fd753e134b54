"""The compiled BM25 kernels: a batch's pool weights from the term-frequency postings, then per query the postings
accumulated into a dense score row and the ``m`` best documents kept, then those candidates put in the ranking's
order (no per-query Python, no score matrix, no per-posting NumPy temporaries).

Why numba, and why a module of its own: per query the work is ~20,000 postings at 10M tokens, which NumPy/SciPy
reach only through general sparse products (a symbolic pass, a numeric pass, then a selection per row: 2–4× the
compiled loop, bench/RESULTS.md), and the NumPy passes around it (gathering the batch's postings, weighting them,
ordering the candidates) were most of a query's time at 1M tokens. The kernels are compiled with ``cache=True``: the
machine code is written next to this file once (``scripts/install.sh`` does it at install time, ``warm()``), and
every later process loads it in milliseconds instead of compiling. Numba is imported only when BM25 ranks, never by
``import emb_s_core``.

Exactness: the weights are the same IEEE operations, in the same order, as the NumPy formula they replace (numba
does not contract them into fused multiply-adds without fastmath), the logarithms of idf stay in NumPy, and the
ranking's rounding repeats ``np.round``'s three operations; so scores and lists are bit-identical to the NumPy path.

A batch of queries is two compiled calls (:func:`query_terms`, then :func:`top_k`) plus, for terms no batch has
asked a pool for before, the two weight kernels: at 1M tokens a query is ~10 µs, and the NumPy calls around the
kernels (about 35 a batch) had made batches of 64 1.3× a single call (bench/RESULTS.md).
"""
from __future__ import annotations

import numpy as np
from numba import njit

BLOCK = 32  # documents per block of the dense scan: one test of the block against the threshold skips all of them
DENSE = 4  # a query scans its whole score row when its postings are at least 1/DENSE of the pool's documents


@njit(cache=True, nogil=True)
def missing_df(terms, cached_starts, p_indptr, rows, column, out_terms, out_df):
    """The ``terms`` whose weights a pool's cache lacks (``cached_starts`` < 0), written to out_terms with their
    document frequency over the pool (postings rows[p_indptr[t]:p_indptr[t + 1]] whose ``column`` ≥ 0) in out_df;
    returns how many."""
    c = 0
    for t in terms:
        if cached_starts[t] >= 0:
            continue
        df = 0
        for p in range(p_indptr[t], p_indptr[t + 1]):
            df += column[rows[p]] >= 0
        out_terms[c] = t
        out_df[c] = df
        c += 1
    return c


@njit(cache=True, nogil=True)
def fill_cache(terms, idf, p_indptr, rows, tfs, lengths, column, k1, b, avgdl, starts, ends, cols, vals, used):
    """The weights of ``terms`` (idf[i] for terms[i]) in one pool, straight into its weight cache: term t's pool
    postings in document order, w = idf·tf·(k1+1)/(tf + k1·(1 − b + b·|d|/avgdl)), written to cols/vals from
    ``used`` on (starts[t], ends[t] record where; a term of idf 0 gets none); returns the new ``used``. The buffers
    must have room (the caller sizes them from df)."""
    for i in range(len(terms)):
        t = terms[i]
        starts[t] = used
        if idf[i] > 0.0:
            for p in range(p_indptr[t], p_indptr[t + 1]):
                d = rows[p]
                col = column[d]
                if col < 0:
                    continue
                tf = np.float64(tfs[p])
                norm = k1 * (1.0 - b + b * np.float64(lengths[d]) / avgdl)
                cols[used] = col
                vals[used] = idf[i] * tf * (k1 + 1.0) / (tf + norm)
                used += 1
        ends[t] = used
    return used


@njit(cache=True, nogil=True)
def _sift_down(heap_v, heap_c, pos, size):
    """Move the entry at ``pos`` of the min-heap (values heap_v, columns heap_c) down to its place."""
    v, c = heap_v[pos], heap_c[pos]
    while True:
        child = 2 * pos + 1
        if child >= size:
            break
        if child + 1 < size and heap_v[child + 1] < heap_v[child]:
            child += 1
        if heap_v[child] >= v:
            break
        heap_v[pos] = heap_v[child]
        heap_c[pos] = heap_c[child]
        pos = child
    heap_v[pos] = v
    heap_c[pos] = c


@njit(cache=True, nogil=True)
def _offer(heap_v, heap_c, size, m, v, d):
    """Offer document d of score v (above the heap's threshold) to the m-best min-heap holding ``size``; the new
    size. The first m fill it, then it is heapified and each later one replaces the smallest."""
    if size < m:
        heap_v[size] = v
        heap_c[size] = d
        size += 1
        if size == m:
            for pos in range(m // 2 - 1, -1, -1):
                _sift_down(heap_v, heap_c, pos, m)
        return size
    heap_v[0] = v
    heap_c[0] = d
    _sift_down(heap_v, heap_c, 0, m)
    return size


@njit(cache=True, nogil=True)
def top_m(q_indptr, q_terms, q_counts, w_starts, w_ends, w_cols, w_vals, n, m, out_cols, out_vals, out_counts):
    """For each query row i of the CSR (q_indptr, q_terms, q_counts) over the weights of one pool with n columns
    (term j's weights are w_cols/w_vals[w_starts[j]:w_ends[j]]: a CSR's indptr[:-1] and indptr[1:], or the rows a
    pool's weight cache holds, anywhere in its buffer): the (at most) m columns of largest score Σ count · w, written
    to out_cols/out_vals[i, :out_counts[i]] (unordered). Weights must be positive (a touched score is never 0).

    A query whose postings reach a sizeable share of the pool accumulates, then scans its score row block by block
    (a block wholly under the current floor is passed over after one vectorised test) and clears it; a query with
    few postings records the documents it touches and visits only those. The scan's first floor is the m-th best
    score among the documents of the query's rarest term that has at least m (each counted once, so at least m
    scores reach it): without it the floor rose from 0 as the scan went and most blocks were visited one document
    at a time (13% of a query at 1M tokens, 40% at k = 100; bench/RESULTS.md)."""
    n_blocks = (n + BLOCK - 1) // BLOCK
    acc = np.zeros(n_blocks * BLOCK)
    touched = np.empty(n + 1, np.int64)  # one spare place: the branch-free write below
    heap_v = np.empty(m)
    heap_c = np.empty(m, np.int64)
    for i in range(len(q_indptr) - 1):
        total = 0
        rare, rare_postings = -1, n + 1  # the query's rarest term with at least m postings
        for a in range(q_indptr[i], q_indptr[i + 1]):
            j = q_terms[a]
            postings = w_ends[j] - w_starts[j]
            total += postings
            if m <= postings < rare_postings:
                rare, rare_postings = j, postings
        size = 0
        if total * DENSE >= n:
            for a in range(q_indptr[i], q_indptr[i + 1]):
                j = q_terms[a]
                c = q_counts[a]
                for p in range(w_starts[j], w_ends[j]):
                    acc[w_cols[p]] += c * w_vals[p]
            floor = 5e-324  # the smallest positive double: every touched document passes, no untouched one
            if rare >= 0:
                for p in range(w_starts[rare], w_ends[rare]):
                    d = w_cols[p]
                    if size < m or acc[d] > heap_v[0]:
                        size = _offer(heap_v, heap_c, size, m, acc[d], d)
                floor = max(floor, heap_v[0])
                size = 0  # the scan meets those documents again: the heap starts over, above the floor
            for blk in range(n_blocks):
                lo = blk * BLOCK
                hit = False
                for d in range(lo, lo + BLOCK):
                    hit |= acc[d] >= floor
                if hit:
                    for d in range(lo, lo + BLOCK):
                        v = acc[d]
                        if v >= floor and (size < m or v > heap_v[0]):
                            size = _offer(heap_v, heap_c, size, m, v, d)
                            if size == m:
                                floor = heap_v[0]
                for d in range(lo, lo + BLOCK):
                    acc[d] = 0.0
        else:
            t = 0
            for a in range(q_indptr[i], q_indptr[i + 1]):
                j = q_terms[a]
                c = q_counts[a]
                for p in range(w_starts[j], w_ends[j]):
                    d = w_cols[p]
                    touched[t] = d  # kept only if d is new: no branch to mispredict
                    t += acc[d] == 0.0
                    acc[d] += c * w_vals[p]
            for s in range(t):
                d = touched[s]
                v = acc[d]
                acc[d] = 0.0
                if size < m or v > heap_v[0]:
                    size = _offer(heap_v, heap_c, size, m, v, d)
        for s in range(size):
            out_cols[i, s] = heap_c[s]
            out_vals[i, s] = heap_v[s]
        out_counts[i] = size


@njit(cache=True, nogil=True)
def order_top(cols, vals, counts, ids, k, scale, out_ids, out_scores):
    """Row i's candidates (cols/vals[i, :counts[i]]) in the ranking's order: score rounded to 1/scale descending
    (``np.rint(v * scale) / scale``: the multiply, round-half-even and divide ``np.round`` does, so the same bits),
    then smaller doc id (``ids[col]``); the first k written to out_ids/out_scores. A row with fewer than k
    candidates is filled with zero-score documents by smallest column, as ``topk`` does."""
    m = cols.shape[1]
    order = np.empty(m, np.int64)
    rounded = np.empty(m)
    for i in range(cols.shape[0]):
        c = counts[i]
        for s in range(c):
            rounded[s] = np.rint(vals[i, s] * scale) / scale
        for s in range(c):  # insertion sort: a few dozen candidates
            pos = s
            r, doc = rounded[s], ids[cols[i, s]]
            while pos > 0:
                prev = order[pos - 1]
                r_prev, doc_prev = rounded[prev], ids[cols[i, prev]]
                if r_prev > r or (r_prev == r and doc_prev < doc):
                    break
                order[pos] = prev
                pos -= 1
            order[pos] = s
        for s in range(min(c, k)):
            out_ids[i, s] = ids[cols[i, order[s]]]
            out_scores[i, s] = vals[i, order[s]]
        s = c
        col = 0
        while s < k:  # pad: the smallest columns that are not candidates
            taken = False
            for x in range(c):
                taken |= cols[i, x] == col
            if not taken:
                out_ids[i, s] = ids[col]
                out_scores[i, s] = 0.0
                s += 1
            col += 1


@njit(cache=True, nogil=True)
def top_k(q_indptr, q_terms, q_counts, w_starts, w_ends, w_cols, w_vals, n, m, ids, k, scale, tie, out_ids,
          out_scores, unsure):
    """A batch's rankings in one compiled call: :func:`top_m` keeps each query's m (≥ k) best, :func:`order_top`
    orders them into out_ids/out_scores (n_queries × k). ``unsure[i]`` is set where the kernel's choice among equal
    scores could have mattered: m candidates were kept from a larger pool and the m-th scores within ``tie`` (the
    rounding step) of the k-th, so a document left out may tie the k-th place; the caller scores those in full."""
    n_q = len(q_indptr) - 1
    cols, vals, counts = np.zeros((n_q, m), np.int64), np.zeros((n_q, m)), np.zeros(n_q, np.int64)
    top_m(q_indptr, q_terms, q_counts, w_starts, w_ends, w_cols, w_vals, n, m, cols, vals, counts)
    order_top(cols, vals, counts, ids, k, scale, out_ids, out_scores)
    ascending = np.empty(m)
    for i in range(n_q):
        unsure[i] = False
        if counts[i] < m or m >= n:
            continue
        ascending[:] = vals[i]
        ascending.sort()  # the m-th best first, the k-th best at m - k
        unsure[i] = ascending[0] >= ascending[m - k] - tie


@njit(cache=True, nogil=True)
def _append_row(row, c, out_terms, out_counts, at):
    """Sort the term ids row[:c] and append each distinct one with how often it occurs; the new end."""
    part = row[:c]
    part.sort()
    j = 0
    while j < c:
        t, run = part[j], 1
        while j + run < c and part[j + run] == t:
            run += 1
        out_terms[at] = t
        out_counts[at] = run
        at += 1
        j += run
    return at


@njit(cache=True, nogil=True)
def query_terms(flat, lengths, out_indptr, out_terms, out_counts):
    """The canonical CSR of a batch's queries from their tokens' term ids (``flat``, query after query, ``lengths``
    tokens each; -1: not in the vocabulary): each query's distinct terms ascending (out_terms), how often each occurs
    (out_counts), row ends in out_indptr[1:]. Returns the number of entries written."""
    buf = np.empty(max(len(flat), 1), np.int64)
    at, start = 0, 0
    out_indptr[0] = 0
    for i in range(len(lengths)):
        c = 0
        for p in range(start, start + lengths[i]):
            if flat[p] >= 0:
                buf[c] = flat[p]
                c += 1
        start += lengths[i]
        at = _append_row(buf, c, out_terms, out_counts, at)
        out_indptr[i + 1] = at
    return at


FNV_OFFSET = np.uint64(14695981039346656037)
FNV_PRIME = np.uint64(1099511628211)
SPACE = 32  # the byte every non-word byte of an ASCII text is translated to (text._ASCII_SPACES)


@njit(cache=True, nogil=True)
def _fnv(data, lo, hi):
    """64-bit FNV-1a of data[lo:hi]."""
    h = FNV_OFFSET
    for p in range(lo, hi):
        h = (h ^ np.uint64(data[p])) * FNV_PRIME
    return h


@njit(cache=True, nogil=True)
def lexicon_table(blob, offsets, table):
    """Open addressing (linear probing) over the words blob[offsets[w]:offsets[w + 1]]: table[slot] = w, -1 empty;
    ``len(table)`` is a power of two, at least twice the words."""
    mask = np.uint64(len(table) - 1)
    for w in range(len(offsets) - 1):
        slot = _fnv(blob, offsets[w], offsets[w + 1]) & mask
        while table[slot] >= 0:
            slot = (slot + np.uint64(1)) & mask
        table[slot] = w


@njit(cache=True, nogil=True)
def _lookup(text, lo, hi, blob, offsets, table):
    """The word index of text[lo:hi] in the lexicon, or -1."""
    mask = np.uint64(len(table) - 1)
    slot = _fnv(text, lo, hi) & mask
    while True:
        w = table[slot]
        if w < 0:
            return -1
        if offsets[w + 1] - offsets[w] == hi - lo:
            same = True
            for p in range(hi - lo):
                if blob[offsets[w] + p] != text[lo + p]:
                    same = False
                    break
            if same:
                return w
        slot = (slot + np.uint64(1)) & mask


@njit(cache=True, nogil=True)
def ascii_query_terms(text, spans, blob, offsets, term_ids, table, out_indptr, out_terms, out_counts):
    """:func:`query_terms` straight from a batch's text: ``text`` is the queries' lowercased ASCII bytes one after
    another (``spans[i]`` bytes each), every non-word byte already a space; a word is a run of other bytes (so the
    words are ``text.words``'), looked up in the lexicon (word w is term ``term_ids[w]``; words not in it, stopwords
    among them, score nothing). Returns the number of entries written."""
    buf = np.empty(max(len(text) // 2 + 1, 1), np.int64)  # a word takes at least one byte and a space after it
    at, start = 0, 0
    out_indptr[0] = 0
    for i in range(len(spans)):
        c, p, end = 0, start, start + spans[i]
        while p < end:
            if text[p] == SPACE:
                p += 1
                continue
            lo = p
            while p < end and text[p] != SPACE:
                p += 1
            w = _lookup(text, lo, p, blob, offsets, table)
            if w >= 0:
                buf[c] = term_ids[w]
                c += 1
        start = end
        at = _append_row(buf, c, out_terms, out_counts, at)
        out_indptr[i + 1] = at
    return at


def warm() -> None:
    """Compile (or load from the cache) every kernel once, with the dtypes BM25 passes them: what install.sh runs so
    no user process compiles."""
    i32 = np.zeros(2, np.int32)
    one = np.array([0, 1], np.int64)
    top_m(one, np.zeros(1, np.int32), np.ones(1), one[:1], one[1:], np.zeros(1, np.int32), np.ones(1), 1, 1,
          np.zeros((1, 1), np.int64), np.zeros((1, 1)), np.zeros(1, np.int64))
    top_k(one, np.zeros(1, np.int32), np.ones(1), one[:1], one[1:], np.zeros(1, np.int32), np.ones(1), 1, 1,
          np.arange(1, dtype=np.int64), 1, 1e6, 1e-6, np.zeros((1, 1), np.int64), np.zeros((1, 1)), np.zeros(1, bool))
    query_terms(np.zeros(1, np.int64), np.ones(1, np.int64), np.zeros(2, np.int64), np.zeros(1, np.int32),
                np.zeros(1))
    blob, offsets, table = np.frombuffer(b"ab", np.uint8), np.array([0, 2], np.int64), np.full(2, -1, np.int64)
    lexicon_table(blob, offsets, table)
    ascii_query_terms(blob, np.array([2], np.int64), blob, offsets, np.zeros(1, np.int64), table, np.zeros(2, np.int64),
                      np.zeros(1, np.int32), np.zeros(1))
    missing_df(np.zeros(1, np.int32), np.full(2, -1, np.int64), one, i32, i32, np.zeros(1, np.int32),
               np.zeros(1, np.int64))
    fill_cache(np.zeros(1, np.int32), np.ones(1), one, i32, np.ones(2, np.uint16), np.ones(2, np.int32), i32, 1.5, 0.75,
               1.0, np.full(2, -1, np.int64), np.full(2, -1, np.int64), np.zeros(2, np.int32), np.zeros(2), 0)
