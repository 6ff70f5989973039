"""The attribute-private Gaussian mechanism (Zhang, Ohrimenko & Cummings, Algorithms 1 and 2).

Noise ``Z`` on F so that, for every protected pair, the Mahalanobis shift between the conditional
laws is small enough; the data's own randomness pays for part of it. See
docs/mechanisms/attribute-private-gaussian.md.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from attrpriv._checks import (
    EPSILON,
    FLAG,
    NON_NEGATIVE,
    Rule,
    integer,
    one_of,
    one_or_list,
    optional,
    probability,
)
from attrpriv._progress import progress
from attrpriv.data.schema import Schema
from attrpriv.dp.accuracy import Accuracy
from attrpriv.dp.ledger import BudgetLedger
from attrpriv.dp.mechanism import SAMPLER_CONSTRAINTS
from attrpriv.dp.noise import NoiseSampler
from attrpriv.dp.record import PrivacyRecord, Release
from attrpriv.dp.units import PrivacyUnit
from attrpriv.errors import InputError
from attrpriv.release._table import TableMechanism
from attrpriv.release.gaussian import accounting
from attrpriv.release.gaussian.calibration import (
    CALIBRATIONS,
    Calibration,
    Constraint,
    calibrate,
    check_gaussian_delta,
    directional_noise,
    isotropic_noise,
    replace_shift,
    worst_shift,
)
from attrpriv.release.gaussian.checks import ModelWarning
from attrpriv.release.gaussian.plan import GaussianDiagnostics, GaussianPlan, sampling_basis
from attrpriv.release.gaussian.query import Array, Query, Secret, Statistic, check_schema, evaluate
from attrpriv.release.gaussian.specs import Specs
from attrpriv.release.gaussian.theta import ThetaModel, is_discrete

VARIANTS = ("isotropic", "directional")
APPROXIMATIONS = ("auto", "exact", "bound", "assume-gaussian")


def _query_rule(value: object, name: str) -> Query:
    """The query ``value`` names (:meth:`Query.of`); a value that names none is refused."""
    if not isinstance(value, (Query, Statistic, str, list, tuple)):
        raise InputError(f"{name} must be a Query, a statistic or a list of them")
    return Query.of(value)


class AttributePrivateGaussian(TableMechanism[Array, Specs, GaussianPlan]):
    """Release statistics F while hiding the value of whole-dataset secrets.

    Guarantee: ``(epsilon, delta)`` attribute privacy for each protected pair of secret values,
    against every adversary whose belief is a model in Theta. A release issues its model-check
    findings (and a release without noise) as ``ModelWarning``. See
    docs/mechanisms/attribute-private-gaussian.md.

    Parameters
    ----------
    query : Query, sequence of Statistic or str, or str
        The statistics, e.g. ``["mean(age)", "count(sex=Female)"]``.
    secrets : Secret or sequence of Secret
        The protected statistics and their values or pairs.
    model : ThetaModel or sequence of ThetaModel
        The set Theta: :class:`GaussianModel` or :class:`ResamplingModel` instances.
    epsilon : float
        The guarantee's epsilon: stated exactly, or the release is refused.
    delta : float
        The guarantee's delta (> 0).
    variant : str, optional
        ``"isotropic"`` (``s I``) or ``"directional"`` (noise along the mean shifts only).
    calibration : str, optional
        ``"analytic"`` (any epsilon) or ``"classic"`` (refused where it does not hold).
    approximation : str, optional
        Non-Gaussian models: ``"exact"``, ``"bound"`` (Algorithm 2), ``"auto"`` or
        ``"assume-gaussian"``.
    eta : float or None, optional
        Algorithm 2's eta; default ``delta / (2 (1 + e^epsilon))``.
    smoothing : float, optional
        Extra noise per statistic, in standard deviations of it given the secret.
    n_eval : int or None, optional
        Monte Carlo points per direction for Algorithm 2 on vectors; default as many as eta needs.
    sampler, allow_nonprivate
        As in :class:`~attrpriv.dp.mechanism.Mechanism`.
    progress : bool, optional
        Report each noise level Algorithm 2 tries on stderr.
    """

    _constraints: ClassVar[Mapping[str, Rule]] = {
        "epsilon": EPSILON,
        "delta": Rule("a number in (0, 1)", check_gaussian_delta),
        "variant": one_of(VARIANTS),
        "calibration": one_of(CALIBRATIONS),
        "approximation": one_of(APPROXIMATIONS),
        "eta": optional(probability()),
        "smoothing": NON_NEGATIVE,
        "n_eval": optional(integer(100)),
        "progress": FLAG,
        "model": one_or_list(ThetaModel, "a GaussianModel, a ResamplingModel"),
        "query": Rule("a Query, a statistic or a list of statistics", _query_rule),
        "secrets": one_or_list(Secret, "one Secret"),
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
        approximation: str = "auto",
        eta: float | None = None,
        smoothing: float = 0.0,
        n_eval: int | None = None,
        sampler: NoiseSampler | None = None,
        allow_nonprivate: bool = False,
        progress: bool = False,
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
        self.sampler = sampler
        self.allow_nonprivate = allow_nonprivate
        self.progress = progress

    # -- the release -------------------------------------------------------------------------
    def _release(
        self, *inputs: Any, ledger: BudgetLedger | None = None, label: str = ""
    ) -> Release:
        result = super()._release(*inputs, ledger=ledger, label=label)
        if isinstance(result.diagnostics, GaussianDiagnostics):
            for text in result.diagnostics.warnings:
                warnings.warn(text, ModelWarning, stacklevel=3)  # at the caller of release()
        return result

    def _public_facts(self) -> Specs:
        return self._specs()

    def _measure(self, data: Any, schema: Schema) -> tuple[Array, Specs]:
        specs = self._specs()
        n = specs.models[0].n
        check_schema(schema, specs.query, specs.secrets, n)  # before reading any data
        used = (*specs.query.statistics, *(s.statistic for s in specs.secrets))
        discrete = frozenset(s.variable for s in used if is_discrete(schema, s))
        columns = {s.column for s in used}
        values = evaluate(data, schema, specs.query, specs.secrets, n)
        inferred = schema.inferred_among(columns)
        return values, dataclasses.replace(specs, discrete=discrete, inferred=inferred)

    def _add_noise(self, private: Array, plan: GaussianPlan) -> pd.Series:
        noisy = self._perturb(private, plan)
        return pd.Series(noisy, index=pd.Index(plan.names), name="value")

    def _accuracy(self, plan: GaussianPlan, values: pd.Series) -> Accuracy:
        std = np.sqrt(np.clip(np.diag(plan.covariance), 0.0, None))
        return Accuracy.of_scales("gaussian", pd.Series(std, index=values.index))

    def _diagnostics(self, public: Specs, plan: GaussianPlan, noisy: Any) -> GaussianDiagnostics:
        return GaussianDiagnostics(plan, public.models[0].n, plan.warnings)

    @staticmethod
    def _perturb(values: Any, plan: GaussianPlan) -> Array:
        """``values + Z`` for one answer (shape (k,)) or many (shape (N, k))."""
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
    def _calibrate(self, specs: Specs, sampler: NoiseSampler) -> GaussianPlan:
        """The noise for (epsilon, delta) under the models' accounting, then the model checks."""
        epsilon, delta = float(self.epsilon), float(self.delta)
        forced = accounting.forced_variables(specs)
        constraints, sensitivity = self._constraints_of(specs, sampler)
        method, laws = accounting.method(specs, self.approximation)
        cal = calibrate(epsilon, delta, self.calibration)
        fields: dict[str, Any] = {"accounting": method}
        if method == "algorithm-2":
            eta = accounting.default_eta(epsilon, delta) if self.eta is None else float(self.eta)
            with progress("Algorithm 2: noise levels tried", enabled=self.progress) as tried:
                found = accounting.algorithm_2(
                    specs,
                    epsilon,
                    delta,
                    eta,
                    self.calibration,
                    self.n_eval,
                    cal.max_shift,
                    lambda r: self._noise_for(constraints, replace_shift(cal, r), specs),
                    tried,
                )
            cov, cal = found.pop("covariance"), found.pop("calibration")
            fields.update(found)
        elif method == "exact" and laws is not None:
            slack = 2.0 * sampler.rounding_slack(1, norm=2)
            gaussian = tuple(c for c in constraints if c.gaussian)
            base = self._noise_for(gaussian, cal, specs, smoothing=False)
            cov = accounting.exact(laws, epsilon, delta, cal, constraints, base, slack)
            cov = cov + self._smoothing(specs)
            fields["exact"] = accounting.verify_exact(laws, epsilon, delta, cov, slack)
            fields["certified"] = (epsilon, max(fields["exact"].values(), default=0.0))
        else:
            cov = self._noise_for(constraints, cal, specs)
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
            names=tuple(specs.query.names),
            protects="; ".join(s.describe() for s in specs.secrets),
            models=tuple(str(m.describe()["type"]) for m in specs.models),
            gaussian_models=any(m.gaussian for m in specs.models),
            inferred=specs.inferred,
            forced=forced,
            **fields,
        )
        return accounting.checked(plan, specs)

    def _specs(self) -> Specs:
        query = Query.of(self.query)
        secrets = (self.secrets,) if isinstance(self.secrets, Secret) else tuple(self.secrets)
        models = (self.model,) if isinstance(self.model, ThetaModel) else tuple(self.model)
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
                        scaled = shift * (1 + slack / norm)
                        constraints.append(Constraint(label, scaled, cov, model.gaussian))
        return tuple(constraints), sensitivity

    def _noise_for(
        self,
        constraints: tuple[Constraint, ...],
        cal: Calibration,
        specs: Specs,
        *,
        smoothing: bool = True,
    ) -> Array:
        """Algorithm 1's noise for ``constraints`` at ``cal``, plus the smoothing, self-checked."""
        cov = self._noise_covariance(constraints, cal, specs.query.size)
        if smoothing:
            cov = cov + self._smoothing(specs)
        if constraints and worst_shift(constraints, cov) > cal.max_shift * (1 + 1e-8):
            raise RuntimeError("noise calibration failed its own check; please report this")
        return cov

    def _smoothing(self, specs: Specs) -> Array:
        size = specs.query.size
        if self.smoothing <= 0.0:
            return np.zeros((size, size))
        covs = [m.approximation_cov(specs.query, s) for m in specs.models for s in specs.secrets]
        return np.diag(self.smoothing**2 * np.max([np.diag(c) for c in covs], axis=0))

    def _noise_covariance(
        self, constraints: tuple[Constraint, ...], cal: Calibration, size: int
    ) -> Array:
        if not constraints:
            return np.zeros((size, size))
        if self.variant == "isotropic":
            return isotropic_noise(constraints, cal.max_shift)
        return directional_noise(constraints, cal.max_shift)

    # -- the guarantee -----------------------------------------------------------------------
    def record(self, plan: GaussianPlan) -> PrivacyRecord:
        """The guarantee of a release with ``plan``.

        Parameters
        ----------
        plan : GaussianPlan
            The noise plan of the release (from :meth:`calibrate` or a release).

        Returns
        -------
        PrivacyRecord
            ``(epsilon, delta)`` attribute privacy under ``attribute-privacy/<secrets>``.
        """
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
            assumptions=accounting.assumptions(plan),
        )

    def _noise_description(self, plan: GaussianPlan) -> dict[str, Any]:
        certified = plan.guarantee
        return {
            "distribution": "gaussian",
            "variant": self.variant,
            "covariance": plan.covariance.tolist(),
            "std": np.sqrt(np.diag(plan.covariance)).tolist(),
            "free": plan.free,
            "accounting": plan.accounting,
            "calibration": plan.calibration.to_dict(),
            "algorithm": 2 if plan.accounting == "algorithm-2" else 1,
            "nominal_epsilon": plan.calibration.epsilon,
            "nominal_delta": plan.calibration.delta,
            "certified_epsilon": certified[0],
            "certified_delta": certified[1],
            "lambda_eta": plan.lam,
            "eta": plan.eta,
            "n_eval": plan.n_eval,
            "exact_deltas": plan.exact,
            "assumed_gaussian": plan.assumed_gaussian,
            "smoothing": float(self.smoothing),
        }


__all__ = [
    "APPROXIMATIONS",
    "VARIANTS",
    "AttributePrivateGaussian",
    "GaussianDiagnostics",
    "GaussianPlan",
    "Specs",
]
