"""Local samplers: records, calibration, audits (and broken variants caught), bad input."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attrpriv.dp import BudgetLedger, NoiseSampler, OpenDPNoise, SeededNumpyNoise, audit
from attrpriv.errors import BudgetExceededError, InputError
from attrpriv.sanitize import ron_gauss as rg
from attrpriv.sanitize.samplers import (
    DPObfuscation,
    DPSampling,
    LatentFacts,
    ObfuscationDiagnostics,
    ObfuscationPlan,
    SamplingDiagnostics,
    SamplingFacts,
    Suppression,
)

AUDIT_NOISE = OpenDPNoise(k=-40)  # exact OpenDP noise on a 2**-40 grid (fast); slack accounted


def _latents(seed: int = 0, n: int = 600, k: int = 6) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.4).astype(int)
    centres = np.where(y[:, None] == 1, 1.0, -1.0) * np.linspace(0.5, 1.0, k)
    return centres + 0.3 * rng.standard_normal((n, k)), y


def _llr(a: np.ndarray, b: np.ndarray, scales: np.ndarray):
    """Log-likelihood ratio of independent Laplace outputs centred at a vs b (optimal test)."""
    return lambda out: ((np.abs(out - b) - np.abs(out - a)) / scales).sum(axis=1)


# --- suppression ------------------------------------------------------------------------------


def test_suppression_releases_zeros_and_no_record() -> None:
    z, y = _latents()
    before = z.copy()
    result = Suppression().sample(z, y)
    assert result.z_s.shape == z.shape and not result.z_s.any()
    assert result.record is None and result.y_s is None
    np.testing.assert_array_equal(z, before)
    assert result.to_dict()["record"] is None


# --- DP-obfuscation ---------------------------------------------------------------------------


def test_obfuscation_clips_and_adds_noise_of_the_recorded_scale() -> None:
    z, _ = _latents(k=3)
    result = DPObfuscation(0.5, 1.0, sampler=SeededNumpyNoise(4), allow_nonprivate=True).sample(z)
    assert result.record is not None
    assert result.record.sensitivity == pytest.approx(6.0)  # 2 * bound * k
    assert result.record.noise["scale"] == pytest.approx(12.0)
    expected = SeededNumpyNoise(4).laplace(np.clip(z, -1.0, 1.0), 12.0)
    np.testing.assert_allclose(result.z_s, expected)
    assert "noise sampler is not private" in result.record.assumptions
    assert result.diagnostics == ObfuscationDiagnostics(1.0, 12.0)
    assert result.to_dict()["diagnostics"] == {"bound": 1.0, "scale": 12.0}


class _NarrowObfuscation(DPObfuscation):
    """Broken on purpose: takes the box width as ``bound`` instead of ``2 * bound``."""

    def _calibrate(self, public: LatentFacts, sampler: NoiseSampler) -> ObfuscationPlan:
        plan = super()._calibrate(public, sampler)
        return dataclasses.replace(plan, scale=plan.scale / 2.0)


def _audit_obfuscation(mechanism: DPObfuscation) -> float:
    """Audit one record's output for two values of its z_S at opposite corners of the box."""
    k, bound = 2, mechanism.bound
    scale = mechanism.calibrate(LatentFacts(k), sampler=AUDIT_NOISE).scale
    a, b = np.full(k, -bound), np.full(k, bound)

    def draw(value: np.ndarray):
        return lambda n: mechanism.sample(np.tile(value, (n, 1))).z_s

    stat = _llr(a, b, np.full(k, scale))
    return audit(draw(a), draw(b), 40_000, confidence=0.999, statistic=stat).epsilon_lower


def test_obfuscation_audit_stays_under_the_claim() -> None:
    assert _audit_obfuscation(DPObfuscation(1.0, 1.0, sampler=AUDIT_NOISE)) < 1.0


def test_obfuscation_audit_catches_the_narrow_box() -> None:
    assert _audit_obfuscation(_NarrowObfuscation(1.0, 1.0, sampler=AUDIT_NOISE)) > 1.0


# --- DP-sampling ------------------------------------------------------------------------------


def test_sampling_draws_labelled_latents_near_the_class_means() -> None:
    z, y = _latents(n=4000)
    mechanism = DPSampling(50.0, 4.0, classes=[0, 1], sampler=SeededNumpyNoise(1),
                           allow_nonprivate=True)  # fmt: skip
    result = mechanism.sample(z, y)
    assert result.z_s.shape == z.shape and result.y_s is not None
    assert set(np.unique(result.y_s)) <= {0, 1}
    assert result.y_s.mean() == pytest.approx(y.mean(), abs=0.05)
    for c in (0, 1):
        np.testing.assert_allclose(result.z_s[result.y_s == c].mean(0), z[y == c].mean(0), atol=0.1)
    assert isinstance(result.diagnostics, SamplingDiagnostics)
    assert result.diagnostics.classes == (0, 1) and result.diagnostics.projection_dim == 6
    assert "means" not in result.to_dict()["diagnostics"]
    again = mechanism.__class__(**vars(mechanism) | {"sampler": SeededNumpyNoise(1)}).sample(z, y)
    np.testing.assert_array_equal(result.z_s, again.z_s)


