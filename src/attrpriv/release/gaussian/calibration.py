"""Gaussian noise calibration (Algorithm 1): the largest Mahalanobis shift ``r(epsilon, delta)``.

``"classic"`` (Dwork & Roth, accepted for epsilon >= 1 only if the exact condition confirms it) or
``"analytic"`` (Balle & Wang 2018). See docs/mechanisms/attribute-private-gaussian.md, "Algorithm
1".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import optimize, special

from attrpriv._checks import check_delta
from attrpriv.errors import InputError

Array = NDArray[np.float64]
CALIBRATIONS = ("analytic", "classic")
# An eigenvalue below its round-off (size x machine epsilon x the largest, as numpy's
# matrix_rank) counts as zero. A shift's component along such a direction counts as leaving the
# range when above _OUTSIDE (or 1e-15 times the condition number of the rest) times the shift's
# norm; smaller ones are eigenvector round-off.
_OUTSIDE = 1e-7


@dataclass(frozen=True)
class Calibration:
    """The largest Mahalanobis shift ``max_shift`` an (epsilon, delta) guarantee allows."""

    method: str
    epsilon: float
    delta: float
    max_shift: float
    exact_delta: float  # delta of a Gaussian pair at exactly max_shift (Balle & Wang, Thm 8)

    @property
    def multiplier(self) -> float:
        """The ``c`` of ``sigma = c * sensitivity / epsilon`` (4.8448 for classic, delta=1e-5)."""
        return self.epsilon / self.max_shift

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "max_shift": self.max_shift,
            "multiplier": self.multiplier,
            "exact_delta": self.exact_delta,
        }


def gaussian_delta(shift: float, epsilon: float) -> float:
    """Smallest delta for which N(0, 1) and N(shift, 1) are (epsilon, delta)-indistinguishable."""
    if shift <= 0.0:
        return 0.0
    if math.isinf(shift):
        return 1.0
    a, b = shift / 2 - epsilon / shift, -shift / 2 - epsilon / shift
    if epsilon > 1.0:
        first = float(special.ndtr(a))
        exponent = min(epsilon + float(special.log_ndtr(b)), 700.0)  # e^700: already > 1
        return max(0.0, first - math.exp(exponent))
    if b >= 0.0:
        inside = float(special.ndtr(-b) - special.ndtr(-a))
    elif a <= 0.0:
        inside = float(special.ndtr(a) - special.ndtr(b))
    else:
        inside = float(special.erf(a / math.sqrt(2)) + special.erf(-b / math.sqrt(2))) / 2
    return max(0.0, inside - math.expm1(epsilon) * float(special.ndtr(b)))


def nominal_delta(shift: float, epsilon: float, method: str) -> float:
    """The delta a Gaussian pair at Mahalanobis ``shift`` is certified for at ``epsilon``."""
    exact = gaussian_delta(shift, epsilon)
    if method == "classic":
        return max(exact, 1.25 * math.exp(-0.5 * (epsilon / shift) ** 2))
    return exact


def check_gaussian_delta(value: object, name: str = "delta") -> float:
    """A delta for the Gaussian mechanism: in (0, 1)."""
    delta = check_delta(value, name)
    if delta == 0.0:
        raise InputError(f"{name} must be > 0 for the Gaussian mechanism, got 0.0")
    return delta


def calibrate(epsilon: float, delta: float, method: str = "analytic") -> Calibration:
    """The largest allowed Mahalanobis shift for (epsilon, delta); arguments trusted."""
    if method == "classic":
        shift = epsilon / math.sqrt(2.0 * math.log(1.25 / delta))
        if not shift > 0.0:  # 1.25 / delta overflows: delta is (sub)normal-tiny
            raise InputError(f"delta = {delta:g} is too small for calibration 'classic'")
        exact = gaussian_delta(shift, epsilon)
        if exact > delta:
            raise InputError(
                f"calibration 'classic' is not valid at epsilon={epsilon:g}, delta={delta:g} "
                f"(it only gives delta={exact:.3g}); use calibration='analytic'"
            )
        return Calibration(method, epsilon, delta, shift, exact)
    shift = _analytic_shift(epsilon, delta)
    return Calibration(method, epsilon, delta, shift, gaussian_delta(shift, epsilon))


def largest_shift(epsilon: float, delta: float, method: str) -> float:
    """The largest Mahalanobis shift whose :func:`nominal_delta` is at most ``delta``."""
    shift = _analytic_shift(epsilon, delta)
    if method == "classic":
        shift = min(shift, epsilon / math.sqrt(2.0 * math.log(1.25 / delta)))
    return shift


def replace_shift(cal: Calibration, shift: float) -> Calibration:
    """``cal`` with another largest shift (its exact delta recomputed at ``cal.epsilon``)."""
    exact = gaussian_delta(shift, cal.epsilon)
    return Calibration(cal.method, cal.epsilon, cal.delta, shift, exact)


def _analytic_shift(epsilon: float, delta: float) -> float:
    """Largest shift whose exact delta is at most ``delta`` (the delta is increasing in it)."""

    def excess(shift: float) -> float:
        return gaussian_delta(shift, epsilon) - delta

    high = 1.0
    while excess(high) <= 0.0 and high < 1e300:
        high *= 2.0
    low = high
    while excess(low) > 0.0:
        low /= 2.0
        if low < 1e-300:
            raise InputError(
                f"cannot calibrate the Gaussian noise numerically at epsilon={epsilon:g}, "
                f"delta={delta:g}"
            )
    if low == high:
        return high
    try:
        root = float(optimize.brentq(excess, low, high, xtol=1e-300, rtol=1e-14, maxiter=200))
    except RuntimeError:  # extreme parameters: keep the safe end of the bracket
        return low
    while excess(root) > 0.0:  # land on the safe side of the root
        root *= 1.0 - 1e-12
    return root


# -- Mahalanobis shifts ---------------------------------------------------------------------------


def check_covariance(cov: object, name: str, size: int | None = None) -> Array:
    """A finite, symmetric, positive semi-definite matrix (small rounding tolerated)."""
    try:
        matrix = np.array(cov, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a numeric matrix") from None
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
        raise InputError(f"{name} must be a square matrix, got shape {matrix.shape}")
    if size is not None and matrix.shape[0] != size:
        raise InputError(f"{name} must be {size} x {size}, got {matrix.shape}")
    if not np.isfinite(matrix).all():
        raise InputError(f"{name} has NaN or infinite entries")
    scale = max(float(np.abs(matrix).max(initial=0.0)), 1e-300)
    if not np.allclose(matrix, matrix.T, rtol=1e-9, atol=1e-12 * scale):
        raise InputError(f"{name} must be symmetric")
    matrix = (matrix + matrix.T) / 2.0
    smallest = float(np.linalg.eigvalsh(matrix)[0]) if matrix.size else 0.0
    if smallest < -1e-9 * scale:
        raise InputError(
            f"{name} is not positive semi-definite: its smallest eigenvalue is {smallest:.4g}"
        )
    return matrix


def _spectrum(cov: Array, shift: Array) -> tuple[Array, Array, bool]:
    """Eigenvalues of ``cov`` (clipped), ``shift``'s squared parts, and if it leaves the range."""
    values, vectors = np.linalg.eigh(cov)
    values = np.clip(values, 0.0, None)
    parts = (vectors.T @ shift) ** 2
    top = max(float(values.max(initial=0.0)), 1e-300)
    null = values <= values.size * np.finfo(np.float64).eps * top
    condition = top / float(values[~null].min(initial=top))  # eigenvectors' accuracy ~ 1e-16 x
    significant = parts > max(_OUTSIDE, 1e-15 * condition) ** 2 * float(shift @ shift)
    values = np.where(null, 0.0, values)
    parts = np.where(null & ~significant, 0.0, parts)
    return values, parts, bool(np.any(null & significant))


