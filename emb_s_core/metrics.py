"""EMB-S retrieval metrics (DESIGN.md §1, paper §A.5), vectorized; bootstrap intervals and paired tests.

Per query ``q`` with gold set ``G`` (the RefList, duplicates removed) and stored ranked list ``R`` (positions are
1-based; the stored order is the ranking, scores are never re-sorted, so ties keep the order the system gave):

- ``rank(g)``       = first position of ``g`` in ``R``; 0 when ``g`` is not in ``R`` (treated as ∞ below)
- ``SR@K``          = |{g ∈ G : 1 ≤ rank(g) ≤ K}| / |G|                      (all queries; ranx ``recall@k``)
- ``FR@K``          = 1[∀ g ∈ G : 1 ≤ rank(g) ≤ K]                            (multi-source queries only, |G| > 1)
- ``R@1``           = 1[R[1] ∈ G]                                             (single-source queries only, |G| = 1)
- ``MRR``           = 1 / min_{g ∈ G, rank(g) > 0} rank(g), 0 if no gold is retrieved (whole stored list; a
                      stored list holds each id once: imported runs drop repeats, as pytrec_eval and ranx count a
                      document once, so a repeat above the gold does not push it down)
- ``nDCG@10``       = DCG / IDCG, DCG = Σ_{g: 1 ≤ rank(g) ≤ 10} 1 / log2(rank(g) + 1),
                      IDCG = Σ_{i=1}^{min(|G|, 10)} 1 / log2(i + 1)            (binary gain; ranx ``ndcg@10``)
- ``HN-intrusion``  = 1[min_{h ∈ H, rank(h) > 0} rank(h) < max_{g ∈ G} rank∞(g)] with rank∞(g) = ∞ when g is not
                      retrieved: some verified hard negative ``h`` is ranked above some gold document. A retrieved
                      hard negative therefore intrudes whenever a gold document is missing from the list; when no
                      hard negative is retrieved it is 0; NaN when the query has no hard negative at all.

K larger than the list simply scores the list (a list of 10 has SR@100 = SR@10); an empty ``ok`` list scores 0.
Rows whose status is not ``ok`` ("does_not_fit", "error") get NaN metrics and are left out of every ``n``: a cell a
model could not run is never a zero.

Aggregates are means over the queries with a defined value, each with its ``n`` and a 95% interval: the Wilson
score interval where the cell's values are binary by definition (R@1, FR@K, HN-intrusion, and SR@K when every gold
set of the cell has one document), which stays informative when every query scores 0 or every one scores 1 (a
bootstrap of such a cell is [0, 0]); else a seeded bootstrap percentile interval (``ci_method`` says which); two systems on one rung are compared with a paired test over the queries both have: a sign-flip
test whose p-value is exact where the differences lie on a grid, else Monte Carlo drawn until no verdict can move.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np
import pandas as pd
import pyarrow as pa

from emb_s_core.errors import EmbSError
from emb_s_core.schema import DOES_NOT_FIT, ERROR, OK

_PAD = np.iinfo(np.int64).min  # never a doc id: pads ragged id lists into matrices
_ROWS = 16384  # result rows scored at once by per_query
_BLOCK = 4096  # rows per block for the (rows × gold × list) comparison: bounds memory at ~40 MB
_QUERY_COLUMNS = ("domain", "task_type", "source")


# ------------------------------------------------------------------------------------------- catalogue
KS: tuple[int, ...] = (1, 5, 10, 20, 50, 100)  # the cut-offs every SR@K / FR@K column is computed for
HN_INTRUSION = "HN-intrusion"
_HN_COLUMN = "hn_intrusion"  # the per-query column (the results contract names it so)


@dataclass(frozen=True)
class Family:
    """One metric family of the module docstring: its name, whether it has a cut-off K, and how to read it."""

    name: str  # "SR@K", "R@1", ...
    label: str  # axis title; ``{k}`` is replaced by the cut-off
    higher_is_better: bool
    population: str  # which queries define it (the others are NaN and left out of ``n``)

    @property
    def has_k(self) -> bool:
        return self.name.endswith("@K")


FAMILIES: tuple[Family, ...] = (
    Family("SR@K", "SR@{k} (share of gold found in top-{k})", True, "all queries"),
    Family("FR@K", "FR@{k} (all gold in top-{k}, multi-source)", True, "multi-source queries"),
    Family("R@1", "R@1 (single-source queries)", True, "single-source queries"),
    Family("MRR", "MRR", True, "all queries"),
    Family("nDCG@10", "nDCG@10", True, "all queries"),
    Family(HN_INTRUSION, "hard-negative intrusion rate", False, "queries with a hard negative"),
)
FAMILY_NAMES: tuple[str, ...] = tuple(f.name for f in FAMILIES)
_BY_NAME = {f.name: f for f in FAMILIES}


@dataclass(frozen=True)
class Metric:
    """One metric as the CLI and the dashboard name it (``SR@10``), resolved against the catalogue."""

    name: str  # display name: "SR@10", "HN-intrusion"
    family: Family
    k: int | None  # the cut-off of SR@K / FR@K; None for the others

    @property
    def column(self) -> str:
        """The per-query column that holds it (``hn_intrusion`` for HN-intrusion)."""
        return _HN_COLUMN if self.name == HN_INTRUSION else self.name

    @property
    def higher_is_better(self) -> bool:
        return self.family.higher_is_better

    @property
    def label(self) -> str:
        return self.family.label.format(k=self.k)


def metric_name(family: str, k: int | str | None = None) -> str:
    """``SR@K`` + 10 → ``SR@10``; families without a cut-off keep their name."""
    return family.replace("@K", f"@{k}") if family.endswith("@K") else family


def metric(name: str) -> Metric:
    """Resolve ``SR@10``, ``FR@5``, ``R@1``, ``MRR``, ``nDCG@10``, ``HN-intrusion`` (or the column ``hn_intrusion``);
    EmbSError naming the valid names otherwise."""
    name = str(name).strip()
    if name == _HN_COLUMN:
        name = HN_INTRUSION
    if name in _BY_NAME and not _BY_NAME[name].has_k:
        return Metric(name, _BY_NAME[name], None)
    fam, _, k = name.partition("@")
    family = _BY_NAME.get(f"{fam}@K")
    if family is not None and k.isdigit() and int(k) in KS:
        return Metric(name, family, int(k))
    raise EmbSError(f"unknown metric {name!r}",
                    fix=f"use SR@K or FR@K with K in {', '.join(map(str, KS))}, or R@1, MRR, nDCG@10, HN-intrusion.")


def metric_names() -> list[str]:
    """Every metric name the per-query table has, in catalogue order (SR@1 … SR@100, FR@1 …, R@1, …)."""
    return [metric_name(f.name, k) for f in FAMILIES for k in (KS if f.has_k else (None,))]


#: a cell's 95% interval (``ci_method`` of :func:`aggregate`): Wilson score for binary cells, else bootstrap
WILSON, BOOTSTRAP = "wilson", "bootstrap"
INTERVAL_NOTE = ("95% intervals: Wilson score for binary cells (R@1, FR@K, HN-intrusion, SR@K when every gold set "
                 "has one document), else bootstrap percentile over queries")
#: cells averaging fewer queries than THIN_N are greyed in figures (their means move with one query); below SMALL_N
#: the figures print each cell's n beside its value
THIN_N = 10
SMALL_N = 30
_Z95 = 1.959963984540054
_BINARY_COLUMNS = ("R@1", _HN_COLUMN)  # besides FR@K: 0/1 per query by definition


def wilson(successes: np.ndarray, n: np.ndarray, z: float = _Z95) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval of a proportion (vectorized): never [0, 0] at 0 of n, nor [1, 1] at n of n; NaN at
    n = 0. Why Wilson: near 0 and 1 it keeps its coverage where the normal interval and the bootstrap collapse."""
    n = np.asarray(n, np.float64)
    safe = np.maximum(n, 1.0)
    p = np.asarray(successes, np.float64) / safe
    denom = 1.0 + z * z / safe
    centre = (p + z * z / (2 * safe)) / denom
    half = z / denom * np.sqrt(np.maximum(p * (1 - p) / safe + z * z / (4 * safe * safe), 0.0))
    low, high = np.clip(centre - half, 0.0, 1.0), np.clip(centre + half, 0.0, 1.0)
    low, high = np.where(p <= 0, 0.0, low), np.where(p >= 1, 1.0, high)  # exact ends, not 1 − 1e-16
    return np.where(n > 0, low, np.nan), np.where(n > 0, high, np.nan)


