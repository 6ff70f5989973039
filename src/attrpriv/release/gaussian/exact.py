"""The exact privacy loss of a scalar release when F has a finite-support law under each secret.

The hockey-stick divergence of two Gaussian mixtures, computed to err on the larger side; the noise
is found by bisection. See docs/mechanisms/attribute-private-gaussian.md, "The exact privacy loss of
a scalar release".
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy import special

Array = NDArray[np.float64]
_WIDTH = 12.0  # standard deviations of every mixture component on the grid
_STEP = 8  # grid points per standard deviation
_OUTSIDE = float(2.0 * special.ndtr(-_WIDTH))  # mass of one component beyond the grid
_CHUNK = 2**21  # (grid points x atoms) evaluated at a time
_TAIL = 1e-12  # probability of the tail atoms dropped at each end


@dataclass(frozen=True)
class PairLaw:
    """The exact laws of F given two secret values, on one sorted support."""

    label: str
    atoms: Array
    p: Array  # P(F = atom | s_a)
    q: Array  # P(F = atom | s_b)

    @classmethod
    def of(cls, label: str, law_a: tuple[Array, Array], law_b: tuple[Array, Array]) -> PairLaw:
        """Both pmfs on the union of their atoms (atoms equal to 1e-9 of the spacing merge)."""
        atoms = np.concatenate([law_a[0], law_b[0]])
        scale = max(float(np.abs(atoms).max(initial=0.0)), 1.0)
        keys = np.round(atoms / (scale * 1e-12))
        support, inverse = np.unique(keys, return_inverse=True)
        merged = np.zeros(support.size)
        np.add.at(merged, inverse, atoms)
        counts = np.bincount(inverse, minlength=support.size)
        size, first = support.size, law_a[0].size
        p = np.bincount(inverse[:first], weights=law_a[1], minlength=size).astype(np.float64)
        q = np.bincount(inverse[first:], weights=law_b[1], minlength=size).astype(np.float64)
        return cls(label, merged / counts, p, q)

    def reversed(self) -> PairLaw:
        return PairLaw(self.label + " (reversed)", self.atoms, self.q, self.p)


def hockey_stick(atoms: Array, p: Array, q: Array, sigma: float, epsilon: float) -> float:
    """``sup_S P(S) - e^epsilon Q(S)`` for ``P = sum p_x N(x, sigma^2)`` and ``Q`` likewise (an
    upper bound); ``atoms`` sorted and distinct, ``sigma = 0`` for the discrete laws.
    """
    gamma = math.exp(epsilon)
    if sigma <= 0.0:
        return float(np.clip(p - gamma * q, 0.0, None).sum())
    p, q, slack = _prune(p, q)
    keep = (p > 0.0) | (q > 0.0)
    x, p, q = atoms[keep], p[keep], q[keep]
    if x.size == 0:
        return slack
    grid, starts = _grid(x, sigma)
    gap = _log_ratio(grid, x, p, q, sigma) - epsilon
    positive = gap > 0.0
    total = 0.0
    for lo, hi in _intervals(grid, starts, positive, x, p, q, sigma, epsilon):
        total += float((p - gamma * q) @ _normal_mass((lo - x) / sigma, (hi - x) / sigma))
    return max(total, 0.0) + slack + _OUTSIDE * float(p.sum())


def _prune(p: Array, q: Array) -> tuple[Array, Array, float]:
    """Drop tail atoms holding at most 1e-12 per tail; returns P's dropped mass too."""
    p, q = p.copy(), q.copy()
    dropped = 0.0
    for law, counted in ((p, True), (q, False)):
        mass = _TAIL
        cumulative = np.cumsum(law)
        low = cumulative <= mass
        high = (cumulative[-1] - np.concatenate([[0.0], cumulative[:-1]])) <= mass
        if counted:
            dropped += float(law[low | high].sum())
        law[low | high] = 0.0
    return p, q, dropped


def _grid(x: Array, sigma: float) -> tuple[Array, Array]:
    """Grid of step <= sigma / 8 over the ``x +- 12 sigma`` windows, and each segment's start."""
    reach = _WIDTH * sigma
    lows, highs = x - reach, x + reach
    breaks = np.flatnonzero(lows[1:] > highs[:-1]) + 1  # a gap between consecutive atoms
    seg_lo = lows[np.concatenate([[0], breaks])]
    seg_hi = highs[np.concatenate([breaks - 1, [x.size - 1]])]
    pieces, starts, count = [], [], 0
    for lo, hi in zip(seg_lo, seg_hi, strict=True):
        points = math.ceil((hi - lo) / sigma * _STEP) + 1
        pieces.append(np.linspace(lo, hi, points))
        starts.append(count)
        count += points
    return np.concatenate(pieces), np.asarray(starts)


