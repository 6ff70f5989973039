"""Empirical audit: Clopper-Pearson bounds, correct mechanisms stay under their claim, broken
ones are caught.

The OpenDP audits draw fresh, unseeded noise. A correct mechanism's bound exceeds its claim with
probability at most 1 - confidence = 1e-3 by construction, and in practice far less: measured
bounds sit 0.04-0.07 (Laplace) and ~0.5 (Gaussian) under the claim, several standard errors away.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import binomtest

from attrpriv.dp import OpenDPNoise, audit, audit_samples, clopper_pearson
from attrpriv.errors import InputError

EXACT = OpenDPNoise()  # k = -1074: ~50k Laplace draws/s
FAST = OpenDPNoise(k=-40)  # ~4x faster; grid slack 2**-40 is irrelevant at these scales
EPSILON = 1.0
DELTA = 1e-3
GAUSS_SIGMA = math.sqrt(2 * math.log(1.25 / DELTA)) / EPSILON  # classic Gaussian mechanism, ~3.78


def _laplace(noise: OpenDPNoise, value: object, scale: float) -> Callable[[int], np.ndarray]:
    """n independent runs of the Laplace mechanism on ``value`` (a scalar or a histogram)."""
    return lambda n: noise.laplace(np.tile(np.asarray(value, dtype=float), (n, 1)), scale)


def _gaussian(noise: OpenDPNoise, value: float, sigma: float) -> Callable[[int], np.ndarray]:
    return lambda n: noise.gaussian(np.full(n, value), sigma)


# -- Clopper-Pearson ----------------------------------------------------------------------------
def test_clopper_pearson_at_the_edges() -> None:
    n, confidence = 50, 0.95
    none = clopper_pearson(0, n, confidence)
    assert (none.value, none.lower) == (0.0, 0.0)
    assert none.upper == pytest.approx(1 - 0.05 ** (1 / n), rel=1e-12)
    everything = clopper_pearson(n, n, confidence)
    assert (everything.value, everything.upper) == (1.0, 1.0)
    assert everything.lower == pytest.approx(0.05 ** (1 / n), rel=1e-12)


@given(
    n=st.integers(1, 5000),
    fraction=st.floats(0, 1),
    confidence=st.sampled_from([0.6, 0.9, 0.95, 0.975, 0.999, 0.9995]),
)
def test_clopper_pearson_matches_scipy_one_sided(
    n: int, fraction: float, confidence: float
) -> None:
    k = round(fraction * n)
    ours = clopper_pearson(k, n, confidence)
    lower = binomtest(k, n, alternative="greater").proportion_ci(confidence, method="exact").low
    upper = binomtest(k, n, alternative="less").proportion_ci(confidence, method="exact").high
    assert ours.value == k / n
    assert ours.lower == pytest.approx(lower, rel=1e-8, abs=1e-12)
    assert ours.upper == pytest.approx(upper, rel=1e-8, abs=1e-12)
    # one-sided at c = each side of scipy's two-sided interval at 2c - 1
    two_sided = binomtest(k, n).proportion_ci(2 * confidence - 1, method="exact")
    assert ours.lower == pytest.approx(two_sided.low, rel=1e-8, abs=1e-12)


@pytest.mark.parametrize(
    ("successes", "trials", "confidence"), [(1, 0, 0.95), (5, 4, 0.95), (-1, 4, 0.95), (1, 4, 1.0)]
)
def test_clopper_pearson_refuses_bad_input(successes: int, trials: int, confidence: float) -> None:
    with pytest.raises(InputError):
        clopper_pearson(successes, trials, confidence)


# -- Laplace (exact OpenDP sampler) -------------------------------------------------------------
def test_laplace_mechanism_stays_under_its_claim() -> None:
    result = audit(
        _laplace(EXACT, 0.0, 1 / EPSILON),
        _laplace(EXACT, 1.0, 1 / EPSILON),
        100_000,
        confidence=0.999,
    )
    assert 0.8 < result.epsilon_lower < EPSILON  # measured 0.93-0.96: tight, and under
    assert result.n_samples == 100_000 and result.confidence == 0.999
    assert result.p_first.lower <= result.p_first.value <= result.p_first.upper
    assert json.loads(json.dumps(result.to_dict()))["epsilon_lower"] == result.epsilon_lower


def test_laplace_with_half_the_noise_is_caught() -> None:
    result = audit(
        _laplace(EXACT, 0.0, 0.5 / EPSILON),
        _laplace(EXACT, 1.0, 0.5 / EPSILON),
        40_000,  # plenty for a factor of two
        confidence=0.999,
    )
    assert result.epsilon_lower > EPSILON  # measured 1.88-1.94 (true epsilon 2)


# -- Gaussian (OpenDP, k = -40 for speed) -------------------------------------------------------
def test_gaussian_mechanism_stays_under_its_claim() -> None:
    result = audit(
        _gaussian(FAST, 0.0, GAUSS_SIGMA),
        _gaussian(FAST, 1.0, GAUSS_SIGMA),
        400_000,
        delta=DELTA,
        confidence=0.999,
    )
    assert 0.3 < result.epsilon_lower < EPSILON  # measured 0.47-0.51
    assert result.delta == DELTA


def test_gaussian_with_half_the_noise_is_caught() -> None:
    result = audit(
        _gaussian(FAST, 0.0, GAUSS_SIGMA / 2),
        _gaussian(FAST, 1.0, GAUSS_SIGMA / 2),
        400_000,
        delta=DELTA,
        confidence=0.999,
    )
    assert result.epsilon_lower > EPSILON  # measured 1.19-1.29


# -- vector outputs: a 3-bin histogram, default projection --------------------------------------
@pytest.mark.parametrize(("scale", "caught", "n"), [(1.0, False, 50_000), (0.5, True, 20_000)])
def test_laplace_histogram_with_default_projection(scale: float, caught: bool, n: int) -> None:
    # neighbouring histograms: one more person in bin 0 (l1 sensitivity 1)
    result = audit(
        _laplace(FAST, [10, 5, 3], scale / EPSILON),
        _laplace(FAST, [11, 5, 3], scale / EPSILON),
        n,
        confidence=0.999,
    )
    assert (result.epsilon_lower > EPSILON) is caught  # measured 0.91-0.94 and 1.83-1.88
    assert result.epsilon_lower > 0.7
    assert result.n_samples == n


# -- deterministic outputs, statistics, bad input (synthetic samples, seeded) -------------------
def test_noise_free_mechanism_gets_the_largest_bound_the_samples_allow() -> None:
    n, confidence = 10_000, 0.95
    result = audit_samples(np.zeros(n), np.ones(n), confidence=confidence)
    # all evaluation samples separate: p_first >= alpha**(1/m), p_second <= 1 - alpha**(1/m)
    alpha, m = (1 - confidence) / 2, n // 2
    expected = math.log(alpha ** (1 / m) / (1 - alpha ** (1 / m)))
    assert result.epsilon_lower == pytest.approx(expected, rel=1e-9)
    assert result.epsilon_lower > 7
    assert result.epsilon_estimate == math.inf


def test_statistic_chooses_what_is_compared() -> None:
    rng = np.random.default_rng(5)
    n = 4_000
    # coordinate 0 is the same noise on both sides; coordinate 1 gives the input away
    outputs_a = np.column_stack([rng.normal(size=n), np.zeros(n)])
    outputs_b = np.column_stack([rng.normal(size=n), np.ones(n)])
    seen: list[tuple[int, ...]] = []

    def first_coordinate(x: np.ndarray) -> np.ndarray:
        seen.append(x.shape)
        return x[:, 0]

    blind = audit_samples(outputs_a, outputs_b, statistic=first_coordinate)
    assert blind.epsilon_lower < 0.3
    assert set(seen) == {(n // 2, 2)}  # called on (samples, features) halves
    telling = audit_samples(outputs_a, outputs_b, statistic=lambda x: x[:, 1])
    projected = audit_samples(outputs_a, outputs_b)  # the mean difference points at coordinate 1
    assert telling.epsilon_lower > 6
    assert projected.epsilon_lower == pytest.approx(telling.epsilon_lower)


def test_seeded_split_is_reproducible() -> None:
    rng = np.random.default_rng(0)
    a, b = rng.laplace(0, 1, 2_000), rng.laplace(1, 1, 2_000)
    assert audit_samples(a, b, seed=3) == audit_samples(a, b, seed=3)


@pytest.mark.parametrize(
    ("outputs_a", "kwargs", "match"),
    [
        (np.zeros(19), {}, "outputs_a needs at least 20 samples"),
        (np.float64(1.0), {}, "outputs_a needs at least 20 samples"),
        (np.r_[np.zeros(30), np.nan], {}, "outputs_a has NaN or infinite values"),
        (np.r_[np.zeros(30), np.inf], {}, "outputs_a has NaN or infinite values"),
        (np.zeros(40), {"delta": 1.0}, r"delta must be in \[0, 1\)"),
        (np.zeros(40), {"confidence": 1.0}, r"confidence must be in \(0, 1\)"),
    ],
)
def test_bad_samples_refused(outputs_a: np.ndarray, kwargs: dict[str, float], match: str) -> None:
    with pytest.raises(InputError, match=match):
        audit_samples(outputs_a, np.ones(40), **kwargs)  # type: ignore[arg-type]


def test_audit_needs_twenty_samples() -> None:
    with pytest.raises(InputError, match="n_samples must be an integer >= 20"):
        audit(np.zeros, np.ones, 19)
    with pytest.raises(InputError, match="outputs_b has NaN"):
        audit(np.zeros, lambda n: np.full(n, np.nan), 20)
