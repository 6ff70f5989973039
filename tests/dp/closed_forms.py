"""Closed forms the accountant is checked against (independent of dp_accounting).

- :func:`renyi_epsilon`: rho-zCDP as (epsilon, delta)-DP through Renyi DP of every order
  alpha > 1 (Balle et al. 2020, Theorem 21), minimised over alpha numerically;
- :func:`kov_epsilon`: the optimal composition of k (epsilon, delta)-DP releases (Kairouz, Oh &
  Viswanath 2015, Theorem 3.3), exact by summing the binomial law of k randomized responses.
"""

from __future__ import annotations

import math

from scipy.optimize import brentq, minimize_scalar


def renyi_epsilon(rho: float, delta: float) -> float:
    """The minimum over alpha > 1 of
    alpha rho + ln(1/delta)/(alpha-1) + ln(1-1/alpha) - ln(alpha)/(alpha-1)."""

    def at(log_gap: float) -> float:
        alpha = 1.0 + math.exp(log_gap)
        return (
            alpha * rho
            + math.log(1.0 / delta) / (alpha - 1.0)
            + math.log1p(-1.0 / alpha)
            - math.log(alpha) / (alpha - 1.0)
        )

    found = minimize_scalar(at, bounds=(-16.0, 16.0), method="bounded", options={"xatol": 1e-12})
    return float(found.fun)


def kov_delta(k: int, epsilon: float, at: float, own_delta: float = 0.0) -> float:
    """The smallest delta at which k-fold composition of (epsilon, own_delta)-DP is
    (at, delta)-DP: 1 - (1-own_delta)^k (1 - sum over the outcomes whose loss exceeds ``at``)."""
    p = 1.0 / (1.0 + math.exp(-epsilon))  # randomized response: the dominating pair
    total = 0.0
    for bad in range(k + 1):
        if (k - 2 * bad) * epsilon > at:
            log_c = math.lgamma(k + 1) - math.lgamma(bad + 1) - math.lgamma(k - bad + 1)
            upper = math.exp(log_c + (k - bad) * math.log(p) + bad * math.log1p(-p))
            lower = math.exp(log_c + bad * math.log(p) + (k - bad) * math.log1p(-p))
            total += upper - math.exp(at) * lower
    return 1.0 - (1.0 - own_delta) ** k * (1.0 - total)


def mixed_delta(groups: list[tuple[int, float]], at: float) -> float:
    """The smallest delta at which the composition of pure releases, ``count`` of each
    ``epsilon`` in ``groups``, is (at, delta)-DP: the hockey-stick divergence of the product of
    their randomized responses, summed over every joint count of 'bad' outcomes."""
    laws: list[list[tuple[float, float, float]]] = []  # per group: (loss, P, Q) per count
    for count, epsilon in groups:
        p = 1.0 / (1.0 + math.exp(-epsilon))
        law = []
        for bad in range(count + 1):
            log_c = math.lgamma(count + 1) - math.lgamma(bad + 1) - math.lgamma(count - bad + 1)
            up = math.exp(log_c + (count - bad) * math.log(p) + bad * math.log1p(-p))
            low = math.exp(log_c + bad * math.log(p) + (count - bad) * math.log1p(-p))
            law.append(((count - 2 * bad) * epsilon, up, low))
        laws.append(law)
    joint = [(0.0, 1.0, 1.0)]
    for law in laws:
        joint = [(a + b, pa * pb, qa * qb) for a, pa, qa in joint for b, pb, qb in law]
    return sum(max(p - math.exp(at) * q, 0.0) for _, p, q in joint)


def kov_epsilon(k: int, epsilon: float, delta: float, own_delta: float = 0.0) -> float:
    """The smallest epsilon at which k-fold composition of (epsilon, own_delta)-DP is
    (epsilon, delta)-DP (bisection on :func:`kov_delta`, which decreases in it)."""
    if kov_delta(k, epsilon, 0.0, own_delta) <= delta:
        return 0.0
    return float(brentq(lambda e: kov_delta(k, epsilon, e, own_delta) - delta, 0.0, k * epsilon))
