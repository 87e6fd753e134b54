"""The compiled BM25 scoring kernel: per query, accumulate the query's postings into a dense score row and keep the
``m`` best documents, in one pass (no per-query Python, no score matrix).

Why numba, and why a module of its own: per query the work is ~20,000 postings at 10M tokens, which NumPy/SciPy
reach only through general sparse products (a symbolic pass, a numeric pass, then a selection per row: 2–4× the
compiled loop, bench/RESULTS.md). The kernel is compiled with ``cache=True``: the machine code is written next to
this file once (``scripts/install.sh`` does it at install time, ``warm()``), and every later process loads it in
milliseconds instead of compiling. Numba is imported only when BM25 ranks, never by ``import emb_s_core``.
"""
from __future__ import annotations

import numpy as np
from numba import njit


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
def top_m(q_indptr, q_terms, q_counts, w_indptr, w_cols, w_vals, n, m, out_cols, out_vals, out_counts):
    """For each query row i of the CSR (q_indptr, q_terms, q_counts) over the CSR weights (w_indptr, w_cols, w_vals)
    of one pool with n columns: the (at most) m columns of largest score Σ count · w, written to
    out_cols/out_vals[i, :out_counts[i]] (unordered). Weights must be positive (a touched score is never 0)."""
    acc = np.zeros(n)
    touched = np.empty(n + 1, np.int64)  # one spare place: the branch-free write below
    heap_v = np.empty(m)
    heap_c = np.empty(m, np.int64)
    for i in range(len(q_indptr) - 1):
        t = 0
        for a in range(q_indptr[i], q_indptr[i + 1]):
            j = q_terms[a]
            c = q_counts[a]
            for p in range(w_indptr[j], w_indptr[j + 1]):
                d = w_cols[p]
                touched[t] = d  # kept only if d is new: no branch to mispredict
                t += acc[d] == 0.0
                acc[d] += c * w_vals[p]
        size = min(t, m)
        for s in range(t):  # one pass: the first m documents become a min-heap, each later one is one comparison
            d = touched[s]
            v = acc[d]
            acc[d] = 0.0
            if s < m:
                heap_v[s] = v
                heap_c[s] = d
                if s == m - 1:
                    for pos in range(m // 2 - 1, -1, -1):
                        _sift_down(heap_v, heap_c, pos, m)
            elif v > heap_v[0]:
                heap_v[0] = v
                heap_c[0] = d
                _sift_down(heap_v, heap_c, 0, m)
        for s in range(size):
            out_cols[i, s] = heap_c[s]
            out_vals[i, s] = heap_v[s]
        out_counts[i] = size


def warm() -> None:
    """Compile (or load from the cache) the kernel once: what install.sh runs so no user process compiles."""
    one = np.zeros(2, np.int64)
    one[1] = 1
    out_cols = np.zeros((1, 1), np.int64)
    top_m(one, np.zeros(1, np.int32), np.ones(1), one, np.zeros(1, np.int32), np.ones(1), 1, 1, out_cols,
          np.zeros((1, 1)), np.zeros(1, np.int64))
