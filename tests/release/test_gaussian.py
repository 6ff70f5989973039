"""AttributePrivateGaussian: worked example, variants, records, ledger, audits, bad input."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from attrpriv import Column, Numeric, Schema, datasets
from attrpriv.dp import BudgetLedger, NoiseSampler, OpenDPNoise, SeededNumpyNoise, audit
from attrpriv.errors import BudgetExceededError, InputError
from attrpriv.release.gaussian.calibration import Constraint, directional_noise, mahalanobis_sq
from attrpriv.release.gaussian.checks import ModelWarning
from attrpriv.release.gaussian.mechanism import AttributePrivateGaussian, Specs
from attrpriv.release.gaussian.plan import GaussianPlan, sampling_basis
from attrpriv.release.gaussian.query import Query, Secret
from attrpriv.release.gaussian.resampling import ResamplingModel
from attrpriv.release.gaussian.theta import GaussianModel, ThetaModel

SCHEMA = Schema(
    (
        Column("x", "sensitive", Numeric(-10, 10)),
        Column("y", "feature", Numeric(-10, 10)),
        Column("z", "feature", Numeric(-10, 10)),
    )
)
PAPER = GaussianModel(["x", "y"], [0.0, 0.0], [[1.0, 0.5], [0.5, 1.0]], 100)
WORKED = Secret("mean(x)", interval=(-0.1, 0.1))  # d(U) = 0.2


def seeded(**kwargs) -> dict:
    return {"sampler": SeededNumpyNoise(kwargs.pop("seed", 0)), "allow_nonprivate": True, **kwargs}


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame(rng.standard_normal((100, 3)), columns=["x", "y", "z"])


def test_the_papers_worked_example() -> None:
    """V = [[1, .5], [.5, 1]], n = 100, d(U) = 0.2, eps = 1, delta = 1e-5 (Section 4.3)."""
    mech = AttributePrivateGaussian("mean(y)", WORKED, PAPER, 1.0, 1e-5, calibration="classic")
    plan = mech.calibrate()
    assert plan.calibration.multiplier == pytest.approx(4.8448, abs=1e-4)
    assert plan.sensitivity == {"mean(x)": pytest.approx(0.1)}
    (pair,) = plan.to_dict()["pairs"]
    assert pair["conditional_cov"][0][0] == pytest.approx(0.0075)
    needed = (4.8448 * 0.1) ** 2  # (c Delta / eps)^2 = 0.23472, less the 0.0075 of the data
    assert needed == pytest.approx(0.23472, abs=1e-5)
    assert plan.covariance[0, 0] == pytest.approx(0.22722, abs=1e-5)
    analytic = AttributePrivateGaussian("mean(y)", WORKED, PAPER, 1.0, 1e-5).calibrate()
    assert analytic.covariance[0, 0] < plan.covariance[0, 0]  # Balle & Wang: less noise


def test_release_is_the_statistic_plus_noise_of_the_recorded_scale(frame: pd.DataFrame) -> None:
    mech = AttributePrivateGaussian(
        ["mean(y)"], WORKED, PAPER, 1.0, 1e-5, calibration="classic", **seeded(seed=7)
    )
    result = mech.release(frame[["x", "y"]], SCHEMA.select(["x", "y"]))
    expected = SeededNumpyNoise(7).gaussian([frame["y"].mean()], math.sqrt(0.227221380))
    assert result.values["mean(y)"] == pytest.approx(expected[0], rel=1e-9)
    record = result.record
    assert (record.mechanism, record.definition) == (
        "attribute-private-gaussian",
        "attribute-privacy",
    )
    assert (record.epsilon, record.delta) == (1.0, 1e-5)
    assert "noise sampler is not private" in record.assumptions
    assert record.noise["calibration"]["method"] == "classic"
    assert json.loads(json.dumps(result.to_dict()))["values"]["mean(y)"] == result.values.iloc[0]


def test_file_input_gives_the_same_answer(frame: pd.DataFrame, tmp_path: Path) -> None:
    path = tmp_path / "data.parquet"
    frame.to_parquet(path)
    args = (["mean(y)", "sum(z)"], WORKED, GaussianModel(["x", "y", "z"], [0] * 3, np.eye(3), 100))
    with pytest.warns(ModelWarning, match="no noise is added"):  # F independent of the secret
        from_file = AttributePrivateGaussian(*args, 1.0, 1e-3, **seeded(seed=1)).release(
            path, SCHEMA
        )
        from_frame = AttributePrivateGaussian(*args, 1.0, 1e-3, **seeded(seed=1)).release(
            frame, SCHEMA
        )
    pd.testing.assert_series_equal(from_file.values, from_frame.values)


def test_privacy_for_free_when_the_query_is_weakly_correlated(frame: pd.DataFrame) -> None:
    weak = GaussianModel(["x", "y"], [0.0, 0.0], [[1.0, 0.02], [0.02, 1.0]], 100)
    with pytest.warns(ModelWarning, match="rests entirely on the model"):
        result = AttributePrivateGaussian(["mean(y)"], WORKED, weak, 1.0, 1e-3).release(
            frame[["x", "y"]], SCHEMA.select(["x", "y"])
        )
    assert result.diagnostics.free and result.record.noise["free"]
    assert result.diagnostics.summary_lines() == [
        "privacy for free: the data's own randomness hides the secrets (no noise)"
    ]
    assert result.diagnostics.std == (0.0,) and result.to_dict()["diagnostics"]["free"]
    assert result.diagnostics.warnings and any(
        a.startswith("warning: no noise") for a in result.record.assumptions
    )
    assert result.values["mean(y)"] == frame["y"].mean()  # nothing added: exact answer
    assert result.record.sensitivity["mean(x)"] == pytest.approx(0.004)


def test_directional_noise_only_along_the_shift_and_far_less_in_total() -> None:
    model = GaussianModel(["x", "y"], [0.0, 0.0], [[1.0, 0.5], [0.5, 1.0]], 100)
    query = ["mean(y)", "mean(x)"]  # the secret's own statistic: singular covariance
    iso = AttributePrivateGaussian(query, WORKED, model, 1.0, 1e-5).calibrate()
    dirn = AttributePrivateGaussian(query, WORKED, model, 1.0, 1e-5, variant="directional")
    plan = dirn.calibrate()
    r = plan.calibration.max_shift
    for p in (iso, plan):
        (c,) = p.constraints
        assert mahalanobis_sq(c.shift, c.cov) == math.inf  # mean(x) is fixed by the secret
        assert math.sqrt(mahalanobis_sq(c.shift, c.cov + p.covariance)) <= r * (1 + 1e-8)
    assert np.linalg.matrix_rank(plan.covariance) == 1
    shift = plan.constraints[0].shift
    np.testing.assert_allclose(plan.covariance @ shift, np.trace(plan.covariance) * shift)
    assert np.trace(plan.covariance) < 0.6 * np.trace(iso.covariance)


def test_the_worst_secret_and_the_worst_model_decide() -> None:
    model = GaussianModel(
        ["x", "y", "z"], [0.0] * 3, [[1, 0.5, 0.1], [0.5, 1, 0.3], [0.1, 0.3, 1]], 50
    )
    other = GaussianModel(
        ["x", "y", "z"], [0.0] * 3, [[1, 0.7, 0.1], [0.7, 1, 0.3], [0.1, 0.3, 1]], 50
    )
    secrets = [WORKED, Secret("mean(z)", values=(-0.2, 0.3))]

    def noise(secret_list: list[Secret], models: list[ThetaModel]) -> float:
        mech = AttributePrivateGaussian("mean(y)", secret_list, models, 0.5, 1e-3)
        return float(mech.calibrate().covariance[0, 0])

    both = noise(secrets, [model])
    assert both == pytest.approx(max(noise([s], [model]) for s in secrets))
    assert noise(secrets, [model, other]) == pytest.approx(
        max(noise(secrets, [m]) for m in (model, other))
    )


def test_ledger_is_charged_before_any_noise_and_refuses_overspend(
    frame: pd.DataFrame, tmp_path: Path
) -> None:
    class Spy(SeededNumpyNoise):
        calls = 0

        def _sample(self, flat, scale, kind, integer):  # type: ignore[no-untyped-def]
            Spy.calls += 1
            return super()._sample(flat, scale, kind, integer)

    ledger = BudgetLedger(tmp_path / "budget.ledger")
    ledger.set_budget(1.5, 1e-3, unit="attribute-privacy/mean(x)")
    data, schema = frame[["x", "y"]], SCHEMA.select(["x", "y"])
    mech = AttributePrivateGaussian(
        "mean(y)", WORKED, PAPER, 1.0, 1e-4, sampler=Spy(0), allow_nonprivate=True
    )
    mech.release(data, schema, ledger=ledger, label="first")
    assert Spy.calls == 1
    with pytest.raises(BudgetExceededError, match="would exceed the budget"):
        mech.release(data, schema, ledger=ledger, label="second")
    assert Spy.calls == 1  # refused before drawing noise
    assert [e.label for e in ledger.entries()] == ["first"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"delta": 0.0}, "delta must be > 0 for the Gaussian mechanism"),
        ({"epsilon": -1.0}, "epsilon must be > 0"),
        ({"epsilon": 1e308}, "epsilon must be at most 700"),
        ({"variant": "radial"}, "variant must be one of"),
        ({"calibration": "tight"}, "calibration must be one of"),
        ({"epsilon": 10.0, "calibration": "classic"}, "'classic' is not valid"),
        ({"smoothing": -0.1}, "smoothing must be >= 0"),
        ({"approximation": "hope"}, "approximation must be one of"),
        ({"n_eval": 50}, "n_eval must be an integer >= 100"),
        ({"eta": 1.5}, "eta must be"),
        ({"query": "mean(height)"}, "variable 'height' is not in the model"),
        (
            {
                "secrets": Secret("share(s=1)", values=(0.5, 1.5)),
                "model": GaussianModel(
                    ["y", "s=1"], [0, 0.5], [[1, 0.1], [0.1, 0.25]], 100, force=True
                ),
            },
            r"share\(s=1\) value 1.5 is outside the model's support \[0, 1\]",
        ),
        (
            {
                "secrets": Secret("share(s=1)", values=(0.4, 0.6)),
                "model": GaussianModel(["y", "s=1"], [0, 0.5], [[1, 0.1], [0.1, 0.25]], 100),
            },
            r"GaussianModel on discrete variables \['s=1'\]",
        ),
        ({"secrets": []}, "non-empty list"),
        ({"model": "gaussian"}, "model must be a GaussianModel"),
    ],
)
def test_bad_parameters(kwargs: dict, message: str) -> None:
    spec = {"query": "mean(y)", "secrets": WORKED, "model": PAPER, "epsilon": 1.0, "delta": 1e-3}
    with pytest.raises(InputError, match=message):
        AttributePrivateGaussian(**{**spec, **kwargs}).calibrate()


def test_bad_data(frame: pd.DataFrame) -> None:
    model = GaussianModel(["x", "y", "height"], [0.0] * 3, np.eye(3), 100)
    with pytest.raises(InputError, match="'height' is not in the schema"):
        AttributePrivateGaussian("mean(height)", WORKED, model, 1.0, 1e-3).release(frame, SCHEMA)
    mech = AttributePrivateGaussian("mean(y)", WORKED, PAPER, 1.0, 1e-3)
    with pytest.raises(InputError, match="data has 99 rows; the model describes datasets of n=100"):
        mech.release(frame.iloc[:99], SCHEMA)
    nullable = Schema((SCHEMA["x"], Column("y", "feature", Numeric(-10, 10), nullable=True)))
    with pytest.raises(InputError, match="may have missing values"):
        mech.release(frame[["x", "y"]], nullable)
    wide = AttributePrivateGaussian("mean(y)", Secret("mean(x)", values=(0, 20)), PAPER, 1, 1e-3)
    with pytest.raises(InputError, match=r"outside the model's support \[-10, 10\]"):
        wide.release(frame, SCHEMA)


def test_calibration_checks_itself() -> None:
    class Broken(AttributePrivateGaussian):
        def _noise_covariance(self, constraints, cal, size):  # type: ignore[no-untyped-def]
            return super()._noise_covariance(constraints, cal, size) / 4

    with pytest.raises(RuntimeError, match="failed its own check"):
        Broken("mean(y)", WORKED, PAPER, 1.0, 1e-3).calibrate()


# -- audits ---------------------------------------------------------------------------------------
# Datasets of n records are drawn from the model under each secret, F is computed on each, and
# the mechanism's own noise is added; attrpriv.dp.audit bounds epsilon from below. A mechanism
# whose noise is exact for its claim has an audited bound just under it, so the test setting
# makes the deliberate bugs leak epsilon ~1.5 (their worst case), caught with 200k draws.


def _audit(
    mech: AttributePrivateGaussian,
    model: ThetaModel,
    pair: tuple[float, float],
    n: int,
    sampler: NoiseSampler,
    seed: int = 0,
) -> float:
    query = Query.of(mech.query)
    secret = mech.secrets
    assert isinstance(secret, Secret)
    plan = mech.calibrate(sampler=sampler)
    (c,) = plan.constraints
    direction = np.linalg.pinv(c.cov + plan.covariance) @ c.shift  # likelihood-ratio direction
    rng = np.random.default_rng(seed)

    def draws(value: float):
        return lambda m: mech._perturb(model.sample(query, secret, value, m, rng), plan)

    result = audit(
        draws(pair[0]),
        draws(pair[1]),
        n,
        delta=plan.delta,
        confidence=0.95,
        statistic=lambda outputs: outputs @ direction,
    )
    print(  # shown with pytest -s: the numbers quoted in the docs
        f"\naudit {type(mech).__name__} ({mech.variant}, {plan.accounting}, {n} draws per secret, "
        f"{type(sampler).__name__}): claimed ({plan.epsilon:.4g}, {plan.delta:.3g}), "
        f"epsilon_lower = {result.epsilon_lower:.3f}, estimate = {result.epsilon_estimate:.3f}; "
        f"nominal ({plan.calibration.epsilon:.4g}, {plan.calibration.delta:.3g}), lambda_eta "
        f"{plan.lam:.3g}, certified ({plan.guarantee[0]:.4g}, {plan.guarantee[1]:.3g})"
    )
    return result.epsilon_lower


def _with_noise(plan: GaussianPlan, cov: np.ndarray) -> GaussianPlan:
    basis, scales = sampling_basis(cov)
    return dataclasses.replace(plan, covariance=cov, basis=basis, scales=scales)


class _SubtractsVarianceTwice(AttributePrivateGaussian):
    """Broken on purpose: takes the conditional variance off the noise a second time."""

    def _calibrate(self, specs: Specs, sampler: NoiseSampler) -> GaussianPlan:
        plan = super()._calibrate(specs, sampler)
        (c,) = plan.constraints
        return _with_noise(plan, np.clip(plan.covariance - c.cov, 0.0, None))


class _CountsDataTwice(AttributePrivateGaussian):
    """Broken on purpose: the directional variant with the data's covariance counted twice."""

    def _calibrate(self, specs: Specs, sampler: NoiseSampler) -> GaussianPlan:
        plan = super()._calibrate(specs, sampler)
        doubled = [Constraint(c.label, c.shift, 2 * c.cov) for c in plan.constraints]
        return _with_noise(plan, directional_noise(doubled, plan.calibration.max_shift))