def _binary_by_definition(col: str) -> bool:
    return col in _BINARY_COLUMNS or col.startswith("FR@")


# ------------------------------------------------------------------------------------------- per query
def per_query(results: pd.DataFrame, queries: pd.DataFrame, ks: Sequence[int] = KS) -> pd.DataFrame:
    """One row per (run, rung, qid) with every metric of the module docstring, plus gold/hard-negative ranks.

    ``results``: run, rung, qid, doc_ids (ranked), [status] — the shape of ``runs.load_results``.
    ``queries``: qid, ref_ids, [hard_negative_ids, domain, task_type, source] — the shape of ``bank.queries``.
    Work is done on padded int64 matrices in row blocks (no per-query Python loop): ranks come from one equality
    comparison of the gold and hard-negative matrices against the ranked-list matrix.
    """
    ks = tuple(sorted({int(k) for k in ks}))
    if not ks or ks[0] < 1:
        raise EmbSError(f"cut-offs K must be positive integers, got {list(ks)}", fix="pass e.g. ks=(1, 10, 100).")
    for col in ("run", "rung", "qid", "doc_ids"):
        if col not in results.columns:
            raise EmbSError(f"results have no column {col!r}", fix="pass the frame of runs.load_results().")
    for col in ("qid", "ref_ids"):
        if col not in queries.columns:
            raise EmbSError(f"queries have no column {col!r}", fix="pass the frame of bank.queries().")
    results = results.reset_index(drop=True)
    qs = queries.drop_duplicates("qid", keep="last").reset_index(drop=True)
    qpos = pd.Index(qs["qid"]).get_indexer(results["qid"])
    if (qpos < 0).any():
        bad = results.loc[qpos < 0].iloc[0]
        raise EmbSError(
            f"results name qid {bad['qid']!r} ({int((qpos < 0).sum())} rows in all) that is not in the bank's queries",
            where=f"run {bad['run']!r}, rung {bad['rung']!r}",
            fix="import the queries the run was made for, or delete the run (`emb-s runs delete NAME`).",
        )
    if len(results) > _ROWS:  # bounded memory and cache-sized matrices: score in slices of rows
        return pd.concat([per_query(results.iloc[i:i + _ROWS], qs, ks) for i in range(0, len(results), _ROWS)],
                         ignore_index=True)
    status = (results["status"].fillna(OK).astype(str).to_numpy() if "status" in results.columns
              else np.full(len(results), OK, dtype=object))
    ok = status == OK

    gold_q, n_gold_q = _dedup(_padded(qs["ref_ids"]))
    hn_col = qs["hard_negative_ids"] if "hard_negative_ids" in qs.columns else pd.Series([[]] * len(qs))
    hn_q, n_hn_q = _dedup(_padded(hn_col))
    ranked = _padded(results["doc_ids"], rows_ok=ok)
    n_ret = (ranked != _PAD).sum(axis=1)

    gold = gold_q[qpos]
    hn = hn_q[qpos]
    n_gold = n_gold_q[qpos]
    n_hn = n_hn_q[qpos]
    gold_ranks = _ranks(gold, ranked)
    hn_ranks = _ranks(hn, ranked)

    gvalid = gold != _PAD
    out = pd.DataFrame({"run": results["run"].to_numpy(), "rung": results["rung"].to_numpy(),
                        "qid": results["qid"].to_numpy(), "status": status})
    out["n_gold"] = n_gold
    out["multi_source"] = n_gold > 1
    for col in _QUERY_COLUMNS:
        out[col] = qs[col].to_numpy()[qpos] if col in qs.columns else None
    out["n_hn"] = n_hn
    out["n_retrieved"] = np.where(ok, n_ret, 0)

    nan = np.nan
    denom = np.maximum(n_gold, 1).astype(np.float64)
    hits = {k: ((gold_ranks > 0) & (gold_ranks <= k)).sum(axis=1) for k in set(ks) | {1}}
    single = n_gold == 1
    out["R@1"] = np.where(ok & single, hits[1] / denom, nan)
    for k in ks:
        out[f"SR@{k}"] = np.where(ok, hits[k] / denom, nan)
    for k in ks:
        out[f"FR@{k}"] = np.where(ok & ~single, (hits[k] == n_gold).astype(np.float64), nan)
    rank_inf = np.where(gold_ranks > 0, gold_ranks, np.iinfo(np.int64).max)
    first = np.where(gvalid, rank_inf, np.iinfo(np.int64).max).min(axis=1)
    out["MRR"] = np.where(ok, np.where(first < np.iinfo(np.int64).max, 1.0 / np.maximum(first, 1), 0.0), nan)
    disc = np.where((gold_ranks > 0) & (gold_ranks <= 10), 1.0 / np.log2(np.maximum(gold_ranks, 1) + 1.0), 0.0)
    ideal = np.cumsum(1.0 / np.log2(np.arange(2, 12)))  # IDCG for 1..10 gold documents
    idcg = ideal[np.clip(n_gold, 1, 10) - 1]
    out["nDCG@10"] = np.where(ok, disc.sum(axis=1) / idcg, nan)
    last_gold = np.where(gvalid, rank_inf, 0).max(axis=1)  # ∞ as soon as one gold is missing
    first_hn = np.where(hn_ranks > 0, hn_ranks, np.iinfo(np.int64).max).min(axis=1)
    intr = (first_hn < last_gold).astype(np.float64)
    out[_HN_COLUMN] = np.where(ok & (n_hn > 0), intr, nan)
    out["gold_ranks"] = _ragged(gold_ranks, n_gold, ok)
    out["hn_ranks"] = _ragged(hn_ranks, n_hn, ok)
    return out


