"""The attribute-private Gaussian mechanism (Zhang, Ohrimenko & Cummings, Algorithms 1 and 2).

The secret is a *property of the whole dataset* (a column's mean, a category's share), and the
adversary knows the data distribution (a model Theta). Given that the secret takes value a, the
query F is (approximately) Gaussian with mean mu_a and covariance S; releasing ``F + Z`` with
``Z ~ N(0, Sigma_Z)`` gives ``N(mu_a, S + Sigma_Z)``, so for every protected pair (a, b) it is
enough that the Mahalanobis shift ``d^T (S + Sigma_Z)^+ d``, ``d = mu_a - mu_b``, is at most
``r(epsilon, delta)^2`` (see :mod:`attrpriv.release.calibration`). The data's own randomness S
pays for part (or all: privacy "for free") of the noise.

Variants: ``"isotropic"`` adds ``s I`` with the smallest such s (the paper's sigma^2 for a
scalar query, its conditional-covariance extension for vectors); ``"directional"`` adds noise
only along the mean shifts (rank-one terms), usually far less in total.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from attrpriv._checks import (
    check_choice,
    check_delta,
    check_epsilon,
    check_non_negative,
    check_positive_int,
    check_probability,
)
from attrpriv.data.schema import Schema
from attrpriv.dp.ledger import BudgetLedger
from attrpriv.dp.noise import NoiseSampler, default_sampler, require_private
from attrpriv.dp.record import PrivacyRecord, Release
from attrpriv.errors import InputError
from attrpriv.release import approx
from attrpriv.release.calibration import (
    Calibration,
    Constraint,
    calibrate,
    directional_noise,
    isotropic_noise,
    worst_shift,
)
from attrpriv.release.models import ThetaModel
from attrpriv.release.plan import NoisePlan, sampling_basis
from attrpriv.release.specs import Array, Query, Secret, Statistic, check_schema, evaluate

VARIANTS = ("isotropic", "directional")
APPROXIMATIONS = ("bound", "assume-gaussian")


class AttributePrivateGaussian:
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

    # -- calibration -------------------------------------------------------------------------
    def calibrate(self) -> AttributePrivateGaussian:
        """Compute the noise from public quantities only (the models); sets ``plan_``."""
        epsilon, delta = check_epsilon(self.epsilon), check_delta(self.delta)
        check_choice(self.variant, "variant", VARIANTS)
        extra = check_non_negative(self.smoothing, "smoothing")
        query, secrets, models = self._specs()
        sampler = self._sampler()
        cal = calibrate(epsilon, delta, self.calibration)
        constraints, sensitivity = self._constraints(query, secrets, models, sampler)
        cov = self._noise_covariance(constraints, cal, query.size)
        if extra > 0.0:
            covs = [m.approximation_cov(query, s) for m in models for s in secrets]
            cov = cov + np.diag(extra**2 * np.max([np.diag(c) for c in covs], axis=0))
        if constraints and worst_shift(constraints, cov) > cal.max_shift * (1 + 1e-8):
            raise RuntimeError("noise calibration failed its own check; please report this")
        basis, scales = sampling_basis(cov)
        plan = NoisePlan(cov, basis, scales, cal, constraints, sensitivity, epsilon, delta)
        self.plan_ = self._approximate(plan, query, secrets, models)
        return self

    def _specs(self) -> tuple[Query, tuple[Secret, ...], tuple[ThetaModel, ...]]:
        query = Query.of(self.query)
        secrets = (self.secrets,) if isinstance(self.secrets, Secret) else tuple(self.secrets)
        models = (self.model,) if isinstance(self.model, ThetaModel) else tuple(self.model)
        if not secrets or not all(isinstance(s, Secret) for s in secrets):
            raise InputError("secrets must be one Secret or a non-empty list of them")
        if not models or not all(isinstance(m, ThetaModel) for m in models):
            raise InputError("model must be a GaussianModel, a ResamplingModel, or a list of them")
        if len({m.n for m in models}) != 1:
            raise InputError(f"every model must describe the same n, got {[m.n for m in models]}")
        return query, secrets, models

    def _sampler(self) -> NoiseSampler:
        sampler = self.noise if self.noise is not None else default_sampler()
        require_private(sampler, allow_nonprivate=self.allow_nonprivate)
        return sampler

    def _constraints(
        self,
        query: Query,
        secrets: tuple[Secret, ...],
        models: tuple[ThetaModel, ...],
        sampler: NoiseSampler,
    ) -> tuple[tuple[Constraint, ...], dict[str, float]]:
        """One constraint per model, secret and protected pair with a non-zero mean shift."""
        slack = 2.0 * sampler.rounding_slack(query.size, norm=2)
        constraints: list[Constraint] = []
        sensitivity: dict[str, float] = {}
        for t, model in enumerate(models):
            for secret in secrets:
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

    def _approximate(
        self,
        plan: NoisePlan,
        query: Query,
        secrets: tuple[Secret, ...],
        models: tuple[ThetaModel, ...],
    ) -> NoisePlan:
        """Algorithm 2: lambda_eta of every non-Gaussian model's secret values, and the
        resulting (epsilon + 2 lambda, delta') guarantee."""
        params = self._params()
        assume = check_choice(self.approximation, "approximation", APPROXIMATIONS) != "bound"
        inexact = [m for m in models if not m.gaussian]
        if not inexact:
            return dataclasses.replace(plan, params=params)
        default = plan.delta / (1.0 + math.exp(plan.epsilon))  # eta's share of delta' ~ delta
        eta = check_probability(self.eta if self.eta is not None else default, "eta")
        n_eval = check_positive_int(self.n_eval, "n_eval", minimum=100)
        found: list[approx.Approximation] = []
        checks: dict[str, Any] = {}
        for t, model in enumerate(inexact):
            for secret in secrets:
                if not assume:
                    found += approx.model_lambdas(
                        model, query, secret, plan.covariance, eta, n_eval
                    )
                check = model.moment_check(query, secret)
                if check is not None:
                    checks[f"theta {t}: {secret.name}"] = check
        if assume:
            return dataclasses.replace(plan, checks=checks, assumed_gaussian=True, params=params)
        lam = max(a.lam for a in found)
        epsilon, delta = approx.approximate_guarantee(plan.epsilon, plan.delta, lam, eta)
        return dataclasses.replace(
            plan,
            epsilon=epsilon,
            delta=delta,
            lam=lam,
            approximations=tuple(found),
            checks=checks,
            params=(*params, eta),
        )

    def _params(self) -> tuple[Any, ...]:
        return (
            id(self.query),
            id(self.secrets),
            id(self.model),
            self.epsilon,
            self.delta,
            self.variant,
            self.calibration,
            self.approximation,
            self.eta,
            self.smoothing,
            self.n_eval,
            id(self.noise),
        )

    # -- release -----------------------------------------------------------------------------
    def release(
        self, data: Any, schema: Schema, *, ledger: BudgetLedger | None = None, label: str = ""
    ) -> Release:
        """Compute F, charge the ledger (before any noise is drawn), add noise, return
        values + record. ``data``: a DataFrame, a CSV/Parquet path or a Dask DataFrame."""
        sampler = self._sampler()
        query, secrets, models = self._specs()
        check_schema(schema, query, secrets, models[0].n)  # before the (slower) calibration
        plan = self._plan()
        true = evaluate(data, schema, query, secrets, models[0].n)
        record = self.record(sampler)
        if ledger is not None:
            ledger.charge(record, label=label)
        noisy = self.add_noise(true, sampler)
        values = pd.Series(noisy, index=pd.Index(query.names), name="value")
        parts = {"noise_plan": plan.to_dict(), "free": plan.free, "n": models[0].n}
        return Release(values, record, parts)

    def _plan(self) -> NoisePlan:
        plan: NoisePlan | None = getattr(self, "plan_", None)
        if plan is None or plan.params[: len(self._params())] != self._params():
            plan = self.calibrate().plan_
        return plan

    def add_noise(self, values: Any, sampler: NoiseSampler | None = None) -> Array:
        """``values + Z`` for one query answer (shape (k,)) or many (shape (N, k)).

        Directional noise is drawn in the eigenbasis of its covariance, one exact OpenDP draw
        per direction, and rotated back (rotation is post-processing of a private release).
        """
        plan = self._plan()
        sampler = sampler if sampler is not None else self._sampler()
        array = np.array(values, dtype=np.float64)
        rows = np.atleast_2d(array)
        if rows.shape[1] != plan.scales.size:
            raise InputError(f"values must have {plan.scales.size} columns, got {rows.shape[1]}")
        rotated = rows if plan.basis is None else rows @ plan.basis
        noisy = rotated.copy()
        for j, scale in enumerate(plan.scales):
            if scale > 0.0:
                noisy[:, j] = sampler.gaussian(rotated[:, j], float(scale))
        out = noisy if plan.basis is None else noisy @ plan.basis.T
        return out.reshape(array.shape)

    def record(self, sampler: NoiseSampler | None = None) -> PrivacyRecord:
        """The guarantee of a release with the calibrated noise."""
        plan = self._plan()
        sampler = sampler if sampler is not None else self._sampler()
        _, secrets, models = self._specs()
        protected = "; ".join(s.describe() for s in secrets)
        return PrivacyRecord(
            mechanism="attribute-private-gaussian",
            definition="attribute-privacy",
            epsilon=plan.epsilon,
            delta=plan.delta,
            protects=(
                f"which value each protected statistic of the whole dataset takes ({protected}), "
                "against an adversary who knows the data distribution (the model)"
            ),
            sensitivity=plan.sensitivity,
            noise=self._noise_description(plan, sampler),
            assumptions=_assumptions(plan, models, sampler),
        )

    def _noise_description(self, plan: NoisePlan, sampler: NoiseSampler) -> dict[str, Any]:
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
            **sampler.describe(),
        }


def _assumptions(
    plan: NoisePlan, models: Sequence[ThetaModel], sampler: NoiseSampler
) -> tuple[str, ...]:
    out = [
        "the n records are drawn from one of the models in Theta (Pufferfish prior): "
        + "; ".join(str(m.describe()["type"]) for m in models)
    ]
    if any(m.gaussian for m in models):
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
    if not sampler.private:
        out.append("noise sampler is not private")
    return tuple(out)


__all__ = ["APPROXIMATIONS", "VARIANTS", "AttributePrivateGaussian", "NoisePlan"]
