"""How accurate a release is: the noise on each released value, and an interval for it.

``value +- half_width`` holds with probability ``confidence`` per value (not simultaneously)."""

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
    """``-scale * ln(1 - confidence)``: P(|Z| <= t) = confidence for Laplace(0, scale)."""
    return -scale * math.log1p(-confidence) if scale > 0 else 0.0


def discrete_laplace_half_width(scale: float, confidence: float) -> float:
    """Least integer t with P(|Z| <= t) >= confidence (discrete Laplace); 0.0 if ``scale`` <= 0."""
    if scale <= 0:
        return 0.0
    q = math.exp(-1.0 / scale)
    tail = (1.0 - confidence) * (1.0 + q) / 2.0
    width = -scale * math.log(tail) - 1.0
    if not math.isfinite(width):  # a scale near the float maximum: no useful bound
        return math.inf
    return float(max(math.ceil(width - 1e-12), 0))


def gaussian_half_width(scale: float, confidence: float) -> float:
    """``scale * Phi^-1((1 + confidence) / 2)``, or 0.0 when ``scale`` <= 0."""
    from scipy.special import ndtri

    return float(scale * ndtri(0.5 + confidence / 2.0)) if scale > 0 else 0.0


def noise_std(distribution: str, scale: float) -> float:
    """The standard deviation of the noise of ``distribution`` with ``scale`` (0 if no noise)."""
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

    Parameters
    ----------
    distribution : str
        The noise distribution, one of ``DISTRIBUTIONS``.
    confidence : float
        The probability that the noise on one value is at most ``half_width``.
    scale, std, half_width : Any
        The noise scale (Laplace b or Gaussian sigma), standard deviation and ``confidence``
        interval half-width of every value, shaped like the values.
    of : str, default "released values"
        What the values are, when they are not the released numbers themselves.
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
            The noise distribution, one of ``DISTRIBUTIONS``.
        scales : Any
            The noise scale of every value, in any container shape; <= 0 means no noise.
        confidence : float, default 0.95
            The per-value confidence level, in (0, 1).
        of : str, default ""
            What the values are; empty means ``"released values"``.

        Returns
        -------
        Accuracy
            The scales with the std and half-width of every value, in the same shape.
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
            The fields by name, arrays and Series as lists and dicts.
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
