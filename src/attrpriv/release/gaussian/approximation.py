"""Algorithm 2 of Zhang, Ohrimenko & Cummings: the mechanism on non-Gaussian data.

When F given a secret is not Gaussian, Algorithm 2 calibrates the noise on Gaussian
approximations ``N(mu_a, S)`` of the conditional laws (one covariance S per secret) and pays
for the approximation with an eta-approximate max-divergence bound lambda.

What we bound (a variant stated on the *released* values, see docs): let P_a be the law of the
release ``F + Z`` when F follows its actual conditional law given ``s_a``, and Q_a the law when F
follows the approximation (``Q_a = N(mu_a, S + Sigma_Z)``). With the hockey-stick divergence
``H_g(P || Q) = sup_S P(S) - g Q(S)``, ``lambda_eta`` is the smallest lambda with

    H_{e^lambda}(P_a || Q_a) <= eta   and   H_{e^lambda}(Q_a || P_a) <= eta   for every a.

Then for every set S: ``P_a(S) <= e^lambda Q_a(S) + eta``, ``Q_a(S) <= e^eps Q_b(S) + delta``
(Algorithm 1 on the approximations) and ``Q_b(S) <= e^lambda P_b(S) + eta``, which chain to

    P_a(S) <= e^(eps + 2 lambda) P_b(S) + e^lambda delta + (1 + e^(eps + lambda)) eta,

an (eps + 2 lambda, e^lambda delta + (1 + e^(eps + lambda)) eta) guarantee: the form of the
paper's Theorem 3. Adding independent noise never increases a hockey-stick divergence, so a
bound between the laws of F itself (the paper's condition) implies ours; ours is finite for a
discrete F as soon as the noise has full rank, which the paper's needs its variant for.

Two ways to compute it:

* :func:`lambda_eta_pmf` for a scalar F with a known finite-support law (exact pmfs of counts
  and integer sums, or any list of atoms): numerical integration on a fine grid.
* :func:`lambda_eta_samples` for vector queries: P_a is replaced by the mixture over draws of F
  (convex in P, so the plug-in is conservative *in expectation*), and the hockey-stick
  integrals are estimated by Monte Carlo with an empirical-Bernstein upper confidence bound.
  This is an estimate, not a proof; records say so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from attrpriv._checks import check_positive_int, check_probability
from attrpriv.errors import InputError
from attrpriv.release.gaussian.query import Query, Secret
from attrpriv.release.gaussian.theta import ThetaModel

Array = NDArray[np.float64]
MAX_LAMBDA = 20.0
_LAMBDAS = np.concatenate([np.linspace(0.0, 1.0, 401), np.linspace(1.0, MAX_LAMBDA, 761)[1:]])
_MAX_GRID = 400_000


@dataclass(frozen=True)
class Approximation:
    """lambda_eta of one secret value, and how it was obtained."""

    value: float
    lam: float
    method: str  # "exact-pmf" or "monte-carlo"
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "lambda": self.lam,
            "method": self.method,
            "detail": self.detail,
        }


def approximate_guarantee(
    epsilon: float, delta: float, lam: float, eta: float
) -> tuple[float, float]:
    """The (epsilon', delta') of Algorithm 2 from the Algorithm 1 guarantee and lambda_eta."""
    if not math.isfinite(lam):
        raise InputError(
            "Algorithm 2 cannot bound the approximation (lambda_eta is infinite): a discrete "
            "statistic released with too little (or rank-deficient) noise; raise the smoothing"
        )
    eps = epsilon + 2.0 * lam
    total = math.exp(lam) * delta + (1.0 + math.exp(epsilon + lam)) * eta
    if total >= 1.0:
        raise InputError(
            f"Algorithm 2 gives delta = {total:.3g} >= 1 (lambda_eta = {lam:.3g}, eta = {eta:g}); "
            "use a smaller eta or more noise"
        )
    return eps, total


def model_lambdas(
    model: ThetaModel, query: Query, secret: Secret, noise: Array, eta: float, n_eval: int
) -> list[Approximation]:
    """lambda_eta for every support value of one secret under one non-Gaussian model."""
    cov = model.approximation_cov(query, secret)
    out = []
    rng = np.random.default_rng(model.seed)
    for value in model.support(secret):
        mean = model.conditional(query, secret, value).mean
        pmf = model.pmf(query, secret, value)
        if pmf is not None:
            lam = lambda_eta_pmf(*pmf, float(mean[0]), float(cov[0, 0]), noise[0, 0], eta)
            out.append(Approximation(value, lam, "exact-pmf", f"{pmf[0].size} atoms"))
            continue
        draws = model.sample(query, secret, value, model.draws, rng)
        lam = lambda_eta_samples(draws, mean, cov, noise, eta, n_eval=n_eval)
        detail = f"{draws.shape[0]} draws, {n_eval} points, 95% upper bounds"
        out.append(Approximation(value, lam, "monte-carlo", detail))
    return out


# -- scalar queries with a known finite-support law -----------------------------------------------


def lambda_eta_pmf(
    atoms: Array, probs: Array, approx_mean: float, approx_var: float, noise_var: float, eta: float
) -> float:
    """lambda_eta between ``sum_x p_x N(x, noise_var)`` and ``N(approx_mean, approx_var +
    noise_var)`` (both directions), by integration on a grid of step ``sd / 16``."""
    eta = check_probability(eta, "eta")
    atoms, probs = np.asarray(atoms, dtype=np.float64), np.asarray(probs, dtype=np.float64)
    if noise_var <= 0.0:
        return math.inf  # a discrete law against a continuous one: every atom is a bad event
    atoms, probs, dropped = _prune(atoms, probs, eta * 1e-3)
    tau, sd_q = math.sqrt(noise_var), math.sqrt(approx_var + noise_var)
    low = min(float(atoms.min()) - 12 * tau, approx_mean - 12 * sd_q)
    high = max(float(atoms.max()) + 12 * tau, approx_mean + 12 * sd_q)
    step = min(tau, sd_q) / 16.0
    if (high - low) / step > _MAX_GRID:
        return math.inf  # the noise is far too small to smooth F: no useful bound exists
    grid = np.linspace(low, high, math.ceil((high - low) / step) + 1)
    p = _mixture_density(grid, atoms, probs, tau)
    q = np.exp(-0.5 * ((grid - approx_mean) / sd_q) ** 2) / (sd_q * math.sqrt(2 * math.pi))

    def excess(lam: float) -> float:
        gamma = math.exp(lam)
        forward = float(np.trapezoid(np.clip(p - gamma * q, 0.0, None), grid)) + dropped
        backward = float(np.trapezoid(np.clip(q - gamma * p, 0.0, None), grid))
        return max(forward, backward) - eta

    return _smallest_lambda(excess)


def _prune(atoms: Array, probs: Array, mass: float) -> tuple[Array, Array, float]:
    """Drop the extreme atoms holding at most ``mass`` in each tail; return the mass dropped."""
    order = np.argsort(atoms)
    atoms, probs = atoms[order], probs[order] / probs.sum()
    cumulative = np.cumsum(probs)
    first = int(np.searchsorted(cumulative, mass, side="right"))
    last = int(np.searchsorted(cumulative, 1.0 - mass, side="left"))
    last = max(last, first)
    kept = slice(first, last + 1)
    return atoms[kept], probs[kept], float(1.0 - probs[kept].sum())


def _mixture_density(grid: Array, atoms: Array, probs: Array, tau: float) -> Array:
    """``sum_x p_x phi((y - x) / tau) / tau`` on the grid, in chunks of the grid."""
    out = np.empty_like(grid)
    chunk = max(1, 2**22 // max(atoms.size, 1))
    norm = tau * math.sqrt(2 * math.pi)
    for start in range(0, grid.size, chunk):
        y = grid[start : start + chunk, None]
        out[start : start + chunk] = np.exp(-0.5 * ((y - atoms) / tau) ** 2) @ probs / norm
    return out


def _smallest_lambda(excess: Any) -> float:
    """Smallest lambda in [0, MAX_LAMBDA] with ``excess(lambda) <= 0`` (it is decreasing)."""
    if excess(0.0) <= 0.0:
        return 0.0
    if excess(MAX_LAMBDA) > 0.0:
        return math.inf
    low, high = 0.0, MAX_LAMBDA
    while high - low > 1e-6:
        mid = (low + high) / 2.0
        low, high = (low, mid) if excess(mid) <= 0.0 else (mid, high)
    return high


# -- vector queries from draws ---------------------------------------------------------------------


def lambda_eta_samples(
    samples: Array,
    approx_mean: Array,
    approx_cov: Array,
    noise_cov: Array,
    eta: float,
    *,
    n_eval: int = 20_000,
    confidence: float = 0.95,
    seed: int | None = 0,
) -> float:
    """lambda_eta between the mixture ``mean_j N(F_j, noise_cov)`` over draws ``F_j`` (rows of
    ``samples``) and ``N(approx_mean, approx_cov + noise_cov)``: Monte Carlo estimates of both
    hockey-stick integrals from ``n_eval`` points, each taken at its empirical-Bernstein upper
    confidence bound (level ``confidence``, split over the two directions)."""
    eta = check_probability(eta, "eta")
    n_eval = check_positive_int(n_eval, "n_eval", minimum=100)
    alpha = (1.0 - check_probability(confidence, "confidence")) / 2.0
    draws = np.atleast_2d(np.asarray(samples, dtype=np.float64))
    values = np.linalg.eigvalsh(noise_cov)
    if values[0] <= 1e-12 * max(float(values[-1]), 1e-300):
        return math.inf  # rank-deficient noise: the draws' law is singular, the Gaussian is not
    resolution = _upper_bound(np.zeros(n_eval), alpha)
    if resolution >= eta:
        needed = math.ceil(n_eval * resolution / eta) + 1
        raise InputError(
            f"eta = {eta:.3g} is below what {n_eval} Monte Carlo points can resolve "
            f"({resolution:.2g}); raise eta, or n_eval to about {needed}"
        )
    whiten = np.linalg.inv(np.linalg.cholesky(noise_cov))
    centres = draws @ whiten.T
    mean_q = whiten @ approx_mean
    cov_q = whiten @ (approx_cov + noise_cov) @ whiten.T
    rng = np.random.default_rng(seed)
    from_p = centres[rng.integers(0, centres.shape[0], n_eval)]
    from_p = from_p + rng.standard_normal(from_p.shape)
    from_q = rng.multivariate_normal(mean_q, cov_q, n_eval)
    loss_p = _log_ratio(from_p, centres, mean_q, cov_q)  # log p / q at points drawn from P
    loss_q = _log_ratio(from_q, centres, mean_q, cov_q)  # ... and at points drawn from Q
    for lam in _LAMBDAS:
        gamma = math.exp(lam)
        forward = np.clip(1.0 - gamma * np.exp(-loss_p), 0.0, None)
        backward = np.clip(1.0 - gamma * np.exp(loss_q), 0.0, None)
        if max(_upper_bound(forward, alpha), _upper_bound(backward, alpha)) <= eta:
            return float(lam)
    return math.inf


def _log_ratio(points: Array, centres: Array, mean_q: Array, cov_q: Array) -> Array:
    """``log p(y) - log q(y)``; p the mixture of N(centre, I), q = N(mean_q, cov_q)."""
    k = points.shape[1]
    log_p = np.empty(points.shape[0])
    chunk = max(1, 2**21 // centres.shape[0])
    half_norms = 0.5 * np.sum(centres**2, axis=1)
    for start in range(0, points.shape[0], chunk):
        y = points[start : start + chunk]
        exponent = y @ centres.T  # -|y - c|^2 / 2 = y.c - |c|^2 / 2 - |y|^2 / 2
        exponent -= half_norms
        top = exponent.max(axis=1)
        exponent -= top[:, None]
        np.exp(exponent, out=exponent)
        log_sum = np.log(exponent.sum(axis=1)) + top - 0.5 * np.sum(y**2, axis=1)
        log_p[start : start + chunk] = log_sum
    log_p += -math.log(centres.shape[0]) - 0.5 * k * math.log(2 * math.pi)
    diff = points - mean_q
    chol = np.linalg.cholesky(cov_q)
    solved = np.linalg.solve(chol, diff.T)
    log_q = -0.5 * np.sum(solved**2, axis=0) - np.sum(np.log(np.diag(chol)))
    log_q -= 0.5 * k * math.log(2 * math.pi)
    return np.asarray(log_p - log_q, dtype=np.float64)


def _upper_bound(values: Array, alpha: float) -> float:
    """Empirical-Bernstein upper confidence bound on the mean of [0, 1] variables (Maurer &
    Pontil 2009, Theorem 4), valid with probability ``1 - alpha``."""
    m = values.size
    log_term = math.log(2.0 / alpha)
    variance = float(values.var(ddof=1))
    return float(
        values.mean() + math.sqrt(2 * variance * log_term / m) + 7 * log_term / (3 * (m - 1))
    )


__all__ = [
    "MAX_LAMBDA",
    "Approximation",
    "approximate_guarantee",
    "lambda_eta_pmf",
    "lambda_eta_samples",
    "model_lambdas",
]