SMALL = GaussianModel(["x", "y", "z"], [0.0] * 3, [[1, 0.6, 0.3], [0.6, 1, 0.2], [0.3, 0.2, 1]], 20)
R = 0.38840124830658  # the largest Mahalanobis shift at (1, 1e-3), checked below


def _setting(query: list[str]) -> tuple[Secret, float]:
    """mean(x) in {0, D}, D such that the data alone leaves a Mahalanobis shift of sqrt(2) r:
    the data's own randomness pays half, where a bug counting it twice leaks the most."""
    secret = Secret("mean(x)", values=(0.0, 1.0))
    unit = SMALL.conditional(Query.of(query), secret, 1.0)
    per_unit = mahalanobis_sq(
        unit.mean - SMALL.conditional(Query.of(query), secret, 0.0).mean, unit.cov
    )
    d = R * math.sqrt(2 / per_unit)
    return Secret("mean(x)", values=(0.0, d)), d


def test_audit_setting() -> None:
    mech = AttributePrivateGaussian("mean(y)", _setting(["mean(y)"])[0], SMALL, 1.0, 1e-3)
    plan = mech.calibrate()
    assert plan.calibration.max_shift == pytest.approx(R, rel=1e-9)
    (c,) = plan.constraints
    assert plan.covariance[0, 0] == pytest.approx(c.cov[0, 0], rel=1e-6)  # half and half


