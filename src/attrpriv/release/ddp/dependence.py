"""Dependence coefficients, dependent sensitivity and the noise scale of one chunk of columns.

``"pairwise"`` (Liu et al., the paper's) sums per-histogram losses and is not sound in general;
``"quilt"`` (default) uses the checked bound of :mod:`attrpriv.release.ddp.bound`. Proofs in
docs/mechanisms/tabular-ddp.md.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from attrpriv._checks import check_non_negative
from attrpriv.errors import InputError
from attrpriv.release.ddp.bound import Candidate, Evidence, uniform_scale
from attrpriv.release.graph.network import DiscreteNetwork

METHODS = ("quilt", "pairwise")
SUBSTITUTION_SENSITIVITY = 2.0
"""l1 change of a histogram when one answer moves from one bin to another (or to missing: 1)."""

Coefficients = Callable[[float], np.ndarray]


@dataclass(frozen=True, eq=False)
class PairwiseDependence:
    """Everything the pairwise coefficients of a chunk need, computed once from its network.

    ``points`` holds the candidate probability pairs of every ordered pair (i, j); ``pair`` its
    flat index ``i * k + j``.
    """

    columns: tuple[str, ...]
    sensitivity: np.ndarray
    points: np.ndarray
    pair: np.ndarray

    def leakage(self, scale: float) -> np.ndarray:
        """``L[i, j] = l_ij(scale)``: the loss about X_i of histogram j alone (diagonal exact)."""
        scale = check_non_negative(scale, "scale")
        k = len(self.columns)
        if scale == 0.0:
            return np.full((k, k), math.inf)
        out = np.zeros(k * k)
        if self.pair.size:
            c = np.expm1(self.sensitivity[self.pair % k] / scale)
            value = np.log1p(c * self.points[:, 0]) - np.log1p(c * self.points[:, 1])
            np.maximum.at(out, self.pair, np.nan_to_num(value, nan=0.0, posinf=math.inf))
        table = out.reshape(k, k)
        np.fill_diagonal(table, self.sensitivity / scale)
        return table

    def coefficients(self, scale: float) -> np.ndarray:
        """``rho[i, j] = l_ij(scale) * scale / Delta_j`` in [0, 1]; ``rho[i, i] = 1``."""
        with np.errstate(divide="ignore", invalid="ignore"):
            rho = self.leakage(scale) * scale / self.sensitivity[None, :]
        clipped: np.ndarray = np.clip(np.nan_to_num(rho, nan=0.0, posinf=1.0), 0.0, 1.0)
        np.fill_diagonal(clipped, 1.0)
        return clipped


def pairwise_dependence(
    network: DiscreteNetwork, sensitivity: Mapping[str, float]
) -> PairwiseDependence:
    """The pairwise loss frontiers of every ordered pair of the network's nodes."""
    columns = network.nodes
    weights = np.array([check_non_negative(sensitivity[c], f"sensitivity[{c!r}]") for c in columns])
    k = len(columns)
    points: list[np.ndarray] = []
    pairs: list[np.ndarray] = []
    for i in range(k):
        for j in range(i + 1, k):
            joint = network.marginal([columns[i], columns[j]])
            for a, b, table in ((i, j, joint), (j, i, joint.T)):
                found = _frontier(table)
                points.append(found)
                pairs.append(np.full(found.shape[0], a * k + b, dtype=np.int64))
    return PairwiseDependence(
        columns,
        weights,
        np.concatenate(points) if points else np.zeros((0, 2)),
        np.concatenate(pairs) if pairs else np.zeros(0, dtype=np.int64),
    )


def _frontier(joint: np.ndarray) -> np.ndarray:
    """Points ``(P(S | a), P(S | b))`` over a != b and superlevel sets S of the likelihood ratio."""
    totals = joint.sum(axis=1)
    table = joint[totals > 0] / totals[totals > 0, None]  # secrets: supported states only
    n = table.shape[0]
    if n < 2:
        return np.zeros((0, 2))
    p = np.broadcast_to(table[:, None, :], (n, n, table.shape[1]))
    q = np.broadcast_to(table[None, :, :], (n, n, table.shape[1]))
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where((p <= 0) & (q <= 0), 0.0, p / q)
    order = np.argsort(-ratio, axis=-1, kind="stable")
    cum_p = np.take_along_axis(p, order, axis=-1).cumsum(axis=-1)
    cum_q = np.take_along_axis(q, order, axis=-1).cumsum(axis=-1)
    off = ~np.eye(n, dtype=bool)
    found = np.stack([cum_p[off].ravel(), cum_q[off].ravel()], axis=1)
    return found[found[:, 0] > found[:, 1]]


def dependent_sensitivity(coefficients: np.ndarray, sensitivity: np.ndarray) -> float:
    """``DS = max_i sum_j rho_ij Delta_j`` (Liu et al. 2016)."""
    return float(np.max(np.asarray(coefficients) @ np.asarray(sensitivity)))


