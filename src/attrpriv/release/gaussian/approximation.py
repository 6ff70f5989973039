"""Algorithm 2 (Zhang, Ohrimenko & Cummings): the approximation cost lambda_eta on non-Gaussian
data.

Exact for a scalar F with a finite-support law (:func:`lambda_eta_pmf`); a Monte Carlo estimate, not
a proof, for vector queries (:func:`lambda_eta_samples`). See
docs/mechanisms/attribute-private-gaussian.md, "Algorithm 2".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy import optimize

from attrpriv._checks import check_positive_int, check_probability
from attrpriv.errors import InputError
from attrpriv.release.gaussian.query import Query, Secret
from attrpriv.release.gaussian.theta import ThetaModel

Array = NDArray[np.float64]
MAX_LAMBDA = 20.0
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


def model_lambdas(
    model: ThetaModel,
    query: Query,
    secret: Secret,
    noise: Array,
    eta: float,
    n_eval: int,
    cache: dict[Any, Any] | None = None,
) -> list[Approximation]:
    """lambda_eta for every support value of one secret; ``cache`` keeps the draws between calls."""
    cov = model.approximation_cov(query, secret)
    out = []
    rng = np.random.default_rng(model.seed)
    cache = {} if cache is None else cache
    for value in model.support(secret):
        mean = model.conditional(query, secret, value).mean
        law_key = ("pmf", id(model), query, secret, value)
        if law_key not in cache:
            cache[law_key] = model.pmf(query, secret, value)
        pmf: tuple[Array, Array] | None = cache[law_key]
        if pmf is not None:
            lam = lambda_eta_pmf(*pmf, float(mean[0]), float(cov[0, 0]), noise[0, 0], eta)
            out.append(Approximation(value, lam, "exact-pmf", f"{pmf[0].size} atoms"))
            continue
        key = (id(model), query, secret, value)
        if key not in cache:
            cache[key] = model.sample(query, secret, value, model.draws, rng)
        draws = cache[key]
        lam = lambda_eta_samples(draws, mean, cov, noise, eta, n_eval=n_eval)
        detail = f"{draws.shape[0]} draws, {n_eval} points, 95% upper bounds"
        out.append(Approximation(value, lam, "monte-carlo", detail))
    return out


def points_needed(eta: float, confidence: float = 0.95) -> int:
    """Monte Carlo points per direction that make the confidence bound of 0 a quarter of ``eta``."""
    alpha = (1.0 - confidence) / 2.0
    points = math.log(1.0 / alpha) / -math.log1p(-eta / 4.0)
    return math.ceil(points) if points < 1e18 else 10**18


# -- scalar queries with a known finite-support law -----------------------------------------------


def lambda_eta_pmf(
    atoms: Array, probs: Array, approx_mean: float, approx_var: float, noise_var: float, eta: float
) -> float:
    """lambda_eta (both ways) of ``sum_x p_x N(x, noise_var)`` vs its Gaussian approximation."""
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
    """lambda_eta of the mixture over ``samples`` vs the approximation (Monte Carlo upper bound)."""
    eta = check_probability(eta, "eta")
    n_eval = check_positive_int(n_eval, "n_eval", minimum=100)
    alpha = (1.0 - check_probability(confidence, "confidence")) / 2.0
    draws = np.atleast_2d(np.asarray(samples, dtype=np.float64))
    values = np.linalg.eigvalsh(noise_cov)
    if values[0] <= 1e-12 * max(float(values[-1]), 1e-300):
        return math.inf  # rank-deficient noise: the draws' law is singular, the Gaussian is not
    resolution = upper_bound(0.0, n_eval, alpha)
    if resolution >= eta:
        needed = points_needed(eta, confidence) // 4 + 1
        raise InputError(
            f"eta = {eta:.3g} is below what {n_eval} Monte Carlo points can resolve "
            f"({resolution:.2g}); raise eta, or n_eval to well above {needed}"
        )
    whiten = np.linalg.inv(np.linalg.cholesky(noise_cov))
    rng = np.random.default_rng(seed)
    from_p = draws[rng.integers(0, draws.shape[0], n_eval)] @ whiten.T
    from_p = from_p + rng.standard_normal(from_p.shape)
    unique, counts = np.unique(draws, axis=0, return_counts=True)  # lattices repeat a lot
    centres = unique @ whiten.T
    log_weights = np.log(counts / draws.shape[0])
    mean_q = whiten @ approx_mean
    cov_q = whiten @ (approx_cov + noise_cov) @ whiten.T
    from_q = rng.multivariate_normal(mean_q, cov_q, n_eval)
    loss_p = _log_ratio(from_p, centres, log_weights, mean_q, cov_q)  # log p / q under P
    loss_q = _log_ratio(from_q, centres, log_weights, mean_q, cov_q)  # ... and under Q

    def excess(lam: float) -> float:
        gamma = math.exp(lam)
        forward = float(np.clip(1.0 - gamma * np.exp(-loss_p), 0.0, None).mean())
        backward = float(np.clip(1.0 - gamma * np.exp(loss_q), 0.0, None).mean())
        return max(upper_bound(forward, n_eval, alpha), upper_bound(backward, n_eval, alpha)) - eta

    return _smallest_lambda(excess)


def _log_ratio(
    points: Array, centres: Array, log_weights: Array, mean_q: Array, cov_q: Array
) -> Array:
    """``log p(y) - log q(y)``, p the mixture ``sum_j w_j N(centre_j, I)``, q = N(mean_q, cov_q)."""
    k = points.shape[1]
    log_p = np.empty(points.shape[0])
    chunk = max(1, 2**21 // centres.shape[0])
    half_norms = 0.5 * np.sum(centres**2, axis=1) - log_weights
    centres32 = centres.T.astype(np.float32)
    for start in range(0, points.shape[0], chunk):
        y = points[start : start + chunk]
        exponent = y.astype(np.float32) @ centres32  # -|y - c|^2 / 2 = y.c - |c|^2/2 - |y|^2/2
        exponent -= half_norms.astype(np.float32)
        top = exponent.max(axis=1)
        exponent -= top[:, None]
        np.exp(exponent, out=exponent)
        total = exponent.sum(axis=1, dtype=np.float64)
        log_p[start : start + chunk] = np.log(total) + top - 0.5 * np.sum(y**2, axis=1)
    log_p += -0.5 * k * math.log(2 * math.pi)
    diff = points - mean_q
    chol = np.linalg.cholesky(cov_q)
    solved = np.linalg.solve(chol, diff.T)
    log_q = -0.5 * np.sum(solved**2, axis=0) - np.sum(np.log(np.diag(chol)))
    log_q -= 0.5 * k * math.log(2 * math.pi)
    return np.asarray(log_p - log_q, dtype=np.float64)


def upper_bound(mean: float, m: int, alpha: float) -> float:
    """Chernoff-Hoeffding bound (probability ``1 - alpha``) on a [0, 1] mean from ``m`` draws."""
    budget = math.log(1.0 / alpha) / m
    mean = min(max(mean, 0.0), 1.0)
    if mean >= 1.0:
        return 1.0
    if mean <= 0.0:
        return float(-math.expm1(-budget))

    def gap(mu: float) -> float:
        return mean * math.log(mean / mu) + (1 - mean) * math.log((1 - mean) / (1 - mu)) - budget

    high = 1.0 - 1e-16
    if gap(high) <= 0.0:
        return 1.0
    return float(optimize.brentq(gap, mean, high, xtol=1e-15, rtol=1e-12))


__all__ = [
    "MAX_LAMBDA",
    "Approximation",
    "lambda_eta_pmf",
    "lambda_eta_samples",
    "model_lambdas",
    "points_needed",
    "upper_bound",
]
