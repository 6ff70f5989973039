"""RON-Gauss building blocks for DP-sampling: projection, clipping, per-class DP statistics.

Per class: Laplace-noised count, sum and scatter of clipped projected latents, under
substitution of one record. The sensitivities and argument are on
docs/mechanisms/dp-sampling.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from attrpriv.dp.audit import AuditResult, audit_samples
from attrpriv.dp.noise import NoiseSampler


def orthonormal_projection(dim: int, projection_dim: int, seed: int) -> np.ndarray:
    """A public random (dim, projection_dim) matrix with orthonormal columns, from ``seed`` only."""
    rng = np.random.default_rng(seed)
    q, r = np.linalg.qr(rng.standard_normal((dim, dim)))
    q = q * np.sign(np.diag(r))
    return np.asarray(q[:, :projection_dim])


def clip_rows(rows: np.ndarray, bound: float) -> np.ndarray:
    """Scale every row with l2 norm above ``bound`` back onto the sphere of radius ``bound``."""
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    factor = np.minimum(1.0, bound / np.maximum(norms, np.finfo(float).tiny))
    return np.asarray(rows * factor)


def triangle_size(p: int) -> int:
    """Number of entries on and above the diagonal of a p x p matrix."""
    return p * (p + 1) // 2


@dataclass(frozen=True)
class StatisticNoise:
    """Per-statistic epsilons and l1 sensitivities; the Laplace scale of each is their ratio."""

    epsilon_count: float
    epsilon_sum: float
    epsilon_scatter: float
    sensitivity_count: float
    sensitivity_sum: float
    sensitivity_scatter: float

    @property
    def scales(self) -> tuple[float, float, float]:
        """Laplace scales of the count, the sum and the scatter (upper triangle)."""
        return (
            self.sensitivity_count / self.epsilon_count,
            self.sensitivity_sum / self.epsilon_sum,
            self.sensitivity_scatter / self.epsilon_scatter,
        )

    def to_dict(self) -> dict[str, Any]:
        count, total, scatter = self.scales
        return {
            "count": {"epsilon": self.epsilon_count, "l1_sensitivity": self.sensitivity_count,
                      "scale": count, "distribution": "discrete laplace"},
            "sum": {"epsilon": self.epsilon_sum, "l1_sensitivity": self.sensitivity_sum,
                    "scale": total, "distribution": "laplace"},
            "scatter": {"epsilon": self.epsilon_scatter,
                        "l1_sensitivity": self.sensitivity_scatter, "scale": scatter,
                        "distribution": "laplace", "entries": "upper triangle"},
        }  # fmt: skip


def sum_sensitivity(p: int, bound: float) -> float:
    """Largest l1 norm one row of the l2 ball of radius ``bound`` adds to the sum."""
    return math.sqrt(p) * bound


def scatter_sensitivity(p: int, bound: float) -> float:
    """Largest l1 norm one row with ``||x||_2 <= bound`` adds to the scatter's upper triangle."""
    return (p + 1) * bound**2 / 2.0


def reference_scatter_sensitivity(p: int, bound: float) -> float:
    """The RON-Gauss reference code's scatter calibration, too small by a factor ``sqrt(p)``."""
    return math.sqrt(p) * bound**2


@dataclass(frozen=True)
class ClassStatistics:
    """Per-class counts (C,), sums (C, p) and scatter upper triangles (C, p(p+1)/2)."""

    counts: np.ndarray
    sums: np.ndarray
    scatters: np.ndarray

    def as_vector(self) -> np.ndarray:
        """All statistics in one flat vector (for audits)."""
        return np.concatenate([self.counts.ravel(), self.sums.ravel(), self.scatters.ravel()])


def class_statistics(rows: np.ndarray, labels: np.ndarray, classes: np.ndarray) -> ClassStatistics:
    """Exact counts, sums and scatter upper triangles of ``rows`` per class (no noise)."""
    p = rows.shape[1]
    upper = np.triu_indices(p)
    counts = np.zeros(len(classes), dtype=np.int64)
    sums = np.zeros((len(classes), p))
    scatters = np.zeros((len(classes), triangle_size(p)))
    for i, label in enumerate(classes):
        block = rows[labels == label]
        counts[i] = block.shape[0]
        sums[i] = block.sum(axis=0)
        scatters[i] = (block.T @ block)[upper]
    return ClassStatistics(counts, sums, scatters)


