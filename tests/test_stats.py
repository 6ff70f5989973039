"""attrpriv.stats: intervals and scores: published values, properties, coverage, bad input."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attrpriv import InputError
from attrpriv.stats import (
    Score,
    binomial_ci,
    bootstrap_difference,
    clopper_pearson,
    pool_scores,
    rate_difference,
    rate_vs_chance,
    wilson_ci,
)


def _paired(both: int, only_a: int, only_b: int, neither: int) -> tuple[np.ndarray, np.ndarray]:
    a = np.r_[np.ones(both + only_a), np.zeros(only_b + neither)].astype(int)
    b = np.r_[np.ones(both), np.zeros(only_a), np.ones(only_b), np.zeros(neither)].astype(int)
    return a, b


def _mean(rows: np.ndarray) -> float:
    return float(np.mean(rows))


# -- published values ----------------------------------------------------------------------------


def test_binomial_ci_matches_the_exact_interval() -> None:
    # Clopper-Pearson 95% for 5/10: 0.1871 to 0.8129 (e.g. R's binom.test)
    low, high = binomial_ci(5, 10)
    assert (low, high) == pytest.approx((0.18709, 0.81291), abs=1e-5)
    assert binomial_ci(0, 10)[0] == 0.0
    assert binomial_ci(10, 10)[1] == 1.0


def test_binomial_ci_is_the_clopper_pearson_interval_of_half_the_level_each_side() -> None:
    interval = clopper_pearson(5, 10, 0.975)
    assert binomial_ci(5, 10, 0.95) == (interval.lower, interval.upper)
    assert interval.value == 0.5


def test_the_audit_of_dp_takes_this_interval() -> None:
    import attrpriv.dp

    assert attrpriv.dp.clopper_pearson is clopper_pearson


def test_independent_difference_matches_newcombe_1998() -> None:
    # Newcombe (1998), Stat. Med. 17:873, table II example 56/70 - 48/80, method 10
    score = rate_difference(
        np.r_[np.ones(56), np.zeros(14)], np.r_[np.ones(48), np.zeros(32)], paired=False
    )
    assert score.difference == pytest.approx(0.2)
    assert score.ci == pytest.approx((0.0524, 0.3339), abs=1e-4)
    assert score.method == "newcombe-independent"


def test_paired_difference_matches_fagerland_example() -> None:
    # Bentur et al.'s table in Fagerland, Lydersen & Laake (2017), ch. 8. The bounds are this
    # implementation's (their square-and-add formula); not checked against the book's print.
    a, b = _paired(1, 1, 7, 12)
    score = rate_difference(a, b)
    assert score.difference == pytest.approx(-6 / 21)
    assert score.ci == pytest.approx((-0.5069, -0.0256), abs=1e-4)


def test_pairing_narrows_the_interval_of_correlated_outcomes() -> None:
    a, b = _paired(80, 15, 2, 103)
    paired, independent = rate_difference(a, b), rate_difference(a, b, paired=False)
    assert paired.difference == independent.difference
    assert paired.ci[1] - paired.ci[0] < independent.ci[1] - independent.ci[0]


def test_rate_vs_chance_shifts_the_exact_interval() -> None:
    score = rate_vs_chance(np.r_[np.ones(30), np.zeros(10)], 0.5)
    low, high = binomial_ci(30, 40)
    assert score.attack == 0.75 and score.baseline == 0.5
    assert score.ci == pytest.approx((low - 0.5, high - 0.5))
    assert score.significant


# -- properties ----------------------------------------------------------------------------------

levels = st.floats(min_value=0.5, max_value=0.999)


@given(st.integers(1, 500), st.data(), levels, levels)
@settings(max_examples=60, deadline=None)
def test_binomial_ci_contains_estimate_and_widens_with_confidence(
    trials: int, data: st.DataObject, c1: float, c2: float
) -> None:
    k = data.draw(st.integers(0, trials))
    lo_c, hi_c = sorted((c1, c2))
    narrow, wide = binomial_ci(k, trials, lo_c), binomial_ci(k, trials, hi_c)
    for low, high in (narrow, wide):
        assert 0.0 <= low <= k / trials <= high <= 1.0
    assert wide[0] <= narrow[0] + 1e-12 and wide[1] >= narrow[1] - 1e-12


@given(st.integers(1, 500), st.data(), levels)
@settings(max_examples=60, deadline=None)
def test_wilson_ci_contains_estimate(trials: int, data: st.DataObject, confidence: float) -> None:
    k = data.draw(st.integers(0, trials))
    low, high = wilson_ci(k, trials, confidence)
    assert 0.0 <= low <= k / trials + 1e-12 and k / trials - 1e-12 <= high <= 1.0


cells = st.integers(0, 60)


@given(cells, cells, cells, cells, levels, levels, st.booleans())
@settings(max_examples=80, deadline=None)
def test_rate_difference_ci_contains_estimate_and_is_monotone(
    both: int, only_a: int, only_b: int, neither: int, c1: float, c2: float, paired: bool
) -> None:
    if both + only_a + only_b + neither == 0:
        neither = 1
    a, b = _paired(both, only_a, only_b, neither)
    lo_c, hi_c = sorted((c1, c2))
    narrow = rate_difference(a, b, lo_c, paired=paired)
    wide = rate_difference(a, b, hi_c, paired=paired)
    for score in (narrow, wide):
        assert -1.0 <= score.ci[0] <= score.difference + 1e-12
        assert score.difference - 1e-12 <= score.ci[1] <= 1.0
        assert score.difference == pytest.approx(score.attack - score.baseline)
    assert wide.ci[0] <= narrow.ci[0] + 1e-12 and wide.ci[1] >= narrow.ci[1] - 1e-12


@given(st.lists(st.floats(-5, 5), min_size=5, max_size=40), levels)
@settings(max_examples=30, deadline=None)
def test_bootstrap_ci_contains_the_point_estimate(values: list[float], confidence: float) -> None:
    rows = np.array(values)
    score = bootstrap_difference(_mean, rows, 0.0, n_boot=200, seed=1, confidence=confidence)
    assert score.ci[0] <= score.difference <= score.ci[1]
    assert score.difference == pytest.approx(np.mean(rows))


# -- coverage ------------------------------------------------------------------------------------


def test_paired_interval_covers_the_true_difference_at_its_level() -> None:
    rng = np.random.default_rng(0)
    covered = 0
    for _ in range(400):
        a = rng.random(150) < 0.6
        b = np.where(rng.random(150) < 0.7, a, rng.random(150) < 0.5)  # P(b) = 0.57
        low, high = rate_difference(a, b).ci
        covered += low <= 0.03 <= high
    assert 0.92 <= covered / 400 <= 0.99


def test_bootstrap_covers_a_known_mean_difference() -> None:
    rng = np.random.default_rng(1)
    covered = 0
    for seed in range(80):
        a, b = rng.normal(0.3, 1.0, 80), rng.normal(0.0, 1.0, 60)
        low, high = bootstrap_difference(_mean, a, b, paired=False, n_boot=200, seed=seed).ci
        covered += low <= 0.3 <= high
    assert covered >= 70  # 95% nominal; P(< 70 of 80) is about 0.5% at 93% true coverage


def test_stratified_bootstrap_keeps_each_stratum_size() -> None:
    rows = np.r_[np.ones(3), np.zeros(97)]
    seen = []

    def share(sample: np.ndarray) -> float:
        seen.append(sample.sum())
        return float(sample.mean())

    bootstrap_difference(share, rows, 0.0, strata=rows, n_boot=100)
    assert set(seen) == {3.0}


# -- pooling -------------------------------------------------------------------------------------


def test_pool_scores_adds_between_repeat_variance() -> None:
    same = [Score(0.6, 0.5, 0.1, (0.05, 0.15), 100)] * 3
    pooled = pool_scores(same, confidence=0.95)
    assert pooled.difference == pytest.approx(0.1)
    assert pooled.ci == pytest.approx((0.05, 0.15), abs=1e-3)
    spread = [Score(0.6, 0.5, d, (d - 0.05, d + 0.05), 100) for d in (0.0, 0.1, 0.2)]
    wide = pool_scores(spread)
    assert wide.difference == pytest.approx(0.1)
    assert wide.ci[0] < 0.05 and wide.ci[1] > 0.15
    assert wide.method == "rubin-pooled(3)" and wide.n == 300
    noisy = [Score(0.9, 0.5, d, (d - 0.5, min(1.0, d + 0.5)), 8) for d in (-0.5, 0.25, 1.0)]
    assert pool_scores(noisy).ci == (-1.0, 1.0)  # a difference of rates stays in [-1, 1]


def test_score_to_dict_is_json_ready() -> None:
    score = rate_vs_chance(np.array([1, 0, 1, 1]), 0.5)
    payload = score.to_dict()
    assert payload["ci"] == list(score.ci) and payload["method"] == "clopper-pearson"


# -- bad input -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: binomial_ci(11, 10), r"successes must be in \[0, 10\]"),
        (lambda: binomial_ci(1, 0), "trials must be an integer >= 1"),
        (lambda: binomial_ci(1, 10, 1.0), r"confidence must be in \(0, 1\)"),
        (lambda: rate_difference([1, 0], [1, 0, 1]), "paired hits need equal lengths"),
        (lambda: rate_difference([1, 2], [1, 0]), "attack_hits must hold only 0/1"),
        (lambda: rate_difference([], [1]), "non-empty 1-d array"),
        (lambda: rate_vs_chance([1, 0], 1.5), r"chance must be in \[0, 1\]"),
        (lambda: bootstrap_difference(_mean, [1.0, 2.0], 0.0, n_boot=10), "n_boot must be"),
        (lambda: bootstrap_difference(_mean, [1.0], 0.0), "at least 2 observations"),
        (lambda: bootstrap_difference(_mean, [1.0, 2.0], [1.0, 2.0, 3.0]), "equal lengths"),
        (lambda: bootstrap_difference(_mean, [1.0, 2.0], 0.0, strata=[1]), "one label per row"),
        (lambda: pool_scores([]), "at least one Score"),
    ],
)
def test_bad_input_is_named(call, message: str) -> None:
    with pytest.raises(InputError, match=message):
        call()


# -- DeLong --------------------------------------------------------------------------------------


def _delong_by_definition(labels: np.ndarray, scores: np.ndarray) -> tuple[float, np.ndarray]:
    """AUC and the placements straight from DeLong et al. (1988): psi = 1 if X > Y, 1/2 if tied."""
    pos, neg = scores[labels == 1], scores[labels == 0]
    psi = (pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :])
    return float(psi.mean()), np.array([psi.mean(axis=1), psi.mean(axis=0)], dtype=object)


def test_delong_auc_matches_the_definition_with_ties() -> None:
    from sklearn.metrics import roc_auc_score

    from attrpriv.stats import delong_auc

    rng = np.random.default_rng(3)
    labels = np.r_[np.ones(37), np.zeros(51)].astype(int)
    scores = np.round(rng.normal(size=88) + 0.6 * labels, 1)  # many ties
    score = delong_auc(labels, scores)
    auc, (v10, v01) = _delong_by_definition(labels, scores)
    variance = np.var(v10, ddof=1) / v10.size + np.var(v01, ddof=1) / v01.size
    assert score.attack == pytest.approx(auc) == pytest.approx(roc_auc_score(labels, scores))
    half = 1.959963984540054 * np.sqrt(variance)
    assert score.ci == pytest.approx((auc - 0.5 - half, auc - 0.5 + half))
    assert score.method == "delong" and score.n == 88


def test_delong_difference_uses_the_paired_covariance() -> None:
    from attrpriv.stats import delong_difference

    rng = np.random.default_rng(4)
    labels = np.r_[np.ones(60), np.zeros(60)].astype(int)
    first = rng.normal(size=120) + 0.8 * labels
    second = first + 0.3 * rng.normal(size=120)
    score = delong_difference(labels, first, second)
    a, (a10, a01) = _delong_by_definition(labels, first)
    b, (b10, b01) = _delong_by_definition(labels, second)
    d10, d01 = (a10 - b10).astype(float), (a01 - b01).astype(float)
    variance = np.var(d10, ddof=1) / 60 + np.var(d01, ddof=1) / 60
    assert score.difference == pytest.approx(a - b)
    assert score.ci[1] - score.ci[0] == pytest.approx(2 * 1.959963984540054 * np.sqrt(variance))
    # the unpaired variance (no covariance) would be several times wider for such close scorings
    unpaired = sum(np.var(v.astype(float), ddof=1) / 60 for v in (a10, a01, b10, b01))
    assert variance < unpaired / 4


def test_delong_intervals_cover_the_true_auc() -> None:
    from scipy.stats import norm

    from attrpriv.stats import delong_auc

    rng = np.random.default_rng(5)
    truth = float(norm.cdf(0.7 / np.sqrt(2)))  # AUC of N(0.7, 1) against N(0, 1)
    labels = np.r_[np.ones(80), np.zeros(120)].astype(int)
    hits = 0
    for _ in range(400):
        score = delong_auc(labels, rng.normal(size=200) + 0.7 * labels)
        hits += score.ci[0] <= truth - 0.5 <= score.ci[1]
    assert 0.92 <= hits / 400 <= 0.975


@pytest.mark.parametrize(
    ("labels", "scores", "message"),
    [
        ([1, 1, 1], [0.1, 0.2, 0.3], "both 0 and 1"),
        ([1, 0, 2], [0.1, 0.2, 0.3], "0/1"),
        ([1, 0], [0.1, float("nan")], "NaN"),
        ([1, 0, 0], [0.1, 0.2], "expected"),
    ],
)
def test_delong_auc_refuses_bad_input(labels: list, scores: list, message: str) -> None:
    from attrpriv.stats import delong_auc

    with pytest.raises(InputError, match=message):
        delong_auc(labels, scores)


# -- pooling independent re-runs -----------------------------------------------------------------


def test_pool_replicates_is_the_random_effects_mean() -> None:
    from scipy import stats as scipy_stats

    from attrpriv.stats import pool_replicates

    runs = [Score(0.6, 0.5, d, (d - 0.0196, d + 0.0196), 100) for d in (0.08, 0.1, 0.15)]
    pooled = pool_replicates(runs)
    between = np.var([0.08, 0.1, 0.15], ddof=1)
    within = (0.0196 / 1.959963984540054) ** 2
    half = scipy_stats.t.ppf(0.975, 2) * np.sqrt(max(between, within) / 3)
    assert pooled.difference == pytest.approx(0.11)
    assert pooled.ci == pytest.approx((0.11 - half, 0.11 + half))
    assert pooled.method == "random-effects(3)" and pooled.n == 300
    agreeing = pool_replicates([Score(0.6, 0.5, 0.1, (0.08, 0.12), 100)] * 3)
    assert agreeing.ci[1] - agreeing.ci[0] > 0  # never narrower than the runs' own error
    assert pool_replicates(runs[:1]) is runs[0]


def test_pool_replicates_covers_and_narrows_with_more_runs() -> None:
    """Runs whose effect varies (sd 0.02) around 0.1, each measured with error sd 0.01."""
    from attrpriv.stats import pool_replicates

    rng = np.random.default_rng(6)

    def run() -> Score:
        d = 0.1 + rng.normal(0, 0.02) + rng.normal(0, 0.01)
        return Score(0.6, 0.5, d, (d - 0.0196, d + 0.0196), 100)

    widths = {}
    for k in (3, 10):
        hits = 0
        pooled = []
        for _ in range(400):
            score = pool_replicates([run() for _ in range(k)])
            hits += score.ci[0] <= 0.1 <= score.ci[1]
            pooled.append(score.ci[1] - score.ci[0])
        assert hits / 400 >= 0.93
        widths[k] = float(np.mean(pooled))
    assert widths[10] < widths[3] / 2