def _log_ratio(y: Array, x: Array, p: Array, q: Array, sigma: float) -> Array:
    """``log p(y) - log q(y)`` of the two mixtures, from the atoms within 12 sigma of y."""
    out = np.empty(y.size)
    first = np.searchsorted(x, y - _WIDTH * sigma, side="left")
    last = np.searchsorted(x, y + _WIDTH * sigma, side="right")
    width = max(int((last - first).max(initial=1)), 1)
    step = max(1, _CHUNK // width)
    with np.errstate(divide="ignore"):
        log_p, log_q = np.log(p), np.log(q)
    offsets = np.arange(width)
    for start in range(0, y.size, step):
        part = slice(start, start + step)
        index = first[part, None] + offsets
        valid = index < last[part, None]
        index = np.minimum(index, x.size - 1)
        exponent = -0.5 * ((y[part, None] - x[index]) / sigma) ** 2
        exponent = np.where(valid, exponent, -np.inf)
        top_p = special.logsumexp(exponent + log_p[index], axis=1)
        top_q = special.logsumexp(exponent + log_q[index], axis=1)
        with np.errstate(invalid="ignore"):
            out[part] = np.where(np.isneginf(top_p) & np.isneginf(top_q), -np.inf, top_p - top_q)
    return out


def _intervals(
    grid: Array,
    starts: Array,
    positive: NDArray[np.bool_],
    x: Array,
    p: Array,
    q: Array,
    sigma: float,
    epsilon: float,
) -> list[tuple[float, float]]:
    """The intervals where the log ratio exceeds epsilon, their ends refined by bisection."""
    ends = np.concatenate([starts[1:], [grid.size]])
    out: list[tuple[float, float]] = []
    for start, end in zip(starts, ends, strict=True):
        sign = positive[start:end]
        if not sign.any():
            continue
        flips = np.flatnonzero(sign[1:] != sign[:-1]) + start  # flip between i and i + 1
        bounds = [
            _root(grid[i], grid[i + 1], bool(positive[i]), x, p, q, sigma, epsilon) for i in flips
        ]
        edges = [float(grid[start]), *bounds, float(grid[end - 1])]
        inside = bool(sign[0])
        for lo, hi in itertools.pairwise(edges):
            if inside:
                out.append((lo, hi))
            inside = not inside
    return out


def _root(
    a: float, b: float, left: bool, x: Array, p: Array, q: Array, sigma: float, epsilon: float
) -> float:
    """The point between ``a`` and ``b`` where ``log p - log q - epsilon`` changes sign."""
    for _ in range(64):
        mid = 0.5 * (a + b)
        if mid in (a, b):
            break
        value = float(_log_ratio(np.array([mid]), x, p, q, sigma)[0]) - epsilon
        if (value > 0.0) == left:
            a = mid
        else:
            b = mid
    return 0.5 * (a + b)


def _normal_mass(lo: Array, hi: Array) -> Array:
    """``Phi(hi) - Phi(lo)`` without cancellation in either tail."""
    upper = lo > 0.0
    direct = special.ndtr(hi) - special.ndtr(lo)
    mirrored = special.ndtr(-lo) - special.ndtr(-hi)
    return np.asarray(np.where(upper, mirrored, direct), dtype=np.float64)


# -- calibration ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ExactNoise:
    """The smallest noise standard deviation found, and each pair's delta at it."""

    sigma: float
    deltas: dict[str, float]

    @property
    def worst(self) -> float:
        return max(self.deltas.values(), default=0.0)


def pair_deltas(
    pairs: Sequence[PairLaw], sigma: float, epsilon: float, slack: float = 0.0
) -> dict[str, float]:
    """delta of every pair (larger direction) at ``sigma``; ``slack`` as in :func:`grid_charge`."""
    charge = grid_charge(sigma, epsilon, slack)
    out: dict[str, float] = {}
    for pair in pairs:
        forward = hockey_stick(pair.atoms, pair.p, pair.q, sigma, epsilon)
        backward = hockey_stick(pair.atoms, pair.q, pair.p, sigma, epsilon)
        out[pair.label] = max(forward, backward) + charge
    return out


def grid_charge(sigma: float, epsilon: float, slack: float) -> float:
    """What a sampler moving each value by up to ``slack`` adds to a delta (0 without noise)."""
    if slack <= 0.0 or sigma <= 0.0:
        return 0.0
    return (1.0 + math.exp(epsilon)) * float(special.erf(slack / (2.0 * math.sqrt(2.0) * sigma)))


def exact_noise(
    pairs: Sequence[PairLaw],
    epsilon: float,
    delta: float,
    start: float,
    step: float,
    slack: float = 0.0,
) -> ExactNoise:
    """The smallest sigma (to a relative 1e-4) with every pair's delta at most ``delta``; ``start``
    a first guess, ``step`` the atoms' spacing, ``slack`` the sampler's grid.
    """

    def fits(sigma: float) -> bool:
        budget = delta - grid_charge(sigma, epsilon, slack)
        for pair in pairs:
            for p, q in ((pair.p, pair.q), (pair.q, pair.p)):
                if hockey_stick(pair.atoms, p, q, sigma, epsilon) > budget:
                    return False
        return True

    if fits(0.0):
        return ExactNoise(0.0, pair_deltas(pairs, 0.0, epsilon))
    floor = step * 1e-3
    high = max(start, step)
    while not fits(high):
        high *= 2.0
        if high > 1e12 * max(step, 1.0):
            raise RuntimeError("exact calibration did not converge; please report this")
    low = high / 2.0
    while low > floor and fits(low):
        high, low = low, low / 2.0
    if low <= floor and fits(low):
        high = low
    else:
        while high / low > 1.0 + 1e-4:
            mid = math.sqrt(low * high)
            low, high = (low, mid) if fits(mid) else (mid, high)
    return ExactNoise(high, pair_deltas(pairs, high, epsilon, slack))


__all__ = ["ExactNoise", "PairLaw", "exact_noise", "grid_charge", "hockey_stick", "pair_deltas"]
