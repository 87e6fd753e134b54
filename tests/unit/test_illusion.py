"""The illusion gap and effective scale on constructed per-query results whose answers are known by hand."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from emb_s_core import metrics
from emb_s_core.analysis import illusion
from emb_s_core.errors import EmbSError


def per_query(found: dict[tuple[str, str], set[str]], queries: pd.DataFrame) -> pd.DataFrame:
    """Results where query q's ranked list holds its gold exactly when q ∈ found[(run, rung)] (else filler ids);
    a domain rung ``<size>/<d>`` holds the queries of domain d only."""
    rows = []
    for (run, rung), hits in found.items():
        for q in queries.itertuples():
            if "/" in rung and rung.split("/")[1] != q.domain:
                continue
            ids = list(q.ref_ids) if q.qid in hits else [900 + i for i in range(10)]
            rows.append({"run": run, "rung": rung, "qid": q.qid, "doc_ids": ids + [800, 801]})
    return metrics.per_query(pd.DataFrame(rows), queries)


def queries(n: int, multi: int = 0, domains=("a",)) -> pd.DataFrame:
    return pd.DataFrame({"qid": [f"q{i}" for i in range(n)],
                         "ref_ids": [[i, 100 + i] if i < multi else [i] for i in range(n)],
                         "hard_negative_ids": [[] for _ in range(n)],
                         "domain": [domains[i % len(domains)] for i in range(n)]})


def test_gap_and_its_paired_test_equal_hand_computed_values():
    qs = queries(8, multi=2)  # q0, q1 multi-source; q2..q7 single-source
    pq = per_query({("bm25", "512K"): {"q0", "q2", "q4", "q7"},
                    ("bm25", "benign:512K"): {"q0", "q1", "q2", "q3", "q4", "q5", "q6", "q7"},
                    ("other", "512K"): {"q0"}}, qs)  # "other" has no twin: left out
    g = illusion.gap(pq).set_index(["run", "rung", "metric"])
    assert set(g.index.get_level_values("run")) == {"bm25"}
    sr = g.loc[("bm25", "512K", "SR@10")]
    # per query SR@10: benign all 1; adversarial 1,0,1,0,1,0,0,1 -> d = 0,1,0,1,0,1,1,0: mean 4/8
    assert sr["benign"] == 1.0 and sr["adversarial"] == 0.5 and sr["gap"] == 0.5 and sr["n"] == 8
    # 4 non-zero differences, all +1: of the 2^4 sign vectors only all-plus and all-minus reach |Σ| = 4
    assert sr["p_value"] == pytest.approx(2 / 16)
    assert sr["wins"] == 4 and sr["losses"] == 0 and sr["ties"] == 4
    assert 0 < sr["ci_low"] <= 0.5 <= sr["ci_high"] <= 1
    fr = g.loc[("bm25", "512K", "FR@10")]  # multi-source q0 (found on both), q1 (benign only)
    assert (fr["benign"], fr["adversarial"], fr["gap"], fr["n"]) == (1.0, 0.5, 0.5, 2)
    assert fr["p_value"] == pytest.approx(1.0)  # one non-zero difference: both signs reach it
    r1 = g.loc[("bm25", "512K", "R@1")]  # single-source q2..q7: adversarial finds q2, q4, q7
    assert (r1["benign"], r1["adversarial"], r1["gap"], r1["n"]) == (1.0, 0.5, 0.5, 6)
    assert r1["p_value"] == pytest.approx(2 / 8)


def test_gap_needs_twin_results():
    qs = queries(3)
    pq = per_query({("bm25", "512K"): {"q0"}}, qs)
    with pytest.raises(EmbSError, match="no run has results on both.*--ladder both"):
        illusion.gap(pq)


def test_gap_leaves_out_metrics_no_query_defines_with_a_note():
    qs = queries(4, multi=4)  # every query multi-source (HotpotQA-like): R@1 is defined for none
    pq = per_query({("bm25", "512K"): {"q0"}, ("bm25", "benign:512K"): {"q0", "q1"}}, qs)
    g = illusion.gap(pq)
    assert set(g["metric"]) == {"SR@10", "FR@10"} and not g[["benign", "adversarial"]].isna().any().any()
    notes = illusion.undefined_metrics(pq, illusion.GAP_METRICS)
    assert list(notes) == ["R@1"] and "single-source queries only" in notes["R@1"] and "4 queries" in notes["R@1"]
    with pytest.raises(EmbSError, match="R@1 left out: it counts single-source queries only"):
        illusion.gap(pq, metric_names=["R@1"])
    assert illusion.gap_or_empty(pq, ["bm25"], "R@1").empty


SCALES = ["64K", "128K", "512K", "1M", "full"]


def ladder_results(curve_hits: dict[str, int], run: str, qs: pd.DataFrame) -> dict:
    """Hits per scale → found sets: the first ``hits`` queries find their gold (domain rungs per domain)."""
    out = {}
    for scale, hits in curve_hits.items():
        found = set(qs["qid"][:hits])
        if scale in ("64K", "128K"):
            for d in sorted(set(qs["domain"])):
                mine = set(qs.loc[qs["domain"] == d, "qid"])
                out[(run, f"{scale}/{d}")] = found & mine
        else:
            out[(run, scale)] = found
    return out


def test_effective_scale_on_a_constructed_run():
    qs = queries(20, domains=("a", "b"))
    # SR@10 per scale: 20/20, 18/20, 17/20 (= 0.85, still at the threshold), 14/20, 18/20 (a recovery after the drop
    # does not count: the scale must *stay* above)
    falls = ladder_results({"64K": 20, "128K": 18, "512K": 17, "1M": 14, "full": 18}, "falls", qs)
    holds = ladder_results({"64K": 20, "128K": 19, "512K": 18, "1M": 18, "full": 17}, "holds", qs)
    pq = per_query({**falls, **holds}, qs)
    eff = illusion.effective_scale(pq, SCALES, n_boot=500).set_index("run")
    assert eff.loc["falls", "effective"] == "512K" and eff.loc["falls", "index"] == 2
    assert eff.loc["falls", "base"] == 1.0 and eff.loc["falls", "threshold"] == pytest.approx(0.85)
    assert eff.loc["falls", "values"] == pytest.approx([1.0, 0.9, 0.85, 0.7, 0.9])
    assert eff.loc["holds", "effective"] == "≥ full" and eff.loc["holds", "index"] == len(SCALES)
    order = SCALES + ["≥ full"]
    lo, hi = order.index(eff.loc["falls", "ci_low"]), order.index(eff.loc["falls", "ci_high"])
    assert lo <= 2 <= hi and lo < hi  # 20 queries: the interval is wide, and contains the point estimate
    assert eff.loc["falls", "n"] == 20


def test_effective_scale_per_domain_and_bad_inputs():
    qs = queries(20, domains=("a", "b"))
    # the first hits queries alternate a, b: domain b (odd qids) loses its queries first as hits fall
    found = ladder_results({"64K": 20, "128K": 20, "512K": 20, "1M": 20, "full": 20}, "r", qs)
    found[("r", "1M")] = set(qs.loc[qs["domain"] == "a", "qid"]) | {"q1", "q3", "q5", "q7"}  # b: 4/10 on 1M
    pq = per_query(found, qs)
    eff = illusion.effective_scale(pq, SCALES, by_domain=True, n_boot=0).set_index("domain")
    assert eff.loc["all", "effective"] == "512K"  # pooled: 14/20 = 0.7 < 0.85 on 1M
    assert eff.loc["a", "effective"] == "≥ full"
    assert eff.loc["b", "effective"] == "512K" and eff.loc["b", "n"] == 10
    with pytest.raises(EmbSError, match="fraction must be in"):
        illusion.effective_scale(pq, SCALES, fraction=1.5)
    with pytest.raises(EmbSError, match="at least two scales"):
        illusion.effective_scale(pq, ["64K"])
    assert np.isfinite(eff["base"]).all()
