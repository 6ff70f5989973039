"""The calibrated noise of an attribute-private Gaussian release, and how it is sampled."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from attrpriv.dp.mechanism import NoisePlan
from attrpriv.dp.record import Diagnostics
from attrpriv.release.gaussian.approximation import Approximation
from attrpriv.release.gaussian.calibration import (
    Calibration,
    Constraint,
    mahalanobis_sq,
    worst_shift,
)
from attrpriv.release.gaussian.query import Array

ACCOUNTINGS = ("gaussian", "exact", "algorithm-2", "assume-gaussian")
"""How the guarantee was established: Algorithm 1 on Gaussian models; the exact privacy loss of
a scalar release under the model; Algorithm 2 on Gaussian approximations, calibrated to the
request; or the approximations taken as exact on request."""


@dataclass(frozen=True)
class GaussianPlan(NoisePlan):
    """The calibrated noise and its guarantee: ``epsilon``, ``delta`` as requested, ``certified``
    the pair computed (never above), ``calibration`` what the covariance was sized for.
    """

    covariance: Array
    basis: Array | None  # None: independent noise per statistic; else rotate into this basis
    scales: Array  # noise standard deviation per statistic (or per basis direction)
    calibration: Calibration
    constraints: tuple[Constraint, ...]
    sensitivity: dict[str, float]
    names: tuple[str, ...]  # the statistics, in release order
    protects: str
    models: tuple[str, ...]  # the type of every model in Theta
    gaussian_models: bool  # some model in Theta is Gaussian (F exactly Gaussian under it)
    accounting: str = "gaussian"  # one of ACCOUNTINGS
    certified: tuple[float, float] | None = None  # None: the stated pair itself
    lam: float = 0.0
    eta: float | None = None
    n_eval: int | None = None
    approximations: tuple[Approximation, ...] = ()
    exact: dict[str, float] = field(default_factory=dict)  # exact delta per secret pair
    checks: dict[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    forced: tuple[str, ...] = ()  # discrete variables a Gaussian model was forced on
    unchecked: bool = False  # a Gaussian model without reference data to check it against

    @property
    def free(self) -> bool:
        """True when the data's own randomness is enough: nothing is added."""
        return not bool(np.any(self.scales > 0.0))

    @property
    def assumed_gaussian(self) -> bool:
        """The Gaussian approximations were taken as exact, on request."""
        return self.accounting == "assume-gaussian"

    @property
    def guarantee(self) -> tuple[float, float]:
        """The pair computed for this noise (the stated one where nothing else is computed)."""
        return self.certified if self.certified is not None else (self.epsilon, self.delta)

    def to_dict(self) -> dict[str, Any]:
        return {
            "covariance": self.covariance.tolist(),
            "std": np.sqrt(np.diag(self.covariance)).tolist(),
            "free": self.free,
            "calibration": self.calibration.to_dict(),
            "sensitivity": self.sensitivity,
            "worst_shift": worst_shift(self.constraints, self.covariance),
            "shift_without_noise": worst_shift(self.constraints, 0.0 * self.covariance),
            "pairs": [_summary(c, self.covariance) for c in self.constraints],
            "epsilon": self.epsilon,
            "delta": self.delta,
            "accounting": self.accounting,
            "certified": list(self.guarantee),
            "lambda_eta": self.lam,
            "eta": self.eta,
            "n_eval": self.n_eval,
            "assumed_gaussian": self.assumed_gaussian,
            "approximations": [a.to_dict() for a in self.approximations],
            "exact_deltas": self.exact,
            "model_checks": self.checks,
            "warnings": list(self.warnings),
            "forced": list(self.forced),
        }


@dataclass(frozen=True)
class GaussianDiagnostics(Diagnostics):
    """How an attribute-private Gaussian release was made: its noise ``plan`` (``noise_plan`` in
    :meth:`to_dict`), the ``n`` records the models describe, and the model-check ``warnings``
    (each issued as a ``ModelWarning``)."""

    plan: GaussianPlan = field(repr=False)
    n: int
    warnings: tuple[str, ...] = ()

    @property
    def free(self) -> bool:
        """True when the data's own randomness is enough: nothing is added."""
        return self.plan.free

    @property
    def std(self) -> tuple[float, ...]:
        """The noise standard deviation of every statistic, in release order."""
        return tuple(float(v) for v in np.sqrt(np.clip(np.diag(self.plan.covariance), 0.0, None)))

    @property
    def how(self) -> str:
        """How the guarantee was established, in a few words."""
        plan, cal = self.plan, self.plan.calibration
        eps, delta = plan.guarantee
        if plan.accounting == "exact":
            return f"exact privacy loss under the model: delta {delta:.3g} at epsilon {eps:g}"
        if plan.accounting == "algorithm-2":
            return (
                f"Algorithm 2: nominal ({cal.epsilon:.4g}, {cal.delta:.3g}), lambda_eta "
                f"{plan.lam:.4g}, eta {plan.eta or 0.0:.3g}: certified ({eps:.4g}, {delta:.3g})"
            )
        if plan.accounting == "assume-gaussian":
            return f"{cal.method} calibration, F assumed Gaussian on request"
        return f"{cal.method} calibration, Gaussian model"

    def summary_lines(self) -> list[str]:
        """The "privacy for free" line when no noise is added, else nothing."""
        if self.free:
            return ["privacy for free: the data's own randomness hides the secrets (no noise)"]
        return []

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``noise_plan`` (the plan's ``to_dict()``), ``free``, ``n``, ``warnings``."""
        return {"noise_plan": self.plan.to_dict(), "free": self.free, **super().to_dict()}


def _summary(constraint: Constraint, noise: Array) -> dict[str, Any]:
    """One secret pair: its shift, the data's spread along it, Mahalanobis shift before/after."""
    d = constraint.shift
    unit = d / np.linalg.norm(d)
    return {
        "pair": constraint.label,
        "shift": d.tolist(),
        "sensitivity": float(np.linalg.norm(d)),
        "conditional_cov": constraint.cov.tolist(),
        "conditional_std_along_shift": math.sqrt(max(float(unit @ constraint.cov @ unit), 0.0)),
        "shift_without_noise": math.sqrt(mahalanobis_sq(d, constraint.cov)),
        "shift_with_noise": math.sqrt(mahalanobis_sq(d, constraint.cov + noise)),
    }


def sampling_basis(cov: Array) -> tuple[Array | None, Array]:
    """Independent per-statistic noise when ``cov`` is diagonal, else its eigenbasis."""
    if np.count_nonzero(cov - np.diag(np.diag(cov))) == 0:
        return None, np.sqrt(np.clip(np.diag(cov), 0.0, None))
    values, vectors = np.linalg.eigh(cov)
    return vectors, np.sqrt(np.clip(values, 0.0, None))


__all__ = ["ACCOUNTINGS", "GaussianDiagnostics", "GaussianPlan", "sampling_basis"]
