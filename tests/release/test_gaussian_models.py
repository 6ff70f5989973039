"""Models Theta, query/secret specs, calibration numerics and Algorithm 2's lambda_eta."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize, stats

from attrpriv import datasets
from attrpriv._checks import check_epsilon
from attrpriv.errors import InputError
from attrpriv.release.gaussian.approximation import (
    lambda_eta_pmf,
    lambda_eta_samples,
    points_needed,
    upper_bound,
)
from attrpriv.release.gaussian.calibration import (
    Constraint,
    calibrate,
    check_gaussian_delta,
    directional_noise,
    gaussian_delta,
    isotropic_noise,
    isotropic_variance,
    mahalanobis_sq,
    rank_one_variance,
    worst_shift,
)
from attrpriv.release.gaussian.query import Query, Secret, Statistic
from attrpriv.release.gaussian.resampling import ResamplingModel
from attrpriv.release.gaussian.theta import GaussianModel

QUERY = Query.of(["mean(age)", "count(sex=Female)"])
SECRET = Secret("share(income=>50K)", values=(0.4, 0.6))


@pytest.fixture(scope="module")
def adult(adult_dataset: datasets.Dataset) -> datasets.Dataset:
    return adult_dataset


@pytest.fixture(scope="module")
def resampling(adult: datasets.Dataset) -> ResamplingModel:
    return ResamplingModel(adult.frame.iloc[:5000], adult.schema, 50, draws=4000, seed=1)


# -- specs ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "aggregate", "column", "value", "variable"),
    [
        ("mean(age)", "mean", "age", None, "age"),
        (" sum( hours ) ", "sum", "hours", None, "hours"),
        ("share(income=>50K)", "share", "income", ">50K", "income=>50K"),
        ("count(sex = Female)", "count", "sex", "Female", "sex=Female"),
    ],
)
def test_statistics_parse(text: str, aggregate: str, column: str, value, variable: str) -> None:
    stat = Statistic.parse(text)
    assert (stat.aggregate, stat.column, stat.value, stat.variable) == (
        aggregate,
        column,
        value,
        variable,
    )
    assert Statistic.parse(str(stat)) == stat


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("median(age)", "must look like"),
        ("share(sex)", "needs column=value"),
        ("mean()", "must look like"),
        (3, "must look like"),
    ],
)
def test_bad_statistics(text: object, message: str) -> None:
    with pytest.raises(InputError, match=message):
        Statistic.parse(text)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "exactly one of values, interval or pairs"),
        ({"values": (0.5,)}, "at least two distinct values"),
        ({"values": (0.4, 0.6), "interval": (0.0, 1.0)}, "exactly one"),
        ({"interval": (0.6, 0.4)}, "lower < upper"),
        ({"interval": (0.6,)}, r"\[lower, upper\]"),
        ({"pairs": ((0.4, 0.4),)}, "two different values"),
        ({"pairs": ((0.4, "x"),)}, "must be a finite number"),
        ({"values": (0.4, math.nan)}, "must be a finite number"),
    ],
)
def test_bad_secrets(kwargs: dict, message: str) -> None:
    with pytest.raises(InputError, match=message):
        Secret("share(income=>50K)", **kwargs)


def test_query_refuses_duplicates_and_empty() -> None:
    with pytest.raises(InputError, match="distinct"):
        Query.of(["mean(age)", "mean(age)"])
    with pytest.raises(InputError, match="at least one"):
        Query.of([])


# -- calibration ----------------------------------------------------------------------------------


def test_analytic_calibration_matches_balle_and_wang() -> None:
    """Balle & Wang (2018): sigma = 3.73 for sensitivity 1 at (1, 1e-5); and it is tight."""
    cal = calibrate(1.0, 1e-5)
    assert cal.multiplier == pytest.approx(3.7306, abs=1e-3)
    assert cal.exact_delta <= 1e-5
    assert gaussian_delta(cal.max_shift * 1.001, 1.0) > 1e-5


def test_classic_calibration_is_checked_where_its_proof_does_not_apply() -> None:
    assert calibrate(5.0, 1e-3, "classic").multiplier == pytest.approx(3.7765, abs=1e-4)
    with pytest.raises(InputError, match="'classic' is not valid at epsilon=10"):
        calibrate(10.0, 1e-3, "classic")


@settings(max_examples=80, deadline=None)
@given(
    epsilon=st.floats(allow_nan=True, allow_infinity=True, width=64),
    delta=st.floats(allow_nan=True, allow_infinity=True, width=64),
    method=st.sampled_from(["analytic", "classic"]),
)
def test_calibration_is_verified_or_refused(epsilon: float, delta: float, method: str) -> None:
    """Any input is refused at the boundary (the mechanism's constraints) or gives a
    calibration whose exact delta is within budget; nothing else (no other exception)."""
    try:
        cal = calibrate(check_epsilon(epsilon), check_gaussian_delta(delta), method)
    except InputError:
        valid = math.isfinite(epsilon) and 0 < epsilon <= 700 and 0 < delta < 1  # MAX_EPSILON
        assert not valid or method == "classic" or epsilon < 1e-300 or delta < 1e-290
        return
    assert cal.max_shift > 0 and cal.exact_delta <= delta
    assert gaussian_delta(cal.max_shift, epsilon) <= delta


def _random_problem(seed: int, k: int, pairs: int, scale: float = 1.0) -> list[Constraint]:
    """Random shifts and PSD covariances, often singular, spread over 12 orders of magnitude."""
    rng = np.random.default_rng(seed)
    out = []
    for j in range(pairs):
        root = rng.standard_normal((k, rng.integers(1, k + 1))) * 10 ** rng.uniform(-3, 3)
        out.append(Constraint(f"pair {j}", scale * rng.standard_normal(k), root @ root.T))
    return out


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 10**6),
    k=st.integers(1, 5),
    pairs=st.integers(1, 4),
    scale=st.sampled_from([1e-3, 1.0, 1e3]),
    epsilon=st.sampled_from([0.1, 1.0, 5.0]),
)
def test_both_variants_meet_every_constraint(
    seed: int, k: int, pairs: int, scale: float, epsilon: float
) -> None:
    constraints = _random_problem(seed, k, pairs, scale)
    r = calibrate(epsilon, 1e-3).max_shift
    for noise in (isotropic_noise(constraints, r), directional_noise(constraints, r)):
        assert worst_shift(constraints, noise) <= r
        assert np.linalg.eigvalsh(noise)[0] >= -1e-12 * max(np.abs(noise).max(), 1e-300)


def test_isotropic_is_the_smallest_scalar_and_rank_one_the_smallest_along_the_shift() -> None:
    (c,) = _random_problem(3, 3, 1)
    r = 0.5
    s = isotropic_variance(c.shift, c.cov, r)
    assert mahalanobis_sq(c.shift, c.cov + s * np.eye(3)) == pytest.approx(r**2, rel=1e-6)
    assert s <= float(c.shift @ c.shift) / r**2 - np.linalg.eigvalsh(c.cov)[0] + 1e-12
    t = rank_one_variance(c.shift, c.cov, r)
    unit = c.shift / np.linalg.norm(c.shift)
    assert mahalanobis_sq(c.shift, c.cov + t * np.outer(unit, unit)) == pytest.approx(
        r**2, rel=1e-6
    )


def test_shift_outside_the_range_of_a_singular_covariance() -> None:
    cov, shift = np.diag([1.0, 0.0]), np.array([1.0, 1.0])
    assert mahalanobis_sq(shift, cov) == math.inf
    t = rank_one_variance(shift, cov, 1.0)
    assert t == pytest.approx(2.0)
    assert mahalanobis_sq(shift, cov + t * np.full((2, 2), 0.5)) <= 1.0 + 1e-8


# -- Gaussian model -------------------------------------------------------------------------------


def test_gaussian_model_closed_forms_and_the_worked_example() -> None:
    model = GaussianModel(["x", "y"], [1.0, 2.0], [[1.0, 0.5], [0.5, 1.0]], 100)
    secret = Secret("mean(x)", interval=(0.9, 1.1))
    cond = model.conditional(Query.of("mean(y)"), secret, 1.1)
    assert cond.mean[0] == pytest.approx(2.0 + 0.5 * 0.1)
    assert cond.cov[0, 0] == pytest.approx((1 - 0.25) / 100)  # 0.0075
    counts = model.conditional(Query.of("sum(y)"), Secret("sum(x)", values=(90, 110)), 110)
    assert counts.mean[0] == pytest.approx(100 * (2.0 + 0.5 * 0.1))
    assert counts.cov[0, 0] == pytest.approx(100 * 0.75)


def test_gaussian_model_draws_whole_datasets_conditioned_exactly() -> None:
    model = GaussianModel(
        ["x", "y", "z"], [0, 1, 2], [[1, 0.6, 0.2], [0.6, 2, 0.3], [0.2, 0.3, 1]], 40
    )
    query, secret = Query.of(["mean(y)", "mean(z)", "mean(x)"]), Secret("mean(x)", values=(0, 0.3))
    draws = model.sample(query, secret, 0.3, 40_000, np.random.default_rng(0))
    exact = model.conditional(query, secret, 0.3)
    np.testing.assert_allclose(draws[:, 2], 0.3)  # the secret holds on every dataset
    se = np.sqrt(np.diag(exact.cov)[:2] / draws.shape[0])
    assert np.all(np.abs(draws[:, :2].mean(axis=0) - exact.mean[:2]) < 5 * se)
    cov, var = exact.cov[:2, :2], np.diag(exact.cov)[:2]
    cov_se = np.sqrt((np.outer(var, var) + cov**2) / draws.shape[0])
    assert np.all(np.abs(np.cov(draws[:, :2].T) - cov) < 5 * cov_se)


def test_gaussian_model_from_reference_data(adult: datasets.Dataset) -> None:
    frame = adult.frame.iloc[:3000]
    model = GaussianModel.from_data(frame, adult.schema, ["age", "sex=Female"], 100)
    female = (frame["sex"] == "Female").to_numpy(float)
    np.testing.assert_allclose(model.mean, [frame["age"].mean(), female.mean()])
    np.testing.assert_allclose(model.cov, np.cov(np.column_stack([frame["age"], female]).T))
    assert model.bounds == {"age": (17.0, 90.0), "sex=Female": (0.0, 1.0)}
    with pytest.raises(InputError, match="outside the model's support"):
        model.support(Secret("mean(age)", values=(16.0, 40.0)))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"cov": [[1.0, 2.0], [2.0, 1.0]]}, "not positive semi-definite"),
        ({"cov": [[1.0, 0.5], [0.4, 1.0]]}, "symmetric"),
        ({"cov": [[1.0, 0.0], [0.0, math.inf]]}, "NaN or infinite"),
        ({"mean": [0.0]}, "must have 2 entries"),
        ({"n": 0}, "n must be an integer >= 1"),
        ({"variables": ["x", "x"]}, "distinct"),
    ],
)
def test_bad_gaussian_models(kwargs: dict, message: str) -> None:
    spec = {"variables": ["x", "y"], "mean": [0.0, 0.0], "cov": [[1.0, 0.5], [0.5, 1.0]], "n": 10}
    with pytest.raises(InputError, match=message):
        GaussianModel(**{**spec, **kwargs})


def test_gaussian_model_support_checks() -> None:
    model = GaussianModel(["x", "s=1"], [0.0, 0.5], [[1.0, 0.1], [0.1, 0.25]], 10)
    with pytest.raises(InputError, match=r"outside the model's support \[0, 1\]"):
        model.support(Secret("share(s=1)", values=(0.5, 1.2)))
    with pytest.raises(InputError, match="'z' is not in the model"):
        model.support(Secret("mean(z)", values=(0.0, 1.0)))
    constant = GaussianModel(["x"], [0.0], [[0.0]], 10)
    with pytest.raises(InputError, match="zero variance"):
        constant.support(Secret("mean(x)", values=(0.0, 1.0)))


# -- resampling model -----------------------------------------------------------------------------


def test_resampling_moments_are_exact_and_checked_by_draws(resampling: ResamplingModel) -> None:
    frame = resampling.reference
    rich = frame["income"] == ">50K"
    cond = resampling.conditional(QUERY, SECRET, 0.4)
    k, n = 20, 50
    age_mean = (k * frame.age[rich].mean() + (n - k) * frame.age[~rich].mean()) / n
    female = (frame.sex == "Female").astype(float)
    assert cond.mean[0] == pytest.approx(age_mean)
    assert cond.mean[1] == pytest.approx(k * female[rich].mean() + (n - k) * female[~rich].mean())
    var = k * female[rich].var(ddof=0) + (n - k) * female[~rich].var(ddof=0)
    assert cond.cov[1, 1] == pytest.approx(var)
    check = resampling.moment_check(QUERY, SECRET)
    assert check["draws"] == 4000
    assert check["max_mean_error_sd"] < 0.1 and check["max_cov_rel_error"] < 0.1


def test_resampling_draws_hold_the_secret_exactly(resampling: ResamplingModel) -> None:
    query = Query.of(["share(income=>50K)", "count(sex=Female)"])
    draws = resampling.sample(query, SECRET, 0.6, 500, np.random.default_rng(0))
    np.testing.assert_allclose(draws[:, 0], 0.6)


def test_resampling_exact_pmf_has_the_exact_moments(resampling: ResamplingModel) -> None:
    for stat in ("count(sex=Female)", "mean(age)"):
        query = Query.of(stat)
        atoms, probs = resampling.pmf(query, SECRET, 0.4)
        cond = resampling.conditional(query, SECRET, 0.4)
        mean = float(atoms @ probs)
        assert mean == pytest.approx(cond.mean[0], rel=1e-9)
        assert float((atoms - mean) ** 2 @ probs) == pytest.approx(cond.cov[0, 0], rel=1e-6)
    assert resampling.pmf(QUERY, SECRET, 0.4) is None  # vector queries: draws


def test_resampling_support(resampling: ResamplingModel, adult: datasets.Dataset) -> None:
    assert resampling.support(Secret("share(income=>50K)", interval=(0.395, 0.45))) == (
        0.4,
        0.42,
        0.44,
    )
    assert resampling.support(Secret("count(income=>50K)", values=(10, 20))) == (10, 20)
    with pytest.raises(InputError, match=r"multiple of 1/n = 0\.02"):
        resampling.support(Secret("share(income=>50K)", values=(0.41, 0.6)))
    with pytest.raises(InputError, match="outside the model's support"):
        resampling.support(Secret("share(income=>50K)", values=(0.4, 1.2)))
    with pytest.raises(InputError, match="use a GaussianModel for a mean"):
        resampling.support(Secret("mean(age)", values=(30, 40)))
    poor = adult.frame[adult.frame["income"] == "<=50K"].iloc[:500]
    model = ResamplingModel(poor, adult.schema, 50)
    with pytest.raises(InputError, match="0 rows with income=>50K"):
        model.support(SECRET)
    with pytest.raises(InputError, match="not in the domain"):
        model.support(Secret("share(income=rich)", values=(0.4, 0.6)))


# -- Algorithm 2 ----------------------------------------------------------------------------------


def _gaussian_epsilon(shift: float, eta: float) -> float:
    return float(optimize.brentq(lambda e: gaussian_delta(shift, e) - eta, 1e-9, 50))


def test_lambda_eta_of_a_shifted_gaussian_is_its_exact_epsilon() -> None:
    """One atom plus N(0, v) against N(mu, v): lambda_eta is the Gaussian pair's epsilon."""
    lam = lambda_eta_pmf(np.array([0.3]), np.array([1.0]), 0.0, 0.0, 0.25, 1e-3)
    assert lam == pytest.approx(_gaussian_epsilon(0.3 / 0.5, 1e-3), abs=2e-3)


def test_lambda_eta_of_a_binomial_shrinks_with_the_noise() -> None:
    k = np.arange(101.0)
    probs = stats.binom.pmf(k, 100, 0.3)
    lams = [lambda_eta_pmf(k, probs, 30.0, 21.0, v, 1e-3) for v in (0.0, 0.05, 0.5, 4.0)]
    assert lams[0] == math.inf  # a lattice against a density: every atom is a bad event
    assert lams[1] > lams[2] > lams[3] > 0.0


def test_monte_carlo_lambda_eta_is_close_and_not_below_the_truth() -> None:
    draws = np.tile([0.3, 0.0], (2000, 1))  # the law is exactly N((0.3, 0), 0.25 I)
    lam = lambda_eta_samples(
        draws, np.zeros(2), np.zeros((2, 2)), 0.25 * np.eye(2), 1e-2, n_eval=5000
    )
    exact = _gaussian_epsilon(0.6, 1e-2)
    assert exact - 0.01 <= lam <= exact + 0.15
    assert lambda_eta_samples(draws, np.zeros(2), np.eye(2), np.diag([1.0, 0.0]), 1e-2) == math.inf
    with pytest.raises(InputError, match="below what 1000 Monte Carlo points can resolve"):
        lambda_eta_samples(draws, np.zeros(2), np.eye(2), np.eye(2), 1e-5, n_eval=1000)


def test_chernoff_hoeffding_bound_covers_the_mean() -> None:
    """The bound holds for [0, 1] variables: over many repetitions of m = 2000 Beta(0.1, 5)
    draws (mostly tiny values), the true mean exceeds it in at most ~alpha of them."""
    rng = np.random.default_rng(0)
    true = 0.1 / 5.1
    means = rng.beta(0.1, 5.0, size=(2000, 2000)).mean(axis=1)
    bounds = np.array([upper_bound(float(m), 2000, 0.05) for m in means])
    assert np.mean(true > bounds) <= 0.05
    assert upper_bound(0.0, 1000, 0.025) == pytest.approx(1 - 0.025 ** (1 / 1000))
    assert upper_bound(1.0, 10, 0.025) == 1.0
    m = points_needed(1e-4)
    assert upper_bound(0.0, m, 0.025) <= 1e-4 / 4 < upper_bound(0.0, m - 10, 0.025)


def test_resampling_model_refuses_bad_arguments(adult: datasets.Dataset) -> None:
    with pytest.raises(InputError, match="non-empty pandas DataFrame"):
        ResamplingModel(pd.DataFrame(), adult.schema, 10)
    with pytest.raises(InputError, match="n must be an integer >= 2"):
        ResamplingModel(adult.frame, adult.schema, 1)
    with pytest.raises(InputError, match="draws must be an integer >= 100"):
        ResamplingModel(adult.frame, adult.schema, 10, draws=5)
