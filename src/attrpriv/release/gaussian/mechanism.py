"""The attribute-private Gaussian mechanism (Zhang, Ohrimenko & Cummings, Algorithms 1 and 2).

The secret is a *property of the whole dataset* (a column's mean, a category's share), and the
adversary knows the data distribution (a model Theta). Given that the secret takes value a, the
query F is (approximately) Gaussian with mean mu_a and covariance S; releasing ``F + Z`` with
``Z ~ N(0, Sigma_Z)`` gives ``N(mu_a, S + Sigma_Z)``, so for every protected pair (a, b) it is
enough that the Mahalanobis shift ``d^T (S + Sigma_Z)^+ d``, ``d = mu_a - mu_b``, is at most
``r(epsilon, delta)^2`` (see :mod:`attrpriv.release.gaussian.calibration`). The data's own
randomness S pays for part (or all: privacy "for free") of the noise.

Variants: ``"isotropic"`` adds ``s I`` with the smallest such s (the paper's sigma^2 for a
scalar query, its conditional-covariance extension for vectors); ``"directional"`` adds noise
only along the mean shifts (rank-one terms), usually far less in total.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from attrpriv._checks import (
    Check,
    check_epsilon,
    check_non_negative,
    check_positive_int,
    check_probability,
    one_of,
    optional,
)
from attrpriv.data.schema import Schema
from attrpriv.dp.accuracy import Accuracy
from attrpriv.dp.ledger import BudgetLedger
from attrpriv.dp.mechanism import SAMPLER_CONSTRAINTS, Mechanism
from attrpriv.dp.noise import NoiseSampler
from attrpriv.dp.record import PrivacyRecord, Release
from attrpriv.dp.units import PrivacyUnit
from attrpriv.errors import InputError
from attrpriv.release.gaussian import approximation as approx
from attrpriv.release.gaussian.calibration import (
    CALIBRATIONS,
    Calibration,
    Constraint,
    calibrate,
    check_gaussian_delta,
    directional_noise,
    isotropic_noise,
    worst_shift,
)
from attrpriv.release.gaussian.plan import GaussianPlan, sampling_basis
from attrpriv.release.gaussian.query import Array, Query, Secret, Statistic, check_schema, evaluate
from attrpriv.release.gaussian.theta import ThetaModel

VARIANTS = ("isotropic", "directional")
APPROXIMATIONS = ("bound", "assume-gaussian")


@dataclass(frozen=True)
class Specs:
    """The query, the secrets and the models, checked and as tuples."""

    query: Query
    secrets: tuple[Secret, ...]
    models: tuple[ThetaModel, ...]


@dataclass(frozen=True)
class Answer:
    """F on the data (private), and which of its columns' domains were read off the data."""

    values: Array
    specs: Specs
    inferred: tuple[str, ...]