def _padded(col: pd.Series | Iterable, rows_ok: np.ndarray | None = None) -> np.ndarray:
    """Ragged id lists → (rows × longest) int64 matrix padded with ``_PAD``; rows not ok become empty."""
    lists = [_EMPTY if v is None or (isinstance(v, float) and np.isnan(v)) else np.asarray(v, np.int64)
             for v in col]
    lengths = np.fromiter((len(v) for v in lists), np.int64, len(lists))
    if rows_ok is not None and not rows_ok.all():
        lengths = np.where(rows_ok, lengths, 0)
        lists = [v for v, keep in zip(lists, rows_ok) if keep]
    width = int(lengths.max()) if len(lengths) else 0
    mat = np.full((len(lengths), max(width, 1)), _PAD, dtype=np.int64)
    if lengths.sum():
        mat[np.arange(mat.shape[1])[None, :] < lengths[:, None]] = np.concatenate(lists)
    return mat


_EMPTY = np.empty(0, np.int64)


def _dedup(mat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Drop repeated ids within each row (keeping first occurrences, left-aligned); returns (matrix, counts)."""
    same = mat[:, :, None] == mat[:, None, :]
    earlier = np.tril(np.ones((mat.shape[1], mat.shape[1]), dtype=bool), k=-1)
    dup = (same & earlier[None]).any(axis=2) | (mat == _PAD)
    order = np.argsort(dup, axis=1, kind="stable")
    clean = np.where(dup, _PAD, mat)
    clean = np.take_along_axis(clean, order, axis=1)
    return clean, (~dup).sum(axis=1)


def _ranks(targets: np.ndarray, ranked: np.ndarray) -> np.ndarray:
    """1-based first position of each target id in its row's ranked list, 0 when absent or padding."""
    out = np.zeros(targets.shape, dtype=np.int64)
    if ranked.shape[1] == 0 or targets.shape[1] == 0:
        return out
    for start in range(0, len(targets), _BLOCK):
        t = targets[start:start + _BLOCK]
        r = ranked[start:start + _BLOCK]
        eq = (t[:, :, None] == r[:, None, :]) & (t != _PAD)[:, :, None]
        found = eq.any(axis=2)
        out[start:start + _BLOCK] = np.where(found, eq.argmax(axis=2) + 1, 0)
    return out


def _ragged(mat: np.ndarray, counts: np.ndarray, ok: np.ndarray) -> list:
    """Rows of ``mat`` cut to their counts, as Python lists (None for rows that were not scored).

    Built as one Arrow list array (offsets + values) so the 10⁵ small lists are made in C, not in a Python loop.
    """
    mask = np.arange(mat.shape[1])[None, :] < counts[:, None]
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    arr = pa.LargeListArray.from_arrays(pa.array(offsets), pa.array(mat[mask], pa.int64()), mask=pa.array(~ok))
    return arr.to_pylist()


# ------------------------------------------------------------------------------------------- aggregates
def metric_columns(per_query_df: pd.DataFrame, metrics: Iterable[str] | None = None) -> list[str]:
    """Resolve metric names ("SR@10", "SR@K" = every SR cut-off, "HN-intrusion", ...) to per-query columns."""
    cols = [c for c in per_query_df.columns if _is_metric(c)]
    if metrics is None:
        return cols
    out: list[str] = []
    for name in metrics:
        name = name.strip()
        if name.endswith("@K"):
            found = [c for c in cols if c.startswith(name[:-1]) and c[len(name) - 1:].isdigit()]
        elif name in (HN_INTRUSION, _HN_COLUMN):
            found = [_HN_COLUMN] if _HN_COLUMN in cols else []
        else:
            found = [name] if name in cols else []
        if not found:
            raise EmbSError(f"unknown metric {name!r}",
                            fix=f"use one of {', '.join(_display(c) for c in cols)} (or SR@K / FR@K for every K).")
        out.extend(c for c in found if c not in out)
    return out


def _is_metric(col: str) -> bool:
    return col == _HN_COLUMN or col in _BY_NAME or col.startswith(tuple(f.name[:-1] for f in FAMILIES if f.has_k))


def _display(col: str) -> str:
    return HN_INTRUSION if col == _HN_COLUMN else col


def aggregate(per_query_df: pd.DataFrame, by: Sequence[str] | str = ("run", "rung"),
              metrics: Iterable[str] | None = None, n_boot: int = 1000, seed: int = 0) -> pd.DataFrame:
    """Long-form means: *by, metric, value, n, ci_low, ci_high, n_ok, n_does_not_fit, n_error, ci_method.

    ``value`` = mean over the group's queries where the metric is defined (NaN values are excluded, so R@1 counts
    single-source and FR@K multi-source queries only), ``n`` = how many. The interval (``ci_method``) is the Wilson
    score interval in a cell whose values are binary by definition (R@1, FR@K, HN-intrusion; SR@K where every
    defined query of the cell has one gold document, per the ``n_gold`` column), decided per metric and cell; else
    the 2.5/97.5 percentile of ``n_boot`` bootstrap means (``n_boot`` = 0 skips every interval). Resampling is vectorized as a count matrix ``C`` (n_boot × n, row b = how often each
    query is drawn in replicate b) times the value matrix: means = C @ V / n. The draws depend only on ``seed`` and
    ``n``, so a group's interval does not change when other groups or metrics are added to the call.
    """
    by = [by] if isinstance(by, str) else list(by)
    missing = [b for b in by if b not in per_query_df.columns]
    if missing:
        raise EmbSError(f"cannot break down by {missing[0]!r}",
                        fix="use columns of the per-query table, e.g. run, rung, domain, task_type, source, "
                            "multi_source.")
    cols = metric_columns(per_query_df, metrics)
    if n_boot < 0:
        raise EmbSError(f"n_boot must be ≥ 0, got {n_boot}", fix="pass e.g. --n-boot 1000 (0 skips intervals).")
    header = [*by, "metric", "value", "n", "ci_low", "ci_high", "n_ok", "n_does_not_fit", "n_error", "ci_method"]
    if per_query_df.empty or not cols:
        return pd.DataFrame(columns=header)
    status = per_query_df["status"].astype(str).to_numpy() if "status" in per_query_df else None
    values_all = per_query_df[cols].to_numpy(np.float64)
    grouped = per_query_df.groupby(by, sort=False, dropna=False).indices if by else {(): np.arange(len(per_query_df))}
    n_groups = len(grouped)
    value = np.full((n_groups, len(cols)), np.nan)
    count = np.zeros((n_groups, len(cols)), dtype=np.int64)
    lo = np.full((n_groups, len(cols)), np.nan)
    hi = np.full((n_groups, len(cols)), np.nan)
    statuses = np.zeros((n_groups, 3), dtype=np.int64)
    method = np.full((n_groups, len(cols)), "", dtype=object)
    n_gold = per_query_df["n_gold"].to_numpy() if "n_gold" in per_query_df else None
    by_def = np.array([_binary_by_definition(c) for c in cols], bool)
    sr = np.array([c.startswith("SR@") for c in cols], bool)
    jobs: dict[int, list[tuple[int, list[int], np.ndarray]]] = {}  # sample size m → (group, columns, values)
    for g, idx in enumerate(grouped.values()):
        vals = values_all[idx]
        defined = ~np.isnan(vals)
        count[g] = defined.sum(axis=0)
        value[g] = np.where(count[g] > 0, np.where(defined, vals, 0.0).sum(axis=0) / np.maximum(count[g], 1), np.nan)
        st = status[idx] if status is not None else np.full(len(idx), OK)
        statuses[g] = ((st == OK).sum(), (st == DOES_NOT_FIT).sum(), (st == ERROR).sum())
        if not n_boot:
            continue
        binary = by_def.copy()
        if n_gold is not None and sr.any():  # SR@K is 0/1 where every defined query has one gold document
            ones = n_gold[idx] == 1
            binary |= sr & ~(defined & ~ones[:, None]).any(axis=0)
        binary &= count[g] > 0
        if binary.any():
            hits = np.where(defined, vals, 0.0).sum(axis=0)
            wl, wh = wilson(hits, count[g])
            lo[g, binary], hi[g, binary] = wl[binary], wh[binary]
            method[g, binary] = WILSON
        method[g, ~binary & (count[g] > 0)] = BOOTSTRAP
        patterns: dict[bytes, list[int]] = {}  # columns defined on the same rows share one resampling
        for j in np.flatnonzero((count[g] > 0) & ~binary):
            patterns.setdefault(defined[:, j].tobytes(), []).append(int(j))
        for js in patterns.values():
            sub = vals[defined[:, js[0]]][:, js]
            jobs.setdefault(len(sub), []).append((g, js, sub))
    for m, todo in jobs.items():  # one count matrix per sample size, one product for every group of that size
        boot = _boot_means(np.hstack([sub for _, _, sub in todo]), n_boot, seed)
        pct = np.percentile(boot, [2.5, 97.5], axis=0)
        at = 0
        for g, js, _ in todo:
            lo[g, js], hi[g, js] = pct[0, at:at + len(js)], pct[1, at:at + len(js)]
            at += len(js)
    out = pd.DataFrame({"metric": np.tile([_display(c) for c in cols], n_groups), "value": value.ravel(),
                        "n": count.ravel(), "ci_low": lo.ravel(), "ci_high": hi.ravel()})
    keys = [k if isinstance(k, tuple) else (k,) for k in grouped]
    for pos, name in enumerate(by):
        out.insert(pos, name, np.repeat(np.array([k[pos] for k in keys], dtype=object), len(cols)))
    for j, name in enumerate(("n_ok", "n_does_not_fit", "n_error")):
        out[name] = np.repeat(statuses[:, j], len(cols))
    out["ci_method"] = method.ravel()
    return out[header]


_CELLS = 20_000_000  # largest count matrix built at once (160 MB); bigger ones go in chunks of replicates


def _boot_means(values: np.ndarray, n_boot: int, seed: int) -> np.ndarray:
    """Bootstrap means (n_boot × columns) of the rows of ``values`` (m × columns).

    Each chunk of replicates is a count matrix C (replicates × m, C[b, i] = times item i is drawn in replicate b),
    so means = C @ values / m is one BLAS product for all columns at once. The draws depend only on (seed, m), so a
    group's interval is the same whichever other groups share the call.
    """
    m = len(values)
    rng = np.random.default_rng([seed, m])
    step = max(1, _CELLS // m)
    parts = []
    for start in range(0, n_boot, step):
        size = min(step, n_boot - start)
        draws = rng.integers(0, m, size=(size, m))
        flat = (np.arange(size)[:, None] * m + draws).ravel()
        counts = np.bincount(flat, minlength=size * m).reshape(size, m).astype(np.float64)
        parts.append(counts @ values / m)
    return np.concatenate(parts, axis=0)


# ------------------------------------------------------------------------------------------- paired test
_GRID_MAX = 2520  # largest denominator L tried: |d| proportional to integers k/L gets an exact null distribution
_GRID_TOL = 1e-9
_GRID_COST = 50_000_000  # most multiply-adds spent on one exact null distribution (~0.1 s)
_GRID_DIRECT = 200_000  # above this many multiply-adds the null distribution is had by FFT (error < 1e-12)
_ENUMERATE_MAX = 2 ** 16  # sign vectors enumerated outright (non-grid differences, few non-zero)
MAX_RESAMPLES = 2 ** 20  # the most random sign vectors one Monte Carlo p-value may draw
MC_CONFIDENCE = 0.999  # joint confidence that no Monte Carlo error changes a verdict


@dataclass
class SignFlip:
    """Two-sided paired sign-flip p-values of several comparisons (one per difference vector).

    ``exact``: True where the p-value is the exact one (grid convolution or enumeration); elsewhere ``draws``
    random sign vectors were used and the exact p lies in [``p_low``, ``p_high``] (Clopper–Pearson; all intervals
    together with probability ≥ ``MC_CONFIDENCE``). ``decided``: False where ``max_resamples`` ran out before the
    intervals left every verdict unchanged.
    """

    p_value: np.ndarray
    exact: np.ndarray
    draws: np.ndarray
    p_low: np.ndarray
    p_high: np.ndarray
    decided: np.ndarray

    def note(self) -> str:
        """One sentence for a caption: how the p-values were had and the largest Monte Carlo error."""
        if len(self.p_value) == 0 or self.exact.all():
            return "All p-values exact (sign-flip null distribution by convolution or enumeration)."
        mc = ~self.exact
        half = float(np.max((self.p_high[mc] - self.p_low[mc]) / 2))
        text = (f"{int(self.exact.sum())} p-values exact; {int(mc.sum())} by Monte Carlo "
                f"({int(self.draws[mc].min()):,}–{int(self.draws[mc].max()):,} random sign vectors, drawn until each "
                f"p's interval, jointly {MC_CONFIDENCE:.1%}, left every verdict unchanged; error ≤ ±{half:.2g}).")
        undecided = int((~self.decided).sum())
        if undecided:
            text += f" {undecided} verdict(s) still rest on Monte Carlo error after {MAX_RESAMPLES:,} draws."
        return text


def _grid(nz: np.ndarray) -> np.ndarray | None:
    """Positive integers k with |nz| = c·k for one constant c, when |nz| / min|nz| lies on a grid of step 1/L with
    L ≤ _GRID_MAX (0/±1 metrics: L = 1; SR@K: the gold-set sizes); None otherwise (MRR, nDCG)."""
    a = np.abs(nz)
    u = np.unique(a)
    if len(u) > _GRID_MAX:
        return None
    ratio = u / u[0]
    if ratio[-1] > _GRID_MAX:  # no small integers fit (and rounding would pass anything)
        return None
    for start in range(1, _GRID_MAX + 1, 256):
        ls = np.arange(start, min(start + 256, _GRID_MAX + 1), dtype=np.float64)
        scaled = ratio[None, :] * ls[:, None]
        good = (np.abs(scaled - np.round(scaled)) <= _GRID_TOL).all(axis=1)
        if good.any():
            scale = ls[int(np.argmax(good))] / u[0]
            return np.round(a * scale).astype(np.int64)
    return None


def _grid_cost(k: np.ndarray) -> float:
    """Multiply-adds ``_exact_grid_p`` spends on ``k``."""
    values, counts = np.unique(k, return_counts=True)
    length = 1.0 + np.concatenate([[0.0], np.cumsum(2.0 * values * counts)[:-1]])
    return float(((counts + 1.0) * length).sum())


def _exact_grid_p(k: np.ndarray, observed: int) -> float:
    """P(|Σ s_i k_i| ≥ observed) for independent fair signs s_i, k_i positive integers: the null distribution is the
    convolution over distinct values v (count c) of v·(2·Binomial(c, ½) − c), built term by term when small, else
    by an inverse FFT of its characteristic function Π_v cos(ωv)^c (rounding error below 1e-12 on the tail)."""
    from scipy.special import gammaln

    values, counts = np.unique(k, return_counts=True)
    total = int(k.sum())
    t = np.abs(np.arange(-total, total + 1))
    if _grid_cost(k) > _GRID_DIRECT:  # the same distribution from its characteristic function Π cos(ωv)^c
        size = 2 * total + 1
        omega = 2 * np.pi * np.arange(size // 2 + 1) / size
        phi = np.ones(len(omega))
        for v, c in zip(values.tolist(), counts.tolist()):
            phi *= np.cos(omega * v) ** c
        pmf = np.fft.irfft(phi, n=size)  # index i holds t = i (mod size)
        pmf = np.roll(pmf, total)  # index i holds t = i − total
        return float(min(1.0, np.clip(pmf[t >= observed], 0, None).sum()))
    pmf = np.ones(1)
    for v, c in zip(values.tolist(), counts.tolist()):
        j = np.arange(c + 1)
        weights = np.exp(gammaln(c + 1) - gammaln(j + 1) - gammaln(c - j + 1) - c * np.log(2.0))  # Binomial(c, ½)
        grown = np.zeros(len(pmf) + 2 * v * c)
        for j, w in enumerate(weights):
            grown[2 * v * j: 2 * v * j + len(pmf)] += w * pmf
        pmf = grown
    return float(min(1.0, pmf[t >= observed].sum()))


def _enumerated_p(nz: np.ndarray) -> float:
    """Exact p by enumerating all 2^m sign vectors of m (few) non-zero differences."""
    m, hits = len(nz), 0
    observed = abs(nz.sum())
    tol = 1e-9 * max(1.0, observed)
    for start in range(0, 2 ** m, 2 ** 16):
        codes = np.arange(start, min(start + 2 ** 16, 2 ** m))
        flips = ((codes[:, None] >> np.arange(m)[None, :]) & 1).astype(np.float64)
        hits += int((np.abs(nz.sum() - 2.0 * (flips @ nz)) >= observed - tol).sum())
    return hits / 2 ** m


def _sign_chunk(seed: int, n: int, chunk: int, rows: int) -> np.ndarray:
    """Chunk ``chunk`` of the random sign vectors for comparisons over ``n`` queries: 1 = flipped (rows × n).
    Drawn from (seed, n, chunk) only: the same vectors for every comparison over n queries, in this call or any."""
    rng = np.random.default_rng([seed, n, 1, chunk])
    packed = rng.integers(0, 256, size=(rows, (n + 7) // 8), dtype=np.uint8)
    return np.unpackbits(packed, axis=1, count=n).astype(np.float64)


def _cp_bounds(hits: np.ndarray, draws: np.ndarray, tail: float) -> tuple[np.ndarray, np.ndarray]:
    """Clopper–Pearson bounds of a binomial proportion, each side with probability ``tail`` of being wrong."""
    from scipy import stats

    lo = np.where(hits > 0, stats.beta.ppf(tail, np.maximum(hits, 1), draws - hits + 1), 0.0)
    hi = np.where(hits < draws, stats.beta.ppf(1 - tail, hits + 1, np.maximum(draws - hits, 1)), 1.0)
    return lo, hi


def sign_flip_p_values(diffs: Sequence[np.ndarray], *, n_resamples: int = 10000, seed: int = 0, alpha: float = 0.05,
                       correction: str = "none", max_resamples: int = MAX_RESAMPLES) -> SignFlip:
    """Two-sided sign-flip p-values of the mean of each per-query difference vector, so that the verdicts
    ``correct_p_values(p, correction) < alpha`` are those of the exact p-values.

    - Exact where it can be had: differences proportional to small integers (0/±1 for R@1, FR@K, HN-intrusion;
      multiples of 1/|G| for SR@K) by convolving the null distribution; few non-zero differences by enumeration.
    - Elsewhere (MRR, nDCG) Monte Carlo: ``n_resamples`` random sign vectors, drawn once per query count and shared
      by every comparison over that many queries (one matrix product for all of them), then more, doubling, for
      the comparisons whose Clopper–Pearson interval (jointly ``MC_CONFIDENCE`` over all of them) still allows
      another verdict under the correction, up to ``max_resamples``. p = (1 + hits) / (1 + draws).
    """
    k_cells = len(diffs)
    p = np.full(k_cells, np.nan)
    exact = np.ones(k_cells, bool)
    draws = np.zeros(k_cells, np.int64)
    hits = np.zeros(k_cells, np.int64)
    for i, d in enumerate(diffs):
        d = np.asarray(d, np.float64)
        nz = d[d != 0]
        if len(d) == 0:
            continue
        if len(nz) == 0:
            p[i] = 1.0
            continue
        k = _grid(nz)
        if k is not None and _grid_cost(k) <= _GRID_COST:
            s = np.where(nz > 0, k, -k)
            p[i] = _exact_grid_p(k, abs(int(s.sum())))
        elif 2 ** min(len(nz), 64) <= max(n_resamples, _ENUMERATE_MAX):
            p[i] = _enumerated_p(nz)
        else:
            exact[i] = False
    mc = np.flatnonzero(~exact)
    decided = np.ones(k_cells, bool)
    p_low, p_high = p.copy(), p.copy()
    if len(mc):
        tail = (1 - MC_CONFIDENCE) / (2 * len(mc))
        groups: dict[int, list[int]] = {}
        for i in mc:
            groups.setdefault(len(diffs[i]), []).append(int(i))
        target = np.zeros(k_cells, np.int64)
        target[mc] = max(1, n_resamples)
        next_chunk = np.zeros(k_cells, np.int64)
        while True:
            for n, cells in groups.items():
                rows = max(1, min(_CELLS // 4 // n, n_resamples))  # one chunk of sign vectors, fixed per n
                while True:
                    todo = [i for i in cells if draws[i] < target[i]]
                    if not todo:
                        break
                    c = int(min(next_chunk[i] for i in todo))
                    todo = [i for i in todo if next_chunk[i] == c]  # the cells due for chunk c share it
                    flips = _sign_chunk(seed, n, c, rows)
                    mat = np.stack([np.asarray(diffs[i], np.float64) for i in todo], axis=1)
                    total = mat.sum(axis=0)
                    observed = np.abs(total)
                    hit = np.abs(total[None, :] - 2.0 * (flips @ mat)) >= observed - 1e-9 * np.maximum(1.0, observed)
                    for j, i in enumerate(todo):
                        take = int(min(rows, target[i] - draws[i]))
                        hits[i] += int(hit[:take, j].sum())
                        draws[i] += take
                        next_chunk[i] = c + 1
            lo, hi = _cp_bounds(hits[mc], draws[mc], tail)
            p_low[mc], p_high[mc] = lo, hi
            p[mc] = np.clip((hits[mc] + 1) / (draws[mc] + 1), lo, hi)
            rej_lo = correct_p_values(p_low, correction) < alpha
            rej_hi = correct_p_values(p_high, correction) < alpha
            unsure = np.zeros(k_cells, bool)
            unsure[mc] = rej_lo[mc] != rej_hi[mc]
            if not (rej_lo == rej_hi).all():  # a verdict moves: refine its cell and any cell straddling a cut
                cuts = alpha / np.arange(1, int((~np.isnan(p_high)).sum()) + 1)
                straddle = ((lo[:, None] < cuts[None, :]) & (hi[:, None] >= cuts[None, :])).any(axis=1)
                unsure[mc[straddle]] = True
            grow = unsure & (draws < max_resamples)
            if not (rej_lo != rej_hi).any() or not grow.any():
                decided = rej_lo == rej_hi
                break
            target[grow] = np.minimum(2 * draws[grow], max_resamples)
    return SignFlip(p, exact, draws, p_low, p_high, decided)


def paired_intervals(diffs: Sequence[np.ndarray], n_boot: int = 2000, seed: int = 0
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Paired bootstrap 95% percentile interval of mean(d) for each difference vector; the vectors over the same
    number of queries share their resamples (one count-matrix product, as in ``aggregate``)."""
    low = np.full(len(diffs), np.nan)
    high = np.full(len(diffs), np.nan)
    groups: dict[int, list[int]] = {}
    for i, d in enumerate(diffs):
        if len(d):
            groups.setdefault(len(d), []).append(i)
    for n, cells in groups.items():
        boot = _boot_means(np.stack([np.asarray(diffs[i], np.float64) for i in cells], axis=1), n_boot, seed + 2)
        low[cells], high[cells] = np.percentile(boot, [2.5, 97.5], axis=0)
    return low, high


def paired_test(per_query_df: pd.DataFrame, run_a: str, run_b: str, rung: str, metric: str,
                n_resamples: int = 10000, seed: int = 0, n_boot: int = 2000, alpha: float = 0.05) -> dict:
    """Compare two runs on one rung over the queries both have a value for (paired, never two unpaired means).

    d_q = metric_a(q) − metric_b(q); ``delta`` = mean(d). ``p_value``: two-sided sign-flip randomization test of
    mean(d) by ``sign_flip_p_values`` (exact for grid-valued differences and for few non-zero ones; otherwise at
    least ``n_resamples`` random sign vectors, more until the verdict at ``alpha`` is sure). ``ci_low``/``ci_high``:
    paired bootstrap 95% percentile interval of mean(d) from ``n_boot`` resamples of the queries. wins/losses/ties
    count d > 0, d < 0, d = 0.
    """
    if n_resamples < 1 or n_boot < 1:
        raise EmbSError(f"n_resamples and n_boot must be ≥ 1, got {n_resamples} and {n_boot}",
                        fix="pass e.g. --n-resamples 10000.")
    cols = metric_columns(per_query_df, [metric])
    if len(cols) != 1:
        raise EmbSError(f"paired test needs one metric, {metric!r} names {len(cols)}", fix="pass e.g. SR@10.")
    col = cols[0]
    for run in (run_a, run_b):
        if not (per_query_df["run"] == run).any():
            raise EmbSError(f"no results for run {run!r}",
                            fix="see `emb-s report` for the runs of this workspace.")
    here = per_query_df[per_query_df["rung"] == rung]
    if here.empty:
        raise EmbSError(f"no results on rung {rung!r}", fix="see `emb-s ladder show` for the rung names.")
    a = here.loc[here["run"] == run_a].set_index("qid")[col]
    b = here.loc[here["run"] == run_b].set_index("qid")[col]
    both = pd.concat([a.rename("a"), b.rename("b")], axis=1, join="inner").dropna()
    d = (both["a"] - both["b"]).to_numpy(np.float64)
    n = len(d)
    test = "two-sided paired sign-flip randomization; paired bootstrap 95% interval"
    result = {"run_a": run_a, "run_b": run_b, "rung": rung, "metric": _display(col), "n": n,
              "mean_a": float(both["a"].mean()) if n else np.nan, "mean_b": float(both["b"].mean()) if n else np.nan,
              "delta": float(d.mean()) if n else np.nan, "ci_low": np.nan, "ci_high": np.nan, "p_value": np.nan,
              "wins": int((d > 0).sum()), "losses": int((d < 0).sum()), "ties": int((d == 0).sum()), "test": test}
    if n == 0:
        return result
    sf = sign_flip_p_values([d], n_resamples=n_resamples, seed=seed, alpha=alpha)
    result["p_value"] = float(sf.p_value[0])
    if sf.exact[0]:
        result["test"] = test.replace("randomization", "randomization (exact)")
    else:
        result["test"] = test.replace("randomization", f"randomization ({int(sf.draws[0]):,} random sign vectors, "
                                      f"p within ±{(sf.p_high[0] - sf.p_low[0]) / 2:.2g})")
    low, high = paired_intervals([d], n_boot, seed)
    result["ci_low"], result["ci_high"] = float(low[0]), float(high[0])
    return result


# ------------------------------------------------------------------------------------------- multiple testing
CORRECTIONS = ("holm", "bonferroni", "none")
CORRECTION_LABELS = {"holm": "Holm (step-down, family-wise error)", "bonferroni": "Bonferroni (family-wise error)",
                     "none": "none (each test alone)"}


def correct_p_values(p_values: Sequence[float] | np.ndarray, method: str = "holm") -> np.ndarray:
    """p-values adjusted for testing all of them at once, so "better at α" holds for the whole table, not per cell.

    With the m defined (non-NaN) p-values sorted ascending, p_(1) ≤ … ≤ p_(m):
    - ``bonferroni``: p̃_i = min(1, m · p_i);
    - ``holm``: p̃_(i) = min(1, max_{j ≤ i} (m − j + 1) · p_(j)) (step-down; never larger than Bonferroni);
    - ``none``: p̃_i = p_i.
    NaN entries (comparisons without paired queries) stay NaN and do not count in m. Same values as statsmodels'
    ``multipletests(p, method="holm" | "bonferroni")[1]``.
    """
    method = (method or "").lower()
    if method not in CORRECTIONS:
        raise EmbSError(f"unknown multiple-testing correction {method!r}", fix=f"use one of {', '.join(CORRECTIONS)}.")
    p = np.asarray(p_values, dtype=np.float64).ravel()
    defined = ~np.isnan(p)
    if ((p[defined] < 0) | (p[defined] > 1)).any():
        raise EmbSError("p-values must lie in [0, 1]", fix="pass the p_value column of paired tests.")
    out = p.copy()
    m = int(defined.sum())
    if method == "none" or m == 0:
        return out
    vals = p[defined]
    if method == "bonferroni":
        out[defined] = np.minimum(1.0, m * vals)
        return out
    order = np.argsort(vals, kind="stable")
    stepped = np.maximum.accumulate((m - np.arange(m)) * vals[order])
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(1.0, stepped)
    out[defined] = adjusted
    return out
