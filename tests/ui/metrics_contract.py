"""A test-only reference of the ``emb_s_core.metrics`` contract (DESIGN.md §1 formulas), used ONLY while the
metrics branch has not landed on this branch: ``tests/ui/conftest.py`` installs it as ``emb_s_core.metrics`` when the
real module is missing, so the dashboard tests exercise the same names and shapes the pages call.

Kept deliberately plain (per-query loops): it is never on a product path and disappears from use once
``emb_s_core/metrics.py`` exists.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

KS = (1, 5, 10, 20, 50, 100)


def per_query(results: pd.DataFrame, queries: pd.DataFrame, ks=KS) -> pd.DataFrame:
    """One row per (run, rung, qid). SR@K=|R∩G|/|G|; FR@K=1[G⊆R] (multi only); R@1=1[R0∈G] (single only)."""
    q = queries.set_index("qid")
    rows = []
    for r in results.itertuples(index=False):
        qq = q.loc[r.qid]
        gold = [int(x) for x in qq["ref_ids"]]
        hns = [int(x) for x in (qq["hard_negative_ids"] if qq["hard_negative_ids"] is not None else [])]
        multi = len(gold) > 1
        row = {"run": r.run, "rung": r.rung, "qid": r.qid, "status": r.status, "n_gold": len(gold),
               "multi_source": multi, "domain": qq["domain"], "task_type": qq["task_type"],
               "source": qq.get("source", "")}
        ranked = [int(x) for x in (r.doc_ids if r.doc_ids is not None else [])]
        pos = {d: i + 1 for i, d in enumerate(ranked)}
        gold_ranks = [pos.get(g, 0) for g in gold]
        hn_ranks = [pos.get(h, 0) for h in hns]
        ok = r.status == "ok"
        nan = float("nan")
        row["R@1"] = nan if (multi or not ok) else float(bool(ranked) and ranked[0] in gold)
        for k in ks:
            top = set(ranked[:k])
            row[f"SR@{k}"] = len(top & set(gold)) / len(gold) if ok else nan
            row[f"FR@{k}"] = (float(set(gold) <= top) if multi else nan) if ok else nan
        found = [x for x in gold_ranks if x > 0]
        row["MRR"] = (1.0 / min(found) if found else 0.0) if ok else nan
        dcg = sum(1 / math.log2(x + 1) for x in gold_ranks if 0 < x <= 10)
        idcg = sum(1 / math.log2(i + 2) for i in range(min(len(gold), 10)))
        row["nDCG@10"] = dcg / idcg if ok else nan
        if not ok or not hns:
            row["hn_intrusion"] = nan
        else:
            best_gold = min(found) if found else math.inf
            row["hn_intrusion"] = float(any(0 < h < best_gold for h in hn_ranks))
        row["gold_ranks"], row["hn_ranks"] = gold_ranks, hn_ranks
        rows.append(row)
    return pd.DataFrame(rows)


def _col(metric: str) -> str:
    return "hn_intrusion" if metric == "HN-intrusion" else metric


def aggregate(per_query_df: pd.DataFrame, by=("run", "rung"), metrics=None, n_boot=1000, seed=0) -> pd.DataFrame:
    by = list(by)
    if metrics is None:
        metrics = [c for c in per_query_df.columns if c.startswith(("R@", "SR@", "FR@"))] + ["MRR", "nDCG@10",
                                                                                                "HN-intrusion"]
    rng = np.random.default_rng(seed)
    out = []
    for key, g in per_query_df.groupby(by, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        counts = g["status"].value_counts()
        for m in metrics:
            v = g[_col(m)].dropna().to_numpy(float)
            row = dict(zip(by, key), metric=m, n=len(v), value=float(v.mean()) if len(v) else float("nan"))
            if len(v):
                boots = v[rng.integers(0, len(v), (n_boot, len(v)))].mean(axis=1)
                row["ci_low"], row["ci_high"] = float(np.quantile(boots, 0.025)), float(np.quantile(boots, 0.975))
            else:
                row["ci_low"] = row["ci_high"] = float("nan")
            for s in ("ok", "does_not_fit", "error"):
                row[f"n_{s}"] = int(counts.get(s, 0))
            out.append(row)
    return pd.DataFrame(out)


def paired_test(per_query_df, run_a, run_b, rung, metric, n_resamples=10000, seed=0) -> dict:
    col = _col(metric)
    d = per_query_df[per_query_df["rung"] == rung]
    a = d[d["run"] == run_a].set_index("qid")[col]
    b = d[d["run"] == run_b].set_index("qid")[col]
    both = pd.concat([a, b], axis=1, keys=["a", "b"]).dropna()
    diff = (both["a"] - both["b"]).to_numpy(float)
    n = len(diff)
    if n == 0:
        return dict(delta=float("nan"), ci_low=float("nan"), ci_high=float("nan"), p_value=float("nan"), n=0,
                    wins=0, losses=0, ties=0, test="paired randomization")
    rng = np.random.default_rng(seed)
    boots = diff[rng.integers(0, n, (min(n_resamples, 2000), n))].mean(axis=1)
    signs = rng.choice([-1.0, 1.0], size=(min(n_resamples, 2000), n))
    null = np.abs((signs * diff).mean(axis=1))
    p = float((np.sum(null >= abs(diff.mean()) - 1e-12) + 1) / (len(null) + 1))
    return dict(delta=float(diff.mean()), ci_low=float(np.quantile(boots, 0.025)),
                ci_high=float(np.quantile(boots, 0.975)), p_value=p, n=n, wins=int((diff > 0).sum()),
                losses=int((diff < 0).sum()), ties=int((diff == 0).sum()), test="paired randomization")


def workspace_per_query(ws, runs=None) -> pd.DataFrame:
    from emb_s_core import bank
    from emb_s_core import runs as runs_mod

    return per_query(runs_mod.load_results(ws, runs=runs), bank.queries(ws))
