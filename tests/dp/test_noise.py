"""Noise samplers: shape/dtype, the right distribution, refusals, OpenDP's grid slack, seeding.

Spread checks use 20k draws and tolerances of at least five standard errors, so a correct sampler
fails them with probability well under 1e-6; the KS tests fail a correct sampler with p = 1e-6.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import stats

from attrpriv.dp import (
    NoiseSampler,
    OpenDPNoise,
    SeededNumpyNoise,
    default_sampler,
    require_private,
)
from attrpriv.errors import InputError

N = 20_000
SAMPLERS = {
    "opendp-exact": OpenDPNoise(),
    "opendp-k-40": OpenDPNoise(k=-40),
    "numpy-seeded": SeededNumpyNoise(seed=1),
}


@pytest.fixture(params=list(SAMPLERS))
def sampler(request: pytest.FixtureRequest) -> NoiseSampler:
    return SAMPLERS[request.param]


def _discrete_laplace_std(scale: float) -> float:
    q = math.exp(-1.0 / scale)
    return math.sqrt(2.0 * q) / (1.0 - q)


# -- shape and dtype ----------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["laplace", "gaussian"])
def test_float_noise_keeps_shape_and_is_float64(sampler: NoiseSampler, method: str) -> None:
    values = np.arange(12, dtype=np.float32).reshape(3, 4)
    before = values.copy()
    out = getattr(sampler, method)(values, 1.0)
    assert out.shape == (3, 4)
    assert out.dtype == np.float64
    assert not np.array_equal(out, values)  # P(no noise at all) is nil
    np.testing.assert_array_equal(values, before)  # input untouched


@pytest.mark.parametrize("method", ["discrete_laplace", "discrete_gaussian"])
def test_discrete_noise_keeps_shape_and_is_int64(sampler: NoiseSampler, method: str) -> None:
    counts = np.arange(10, dtype=np.int32).reshape(2, 5) * 100
    before = counts.copy()
    out = getattr(sampler, method)(counts, 5.0)
    assert out.shape == (2, 5)
    assert out.dtype == np.int64
    np.testing.assert_array_equal(counts, before)
    # lists and integer-valued floats are counts too
    assert getattr(sampler, method)([1.0, 2.0], 0.5).dtype == np.int64


def test_scalar_and_empty_inputs(sampler: NoiseSampler) -> None:
    assert sampler.laplace(3.0, 1.0).shape == ()
    empty = sampler.gaussian(np.zeros((0, 3)), 1.0)
    assert empty.shape == (0, 3) and empty.dtype == np.float64


# -- distribution -------------------------------------------------------------------------------
@pytest.mark.parametrize("scale", [0.5, 3.0])
def test_laplace_distribution(sampler: NoiseSampler, scale: float) -> None:
    base = np.linspace(-100, 100, N)
    noise = sampler.laplace(base, scale) - base
    assert abs(noise.mean()) < 6 * math.sqrt(2) * scale / math.sqrt(N)
    assert noise.std() == pytest.approx(math.sqrt(2) * scale, rel=0.05)
    assert stats.kstest(noise, "laplace", args=(0, scale)).pvalue > 1e-6


@pytest.mark.parametrize("scale", [0.5, 3.0])
def test_gaussian_distribution(sampler: NoiseSampler, scale: float) -> None:
    base = np.full(N, 7.25)
    noise = sampler.gaussian(base, scale) - base
    assert abs(noise.mean()) < 6 * scale / math.sqrt(N)
    assert noise.std() == pytest.approx(scale, rel=0.05)
    assert stats.kstest(noise, "norm", args=(0, scale)).pvalue > 1e-6


@pytest.mark.parametrize("scale", [0.7, 4.0])
def test_discrete_laplace_distribution(sampler: NoiseSampler, scale: float) -> None:
    counts = np.full(N, 1000, dtype=np.int64)
    noise = sampler.discrete_laplace(counts, scale) - counts
    std = _discrete_laplace_std(scale)
    assert abs(noise.mean()) < 6 * std / math.sqrt(N)
    assert noise.std() == pytest.approx(std, rel=0.05)
    q = math.exp(-1.0 / scale)
    p_zero = (1 - q) / (1 + q)
    assert (noise == 0).mean() == pytest.approx(p_zero, abs=6 * math.sqrt(p_zero / N))


@pytest.mark.parametrize("scale", [1.0, 4.0])
def test_discrete_gaussian_distribution(sampler: NoiseSampler, scale: float) -> None:
    counts = np.zeros(N, dtype=np.int64)
    noise = sampler.discrete_gaussian(counts, scale)
    # the seeded sampler rounds a normal: rounding adds variance 1/12
    rounded = isinstance(sampler, SeededNumpyNoise)
    std = math.sqrt(scale**2 + 1 / 12) if rounded else scale
    assert abs(noise.mean()) < 6 * std / math.sqrt(N)
    assert noise.std() == pytest.approx(std, rel=0.05)


# -- refusals and the scale-0 shortcut ----------------------------------------------------------
@pytest.mark.parametrize("method", ["laplace", "gaussian", "discrete_laplace", "discrete_gaussian"])
def test_scale_zero_returns_an_unchanged_copy(sampler: NoiseSampler, method: str) -> None:
    values = np.array([[1, 2], [3, 40]], dtype=np.int64)
    out = getattr(sampler, method)(values, 0.0)
    np.testing.assert_array_equal(out, values)
    assert not np.shares_memory(out, values)
    out[0, 0] = 99
    assert values[0, 0] == 1


@pytest.mark.parametrize("bad", [[1.0, math.nan], [math.inf], np.array([[0.0, -np.inf]])])
@pytest.mark.parametrize("method", ["laplace", "gaussian"])
def test_non_finite_values_refused(sampler: NoiseSampler, method: str, bad: object) -> None:
    with pytest.raises(InputError, match="NaN or infinite"):
        getattr(sampler, method)(bad, 1.0)


@pytest.mark.parametrize("method", ["laplace", "gaussian"])
def test_non_numeric_values_refused(sampler: NoiseSampler, method: str) -> None:
    with pytest.raises(InputError, match="must be numeric"):
        getattr(sampler, method)(["a", "b"], 1.0)


@pytest.mark.parametrize(
    "bad", [[1.5, 2.0], [1.0, math.nan], [math.inf], [1e20], ["1", "2"], [True, False], [None]]
)
@pytest.mark.parametrize("method", ["discrete_laplace", "discrete_gaussian"])
def test_non_integer_counts_refused(sampler: NoiseSampler, method: str, bad: object) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the refusal comes alone, without a cast warning
        with pytest.raises(InputError, match="counts must be integers"):
            getattr(sampler, method)(bad, 1.0)


@pytest.mark.parametrize("scale", [-1.0, -1e-12, math.nan, math.inf, True, "1", None])
@pytest.mark.parametrize("method", ["laplace", "gaussian", "discrete_laplace", "discrete_gaussian"])
def test_bad_scale_refused(sampler: NoiseSampler, method: str, scale: object) -> None:
    with pytest.raises(InputError, match=r"^noise scale "):
        getattr(sampler, method)([1, 2], scale)


# -- OpenDP specifics ---------------------------------------------------------------------------
def test_k_grid_outputs_and_describe() -> None:
    noise = OpenDPNoise(k=-40)
    out = noise.laplace(np.full(1000, 0.1), 1.0)
    # outputs lie on the 2**-40 grid: scaling by 2**40 gives integers exactly
    assert np.all(np.ldexp(out, 40) == np.round(np.ldexp(out, 40)))
    assert noise.describe() == {
        "sampler": "OpenDPNoise",
        "private": True,
        "library": "opendp",
        "k": -40,
    }


@pytest.mark.parametrize("k", [True, 1, -1075, 1.5, "-40"])
def test_bad_k_refused(k: object) -> None:
    with pytest.raises(InputError, match=r"^k must be None or an integer"):
        OpenDPNoise(k=k)  # type: ignore[arg-type]


@pytest.mark.parametrize("size", [1, 10, 1000])
def test_rounding_slack_matches_opendp_privacy_map(size: int) -> None:
    """The slack equals what OpenDP itself adds to the sensitivity for k = -40."""
    import opendp.prelude as dp

    dp.enable_features("contrib")
    noise = OpenDPNoise(k=-40)
    assert noise.rounding_slack(size, norm=1) == size * 2.0**-40
    assert noise.rounding_slack(size, norm=2) == pytest.approx(math.sqrt(size) * 2.0**-40)
    assert OpenDPNoise().rounding_slack(size) == 0.0
    assert SeededNumpyNoise().rounding_slack(size) == 0.0

    domain = dp.vector_domain(dp.atom_domain(T="f64", nan=False), size=size)
    laplace = dp.m.make_laplace(domain, dp.l1_distance(T="f64"), scale=1.0, k=-40)
    # epsilon = (d_in + slack) / scale
    assert laplace.map(1.0) - 1.0 == pytest.approx(noise.rounding_slack(size, 1), rel=1e-3)
    gaussian = dp.m.make_gaussian(domain, dp.l2_distance(T="f64"), scale=1.0, k=-40)
    # rho = (d_in + slack)**2 / (2 scale**2)
    slack_2 = math.sqrt(2 * gaussian.map(1.0)) - 1.0
    assert slack_2 == pytest.approx(noise.rounding_slack(size, 2), rel=1e-3)


def test_opendp_is_not_reproducible_and_is_the_default() -> None:
    noise = OpenDPNoise()
    assert not np.array_equal(noise.laplace(np.zeros(50), 1.0), noise.laplace(np.zeros(50), 1.0))
    default = default_sampler()
    assert isinstance(default, OpenDPNoise) and default.k is None and default.private


# -- seeded numpy: reproducible, and labelled not private ---------------------------------------
def test_seeded_numpy_is_reproducible() -> None:
    values = np.arange(100.0)
    first = SeededNumpyNoise(seed=7)
    second = SeededNumpyNoise(seed=7)
    for method in ("laplace", "gaussian", "discrete_laplace", "discrete_gaussian"):
        np.testing.assert_array_equal(
            getattr(first, method)(values, 2.0), getattr(second, method)(values, 2.0)
        )
    other = SeededNumpyNoise(seed=8).laplace(values, 2.0)
    assert not np.array_equal(SeededNumpyNoise(seed=7).laplace(values, 2.0), other)


def test_require_private() -> None:
    seeded = SeededNumpyNoise()
    assert seeded.private is False
    assert seeded.describe() == {"sampler": "SeededNumpyNoise", "private": False}
    with pytest.raises(InputError, match="SeededNumpyNoise is not private"):
        require_private(seeded)
    require_private(seeded, allow_nonprivate=True)
    require_private(OpenDPNoise())
    with pytest.raises(InputError, match="must be a NoiseSampler"):
        require_private(np.random.default_rng())  # type: ignore[arg-type]


def test_unsigned_counts_beyond_int64_are_refused() -> None:
    with pytest.raises(InputError, match="fit in int64"):
        SeededNumpyNoise(0).discrete_laplace(np.array([2**63], dtype=np.uint64), 1.0)


def test_noisy_max_picks_a_far_larger_score_and_checks_its_input() -> None:
    for sampler in (OpenDPNoise(), SeededNumpyNoise(0)):
        picks = [sampler.noisy_max([0.0, 1_000.0, 3.0], 1.0) for _ in range(5)]
        assert picks == [1] * 5
        close = {sampler.noisy_max([0.0, 0.1, 0.2], 10.0) for _ in range(60)}
        assert close == {0, 1, 2}  # at a large scale every index can win
        with pytest.raises(InputError, match="at least one score"):
            sampler.noisy_max([], 1.0)
        with pytest.raises(InputError, match="every one finite"):
            sampler.noisy_max([0.0, float("nan")], 1.0)
        with pytest.raises(InputError, match="scale > 0"):
            sampler.noisy_max([0.0], 0.0)