def test_sampling_record_states_the_split_and_the_composition() -> None:
    z, y = _latents()
    result = DPSampling(1.0, 2.0, projection_dim=4).sample(z, y)
    record = result.record
    assert record is not None and record.epsilon == 1.0 and record.delta == 0.0
    parts = [record.noise[name]["epsilon"] for name in ("count", "sum", "scatter")]
    assert parts == pytest.approx([0.1, 0.27, 0.63])
    # substitution, p = 4, bound 2: twice one row's 1, sqrt(4) * 2 = 4 and (4 + 1) 2^2 / 2 = 10
    assert record.sensitivity == {"count": 2.0, "sum": pytest.approx(8.0), "scatter": 20.0}
    assert "l1 over all 2 classes" in record.noise["composition"]
    assert any("read off the private data" in a for a in record.assumptions)


def test_noisy_covariances_are_symmetric_psd() -> None:
    z, y = _latents(n=50)
    rows = rg.clip_rows(z, 1.0)
    stats = rg.class_statistics(rows, y, np.array([0, 1]))
    plan = DPSampling(0.1, 1.0).calibrate(SamplingFacts(z.shape[1], 2), sampler=AUDIT_NOISE)
    model = rg.gaussian_classes(rg._noisy_statistics(stats, plan.statistics, AUDIT_NOISE), 1.0)
    for cov in model.covariances:
        np.testing.assert_allclose(cov, cov.T)
        assert np.linalg.eigvalsh(cov).min() >= -1e-10
    assert model.shares.sum() == pytest.approx(1.0) and (model.shares >= 0).all()


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 12), st.floats(0.1, 10.0), st.integers(0, 10_000))
def test_sensitivities_bound_every_row_in_the_ball(p: int, bound: float, seed: int) -> None:
    x = rg.clip_rows(np.random.default_rng(seed).standard_normal((1, p)) * 10, bound)[0]
    upper = np.outer(x, x)[np.triu_indices(p)]
    assert np.abs(x).sum() <= rg.sum_sensitivity(p, bound) * (1 + 1e-9)
    assert np.abs(upper).sum() <= rg.scatter_sensitivity(p, bound) * (1 + 1e-9)


def test_reference_ron_gauss_calibration_is_too_small() -> None:
    p, bound = 8, 1.0
    dense = np.full(p, bound / np.sqrt(p))
    full = np.abs(np.outer(dense, dense)).sum()  # what one row adds to the full P x P matrix
    assert full == pytest.approx(p * bound**2)
    assert full > 2.5 * rg.reference_scatter_sensitivity(p, bound)  # off by sqrt(8) = 2.83
    upper = np.abs(np.outer(dense, dense)[np.triu_indices(p)]).sum()
    assert upper == pytest.approx(rg.scatter_sensitivity(p, bound))  # ours is tight


class _AddRemoveSampling(DPSampling):
    """Broken on purpose: add/remove sensitivities, though the release reveals the row count."""

    def _sensitivities(self, p: int, sampler: NoiseSampler) -> rg.StatisticNoise:
        right = super()._sensitivities(p, sampler)
        return rg.StatisticNoise(right.epsilon_count, right.epsilon_sum, right.epsilon_scatter, 1.0,
                              right.sensitivity_sum / 2, right.sensitivity_scatter / 2)  # fmt: skip


def _audit_sampling(mechanism: DPSampling) -> float:
    """Audit the noisy (count, sum, scatter) release on substitution neighbours.

    One record of class 1 at ``-bound`` becomes a record of class 0 at ``+bound`` (p = 1):
    every statistic of both classes moves by its full sensitivity. One dimension keeps the
    released vector short (6 numbers), so 30,000 draws resolve the loss: at p = 2 the
    add/remove calibration (true epsilon 2) audits at only 0.98.
    """
    p, bound = 1, float(mechanism.bound)
    z, y = _latents(n=40, k=p)
    rows = rg.clip_rows(z, bound)
    dense = np.full(p, bound / np.sqrt(p))
    classes = np.array([0, 1])
    a = rg.class_statistics(np.vstack([rows, -dense]), np.append(y, 1), classes)
    b = rg.class_statistics(np.vstack([rows, dense]), np.append(y, 0), classes)
    calibration = mechanism.calibrate(SamplingFacts(p, 2), sampler=AUDIT_NOISE).statistics
    result = rg._audit_release(calibration, a, b, AUDIT_NOISE, 30_000, confidence=0.999)
    return result.epsilon_lower