def mahalanobis_sq(shift: Array, cov: Array) -> float:
    """``d^T cov^+ d``, or ``inf`` when ``d`` is not in the range of ``cov``."""
    values, parts, outside = _spectrum(cov, shift)
    if outside:
        return math.inf
    kept = values > 0.0
    return float(np.sum(parts[kept] / values[kept]))


def isotropic_variance(shift: Array, cov: Array, max_shift: float) -> float:
    """Smallest ``s >= 0`` with ``d^T (cov + s I)^+ d <= max_shift^2`` (root finding)."""
    limit = max_shift**2
    if mahalanobis_sq(shift, cov) <= limit:
        return 0.0
    values, parts, _ = _spectrum(cov, shift)
    keep = parts > 0.0
    values, parts = values[keep], parts[keep]

    def loss(s: float) -> float:
        return float(np.sum(parts / (values + s))) - limit

    enough = float(shift @ shift) / limit  # sum p / (lambda + s) <= ||d||^2 / s
    high = max(enough - float(np.linalg.eigvalsh(cov)[0].clip(0.0)), 1e-300)
    while loss(high) > 0.0:  # round-off at the closed form (exact for one statistic)
        high = max(2.0 * high, enough)
    low = high * 1e-30
    if loss(low) <= 0.0:
        return low
    root = float(optimize.brentq(loss, low, high, xtol=1e-300, rtol=1e-13))
    while loss(root) > 0.0:  # land on the safe side of the root
        root *= 1.0 + 1e-12
    return root


