"""Privacy losses computed exactly, shared by the mechanisms' tests."""

from __future__ import annotations

import math

import numpy as np
from scipy.special import logsumexp


def discrete_gaussian_renyi(sigma: float, alpha: float) -> float:
    """D_alpha(N_Z(0, sigma^2) || N_Z(1, sigma^2)), summed exactly over the integers."""
    z = np.arange(-60 * math.ceil(sigma) - 60, 60 * math.ceil(sigma) + 61, dtype=np.float64)
    log_p = -(z**2) / (2 * sigma**2)
    log_q = -((z - 1) ** 2) / (2 * sigma**2)
    log_p -= logsumexp(log_p)
    log_q -= logsumexp(log_q)
    return float(logsumexp(alpha * log_p + (1 - alpha) * log_q) / (alpha - 1))
