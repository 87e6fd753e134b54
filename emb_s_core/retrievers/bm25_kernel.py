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
ranking's rounding (``np.round``) is done by NumPy; so scores and lists are bit-identical to the NumPy path.
"""
from __future__ import annotations

import numpy as np
from numba import njit

BLOCK = 32  # documents per block of the dense scan: one test of the block against the threshold skips all of them
DENSE = 4  # a query scans its whole score row when its postings are at least 1/DENSE of the pool's documents


@njit(cache=True, nogil=True)
def term_df(starts, ends, rows, column, df):
    """df[t] = postings rows[starts[t]:ends[t]] whose document lies in the pool (``column`` ≥ 0)."""
    for t in range(len(starts)):
        c = 0
        for p in range(starts[t], ends[t]):
            c += column[rows[p]] >= 0
        df[t] = c


@njit(cache=True, nogil=True)
def fill_weights(starts, ends, rows, tfs, lengths, column, idf, w_indptr, k1, b, avgdl, w_cols, w_vals):
    """Row t of the pool's weight CSR (``w_indptr`` from the live terms' df): the pool's postings of term t, in
    document order, w = idf·tf·(k1+1)/(tf + k1·(1 − b + b·|d|/avgdl)); terms with idf 0 are left empty."""
    for t in range(len(starts)):
        if idf[t] <= 0.0:
            continue
        at = w_indptr[t]
        for p in range(starts[t], ends[t]):
            d = rows[p]
            col = column[d]
            if col < 0:
                continue
            tf = np.float64(tfs[p])
            norm = k1 * (1.0 - b + b * np.float64(lengths[d]) / avgdl)
            w_cols[at] = col
            w_vals[at] = idf[t] * tf * (k1 + 1.0) / (tf + norm)
            at += 1


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
    (a block wholly at or under the current m-th best is passed over after one vectorised test) and clears it; a
    query with few postings records the documents it touches and visits only those."""
    n_blocks = (n + BLOCK - 1) // BLOCK
    acc = np.zeros(n_blocks * BLOCK)
    touched = np.empty(n + 1, np.int64)  # one spare place: the branch-free write below
    heap_v = np.empty(m)
    heap_c = np.empty(m, np.int64)
    for i in range(len(q_indptr) - 1):
        total = 0
        for a in range(q_indptr[i], q_indptr[i + 1]):
            total += w_ends[q_terms[a]] - w_starts[q_terms[a]]
        size = 0
        if total * DENSE >= n:
            for a in range(q_indptr[i], q_indptr[i + 1]):
                j = q_terms[a]
                c = q_counts[a]
                for p in range(w_starts[j], w_ends[j]):
                    acc[w_cols[p]] += c * w_vals[p]
            threshold = 0.0  # until the heap is full, every positive score enters
            for blk in range(n_blocks):
                lo = blk * BLOCK
                hit = False
                for d in range(lo, lo + BLOCK):
                    hit |= acc[d] > threshold
                if hit:
                    for d in range(lo, lo + BLOCK):
                        if acc[d] > threshold:
                            size = _offer(heap_v, heap_c, size, m, acc[d], d)
                            if size == m:
                                threshold = heap_v[0]
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
def order_top(cols, vals, rounded, counts, ids, k, out_ids, out_scores):
    """Row i's candidates (cols/vals[i, :counts[i]], ``rounded`` their scores rounded by NumPy) in the ranking's
    order: rounded score descending, then smaller doc id (``ids[col]``); the first k written to out_ids/out_scores.
    A row with fewer than k candidates is filled with zero-score documents by smallest column, as ``topk`` does."""
    m = cols.shape[1]
    order = np.empty(m, np.int64)
    for i in range(cols.shape[0]):
        c = counts[i]
        for s in range(c):  # insertion sort: a few dozen candidates
            pos = s
            r, doc = rounded[i, s], ids[cols[i, s]]
            while pos > 0:
                prev = order[pos - 1]
                r_prev, doc_prev = rounded[i, prev], ids[cols[i, prev]]
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


def warm() -> None:
    """Compile (or load from the cache) every kernel once, with the dtypes BM25 passes them: what install.sh runs so
    no user process compiles."""
    i64, i32 = np.zeros(2, np.int64), np.zeros(2, np.int32)
    one = np.array([0, 1], np.int64)
    term_df(i64[:1], one[1:], i32, i32, np.zeros(1, np.int64))
    fill_weights(i64[:1], one[1:], i32, np.ones(2, np.uint16), np.ones(2, np.int32), i32, np.ones(1), one, 1.5, 0.75,
                 1.0, np.zeros(1, np.int32), np.zeros(1))
    out_cols = np.zeros((1, 1), np.int64)
    top_m(one, np.zeros(1, np.int32), np.ones(1), one[:1], one[1:], np.zeros(1, np.int32), np.ones(1), 1, 1,
          out_cols, np.zeros((1, 1)), np.zeros(1, np.int64))
    order_top(out_cols, np.ones((1, 1)), np.ones((1, 1)), np.ones(1, np.int64), np.arange(1, dtype=np.int64), 1,
              np.zeros((1, 1), np.int64), np.zeros((1, 1)))