def rank_one_variance(shift: Array, cov: Array, max_shift: float) -> float:
    """Smallest ``t >= 0`` with ``d^T (cov + t u u^T)^+ d <= max_shift^2``, ``u = d / ||d||``."""
    m = mahalanobis_sq(shift, cov)
    limit = max_shift**2
    if m <= limit:
        return 0.0
    inverse = 0.0 if math.isinf(m) else 1.0 / m
    return float(shift @ shift) * (1.0 / limit - inverse) * (1.0 + 1e-9)


@dataclass(frozen=True)
class Constraint:
    """One secret pair: mean shift, conditional covariance (``gaussian``: laws exactly Gaussian)."""

    label: str
    shift: Array
    cov: Array
    gaussian: bool = True


def isotropic_noise(constraints: Sequence[Constraint], max_shift: float) -> Array:
    """``s I`` with the smallest ``s`` that satisfies every constraint (the worst one decides)."""
    size = constraints[0].shift.size
    worst = max(isotropic_variance(c.shift, c.cov, max_shift) for c in constraints)
    return _top_up(constraints, np.eye(size) * worst, max_shift)


def directional_noise(constraints: Sequence[Constraint], max_shift: float) -> Array:
    """A sum of rank-one terms ``t u u^T`` along the shifts, added greedily."""
    size = constraints[0].shift.size
    noise = np.zeros((size, size))
    order = sorted(constraints, key=lambda c: -mahalanobis_sq(c.shift, c.cov))
    for c in order:
        t = rank_one_variance(c.shift, c.cov + noise, max_shift)
        if t > 0.0:
            unit = c.shift / math.sqrt(float(c.shift @ c.shift))
            noise = noise + t * np.outer(unit, unit)
    return _top_up(constraints, noise, max_shift)


def _top_up(constraints: Sequence[Constraint], noise: Array, max_shift: float) -> Array:
    """Add the isotropic variance any constraint still lacks after rounding."""
    floor = 1e-9 * max(float(np.max(np.diag(c.cov + noise))) for c in constraints)
    for _ in range(60):
        short = [c for c in constraints if mahalanobis_sq(c.shift, c.cov + noise) > max_shift**2]
        if not short:
            return noise
        extra = max(isotropic_variance(c.shift, c.cov + noise, max_shift) for c in short)
        noise = noise + np.eye(noise.shape[0]) * max(extra, floor)
        floor *= 2.0
    raise RuntimeError("noise calibration did not converge; please report this")


def worst_shift(constraints: Sequence[Constraint], noise: Array) -> float:
    """The largest Mahalanobis shift ``sqrt(d^T (cov + noise)^+ d)`` over the constraints."""
    return max(
        (math.sqrt(mahalanobis_sq(c.shift, c.cov + noise)) for c in constraints), default=0.0
    )


__all__ = [
    "CALIBRATIONS",
    "Calibration",
    "Constraint",
    "calibrate",
    "check_covariance",
    "directional_noise",
    "gaussian_delta",
    "isotropic_noise",
    "isotropic_variance",
    "largest_shift",
    "mahalanobis_sq",
    "nominal_delta",
    "rank_one_variance",
    "replace_shift",
    "worst_shift",
]