def test_audit_isotropic_stays_under_epsilon_with_opendp_noise() -> None:
    secret, d = _setting(["mean(y)"])
    mech = AttributePrivateGaussian("mean(y)", secret, SMALL, 1.0, 1e-3)
    assert _audit(mech, SMALL, (0.0, d), 40_000, OpenDPNoise(k=-40)) < 1.0


def test_audit_catches_the_variance_subtracted_twice() -> None:
    secret, d = _setting(["mean(y)"])
    broken = _SubtractsVarianceTwice("mean(y)", secret, SMALL, 1.0, 1e-3, **seeded())
    assert _audit(broken, SMALL, (0.0, d), 200_000, SeededNumpyNoise(1)) > 1.0


def test_audit_directional_stays_under_epsilon_with_opendp_noise() -> None:
    model, (secret, d) = SMALL, _setting(["mean(y)", "mean(z)"])
    mech = AttributePrivateGaussian(
        ["mean(y)", "mean(z)"], secret, model, 1.0, 1e-3, variant="directional"
    )
    assert np.linalg.matrix_rank(mech.calibrate().covariance) == 1
    assert _audit(mech, model, (0.0, d), 40_000, OpenDPNoise(k=-40)) < 1.0


def test_audit_catches_the_directional_variant_counting_the_data_twice() -> None:
    model, (secret, d) = SMALL, _setting(["mean(y)", "mean(z)"])
    broken = _CountsDataTwice(
        ["mean(y)", "mean(z)"], secret, model, 1.0, 1e-3, variant="directional", **seeded()
    )
    assert _audit(broken, model, (0.0, d), 200_000, SeededNumpyNoise(2)) > 1.0


