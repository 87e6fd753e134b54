"""Exact MaxP scoring of cached chunk vectors streamed from the workspace's Lance cache in blocks, under a memory cap.

Why: at paper scale (~1.3M chunks; 2 GB of float32 vectors at 384 dims, 21 GB at 4,096) the vectors need not fit in
RAM. A document's MaxP score is the max of its chunks' inner products, and a max does not care in which order or
in how many pieces the chunks arrive, so scoring block by block and keeping a running max per document gives exactly the
one-shot ``max_c ⟨q, e_c⟩``. The cap bounds what scoring holds at once: one block of vectors and its scores, plus the
query × document score matrix (queries are split into sub-batches when that matrix alone would pass its share).
"""
from __future__ import annotations

import os
from typing import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from emb_s_core.errors import EmbSError
from emb_s_core.store import Workspace

#: default memory cap of dense scoring: this fraction of the machine's physical memory
DEFAULT_CAP_FRACTION = 0.125
#: the environment variable that overrides the default cap (bytes, or a size like 256M / 2G)
CAP_ENV = "EMB_S_DENSE_MEMORY_CAP"
#: the most bytes of vectors read from Lance at once: a read costs Lance about 20× its size in buffers (measured,
#: bench/RESULTS.md), so reads are also at most 1/64 of the cap, and the budgets below share 60% of the cap
READ_BYTES = 4 << 20
READ_SHARE = 64
BUDGET_SHARE = 0.6
MIN_CAP = 64 << 10  # tests use it to force many blocks; real runs want hundreds of MB
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def physical_memory() -> int:
    try:
        return int(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):  # not on Linux/macOS: assume a small machine
        return 8 << 30


def parse_cap(value: int | str | None) -> int:
    """A memory cap in bytes from ``268435456``, ``"256M"``, ``"2G"``; None gives the default (env or RAM share)."""
    if value is None or value == "":
        env = os.environ.get(CAP_ENV)
        if env:
            return parse_cap(env)
        return max(MIN_CAP, int(physical_memory() * DEFAULT_CAP_FRACTION))
    if isinstance(value, (int, np.integer)):
        cap = int(value)
    else:
        text = str(value).strip().upper().removesuffix("B").removesuffix("I")
        unit = text[-1] if text and text[-1] in _UNITS else ""
        try:
            cap = int(float(text[: len(text) - len(unit)]) * _UNITS[unit])
        except ValueError:
            raise EmbSError(f"cannot read memory cap {value!r}",
                            fix="write it as bytes or with a unit, e.g. 256M or 2G.") from None
    if cap < MIN_CAP:
        raise EmbSError(f"memory cap {value!r} is below 64 KiB",
                        fix="give dense scoring at least 64K (hundreds of MB in practice).")
    return cap