def calibrate(
    coefficients: Coefficients, sensitivity: np.ndarray, epsilon: float
) -> tuple[float, np.ndarray]:
    """The smallest scale with ``DS(rho(sigma)) <= sigma * epsilon``, and ``rho`` there."""
    weights = np.asarray(sensitivity, dtype=np.float64)

    def feasible(scale: float) -> bool:
        return dependent_sensitivity(coefficients(scale), weights) <= scale * epsilon

    low, high = float(weights.max()) / epsilon, float(weights.sum()) / epsilon
    if feasible(low):
        return low, coefficients(low)
    if not feasible(high):
        raise InputError("dependence coefficients must lie in [0, 1]; got a row summing above k")
    while high / low - 1.0 > 1e-10:
        middle = math.sqrt(low * high)
        low, high = (low, middle) if feasible(middle) else (middle, high)
    return high, coefficients(high)


@dataclass(frozen=True, eq=False)
class ChunkNoise:
    """One chunk's noise, dependent sensitivity (``scale * epsilon``), coefficients or quilts."""

    columns: tuple[str, ...]
    method: str
    epsilon: float
    scale: float
    sensitivity: Mapping[str, float]
    coefficients: np.ndarray | None = None
    quilts: Mapping[str, Candidate] = field(default_factory=dict)

    @property
    def dependent_sensitivity(self) -> float:
        return self.scale * self.epsilon

    @property
    def row_sensitivity(self) -> float:
        """``sum_j Delta_j``: the sensitivity when every answer of the chunk may change."""
        return math.fsum(self.sensitivity.values())

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "columns": list(self.columns),
            "method": self.method,
            "epsilon": self.epsilon,
            "scale": self.scale,
            "dependent_sensitivity": self.dependent_sensitivity,
            "row_sensitivity": self.row_sensitivity,
        }
        if self.coefficients is not None:
            out["coefficients"] = np.round(self.coefficients, 6).tolist()
        if self.quilts:
            out["quilts"] = {name: q.to_dict() for name, q in self.quilts.items()}
        return out


def chunk_noise(
    network: DiscreteNetwork,
    epsilon: float,
    *,
    method: str = "quilt",
    evidence: Evidence | None = None,
    sensitivity: Mapping[str, float] | None = None,
    coefficients: Callable[[PairwiseDependence, float], np.ndarray] | None = None,
    ceiling: float | None = None,
) -> ChunkNoise | None:
    """The scale for a chunk whose answers follow ``network``, with budget ``epsilon``.

    ``"quilt"`` needs the chunk's ``evidence`` and returns None when no scale up to ``ceiling``
    works; ``method`` and ``epsilon`` are trusted (checked by the caller).
    """
    if method == "quilt":
        if evidence is None:
            raise InputError("method 'quilt' needs the chunk's evidence (chunk_evidence)")
        columns = evidence.columns
        weights = dict(sensitivity or dict.fromkeys(columns, SUBSTITUTION_SENSITIVITY))
        found = uniform_scale(evidence, epsilon, weights, ceiling=ceiling)
        if found is None:
            return None
        scale, chosen = found
        return ChunkNoise(columns, method, epsilon, scale, weights, quilts=chosen)
    columns = network.nodes
    weights = dict(sensitivity or dict.fromkeys(columns, SUBSTITUTION_SENSITIVITY))
    dependence = pairwise_dependence(network, weights)
    rho_of = coefficients or (lambda dep, s: dep.coefficients(s))
    scale, rho = calibrate(lambda s: rho_of(dependence, s), dependence.sensitivity, epsilon)
    return ChunkNoise(columns, method, epsilon, scale, weights, coefficients=rho)


def discrete_laplace_mae(scale: float) -> float:
    """``E|Z|`` for discrete Laplace noise ``P(z) ~ exp(-|z| / scale)``: ``2q / (1 - q^2)``."""
    if scale <= 0:
        return 0.0
    q = math.exp(-1.0 / scale)
    return 2.0 * q / -math.expm1(-2.0 / scale)


@dataclass(frozen=True)
class ExpectedError:
    """Expected absolute error per bin vs the row-level Laplace baseline (``gain > 1``: better)."""

    mae: float
    laplace_mae: float
    laplace_scale: float
    n_bins: int
    chunk_mae: tuple[float, ...]

    @property
    def gain(self) -> float:
        return self.laplace_mae / self.mae if self.mae > 0 else math.inf

    def to_dict(self) -> dict[str, Any]:
        return {
            "mae": self.mae,
            "laplace_mae": self.laplace_mae,
            "laplace_scale": self.laplace_scale,
            "gain": self.gain,
            "n_bins": self.n_bins,
            "chunk_mae": list(self.chunk_mae),
        }


__all__ = [
    "METHODS",
    "SUBSTITUTION_SENSITIVITY",
    "ChunkNoise",
    "ExpectedError",
    "PairwiseDependence",
    "calibrate",
    "chunk_noise",
    "dependent_sensitivity",
    "discrete_laplace_mae",
    "pairwise_dependence",
]