@pytest.mark.parametrize("approximation", ["auto", "bound"])
def test_audit_on_real_data_stays_under_the_pair_asked_for(approximation: str) -> None:
    """Resampling model over Adult, a count: the exact privacy loss (default) and Algorithm 2
    calibrated to the request both state (1, 1e-3), and the audit stays under it."""
    adult = datasets.load("adult")
    model = ResamplingModel(adult.frame, adult.schema, 50, draws=2000)
    secret = Secret("share(income=>50K)", values=(0.4, 0.6))
    mech = AttributePrivateGaussian(
        "count(sex=Female)", secret, model, 1.0, 1e-3, approximation=approximation
    )
    plan = mech.calibrate()
    assert (plan.epsilon, plan.delta) == (1.0, 1e-3)
    if approximation == "bound":
        assert 0.0 < plan.lam < 0.2 and plan.accounting == "algorithm-2"
        assert {a.method for a in plan.approximations} == {"exact-pmf"}
        assert plan.calibration.epsilon == pytest.approx(1.0 - 2 * plan.lam)
    else:
        assert plan.accounting == "exact" and max(plan.exact.values()) <= 1e-3
    assert plan.guarantee[0] <= 1.0 + 1e-12 and plan.guarantee[1] <= 1e-3
    assert _audit(mech, model, (0.4, 0.6), 40_000, OpenDPNoise(k=-40)) < 1.0