def _noisy_statistics(
    stats: ClassStatistics, calibration: StatisticNoise, sampler: NoiseSampler
) -> ClassStatistics:
    """Add Laplace noise of the calibrated scales to every statistic (any leading shape)."""
    count_scale, sum_scale, scatter_scale = calibration.scales
    return ClassStatistics(
        sampler.discrete_laplace(stats.counts, count_scale),
        sampler.laplace(stats.sums, sum_scale),
        sampler.laplace(stats.scatters, scatter_scale),
    )


@dataclass(frozen=True)
class GaussianClasses:
    """The DP model: class shares (C,), means (C, p) and PSD covariances (C, p, p)."""

    shares: np.ndarray
    means: np.ndarray
    covariances: np.ndarray


def gaussian_classes(noisy: ClassStatistics, bound: float) -> GaussianClasses:
    """Post-process noisy statistics into shares, means and PSD covariances."""
    counts = np.maximum(noisy.counts.astype(float), 0.0)
    shares = counts / counts.sum() if counts.sum() > 0 else np.full(counts.size, 1 / counts.size)
    n = np.maximum(counts, 1.0)[:, None]
    means = clip_rows(noisy.sums / n, bound)
    p = means.shape[1]
    upper = np.triu_indices(p)
    covariances = np.zeros((len(counts), p, p))
    for i in range(len(counts)):
        second = np.zeros((p, p))
        second[upper] = noisy.scatters[i] / n[i, 0]
        second = second + np.triu(second, 1).T
        covariances[i] = _psd(second - np.outer(means[i], means[i]), bound**2)
    return GaussianClasses(shares, means, covariances)


def _psd(matrix: np.ndarray, ceiling: float) -> np.ndarray:
    """Nearest symmetric matrix with eigenvalues in [0, ceiling] (eigenvalue clipping)."""
    values, vectors = np.linalg.eigh((matrix + matrix.T) / 2.0)
    values = np.clip(values, 0.0, ceiling)
    return np.asarray((vectors * values) @ vectors.T)


def sample_classes(
    model: GaussianClasses, n: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Draw ``n`` labelled pairs: class index from the shares, row from that class's Gaussian."""
    index = rng.choice(model.shares.size, size=n, p=model.shares)
    p = model.means.shape[1]
    rows = np.zeros((n, p))
    for c in range(model.shares.size):
        chosen = index == c
        if chosen.any():
            rows[chosen] = rng.multivariate_normal(
                model.means[c], model.covariances[c], size=int(chosen.sum()), method="eigh"
            )
    return rows, index


def _audit_release(
    calibration: StatisticNoise,
    stats_a: ClassStatistics,
    stats_b: ClassStatistics,
    sampler: NoiseSampler,
    n_samples: int,
    *,
    confidence: float = 0.95,
) -> AuditResult:
    """Empirical lower bound on the epsilon of releasing noisy statistics on two neighbours."""

    def draw(stats: ClassStatistics) -> np.ndarray:
        many = ClassStatistics(
            *(np.repeat(s[None], n_samples, 0) for s in (stats.counts, stats.sums, stats.scatters))
        )
        noisy = _noisy_statistics(many, calibration, sampler)
        return np.hstack(
            [s.reshape(n_samples, -1) for s in (noisy.counts, noisy.sums, noisy.scatters)]
        )

    count, total, scatter = calibration.scales
    c, p = stats_a.sums.shape
    scales = np.concatenate(
        [np.full(c, count), np.full(c * p, total), np.full(c * triangle_size(p), scatter)]
    )
    a, b = stats_a.as_vector(), stats_b.as_vector()

    def llr(out: np.ndarray) -> np.ndarray:
        return np.asarray(((np.abs(out - b) - np.abs(out - a)) / scales).sum(axis=1))

    return audit_samples(draw(stats_a), draw(stats_b), confidence=confidence, statistic=llr)
