"""Metric formulas on hand-computed cases, cross-checked against ranx and scipy; intervals and paired tests."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

from emb_s_core import metrics
from emb_s_core.errors import EmbSError

L2 = math.log2


def queries(rows):
    """rows: (qid, ref_ids, hard_negative_ids[, domain])."""
    return pd.DataFrame({"qid": [r[0] for r in rows], "ref_ids": [r[1] for r in rows],
                         "hard_negative_ids": [r[2] for r in rows],
                         "domain": [r[3] if len(r) > 3 else "d" for r in rows],
                         "task_type": "t", "source": "s"})


def results(rows, run="r", rung="g"):
    """rows: (qid, doc_ids[, status[, scores]])."""
    return pd.DataFrame({"run": run, "rung": rung, "qid": [r[0] for r in rows], "doc_ids": [r[1] for r in rows],
                         "status": [r[2] if len(r) > 2 else "ok" for r in rows],
                         "scores": [r[3] if len(r) > 3 else None for r in rows]})


def one(pq, qid):
    return pq.set_index("qid").loc[qid]


QS = queries([
    ("top", [5], [6]),                 # single-source, gold first
    ("third", [5], [6]),               # single-source, gold third of five
    ("multi", [1, 2, 3], [9]),         # multi-source
    ("absent", [1, 2], []),            # gold never retrieved, no hard negative
    ("empty", [5], [6]),               # ok status, empty list
    ("ties", [5], []),                 # equal scores: the stored order is the ranking
    ("dnf", [5], [6]),                 # does not fit
])
RS = results([
    ("top", [5, 6, 7]),
    ("third", [7, 8, 5, 6, 4]),
    ("multi", [2, 9, 1, 8, 3]),
    ("absent", [7, 8]),
    ("empty", []),
    ("ties", [7, 5, 6], "ok", [0.5, 0.5, 0.5]),
    ("dnf", [], "does_not_fit"),
])
KS = (1, 5, 10, 100)


@pytest.fixture(scope="module")
def pq():
    return metrics.per_query(RS, QS, ks=KS)


def test_single_source_hit_at_one(pq):
    r = one(pq, "top")
    assert (r["R@1"], r["SR@1"], r["SR@100"], r["MRR"], r["nDCG@10"]) == (1.0, 1.0, 1.0, 1.0, 1.0)
    assert math.isnan(r["FR@5"]) and not r["multi_source"]
    assert r["gold_ranks"] == [1] and r["hn_ranks"] == [2] and r["hn_intrusion"] == 0.0


def test_single_source_third_and_k_beyond_the_list(pq):
    r = one(pq, "third")
    assert r["R@1"] == 0.0 and r["SR@1"] == 0.0 and r["SR@5"] == 1.0
    assert r["SR@100"] == 1.0  # K larger than the list scores the list
    assert r["MRR"] == pytest.approx(1 / 3)
    assert r["nDCG@10"] == pytest.approx(1 / L2(4))
    assert r["gold_ranks"] == [3] and r["hn_ranks"] == [4] and r["hn_intrusion"] == 0.0
    assert r["n_retrieved"] == 5


def test_multi_source(pq):
    r = one(pq, "multi")
    assert r["multi_source"] and r["n_gold"] == 3
    assert math.isnan(r["R@1"])
    assert r["SR@1"] == pytest.approx(1 / 3) and r["SR@5"] == 1.0
    assert r["FR@1"] == 0.0 and r["FR@5"] == 1.0 and r["FR@100"] == 1.0
    assert r["MRR"] == 1.0
    dcg = 1 + 1 / L2(4) + 1 / L2(6)
    idcg = 1 + 1 / L2(3) + 1 / L2(4)
    assert r["nDCG@10"] == pytest.approx(dcg / idcg)
    assert r["gold_ranks"] == [3, 1, 5] and r["hn_ranks"] == [2]
    assert r["hn_intrusion"] == 1.0  # 9 at rank 2 is above gold 1 (rank 3)


def test_gold_absent_and_empty_list(pq):
    r = one(pq, "absent")
    assert r["SR@100"] == 0.0 and r["FR@100"] == 0.0 and r["MRR"] == 0.0 and r["nDCG@10"] == 0.0
    assert r["gold_ranks"] == [0, 0] and math.isnan(r["hn_intrusion"])  # no hard negative: undefined
    e = one(pq, "empty")
    assert e["status"] == "ok" and e["n_retrieved"] == 0
    assert (e["R@1"], e["SR@100"], e["MRR"], e["nDCG@10"], e["hn_intrusion"]) == (0.0, 0.0, 0.0, 0.0, 0.0)
    assert e["gold_ranks"] == [0] and e["hn_ranks"] == [0]


def test_ties_keep_the_stored_order(pq):
    r = one(pq, "ties")
    assert r["gold_ranks"] == [2] and r["R@1"] == 0.0 and r["MRR"] == 0.5


def test_does_not_fit_is_nan_never_zero(pq):
    r = one(pq, "dnf")
    metric_cols = metrics.metric_columns(pq)
    assert all(math.isnan(r[c]) for c in metric_cols)
    assert r["gold_ranks"] is None
    agg = metrics.aggregate(pq, metrics=["SR@5"], n_boot=0)
    assert agg["n"].iloc[0] == 6 and agg["n_does_not_fit"].iloc[0] == 1 and agg["n_ok"].iloc[0] == 6
    expected = np.mean([1, 1, 1, 0, 0, 1])
    assert agg["value"].iloc[0] == pytest.approx(expected)


@pytest.mark.parametrize("ranked, gold, hn, expected", [
    ([6, 5], [5], [6], 1.0),            # hard negative above the gold
    ([5, 6], [5], [6], 0.0),            # below it
    ([6, 7], [5], [6], 1.0),            # gold missing (rank ∞), hard negative retrieved
    ([7, 8], [5], [6], 0.0),            # neither retrieved: ∞ is not above ∞
    ([1, 6, 2], [1, 2], [6], 1.0),      # between two golds: above some gold
    ([1, 2, 6], [1, 2], [6], 0.0),      # below every gold
    ([1, 6], [1, 2], [6], 1.0),         # second gold missing
    ([5], [5], [], float("nan")),       # no hard negative
])
def test_hard_negative_intrusion_edges(ranked, gold, hn, expected):
    pq = metrics.per_query(results([("q", ranked)]), queries([("q", gold, hn)]))
    got = pq["hn_intrusion"].iloc[0]
    assert (math.isnan(got) and math.isnan(expected)) or got == expected


def test_duplicates_in_list_count_first_occurrence():
    pq = metrics.per_query(results([("q", [7, 5, 5, 1])]), queries([("q", [5, 1], [])]), ks=(2, 3))
    r = pq.iloc[0]
    assert r["gold_ranks"] == [2, 4] and r["SR@2"] == 0.5 and r["SR@3"] == 0.5


def test_unknown_qid_and_bad_input_raise():
    with pytest.raises(EmbSError, match="qid 'zz'.*not in the bank"):
        metrics.per_query(results([("zz", [1])]), QS)
    with pytest.raises(EmbSError, match="positive"):
        metrics.per_query(RS, QS, ks=(0, 5))
    with pytest.raises(EmbSError, match="no column 'doc_ids'"):
        metrics.per_query(RS.drop(columns="doc_ids"), QS)


def random_case(seed=3, n_q=80, pool=60):
    rng = np.random.default_rng(seed)
    qrows, rrows = [], []
    for i in range(n_q):
        gold = rng.choice(pool, size=int(rng.integers(1, 5)), replace=False).tolist()
        hn = rng.choice(pool, size=int(rng.integers(0, 3)), replace=False).tolist()
        hn = [h for h in hn if h not in gold]
        length = int(rng.integers(1, 40))
        qrows.append((f"q{i:03d}", gold, hn, ["a", "b"][i % 2]))
        rrows.append((f"q{i:03d}", rng.choice(pool, size=length, replace=False).tolist()))
    return queries(qrows), results(rrows)


def test_agrees_with_ranx_on_random_runs():
    ranx = pytest.importorskip("ranx")
    qs, rs = random_case()
    pq = metrics.per_query(rs, qs, ks=(1, 5, 10, 20)).sort_values("qid")
    qrels = ranx.Qrels({q: {str(d): 1 for d in g} for q, g in zip(qs["qid"], qs["ref_ids"])})
    run = ranx.Run({q: {str(d): float(len(ids) - i) for i, d in enumerate(ids)} for q, ids in zip(rs["qid"], rs["doc_ids"])})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = ranx.evaluate(qrels, run, ["recall@1", "recall@5", "recall@10", "recall@20", "ndcg@10", "mrr"],
                            return_mean=False)
    for k in (1, 5, 10, 20):
        np.testing.assert_allclose(pq[f"SR@{k}"].to_numpy(), ref[f"recall@{k}"], atol=1e-12)
    np.testing.assert_allclose(pq["nDCG@10"].to_numpy(), ref["ndcg@10"], atol=1e-9)
    np.testing.assert_allclose(pq["MRR"].to_numpy(), ref["mrr"], atol=1e-12)
    single = ~pq["multi_source"].to_numpy()
    np.testing.assert_array_equal(pq["R@1"].to_numpy()[single], pq["SR@1"].to_numpy()[single])


def test_fr_and_ranks_match_a_direct_reading_on_random_runs():
    qs, rs = random_case(seed=11)
    pq = metrics.per_query(rs, qs, ks=(10,))
    for (_, q), (_, r), (_, p) in zip(qs.iterrows(), rs.iterrows(), pq.iterrows()):
        ids = list(r["doc_ids"])
        ranks = [ids.index(g) + 1 if g in ids else 0 for g in q["ref_ids"]]
        assert p["gold_ranks"] == ranks
        if len(q["ref_ids"]) > 1:
            assert p["FR@10"] == float(set(q["ref_ids"]) <= set(ids[:10]))


# ------------------------------------------------------------------------------------------- aggregates
def bernoulli_pq(n, p, seed, run="r", rung="g"):
    rng = np.random.default_rng(seed)
    hits = rng.random(n) < p
    qs = queries([(f"q{i}", [1], []) for i in range(n)])
    rs = results([(f"q{i}", [1] if h else [2]) for i, h in enumerate(hits)], run=run, rung=rung)
    return metrics.per_query(rs, qs, ks=(1,)), hits


def test_aggregate_mean_n_and_interval():
    """A binary cell (single-gold SR@1) gets the Wilson score interval, equal to statsmodels'; a cell of another
    metric the seeded bootstrap, near the normal approximation, the same for the same seed."""
    from statsmodels.stats.proportion import proportion_confint

    pq, hits = bernoulli_pq(400, 0.5, seed=1)
    agg = metrics.aggregate(pq, metrics=["SR@1"], n_boot=2000, seed=0).iloc[0]
    assert agg["n"] == 400 and agg["value"] == pytest.approx(hits.mean()) and agg["ci_method"] == metrics.WILSON
    low, high = proportion_confint(int(hits.sum()), 400, alpha=0.05, method="wilson")
    assert (agg["ci_low"], agg["ci_high"]) == (pytest.approx(low, abs=1e-12), pytest.approx(high, abs=1e-12))
    pq = pq.assign(MRR=np.where(hits, 1.0, 0.5))  # not binary: bootstrap
    agg = metrics.aggregate(pq, metrics=["MRR"], n_boot=2000, seed=0).iloc[0]
    assert agg["ci_method"] == metrics.BOOTSTRAP
    half = 1.96 * math.sqrt(hits.mean() * (1 - hits.mean()) / 400) / 2  # normal approximation
    assert agg["ci_low"] == pytest.approx(agg["value"] - half, abs=0.012)
    assert agg["ci_high"] == pytest.approx(agg["value"] + half, abs=0.012)
    again = metrics.aggregate(pq, metrics=["MRR"], n_boot=2000, seed=0).iloc[0]
    other = metrics.aggregate(pq, metrics=["MRR"], n_boot=2000, seed=5).iloc[0]
    assert (again["ci_low"], again["ci_high"]) == (agg["ci_low"], agg["ci_high"])
    assert (other["ci_low"], other["ci_high"]) != (agg["ci_low"], agg["ci_high"])


def test_aggregate_groups_breakdowns_and_subset_invariance(pq):
    qs, rs = random_case(seed=5)
    big = metrics.per_query(pd.concat([rs, rs.assign(run="r2", doc_ids=rs["doc_ids"].map(lambda x: x[::-1]))]), qs)
    agg = metrics.aggregate(big, by=("run", "rung", "domain"), metrics=["SR@K", "FR@10", "HN-intrusion"])
    assert set(agg["metric"]) == {f"SR@{k}" for k in metrics.KS} | {"FR@10", "HN-intrusion"}
    sr = agg[(agg["metric"] == "SR@10") & (agg["run"] == "r")]
    assert sr["n"].sum() == len(qs)
    fr = agg[(agg["metric"] == "FR@10") & (agg["run"] == "r")]
    assert fr["n"].sum() == int((qs["ref_ids"].map(len) > 1).sum())
    for _, row in agg.iterrows():
        assert row["ci_low"] - 1e-12 <= row["value"] <= row["ci_high"] + 1e-12
    alone = metrics.aggregate(big[big["run"] == "r"], by=("run", "rung", "domain"), metrics=["SR@10"])
    merged = alone.merge(agg, on=["run", "rung", "domain", "metric"], suffixes=("", "_all"))
    np.testing.assert_allclose(merged["ci_low"], merged["ci_low_all"])
    with pytest.raises(EmbSError, match="unknown metric 'SR@7'"):
        metrics.aggregate(big, metrics=["SR@7"])
    with pytest.raises(EmbSError, match="break down by 'colour'"):
        metrics.aggregate(big, by=("run", "colour"))


def test_cells_where_every_query_scores_0_or_1_get_a_non_degenerate_interval():
    """Issue 31 §5: a bootstrap of a cell where every query scores 1 (or 0) is [1, 1] ([0, 0]); binary cells get
    Wilson, decided per metric and cell: SR@K is binary where every gold set has one document, FR@K and R@1 always,
    SR@K on a cell with a multi-source query is not (bootstrap)."""
    from statsmodels.stats.proportion import proportion_confint

    pq, _ = bernoulli_pq(30, 1.0, seed=2)
    row = metrics.aggregate(pq, metrics=["SR@1"]).iloc[0]
    assert row["value"] == row["ci_high"] == 1.0 and row["ci_method"] == metrics.WILSON
    assert row["ci_low"] == pytest.approx(proportion_confint(30, 30, method="wilson")[0]) and row["ci_low"] < 0.9
    zero, _ = bernoulli_pq(6, 0.0, seed=2)
    row = metrics.aggregate(zero, metrics=["SR@1"]).iloc[0]
    assert row["value"] == row["ci_low"] == 0.0 and row["ci_high"] == pytest.approx(
        proportion_confint(0, 6, method="wilson")[1]) and row["ci_high"] > 0.3
    qs = queries([("a", [1, 2], []), ("b", [3, 4], []), ("c", [5], [])])
    rs = results([("a", [1, 2]), ("b", [9, 8]), ("c", [5])])
    agg = metrics.aggregate(metrics.per_query(rs, qs, ks=(1, 10)), metrics=["SR@10", "FR@10", "R@1"]).set_index(
        "metric")
    assert agg.loc["FR@10", "ci_method"] == agg.loc["R@1", "ci_method"] == metrics.WILSON
    assert agg.loc["SR@10", "ci_method"] == metrics.BOOTSTRAP  # two gold documents: SR takes 0, 1/2, 1
    assert agg.loc["R@1", "ci_high"] == 1.0 and agg.loc["R@1", "ci_low"] > 0  # 1 of 1, not [1, 1]
    assert metrics.aggregate(pq, metrics=["SR@1"], n_boot=0).iloc[0]["ci_method"] == ""  # intervals skipped


# ------------------------------------------------------------------------------------------- paired test
def two_runs(n, p_a, p_b, seed):
    a, _ = bernoulli_pq(n, p_a, seed, run="A")
    b, _ = bernoulli_pq(n, p_b, seed + 100, run="B")
    return pd.concat([a, b], ignore_index=True)


def test_paired_test_identical_and_dominating():
    pq, _ = bernoulli_pq(50, 0.5, seed=3, run="A")
    same = pd.concat([pq, pq.assign(run="B")])
    t = metrics.paired_test(same, "A", "B", "g", "SR@1")
    assert t["delta"] == 0 and t["p_value"] == 1.0 and t["ties"] == 50 and t["n"] == 50
    dom = two_runs(60, 1.0, 0.0, seed=4)
    t = metrics.paired_test(dom, "A", "B", "g", "SR@1", n_resamples=5000)
    assert t["delta"] == 1.0 and t["wins"] == 60 and t["losses"] == 0
    assert t["p_value"] == pytest.approx(2 / 2 ** 60, rel=1e-9) and "exact" in t["test"]  # 0/1: no sampling
    assert t["ci_low"] == t["ci_high"] == 1.0


def test_paired_test_matches_scipy_exact_permutation():
    from scipy import stats

    rng = np.random.default_rng(7)
    qs = queries([(f"q{i}", [1, 2], []) for i in range(10)])
    lists_a = [rng.permutation([1, 2, 3, 4, 5, 6]).tolist() for _ in range(10)]
    lists_b = [rng.permutation([1, 2, 3, 4, 5, 6]).tolist() for _ in range(10)]
    pq = pd.concat([metrics.per_query(results(list(zip(qs["qid"], lists_a)), run="A"), qs),
                    metrics.per_query(results(list(zip(qs["qid"], lists_b)), run="B"), qs)])
    t = metrics.paired_test(pq, "A", "B", "g", "nDCG@10", n_resamples=2 ** 10)
    a = pq[pq["run"] == "A"]["nDCG@10"].to_numpy()
    b = pq[pq["run"] == "B"]["nDCG@10"].to_numpy()
    ref = stats.permutation_test((a, b), lambda x, y: np.mean(x - y), permutation_type="samples",
                                 n_resamples=np.inf, alternative="two-sided")
    assert "exact" in t["test"]
    assert t["p_value"] == pytest.approx(ref.pvalue, abs=1e-9)
    assert t["delta"] == pytest.approx(np.mean(a - b))


def test_paired_test_uses_only_queries_both_have_and_rejects_bad_names():
    pq = two_runs(40, 0.6, 0.4, seed=9)
    pq.loc[(pq["run"] == "B") & (pq["qid"].isin(["q0", "q1"])), ["SR@1", "status"]] = [np.nan, "does_not_fit"]
    t = metrics.paired_test(pq, "A", "B", "g", "SR@1")
    assert t["n"] == 38 and t["wins"] + t["losses"] + t["ties"] == 38
    assert 0 < t["p_value"] <= 1 and t["ci_low"] <= t["delta"] <= t["ci_high"]
    with pytest.raises(EmbSError, match="no results for run 'C'"):
        metrics.paired_test(pq, "A", "C", "g", "SR@1")
    with pytest.raises(EmbSError, match="no results on rung 'x'"):
        metrics.paired_test(pq, "A", "B", "x", "SR@1")
    with pytest.raises(EmbSError, match="n_resamples and n_boot must be"):
        metrics.paired_test(pq, "A", "B", "g", "SR@1", n_resamples=0)
    with pytest.raises(EmbSError, match="one metric"):
        metrics.paired_test(metrics.per_query(RS, QS), "r", "r", "g", "SR@K")


def test_row_slices_and_blocks_do_not_change_results(monkeypatch):
    qs, rs = random_case(seed=13, n_q=70)
    rs.loc[rs.index[::9], "status"] = "does_not_fit"
    whole = metrics.per_query(rs, qs)
    monkeypatch.setattr(metrics, "_ROWS", 16)
    monkeypatch.setattr(metrics, "_BLOCK", 5)
    sliced = metrics.per_query(rs, qs)
    pd.testing.assert_frame_equal(whole, sliced)


def enumerated_p(d: np.ndarray) -> float:
    """The exact two-sided sign-flip p by brute force over all 2^n sign vectors (the definition)."""
    codes = np.arange(2 ** len(d))
    signs = 1.0 - 2.0 * ((codes[:, None] >> np.arange(len(d))[None, :]) & 1)
    return float((np.abs(signs @ d) >= abs(d.sum()) - 1e-9).mean())


def test_grid_differences_get_the_exact_p_of_enumeration():
    rng = np.random.default_rng(5)
    for trial in range(40):  # 0/±1 (R@1, FR@K), thirds and halves mixed (SR@K with |G| = 2 and 3)
        grid = [-1, 0, 1] if trial % 2 else [-1, -2 / 3, -1 / 2, -1 / 3, 0, 1 / 3, 1 / 2, 2 / 3, 1]
        d = rng.choice(grid, size=int(rng.integers(4, 15)))
        sf = metrics.sign_flip_p_values([d], n_resamples=1)  # one draw: only an exact path can match
        assert sf.exact[0] and sf.draws[0] == 0
        assert sf.p_value[0] == pytest.approx(enumerated_p(d), abs=1e-12), d
    # large n, 0/±1: the binomial tail
    from scipy import stats
    d = np.r_[np.ones(530), -np.ones(470), np.zeros(200)]
    p = metrics.sign_flip_p_values([d]).p_value[0]
    assert p == pytest.approx(2 * stats.binom.sf(529, 1000, 0.5), rel=1e-9)


def test_sampled_p_value_is_close_to_the_exact_one():
    rng = np.random.default_rng(21)
    d = rng.normal(0.1, 1, size=18)  # no grid, 2^18 > n_resamples: Monte Carlo
    sf = metrics.sign_flip_p_values([d], n_resamples=20000)
    assert not sf.exact[0] and sf.draws[0] >= 20000
    exact = enumerated_p(d)
    assert sf.p_low[0] <= exact <= sf.p_high[0]
    assert sf.p_value[0] == pytest.approx(exact, abs=0.01)
    assert "Monte Carlo" in sf.note() and "error ≤ ±" in sf.note()


def test_monte_carlo_verdicts_equal_the_exact_verdicts_under_holm():
    """Continuous differences (no grid) over 17–18 queries: the exact p is enumerable here, the tests draw. Cells
    are built with exact p near the Holm cut-offs, where 1,000 draws alone would flip verdicts with the seed."""
    rng = np.random.default_rng(3)
    diffs = [rng.normal(mu, 1.0, size=int(rng.integers(17, 19))) for mu in np.linspace(0.0, 1.2, 16)]
    exact = np.array([enumerated_p(d) for d in diffs])
    want = metrics.correct_p_values(exact, "holm") < 0.05
    assert want.any() and not want.all()
    flipped = 0
    for seed in range(5):
        sf = metrics.sign_flip_p_values(diffs, n_resamples=1000, seed=seed, alpha=0.05, correction="holm")
        assert not sf.exact.any() and sf.decided.all()
        got = metrics.correct_p_values(sf.p_value, "holm") < 0.05
        np.testing.assert_array_equal(got, want)
        assert ((sf.p_low <= exact) & (exact <= sf.p_high)).all()
        assert sf.draws.max() > 1000  # some cells needed more draws to be sure
        fixed = metrics.sign_flip_p_values(diffs, n_resamples=1000, seed=seed, max_resamples=1000, correction="holm")
        flipped += int(((metrics.correct_p_values(fixed.p_value, "holm") < 0.05) != want).any())
    assert flipped  # 1,000 draws, not refined, flip a verdict with some seed: the refinement is what holds them


def test_sign_vectors_are_shared_per_query_count():
    rng = np.random.default_rng(8)
    d1, d2 = rng.normal(0.2, 1, size=40), rng.normal(0.1, 1, size=40)
    alone = metrics.sign_flip_p_values([d1], n_resamples=500, alpha=0.5)
    together = metrics.sign_flip_p_values([d1, d2, rng.normal(size=70)], n_resamples=500, alpha=0.5)
    assert alone.p_value[0] == together.p_value[0]  # the same 500 vectors for n = 40, whoever shares the call


# ------------------------------------------------------------------------------------------- multiple testing
def test_corrections_match_statsmodels_and_hand_values():
    multipletests = pytest.importorskip("statsmodels.stats.multitest").multipletests
    p = np.array([0.01, 0.04, 0.03, 0.005, 0.2, 0.04])
    # Holm by hand: sorted 0.005 0.01 0.03 0.04 0.04 0.2 times 6 5 4 3 2 1 → 0.03 0.05 0.12 0.12 0.08→0.12 0.2
    expected_holm = np.array([0.05, 0.12, 0.12, 0.03, 0.2, 0.12])
    np.testing.assert_allclose(metrics.correct_p_values(p, "holm"), expected_holm)
    np.testing.assert_allclose(metrics.correct_p_values(p, "bonferroni"), np.minimum(1, 6 * p))
    np.testing.assert_allclose(metrics.correct_p_values(p, "none"), p)
    rng = np.random.default_rng(3)
    for size in (1, 2, 5, 13, 40):  # one vector per size, ties included (statsmodels takes ~50 ms a call)
        q = np.round(rng.uniform(0, 0.3, size), 2)
        for method in ("holm", "bonferroni"):
            np.testing.assert_allclose(metrics.correct_p_values(q, method), multipletests(q, method=method)[1])


def test_corrections_leave_undefined_tests_out_and_reject_bad_input():
    p = np.array([0.01, np.nan, 0.02])
    out = metrics.correct_p_values(p, "holm")
    assert np.isnan(out[1])
    np.testing.assert_allclose(out[[0, 2]], [0.02, 0.02])  # m = 2, not 3
    assert metrics.correct_p_values([], "holm").size == 0
    with pytest.raises(EmbSError, match="unknown multiple-testing correction 'fdr'"):
        metrics.correct_p_values(p, "fdr")
    with pytest.raises(EmbSError, match=r"\[0, 1\]"):
        metrics.correct_p_values([0.5, 1.5], "holm")