def test_sampling_audit_stays_under_the_claim() -> None:
    assert _audit_sampling(DPSampling(1.0, 1.0, sampler=AUDIT_NOISE)) < 1.0


def test_sampling_audit_catches_the_add_remove_calibration() -> None:
    """Calibrating for add/remove while the row count is public doubles the true epsilon."""
    assert _audit_sampling(_AddRemoveSampling(1.0, 1.0, sampler=AUDIT_NOISE)) > 1.0


def test_the_release_has_one_row_per_record_so_n_is_public() -> None:
    """Why the neighbours are substitutions: the output's length is the input's."""
    z, y = _latents(n=40, k=2)
    out = DPSampling(1.0, 1.0, sampler=AUDIT_NOISE).sample(z, y)
    assert out.z_s.shape == z.shape
    assert "substitution" in out.record.protects
    assert out.record.sensitivity["count"] == 2.0


# --- ledger and bad input ---------------------------------------------------------------------


class _LedgerWatch(SeededNumpyNoise):
    """Fails if noise is drawn before the ledger holds an entry."""

    def __init__(self, ledger: BudgetLedger) -> None:
        super().__init__(0)
        self.ledger = ledger

    def _sample(self, flat: np.ndarray, scale: float, kind: str, integer: bool) -> np.ndarray:
        assert self.ledger.entries(), "noise drawn before the ledger was charged"
        return super()._sample(flat, scale, kind, integer)


@pytest.mark.parametrize(
    "make",
    [
        lambda n: DPObfuscation(0.6, 1.0, sampler=n, allow_nonprivate=True),
        lambda n: DPSampling(0.6, 1.0, sampler=n, allow_nonprivate=True),
    ],
)
def test_ledger_is_charged_before_noise_and_refuses_overspend(make, tmp_path) -> None:  # type: ignore[no-untyped-def]
    z, y = _latents()
    ledger = BudgetLedger(tmp_path / "budget.ledger")
    ledger.set_budget(1.0, unit="dp/substitute:z_S")  # covers (z_S, y_S) too
    make(_LedgerWatch(ledger)).sample(z, y, ledger=ledger, label="first")
    with pytest.raises(BudgetExceededError):
        make(_LedgerWatch(ledger)).sample(z, y, ledger=ledger)
    assert [e.label for e in ledger.entries()] == ["first"]


@pytest.mark.parametrize(
    ("kwargs", "y", "message"),
    [
        ({"epsilon": 0.0}, None, "epsilon must be > 0"),
        ({"bound": -1.0}, None, "bound must be > 0"),
        ({"mean_share": 1.0}, None, "mean_share must be in"),
        ({"class_share_epsilon": 2.0}, None, "class_share_epsilon must be < epsilon"),
        ({"projection_dim": 9}, None, "projection_dim must be <= the latent dimension 6"),
        ({"classes": [0]}, None, "not in classes"),
        ({}, "short", "one label per row"),
        ({}, "none", "y_s is required"),
    ],
)
def test_sampling_bad_parameters(kwargs: dict, y: str | None, message: str) -> None:
    z, labels = _latents()
    params = {"epsilon": 1.0, "bound": 1.0} | kwargs
    given_y = {"short": labels[:-1], "none": None}.get(y or "", labels)
    with pytest.raises(InputError, match=message):
        DPSampling(**params).sample(z, given_y)


def test_refuses_nonprivate_noise_and_bad_latents() -> None:
    z, _ = _latents()
    with pytest.raises(InputError, match="not private"):
        DPObfuscation(1.0, 1.0, sampler=SeededNumpyNoise(0)).sample(z)
    with pytest.raises(InputError, match=r"\(n, k\) array"):
        Suppression().sample(np.zeros(3))
    with pytest.raises(InputError, match="NaN"):
        DPSampling(1.0, 1.0).sample(np.full((3, 2), np.nan), [0, 1, 0])


@settings(max_examples=30, deadline=None)
@given(st.one_of(st.floats(max_value=0.0), st.just(float("nan")), st.just(float("inf"))))
def test_obfuscation_refuses_any_non_positive_epsilon_or_bound(value: float) -> None:
    z, _ = _latents(n=5)
    with pytest.raises(InputError):
        DPObfuscation(value, 1.0).sample(z)
    with pytest.raises(InputError):
        DPObfuscation(1.0, value).sample(z)