class AttributePrivateGaussian(Mechanism[Answer, GaussianPlan]):
    """Release statistics F while hiding the value of whole-dataset secrets (attribute privacy).

    Parameters
    ----------
    query : the statistics, e.g. ``["mean(age)", "count(sex=Female)"]`` (see :class:`Statistic`).
    secrets : one or more :class:`Secret` (protected statistic and its values or pairs).
    model : one model or a list (the set Theta): :class:`GaussianModel`, :class:`ResamplingModel`.
    epsilon, delta : the target guarantee before Algorithm 2's approximation cost (delta > 0).
    variant : ``"isotropic"`` or ``"directional"`` (see the module docstring).
    calibration : ``"analytic"`` (Balle & Wang 2018, any epsilon) or ``"classic"``
        (``c = sqrt(2 ln(1.25/delta))``; refused where it does not give (epsilon, delta)).
    approximation : for non-Gaussian models, ``"bound"`` (Algorithm 2: compute lambda_eta
        and weaken the guarantee accordingly) or ``"assume-gaussian"`` (use the Gaussian
        approximation as if exact, as the paper's Section 4.3 leaves to the practitioner; the
        record says so).
    eta : Algorithm 2's eta (non-Gaussian models only); default ``delta / (1 + e^epsilon)``,
        so that eta adds about delta to the final delta'.
    smoothing : independent noise added on top, per statistic, in standard deviations of that
        statistic given the secret (Algorithm 2 needs full-rank noise to bound a discrete one).
    n_eval : Monte Carlo points per secret value for Algorithm 2 on vector queries.
    noise : a :class:`NoiseSampler`; default exact OpenDP noise.
    allow_nonprivate : accept a non-private sampler (reproducible tests only).
    """

    _constraints: ClassVar[Mapping[str, Check]] = {
        "epsilon": check_epsilon,
        "delta": check_gaussian_delta,
        "variant": one_of(VARIANTS),
        "calibration": one_of(CALIBRATIONS),
        "approximation": one_of(APPROXIMATIONS),
        "eta": optional(check_probability),
        "smoothing": check_non_negative,
        "n_eval": lambda value, name: check_positive_int(value, name, minimum=100),
        **SAMPLER_CONSTRAINTS,
    }

    def __init__(
        self,
        query: Query | Sequence[Statistic | str] | str,
        secrets: Secret | Sequence[Secret],
        model: ThetaModel | Sequence[ThetaModel],
        epsilon: float,
        delta: float,
        *,
        variant: str = "isotropic",
        calibration: str = "analytic",
        approximation: str = "bound",
        eta: float | None = None,
        smoothing: float = 0.0,
        n_eval: int = 20_000,
        noise: NoiseSampler | None = None,
        allow_nonprivate: bool = False,
    ) -> None:
        self.query = query
        self.secrets = secrets
        self.model = model
        self.epsilon = epsilon
        self.delta = delta
        self.variant = variant
        self.calibration = calibration
        self.approximation = approximation
        self.eta = eta
        self.smoothing = smoothing
        self.n_eval = n_eval
        self.noise = noise
        self.allow_nonprivate = allow_nonprivate

    # -- the release -------------------------------------------------------------------------
    def release(
        self, data: Any, schema: Schema, *, ledger: BudgetLedger | None = None, label: str = ""
    ) -> Release:
        """Compute F, charge the ledger (before any noise is drawn), add noise, return
        values + record. ``data``: a DataFrame, a CSV/Parquet path or a Dask DataFrame."""
        return self._release(data, schema, ledger=ledger, label=label)

    def calibrate(self, sampler: NoiseSampler | None = None) -> GaussianPlan:
        """The noise, from public quantities only (the models): no data is used."""
        self._validate_params()
        return self._plan(self._specs(), sampler or self._sampler(), ())

    def _measure(self, data: Any, schema: Schema) -> Answer:
        specs = self._specs()
        n = specs.models[0].n
        check_schema(schema, specs.query, specs.secrets, n)  # before reading any data
        columns = {s.column for s in specs.query.statistics} | {
            s.statistic.column for s in specs.secrets
        }
        values = evaluate(data, schema, specs.query, specs.secrets, n)
        return Answer(values, specs, schema.inferred_among(columns))

    def _calibrate(self, measured: Answer, sampler: NoiseSampler) -> GaussianPlan:
        return self._plan(measured.specs, sampler, measured.inferred)

    def _noise(self, measured: Answer, plan: GaussianPlan) -> pd.Series:
        noisy = self._perturb(measured.values, plan)
        return pd.Series(noisy, index=pd.Index(plan.names), name="value")

    def _accuracy(self, plan: GaussianPlan, values: pd.Series) -> Accuracy:
        std = np.sqrt(np.clip(np.diag(plan.covariance), 0.0, None))
        return Accuracy.of_scales("gaussian", pd.Series(std, index=values.index))

    def _parts(self, measured: Answer, plan: GaussianPlan, noisy: Any) -> dict[str, Any]:
        return {"noise_plan": plan.to_dict(), "free": plan.free, "n": measured.specs.models[0].n}

    @staticmethod
    def _perturb(values: Any, plan: GaussianPlan) -> Array:
        """``values + Z`` for one query answer (shape (k,)) or many (shape (N, k)).

        Private: noise is drawn only inside a charged release (and by audits). Directional
        noise is drawn in the eigenbasis of its covariance, one exact OpenDP draw per
        direction, and rotated back (rotation is post-processing of a private release).
        """
        array = np.array(values, dtype=np.float64)
        rows = np.atleast_2d(array)
        if rows.shape[1] != plan.scales.size:
            raise InputError(f"values must have {plan.scales.size} columns, got {rows.shape[1]}")
        rotated = rows if plan.basis is None else rows @ plan.basis
        noisy = rotated.copy()
        for j, scale in enumerate(plan.scales):
            if scale > 0.0:
                noisy[:, j] = plan.sampler.gaussian(rotated[:, j], float(scale))
        out = noisy if plan.basis is None else noisy @ plan.basis.T
        return out.reshape(array.shape)

    # -- calibration -------------------------------------------------------------------------
    def _plan(self, specs: Specs, sampler: NoiseSampler, inferred: tuple[str, ...]) -> GaussianPlan:
        epsilon, delta = float(self.epsilon), float(self.delta)
        query, secrets, models = specs.query, specs.secrets, specs.models
        cal = calibrate(epsilon, delta, self.calibration)
        constraints, sensitivity = self._constraints_of(specs, sampler)
        cov = self._noise_covariance(constraints, cal, query.size)
        if self.smoothing > 0.0:
            covs = [m.approximation_cov(query, s) for m in models for s in secrets]
            cov = cov + np.diag(self.smoothing**2 * np.max([np.diag(c) for c in covs], axis=0))
        if constraints and worst_shift(constraints, cov) > cal.max_shift * (1 + 1e-8):
            raise RuntimeError("noise calibration failed its own check; please report this")
        basis, scales = sampling_basis(cov)
        plan = GaussianPlan(
            epsilon,
            delta,
            sampler,
            covariance=cov,
            basis=basis,
            scales=scales,
            calibration=cal,
            constraints=constraints,
            sensitivity=sensitivity,
            names=tuple(query.names),
            protects="; ".join(s.describe() for s in secrets),
            models=tuple(str(m.describe()["type"]) for m in models),
            gaussian_models=any(m.gaussian for m in models),
            inferred=inferred,
        )
        return self._approximate(plan, specs)

    def _specs(self) -> Specs:
        query = Query.of(self.query)
        secrets = (self.secrets,) if isinstance(self.secrets, Secret) else tuple(self.secrets)
        models = (self.model,) if isinstance(self.model, ThetaModel) else tuple(self.model)
        if not secrets or not all(isinstance(s, Secret) for s in secrets):
            raise InputError("secrets must be one Secret or a non-empty list of them")
        if not models or not all(isinstance(m, ThetaModel) for m in models):
            raise InputError("model must be a GaussianModel, a ResamplingModel, or a list of them")
        if len({m.n for m in models}) != 1:
            raise InputError(f"every model must describe the same n, got {[m.n for m in models]}")
        return Specs(query, secrets, models)

    def _constraints_of(
        self, specs: Specs, sampler: NoiseSampler
    ) -> tuple[tuple[Constraint, ...], dict[str, float]]:
        """One constraint per model, secret and protected pair with a non-zero mean shift."""
        query = specs.query
        slack = 2.0 * sampler.rounding_slack(query.size, norm=2)
        constraints: list[Constraint] = []
        sensitivity: dict[str, float] = {}
        for t, model in enumerate(specs.models):
            for secret in specs.secrets:
                values = model.support(secret)
                cov = model.approximation_cov(query, secret)
                means = {v: model.conditional(query, secret, v).mean for v in values}
                for a, b in secret.value_pairs(values):
                    shift = means[a] - means[b]
                    norm = float(np.linalg.norm(shift))
                    sensitivity[secret.name] = max(sensitivity.get(secret.name, 0.0), norm)
                    if norm > 0.0:
                        label = f"theta {t}: {secret.statistic} {a:g} vs {b:g}"
                        constraints.append(Constraint(label, shift * (1 + slack / norm), cov))
        return tuple(constraints), sensitivity

    def _noise_covariance(
        self, constraints: tuple[Constraint, ...], cal: Calibration, size: int
    ) -> Array:
        if not constraints:
            return np.zeros((size, size))
        if self.variant == "isotropic":
            return isotropic_noise(constraints, cal.max_shift)
        return directional_noise(constraints, cal.max_shift)

    def _approximate(self, plan: GaussianPlan, specs: Specs) -> GaussianPlan:
        """Algorithm 2: lambda_eta of every non-Gaussian model's secret values, and the
        resulting (epsilon + 2 lambda, delta') guarantee."""
        assume = self.approximation != "bound"
        inexact = [m for m in specs.models if not m.gaussian]
        if not inexact:
            return plan
        default = plan.delta / (1.0 + math.exp(plan.epsilon))  # eta's share of delta' ~ delta
        eta = float(self.eta) if self.eta is not None else default
        found: list[approx.Approximation] = []
        checks: dict[str, Any] = {}
        for t, model in enumerate(inexact):
            for secret in specs.secrets:
                if not assume:
                    found += approx.model_lambdas(
                        model, specs.query, secret, plan.covariance, eta, self.n_eval
                    )
                check = model.moment_check(specs.query, secret)
                if check is not None:
                    checks[f"theta {t}: {secret.name}"] = check
        if assume:
            return dataclasses.replace(plan, checks=checks, assumed_gaussian=True)
        lam = max(a.lam for a in found)
        epsilon, delta = approx.approximate_guarantee(plan.epsilon, plan.delta, lam, eta)
        return dataclasses.replace(
            plan,
            epsilon=epsilon,
            delta=delta,
            lam=lam,
            approximations=tuple(found),
            checks=checks,
        )

    # -- the guarantee -----------------------------------------------------------------------
    def record(self, plan: GaussianPlan) -> PrivacyRecord:
        """The guarantee of a release with ``plan``."""
        return self._record(
            plan,
            mechanism="attribute-private-gaussian",
            protects=(
                f"which value each protected statistic of the whole dataset takes "
                f"({plan.protects}), against an adversary who knows the data distribution "
                "(the model)"
            ),
            sensitivity=plan.sensitivity,
            noise=self._noise_description(plan),
            unit=PrivacyUnit("attribute-privacy", ",".join(sorted(plan.sensitivity))),
            assumptions=_model_assumptions(plan),
        )

    def _noise_description(self, plan: GaussianPlan) -> dict[str, Any]:
        return {
            "distribution": "gaussian",
            "variant": self.variant,
            "covariance": plan.covariance.tolist(),
            "std": np.sqrt(np.diag(plan.covariance)).tolist(),
            "free": plan.free,
            "calibration": plan.calibration.to_dict(),
            "algorithm": 2 if plan.approximations else 1,
            "nominal_epsilon": plan.calibration.epsilon,
            "nominal_delta": plan.calibration.delta,
            "lambda_eta": plan.lam,
            "assumed_gaussian": plan.assumed_gaussian,
            "smoothing": float(self.smoothing),
        }


def _model_assumptions(plan: GaussianPlan) -> tuple[str, ...]:
    out = [
        "the n records are drawn from one of the models in Theta (Pufferfish prior): "
        + "; ".join(plan.models)
    ]
    if plan.gaussian_models:
        out.append("Gaussian model: F given a secret is exactly Gaussian (records are Gaussian)")
    if plan.assumed_gaussian:
        out.append(
            "F given a secret assumed Gaussian with the model's conditional mean and a common "
            "covariance (Algorithm 2's lambda_eta not computed, on request)"
        )
    if plan.approximations:
        methods = sorted({a.method for a in plan.approximations})
        out.append(
            f"Algorithm 2: Gaussian approximations with lambda_eta = {plan.lam:.4g} "
            f"({', '.join(methods)})"
        )
        if "monte-carlo" in methods:
            out.append("lambda_eta of a vector query is a Monte Carlo estimate, not a proof")
    return tuple(out)


__all__ = ["APPROXIMATIONS", "VARIANTS", "AttributePrivateGaussian", "GaussianPlan"]
