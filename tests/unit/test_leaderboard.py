"""The leaderboard on constructed runs whose paired p-values are known exactly (sign-flip enumeration: m queries all
won by the same margin give p = 2 / 2^m), corrected with Holm / Bonferroni / none, checked against statsmodels."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from emb_s_core import metrics
from emb_s_core.analysis import leaderboard
from emb_s_core.errors import EmbSError

N_Q = 12
HITS = {"base": range(10, 12), "strong": range(0, 12), "weak": [*range(0, 6), 10, 11], "lost": []}


def board_rows(hits: dict = HITS, rungs=("g1", "g2")) -> pd.DataFrame:
    """Single-source queries q0..q11 with gold doc 1; a run retrieves [1, 2] on the queries it hits, else [2]."""
    qs = pd.DataFrame({"qid": [f"q{i:02d}" for i in range(N_Q)], "ref_ids": [[1]] * N_Q,
                       "hard_negative_ids": [[2]] * N_Q, "domain": ["a", "b"] * (N_Q // 2), "task_type": "t",
                       "source": "s"})
    res = pd.DataFrame([{"run": run, "rung": rung, "qid": f"q{i:02d}", "doc_ids": [1, 2] if i in set(h) else [2]}
                        for run, h in hits.items() for rung in rungs for i in range(N_Q)])
    return metrics.per_query(res, qs)


def test_known_p_values_and_each_correction():
    pq = board_rows()
    p_strong, p_weak, p_lost = 2 / 2 ** 10, 2 / 2 ** 6, 2 / 2 ** 2  # 10 wins, 6 wins, 2 losses
    expected = {"holm": {"strong": 6 * p_strong, "weak": 4 * p_weak, "lost": 1.0},
                "bonferroni": {"strong": 6 * p_strong, "weak": 6 * p_weak, "lost": 1.0},
                "none": {"strong": p_strong, "weak": p_weak, "lost": p_lost}}
    verdicts = {"holm": {"strong": "better", "weak": "no difference", "lost": "no difference"},
                "bonferroni": {"strong": "better", "weak": "no difference", "lost": "no difference"},
                "none": {"strong": "better", "weak": "better", "lost": "no difference"}}
    for method in metrics.CORRECTIONS:
        b = leaderboard.compute(pq, ["g1", "g2"], "SR@1", "base", correction=method, n_boot=50)
        assert b.n_tests == 6
        c = b.cells.set_index(["run", "rung"])
        for run in ("strong", "weak", "lost"):
            for rung in ("g1", "g2"):
                assert c.loc[(run, rung), "p_value"] == pytest.approx({"strong": p_strong, "weak": p_weak,
                                                                      "lost": p_lost}[run])
                assert c.loc[(run, rung), "p_adjusted"] == pytest.approx(expected[method][run]), (method, run)
                assert c.loc[(run, rung), "verdict"] == verdicts[method][run], (method, run)
                assert c.loc[(run, rung), "n_paired"] == N_Q
        assert (c.loc["base", "verdict"] == "baseline").all() and c.loc["base", "p_value"].isna().all()
        assert c.loc[("strong", "g1"), "value"] == 1.0 and c.loc[("base", "g1"), "value"] == pytest.approx(2 / 12)
        assert c.loc[("lost", "g1"), "delta"] == pytest.approx(-2 / 12)
        assert metrics.CORRECTION_LABELS[method] in b.legend() and "6 comparisons" in b.legend()


def test_adjusted_p_values_agree_with_statsmodels_on_random_runs():
    multipletests = pytest.importorskip("statsmodels.stats.multitest").multipletests
    rng = np.random.default_rng(7)
    hits = {f"r{j}": [i for i in range(N_Q) if rng.random() < 0.2 + 0.12 * j] for j in range(6)}
    pq = board_rows(hits, rungs=("g1", "g2", "g3"))
    for method in ("holm", "bonferroni"):
        b = leaderboard.compute(pq, ["g1", "g2", "g3"], "MRR", "r0", correction=method, n_boot=20)
        tested = b.cells.dropna(subset=["p_value"])
        assert len(tested) == b.n_tests == 15
        np.testing.assert_allclose(tested["p_adjusted"], multipletests(tested["p_value"], method=method)[1])


def test_lower_is_better_for_hn_intrusion():
    # "lost" never retrieves gold but retrieves the hard negative: it intrudes on every query; base on 10 of 12
    pq = board_rows()
    b = leaderboard.compute(pq, ["g1"], "HN-intrusion", "lost", correction="none", n_boot=20)
    c = b.cells.set_index("run")
    assert c.loc["strong", "delta"] == pytest.approx(-1.0)  # strong never intrudes
    assert c.loc["strong", "verdict"] == "better"
    assert "lower is better" in b.legend()


def test_table_sorting_detail_and_marks():
    pq = board_rows()
    b = leaderboard.compute(pq, ["g1", "g2"], "SR@1", "base", correction="holm", n_boot=50)
    t = b.table(detail=True, sort_by="g1", descending=True)
    assert t["run"].tolist() == ["strong", "weak", "base", "lost"]
    assert t.loc[0, "g1"] == "1.000 ▲" and t.loc[1, "g1"] == "0.667 =" and t.loc[2, "g1"] == "0.167"
    assert t.loc[0, leaderboard.SUMMARY] == "2▲ 0▼ 0=" and t.loc[2, leaderboard.SUMMARY] == "baseline"
    assert t.loc[0, "g1 n"] == 12 and t.loc[0, "g1 95% CI"] == "0.758–1.000"  # Wilson, 12 of 12
    assert b.table(sort_by="g1", descending=False)["run"].tolist() == ["lost", "base", "weak", "strong"]
    assert b.table(sort_by="run", descending=False)["run"].tolist() == ["base", "lost", "strong", "weak"]
    assert b.table(sort_by=leaderboard.SUMMARY)["run"].tolist()[0] == "strong"
    assert "g1 n" not in b.table().columns
    with pytest.raises(EmbSError, match="cannot sort the leaderboard by 'nope'"):
        b.table(sort_by="nope")


def test_a_run_missing_a_column_is_not_tested_and_not_counted():
    pq = board_rows()
    pq = pq[~((pq["run"] == "weak") & (pq["rung"] == "g2"))]
    b = leaderboard.compute(pq, ["g1", "g2"], "SR@1", "base", correction="bonferroni", n_boot=20)
    c = b.cells.set_index(["run", "rung"])
    assert b.n_tests == 5
    assert c.loc[("weak", "g2"), "verdict"] == "not tested" and c.loc[("weak", "g2"), "n"] == 0
    assert c.loc[("strong", "g1"), "p_adjusted"] == pytest.approx(5 * 2 / 2 ** 10)
    assert b.table().set_index("run").loc["weak", "g2"] == leaderboard.NO_SCORE


def test_bad_inputs_name_what_to_do():
    pq = board_rows()
    with pytest.raises(EmbSError, match="no results for the baseline run 'nobody'"):
        leaderboard.compute(pq, ["g1"], "SR@1", "nobody")
    with pytest.raises(EmbSError, match="unknown multiple-testing correction 'fdr'"):
        leaderboard.compute(pq, ["g1"], "SR@1", "base", correction="fdr")
    with pytest.raises(EmbSError, match="unknown metric 'SR@K'"):
        leaderboard.compute(pq, ["g1"], "SR@K", "base")
    with pytest.raises(EmbSError, match="unknown metric"):
        leaderboard.compute(pq, ["g1"], "P@3", "base")
    with pytest.raises(EmbSError, match="strictly between 0 and 1"):
        leaderboard.compute(pq, ["g1"], "SR@1", "base", alpha=1.5)
    b = leaderboard.compute(pq, ["g1"], "SR@1", "base", runs=["strong"], n_boot=10)
    assert b.runs == ["base", "strong"]  # the baseline is always shown
    b = leaderboard.compute(pq, ["g1"], "SR@1", "base", runs=["strong", "elsewhere"], n_boot=10)
    assert b.table().set_index("run").loc["elsewhere", "g1"] == leaderboard.NO_SCORE and b.n_tests == 1


def test_figure_draws_the_cells_with_names_escaped():
    from emb_s_core.figures import leaderboard as figure

    pq = board_rows({"base": HITS["base"], "<i>strong</i>": HITS["strong"]})
    b = leaderboard.compute(pq, ["g1", "g2"], "SR@1", "base", correction="none", n_boot=20)
    fig = figure.leaderboard(b.cells, b.runs, b.columns, b.metric, b.baseline, caption="c")
    heat = fig.data[1]
    assert list(heat.y) == ["base", "&lt;i&gt;strong&lt;/i&gt;"]
    assert list(heat.text[1]) == ["1.000 ▲", "1.000 ▲"]
    hover = " | ".join(heat.customdata[1][0])  # the data fields of the hover; the markup is the template's own
    assert "n = 12" in hover and "corrected p = 0.0020" in hover
    assert "&lt;i&gt;strong" in hover and "<i>" not in hover and "&amp;" not in hover


def test_monte_carlo_cells_get_the_verdicts_of_exact_p_values():
    """nDCG@10 differences with no grid go to Monte Carlo; 18 queries keep the exact p enumerable here. With only
    200 sign vectors to start, the board must still mark every cell as Holm on the exact p-values does."""
    rng = np.random.default_rng(11)
    n, rungs = 18, ["g1", "g2", "g3"]
    base = rng.random(n)
    rows, diffs = [], {}
    for j, shift in enumerate([0.0, 0.15, 0.3, 0.45, 0.6, 0.8]):
        for rung in rungs:
            d = rng.normal(shift, 0.5, n) * 0.5
            diffs[(f"r{j}", rung)] = d
            rows += [{"run": f"r{j}", "rung": rung, "qid": f"q{i}", "nDCG@10": base[i] + d[i]} for i in range(n)]
    rows += [{"run": "base", "rung": rung, "qid": f"q{i}", "nDCG@10": base[i]} for rung in rungs for i in range(n)]
    pq = pd.DataFrame(rows)
    codes = np.arange(2 ** n)
    signs = 1.0 - 2.0 * ((codes[:, None] >> np.arange(n)[None, :]) & 1)
    keys = list(diffs)
    exact = np.array([(np.abs(signs @ diffs[key]) >= abs(diffs[key].sum()) - 1e-9).mean() for key in keys])
    want = dict(zip(keys, metrics.correct_p_values(exact, "holm") < 0.05))
    assert 0 < sum(want.values()) < len(want)
    b = leaderboard.compute(pq, rungs, "nDCG@10", "base", n_boot=20, n_resamples=200)
    c = b.cells.set_index(["run", "rung"])
    for key in keys:
        assert (c.loc[key, "verdict"] != "no difference") == want[key], key
    assert "Monte Carlo" in b.legend() and "error ≤ ±" in b.legend()
