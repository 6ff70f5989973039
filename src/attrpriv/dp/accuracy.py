"""How accurate a release is: the noise on each released value, and an interval for it.

Small pure functions (one per noise distribution) and one small result, :class:`Accuracy`,
whose ``scale``, ``std`` and ``half_width`` have the shape of the release's values: a float,
an array, a Series, or a mapping of them (one per histogram). With probability ``confidence``
the noise on one value is at most ``half_width`` in absolute value, so
``value +- half_width`` is a ``confidence`` interval for the true value (per value, not
simultaneous over all of them).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from attrpriv._io import to_jsonable

DISTRIBUTIONS = ("laplace", "discrete laplace", "gaussian")


def laplace_half_width(scale: float, confidence: float) -> float:
    """t with P(|Z| <= t) = confidence for Z ~ Laplace(0, scale).

    Parameters
    ----------
    scale : float
        The Laplace scale b; <= 0 means no noise.
    confidence : float
        The probability, in (0, 1) (not checked).

    Returns
    -------
    float
        ``-scale * ln(1 - confidence)``, or 0.0 when ``scale`` <= 0.
    """
    return -scale * math.log1p(-confidence) if scale > 0 else 0.0


def discrete_laplace_half_width(scale: float, confidence: float) -> float:
    """The smallest integer t with P(|Z| <= t) >= confidence, P(z) ~ exp(-|z| / scale).

    With q = exp(-1 / scale), P(|Z| > t) = 2 q^(t+1) / (1 + q), so t = scale * ln(1 / tail)
    - 1 with tail = (1 - confidence) (1 + q) / 2 (``ln q = -1 / scale`` is used as it is: ``q``
    itself underflows to 0 for tiny scales, where the noise is 0 almost surely).

    Parameters
    ----------
    scale : float
        The scale of the noise; <= 0 means no noise.
    confidence : float
        The probability, in (0, 1) (not checked).

    Returns
    -------
    float
        The integer t as a float, >= 0; 0.0 when ``scale`` <= 0, infinite when the bound
        overflows (a scale near the float maximum).
    """
    if scale <= 0:
        return 0.0
    q = math.exp(-1.0 / scale)
    tail = (1.0 - confidence) * (1.0 + q) / 2.0
    width = -scale * math.log(tail) - 1.0
    if not math.isfinite(width):  # a scale near the float maximum: no useful bound
        return math.inf
    return float(max(math.ceil(width - 1e-12), 0))


def gaussian_half_width(scale: float, confidence: float) -> float:
    """t with P(|Z| <= t) = confidence for Z ~ N(0, scale^2).

    Parameters
    ----------
    scale : float
        The standard deviation of the noise; <= 0 means no noise.
    confidence : float
        The probability, in (0, 1) (not checked).

    Returns
    -------
    float
        ``scale * Phi^-1((1 + confidence) / 2)``, or 0.0 when ``scale`` <= 0.
    """
    from scipy.special import ndtri

    return float(scale * ndtri(0.5 + confidence / 2.0)) if scale > 0 else 0.0


def noise_std(distribution: str, scale: float) -> float:
    """The standard deviation of the noise of ``distribution`` with ``scale``.

    Parameters
    ----------
    distribution : str
        ``"laplace"`` or ``"discrete laplace"``; any other name is taken as Gaussian noise
        (not checked).
    scale : float
        The scale of the noise (the Gaussian standard deviation); <= 0 means no noise.

    Returns
    -------
    float
        ``sqrt(2) * scale`` for Laplace, ``sqrt(2 q) / (1 - q)`` with ``q = exp(-1 / scale)``
        for discrete Laplace, ``scale`` otherwise; 0.0 when ``scale`` <= 0.
    """
    if scale <= 0:
        return 0.0
    if distribution == "laplace":
        return math.sqrt(2.0) * scale
    if distribution == "discrete laplace":
        q = math.exp(-1.0 / scale)
        return math.sqrt(2.0 * q) / -math.expm1(-1.0 / scale)  # 1 - q, exact for huge scales
    return scale


_HALF_WIDTH: dict[str, Callable[[float, float], float]] = {
    "laplace": laplace_half_width,
    "discrete laplace": discrete_laplace_half_width,
    "gaussian": gaussian_half_width,
}


@dataclass(frozen=True)
class Accuracy:
    """The noise on every released value: its scale, standard deviation and interval.

    ``of`` says what the values are when they are not the released numbers themselves (for a
    sampler, the noisy statistics that its samples are drawn from).

    Parameters
    ----------
    distribution : str
        The noise distribution: one of ``DISTRIBUTIONS`` (``"laplace"``,
        ``"discrete laplace"``, ``"gaussian"``).
    confidence : float
        The probability that the noise on one value is at most ``half_width`` in absolute
        value.
    scale : Any
        The noise scale of every value (the Laplace scale b, or the Gaussian standard
        deviation), shaped like the values: a float, an array, a Series, or a mapping of them.
    std : Any
        The standard deviation of the noise on every value, shaped like ``scale``.
    half_width : Any
        The half-width of the ``confidence`` interval of every value, shaped like ``scale``.
    of : str, default "released values"
        What the values are.
    """

    distribution: str
    confidence: float
    scale: Any
    std: Any
    half_width: Any
    of: str = "released values"

    @classmethod
    def of_scales(
        cls, distribution: str, scales: Any, *, confidence: float = 0.95, of: str = ""
    ) -> Accuracy:
        """The accuracy of noise of ``distribution`` with ``scales`` (shaped like the values).

        Parameters
        ----------
        distribution : str
            The noise distribution: one of ``DISTRIBUTIONS`` (``"laplace"``,
            ``"discrete laplace"``, ``"gaussian"``).
        scales : Any
            The noise scale of every value: a float, a numpy array, a pandas Series, or a
            mapping of them (one per histogram). A scale <= 0 means no noise (std and
            half-width 0).
        confidence : float, default 0.95
            The per-value confidence level of the half-widths, in (0, 1) (not checked here).
        of : str, default ""
            What the values are; empty means ``"released values"``.

        Returns
        -------
        Accuracy
            ``scales`` as given, with the standard deviation and half-width of every value in
            the same container shape (floats).

        Raises
        ------
        ValueError
            If ``distribution`` is not one of ``DISTRIBUTIONS``.
        """
        if distribution not in DISTRIBUTIONS:
            raise ValueError(f"distribution must be one of {list(DISTRIBUTIONS)}")
        width = _HALF_WIDTH[distribution]
        return cls(
            distribution,
            confidence,
            scales,
            _per_value(scales, lambda s: noise_std(distribution, s)),
            _per_value(scales, lambda s: width(s, confidence)),
            of or "released values",
        )

    def to_dict(self) -> dict[str, Any]:
        """The accuracy as a JSON-ready dict.

        Returns
        -------
        dict of str to Any
            ``distribution``, ``confidence``, ``of``, and ``scale``, ``std`` and ``half_width``
            converted to JSON-ready values (lists and dicts).
        """
        return {
            "distribution": self.distribution,
            "confidence": self.confidence,
            "of": self.of,
            "scale": to_jsonable(self.scale),
            "std": to_jsonable(self.std),
            "half_width": to_jsonable(self.half_width),
        }


def _per_value(scales: Any, function: Callable[[float], float]) -> Any:
    """``function`` applied to every scale, keeping the container's shape."""
    if isinstance(scales, Mapping):
        return {key: _per_value(value, function) for key, value in scales.items()}
    if isinstance(scales, pd.Series):
        return scales.map(lambda s: function(float(s))).astype(float)
    if isinstance(scales, np.ndarray):
        return np.vectorize(lambda s: function(float(s)), otypes=[float])(scales)
    return function(float(scales))


__all__ = [
    "DISTRIBUTIONS",
    "Accuracy",
    "discrete_laplace_half_width",
    "gaussian_half_width",
    "laplace_half_width",
    "noise_std",
]