class BlockScorer:
    """MaxP scores of the documents whose content hashes are ``hashes`` (one per document, repeats allowed),
    reading chunk vectors from cache table ``table`` in blocks that keep scoring under ``cap`` bytes."""

    def __init__(self, ws: Workspace, table: str, hashes: list[str] | np.ndarray, cap: int) -> None:
        unique, self.column_of_doc = np.unique(np.asarray(hashes, dtype=object).astype(str), return_inverse=True)
        self.unique = pa.array(unique, pa.string())
        self.n_docs = len(self.column_of_doc)
        self.cap = int(cap)
        self.dataset = ws.dataset(table) if len(unique) else None
        vector_type = self.dataset.schema.field("vector").type if len(unique) else pa.list_(pa.float32(), 1)
        self.dim = vector_type.list_size
        self.dtype = np.dtype(vector_type.value_type.to_pandas_dtype())
        self.blocks_read = 0  # blocks streamed from disk by the last call (a test sees the cap at work)
        # the hash slot of every cache row, in scan order (-1: a row of a document not asked for); computed once so a
        # block scan reads vectors only
        self.slot_of_row = np.empty(0, np.int32)
        if self.dataset is not None:
            hashes_in_order = self.dataset.to_table(columns=["content_hash"], scan_in_order=True)["content_hash"]
            self.slot_of_row = pc.index_in(hashes_in_order, value_set=self.unique).fill_null(-1).to_numpy() \
                .astype(np.int32)
        self.budget = max(BUDGET_SHARE * self.cap - self.slot_of_row.nbytes, 0)
        self.resident: list[tuple[np.ndarray, np.ndarray]] | None = None
        self._plans: list[_Plan] = []
        self._last: tuple[bytes, np.ndarray] | None = None  # (one query's bytes, its scores): see _pass
        if self.dataset is not None and len(self.slot_of_row) * self.dim * self.dtype.itemsize <= self.cap // 2:
            # small enough: read once and keep (live queries then cost a matrix product, not a table scan), with
            # each block's fold plan (its sort by hash slot: 15 ms a pass at 40K chunks, paid once here)
            self.resident = list(self._blocks(self.block_rows(1)))
            self._plans = [_plan(slot) for slot, _ in self.resident]

    def query_rows(self, n_queries: int) -> int:
        """Queries scored per pass: their (queries × documents) matrices take half of the budget."""
        per_query = 4 * (3 * self.n_docs + len(self.unique)) + 1
        return max(1, min(n_queries, int(self.budget / 2) // per_query))

    def block_rows(self, n_queries: int) -> int:
        """Chunk vectors per block: the block (plus its float32 copy when stored as float16), its slots and two
        copies of its scores take the other half of the budget."""
        per_row = self.dim * self.dtype.itemsize + (self.dim * 4 if self.dtype != np.float32 else 0) + 16 \
            + 2 * 4 * n_queries
        return max(1, int(self.budget / 2) // per_row)

    def scores(self, q: np.ndarray) -> Iterator[tuple[slice, np.ndarray]]:
        """(query rows, float32 scores (rows × documents)) per pass; one pass streams the whole cache table once."""
        q = np.asarray(q, dtype=np.float32)
        step = self.query_rows(len(q))
        self.blocks_read = 0
        for start in range(0, len(q), step):
            rows = slice(start, min(start + step, len(q)))
            yield rows, self._pass(q[rows])

    def score_all(self, q: np.ndarray) -> np.ndarray:
        parts = [s for _, s in self.scores(q)]
        return np.vstack(parts) if parts else np.empty((0, self.n_docs), np.float32)

    def _pass(self, q: np.ndarray) -> np.ndarray:
        # one resident query is remembered: a live what-if scores the typed text with a dense retriever and again
        # with each fusion containing it (the same prepared part), which is one product, not two
        key = q.tobytes() if len(q) == 1 and self.resident is not None else None
        last = self._last  # read once: another session's query may replace it meanwhile
        if key is not None and last is not None and last[0] == key:
            return last[1].copy()
        best = np.full((len(q), len(self.unique)), -np.inf, np.float32)
        if self.resident is not None:
            for (_, vectors), plan in zip(self.resident, self._plans):
                self._fold(q, plan, vectors, best)
        elif self.dataset is not None:
            for slot, vectors in self._blocks(self.block_rows(len(q))):
                self.blocks_read += 1
                self._fold(q, _plan(slot), vectors, best)
        if np.isneginf(best).any():  # only if the cache table was edited by hand
            raise EmbSError(f"the embedding cache lacks {int(np.isneginf(best[0]).sum())} documents",
                            fix="rerun the evaluation (it embeds what is missing) or delete the cache table.")
        out = best[:, self.column_of_doc]
        if key is not None:
            self._last = (key, out.copy())
        return out

    def _blocks(self, rows: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """(hash slot per row, vectors) per block of ``rows`` cache rows, only the rows of wanted documents.

        A block is filled by row-range reads (offset/limit) of at most READ_BYTES each: measured on 1 GB of vectors,
        Lance's streaming scan held ~1.6 GB at its high-water mark whatever its buffer settings, 4 MiB range reads
        held ~80 MB; and one matrix product per block of ``rows`` is ~3× faster than one per 4 MiB read."""
        item = self.dim * self.dtype.itemsize
        read = max(1, min(rows, min(READ_BYTES, self.cap // READ_SHARE) // item))
        rows = max(rows, read)
        n = len(self.slot_of_row)
        for start in range(0, n, rows):
            stop = min(start + rows, n)
            vectors = np.empty((stop - start, self.dim), self.dtype)
            for at in range(start, stop, read):
                batch = self.dataset.to_table(columns=["vector"], offset=at, limit=min(read, stop - at))
                got = batch.column(0).combine_chunks().flatten().to_numpy().reshape(len(batch), self.dim)
                if len(got) != min(read, stop - at):  # the table changed under us: never score half a table
                    raise EmbSError("the embedding cache changed while it was being scored",
                                    fix="rerun; one writer at a time per workspace.")
                vectors[at - start: at - start + len(got)] = got
            slot = self.slot_of_row[start:stop]
            keep = slot >= 0
            if not keep.all():
                slot, vectors = slot[keep], vectors[keep]
            yield slot, vectors

    @staticmethod
    def _fold(q: np.ndarray, plan: _Plan, vectors: np.ndarray, best: np.ndarray) -> None:
        """Running max of one block's chunk scores into ``best`` (queries × unique hashes)."""
        order, starts, cols = plan
        if not len(order):
            return
        s = (q @ vectors.astype(np.float32, copy=False).T)[:, order]
        reduced = np.maximum.reduceat(s, starts, axis=1) if len(starts) != len(order) else s
        np.maximum(best[:, cols], reduced, out=reduced)
        best[:, cols] = reduced


_Plan = tuple[np.ndarray, np.ndarray, np.ndarray]


def _plan(slot: np.ndarray) -> _Plan:
    """How a block's chunk scores fold into per-hash maxima: the chunks' order by hash slot, where each slot's run
    starts in that order, and the slot of each run."""
    order = np.argsort(slot, kind="stable")
    ordered = slot[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]]) if len(slot) else np.empty(0, np.int64)
    return order, starts, ordered[starts]