def test_algorithm_2_refuses_with_what_it_can_give() -> None:
    adult = datasets.load("adult")
    model = ResamplingModel(adult.frame, adult.schema, 100, draws=500)
    secret = Secret("share(income=>50K)", values=(0.45, 0.55))
    query = ["mean(age)", "count(sex=Female)"]
    tiny = AttributePrivateGaussian(query, secret, model, 5.0, 1e-3)
    with pytest.raises(InputError, match=r"Monte Carlo points .* ask for delta >= 0.0\d+"):
        tiny.calibrate()  # eta = delta / (2 (1 + e^5)) is too small to resolve by sampling
    rank_one = AttributePrivateGaussian(query, secret, model, 1.0, 0.05, variant="directional")
    with pytest.raises(InputError, match=r"cannot give \(1, 0.05\): lambda_eta is infinite"):
        rank_one.calibrate()  # directional noise leaves a discrete law singular
    greedy = AttributePrivateGaussian(query, secret, model, 1.0, 0.05, eta=0.02)
    with pytest.raises(InputError, match=r"eta < 0.0134"):
        greedy.calibrate()  # (1 + e) * 0.02 leaves nothing of delta


def test_algorithm_2_can_be_skipped_only_on_request() -> None:
    adult = datasets.load("adult")
    model = ResamplingModel(adult.frame, adult.schema, 100, draws=500)
    secret = Secret("share(income=>50K)", values=(0.45, 0.55))
    query = ["mean(age)", "count(sex=Female)"]
    assumed = AttributePrivateGaussian(
        query, secret, model, 5.0, 1e-3, approximation="assume-gaussian"
    )
    plan = assumed.calibrate(sampler=OpenDPNoise())
    record = assumed.record(plan)
    assert record.epsilon == 5.0 and record.noise["free"] and plan.assumed_gaussian
    assert any("assumed Gaussian" in a for a in record.assumptions)
    assert any("rests entirely on the model" in a for a in record.assumptions)
    with pytest.raises(InputError, match="approximation 'exact' needs a scalar query"):
        AttributePrivateGaussian(query, secret, model, 5.0, 1e-3, approximation="exact").calibrate()
