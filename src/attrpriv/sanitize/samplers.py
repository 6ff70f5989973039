"""Local samplers: replace every record's sensitive latent ``z_S`` (section 3.2 of the seed).

- :class:`Suppression` -- zeros; releases nothing about ``z_S`` (no DP claim needed).
- :class:`DPObfuscation` -- clip ``z_S`` to a public box and add Laplace noise: local DP per record.
- :class:`DPSampling` -- RON-Gauss per sensitive class: a DP Gaussian model of ``(z_S, y_S)`` from
  which labelled replacements are drawn independently of every record's own ``z_S``.

The DP paths draw their noise from :mod:`attrpriv.dp.noise` (exact OpenDP by default), charge the
ledger before drawing, and return a full :class:`PrivacyRecord`. numpy's generator is used only to
post-process DP outputs (sampling from the released model), which needs no privacy.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from attrpriv._checks import (
    check_epsilon,
    check_positive,
    check_positive_int,
    check_probability,
)
from attrpriv._io import to_jsonable
from attrpriv.dp.ledger import BudgetLedger
from attrpriv.dp.noise import NoiseSampler, default_sampler, require_private
from attrpriv.dp.record import PrivacyRecord
from attrpriv.errors import InputError
from attrpriv.sanitize import ron_gauss as rg

NS_CAVEAT = "z_NS is released unchanged: the guarantee covers z_S (and y_S) only"


@dataclass(frozen=True)
class SampledLatents:
    """Replacement sensitive latents, synthetic labels (DP-sampling only) and the DP record."""

    z_s: np.ndarray
    y_s: np.ndarray | None
    record: PrivacyRecord | None
    parts: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "z_s": to_jsonable(self.z_s),
            "y_s": None if self.y_s is None else to_jsonable(self.y_s),
            "record": None if self.record is None else self.record.to_dict(),
            "parts": to_jsonable(self.parts or {}),
        }


def _latents(z_s: ArrayLike) -> np.ndarray:
    """``z_s`` as a finite (n, k) float array (a copy: inputs are never modified)."""
    try:
        array = np.array(z_s, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError("z_s must be a numeric (n, k) array") from None
    if array.ndim != 2 or array.shape[0] == 0 or array.shape[1] == 0:
        raise InputError(f"z_s must be a non-empty (n, k) array, got shape {array.shape}")
    if not np.isfinite(array).all():
        raise InputError("z_s has NaN or infinite values; expected finite numbers")
    return array


def _sampler(noise: NoiseSampler | None, allow_nonprivate: bool) -> NoiseSampler:
    sampler = noise if noise is not None else default_sampler()
    require_private(sampler, allow_nonprivate=allow_nonprivate)
    return sampler


def _assumptions(sampler: NoiseSampler, *extra: str) -> tuple[str, ...]:
    flagged = () if sampler.private else ("noise sampler is not private",)
    return (NS_CAVEAT, *extra, *flagged)


class Suppression:
    """Replace ``z_S`` by zeros: nothing about a record's sensitive latent is released."""

    def sample(
        self,
        z_s: ArrayLike,
        y_s: ArrayLike | None = None,
        *,
        ledger: BudgetLedger | None = None,
        label: str = "",
    ) -> SampledLatents:
        """Zeros of the shape of ``z_s``; no record (and nothing charged) since no DP output."""
        array = _latents(z_s)
        return SampledLatents(np.zeros_like(array), None, None, {"mechanism": "suppression"})


class DPObfuscation:
    """Local epsilon-DP per record: clip ``z_S`` to ``[-bound, bound]^k``, add Laplace noise.

    Two values of one record's clipped ``z_S`` differ by at most ``2 * bound * k`` in l1 norm, so
    Laplace noise of scale ``2 * bound * k / epsilon`` on each coordinate makes the output
    epsilon-indistinguishable for any two values of that record's ``z_S`` (local DP).
    """

    def __init__(
        self,
        epsilon: float,
        bound: float,
        *,
        noise: NoiseSampler | None = None,
        allow_nonprivate: bool = False,
    ) -> None:
        self.epsilon = epsilon
        self.bound = bound
        self.noise = noise
        self.allow_nonprivate = allow_nonprivate

    def sample(
        self,
        z_s: ArrayLike,
        y_s: ArrayLike | None = None,
        *,
        ledger: BudgetLedger | None = None,
        label: str = "",
    ) -> SampledLatents:
        """Clip, charge the ledger, add Laplace noise; ``y_s`` is not used."""
        epsilon = check_epsilon(self.epsilon)
        bound = check_positive(self.bound, "bound")
        sampler = _sampler(self.noise, self.allow_nonprivate)
        clipped = np.clip(_latents(z_s), -bound, bound)
        record = self.record(clipped.shape[1], epsilon, bound, sampler)
        if ledger is not None:
            ledger.charge(record, label=label)
        noisy = sampler.laplace(clipped, record.noise["scale"])
        return SampledLatents(noisy, None, record, {"clipped_share": _share_clipped(z_s, bound)})

    def record(self, k: int, epsilon: float, bound: float, sampler: NoiseSampler) -> PrivacyRecord:
        """The guarantee of obfuscating k-dimensional latents with this configuration."""
        sensitivity = 2.0 * bound * k + sampler.rounding_slack(k)
        return PrivacyRecord(
            mechanism="dp-obfuscation",
            definition="dp",
            epsilon=epsilon,
            delta=0.0,
            protects=(
                "the value of each record's sensitive latent z_S within the public box "
                f"[-{bound:g}, {bound:g}]^{k} (local DP: any two values are indistinguishable)"
            ),
            sensitivity=sensitivity,
            noise={"distribution": "laplace", "scale": sensitivity / epsilon, "norm": "l1",
                   "per": "coordinate", **sampler.describe()},
            assumptions=_assumptions(sampler, "each record is obfuscated independently"),
        )  # fmt: skip


def _share_clipped(z_s: ArrayLike, bound: float) -> float:
    """Share of latent coordinates outside the public box (a diagnostic, not released)."""
    return float(np.mean(np.abs(np.asarray(z_s, dtype=float)) > bound))


class DPSampling:
    """epsilon-DP per-class Gaussian model of projected ``z_S`` (RON-Gauss), then sampling.

    Parameters
    ----------
    epsilon : total privacy loss, for neighbours that differ in one private record's ``(z_S,
        y_S)`` (the number of records is public: the release has one row per record).
    bound : l2 radius to which every projected latent is clipped (public).
    projection_dim : ``p``, the dimension of the random orthonormal projection (default ``k``).
    mean_share : share of ``epsilon - class_share_epsilon`` spent on the sums (paper: 0.3); the
        rest goes to the scatter matrices (paper: 0.7).
    class_share_epsilon : epsilon of the noisy class counts (shares and mean denominators);
        default ``0.1 * epsilon``.
    classes : the public list of sensitive classes; default the labels seen (flagged: that leaks
        which classes occur).
    seed : seeds the public projection and the post-processing sampler.
    """

    def __init__(
        self,
        epsilon: float,
        bound: float,
        *,
        projection_dim: int | None = None,
        mean_share: float = 0.3,
        class_share_epsilon: float | None = None,
        classes: Sequence[Any] | None = None,
        seed: int = 0,
        noise: NoiseSampler | None = None,
        allow_nonprivate: bool = False,
    ) -> None:
        self.epsilon = epsilon
        self.bound = bound
        self.projection_dim = projection_dim
        self.mean_share = mean_share
        self.class_share_epsilon = class_share_epsilon
        self.classes = classes
        self.seed = seed
        self.noise = noise
        self.allow_nonprivate = allow_nonprivate

    def split(self) -> tuple[float, float, float]:
        """(epsilon_count, epsilon_sum, epsilon_scatter), summing to ``epsilon``."""
        epsilon = check_epsilon(self.epsilon)
        share = check_probability(self.mean_share, "mean_share")
        if self.class_share_epsilon is None:
            counts = 0.1 * epsilon
        else:
            counts = check_epsilon(self.class_share_epsilon, "class_share_epsilon")
            if counts >= epsilon:
                raise InputError(
                    f"class_share_epsilon must be < epsilon ({epsilon:g}), got {counts:g}"
                )
        rest = epsilon - counts
        return counts, share * rest, rest - share * rest

    def calibration(self, p: int, sampler: NoiseSampler) -> rg.Calibration:
        """Epsilons and l1 sensitivities of the count, sum and scatter releases.

        Substituting one record's ``(z_S, y_S)`` removes a row from one class and adds one to
        the same or another class: twice one row's contribution to each statistic.
        """
        bound = check_positive(self.bound, "bound")
        eps_count, eps_sum, eps_scatter = self.split()
        return rg.Calibration(
            eps_count,
            eps_sum,
            eps_scatter,
            2.0,
            2.0 * rg.sum_sensitivity(p, bound) + sampler.rounding_slack(p),
            2.0 * rg.scatter_sensitivity(p, bound) + sampler.rounding_slack(rg.triangle_size(p)),
        )

    def sample(
        self,
        z_s: ArrayLike,
        y_s: ArrayLike | None,
        *,
        ledger: BudgetLedger | None = None,
        label: str = "",
    ) -> SampledLatents:
        """Release the DP model (ledger charged first), then draw ``n`` labelled replacements."""
        latents = _latents(z_s)
        labels, classes, seen = self._labels(y_s, latents.shape[0])
        k = latents.shape[1]
        p = self._dim(k)
        bound = check_positive(self.bound, "bound")
        sampler = _sampler(self.noise, self.allow_nonprivate)
        projection = rg.orthonormal_projection(k, p, check_seed(self.seed))
        rows = rg.clip_rows(latents @ projection, bound)
        stats = rg.class_statistics(rows, labels, classes)
        record = self.record(k, p, len(classes), sampler, classes_seen=seen)
        if ledger is not None:
            ledger.charge(record, label=label)
        noisy = rg.noisy_statistics(stats, self.calibration(p, sampler), sampler)
        model = rg.gaussian_classes(noisy, bound)
        draws, index = rg.sample_classes(model, latents.shape[0], np.random.default_rng(self.seed))
        parts = {"shares": model.shares, "means": model.means, "classes": list(classes),
                 "projection_dim": p}  # fmt: skip
        return SampledLatents(draws @ projection.T, classes[index], record, parts)

    def record(
        self, k: int, p: int, n_classes: int, sampler: NoiseSampler, *, classes_seen: bool = False
    ) -> PrivacyRecord:
        """The guarantee: sequential over count/sum/scatter, each calibrated to a substitution."""
        calibration = self.calibration(p, sampler)
        extra = ("sensitive classes read off the private data (reveals which occur)",)
        return PrivacyRecord(
            mechanism="dp-sampling",
            definition="dp",
            epsilon=check_epsilon(self.epsilon),
            delta=0.0,
            protects=(
                "each private record's sensitive latent z_S and sensitive label y_S "
                "(substitution: neighbours differ in one record's (z_S, y_S); the number of "
                "records is public) in the synthetic labelled latents"
            ),
            sensitivity={"count": calibration.sensitivity_count,
                         "sum": calibration.sensitivity_sum,
                         "scatter": calibration.sensitivity_scatter},
            noise={**calibration.to_dict(), "composition": "sequential over count, sum, scatter; "
                   f"l1 over all {n_classes} classes (a substitution moves one row)",
                   "latent_dim": k,
                   "projection_dim": p, "bound": self.bound, **sampler.describe()},
            assumptions=_assumptions(sampler, *(extra if classes_seen else ())),
        )  # fmt: skip

    def _dim(self, k: int) -> int:
        if self.projection_dim is None:
            return k
        p = check_positive_int(self.projection_dim, "projection_dim")
        if p > k:
            raise InputError(f"projection_dim must be <= the latent dimension {k}, got {p}")
        return p

    def _labels(self, y_s: ArrayLike | None, n: int) -> tuple[np.ndarray, np.ndarray, bool]:
        """Labels as an array, the class list (public if given) and whether it was read off."""
        if y_s is None:
            raise InputError("y_s is required by DP-sampling: one sensitive label per row of z_s")
        labels = np.asarray(y_s)
        if labels.ndim != 1 or labels.size != n:
            raise InputError(f"y_s must have one label per row of z_s ({n}), got {labels.shape}")
        if self.classes is None:
            return labels, np.unique(labels), True
        classes = np.asarray(list(self.classes))
        if classes.size == 0 or np.unique(classes).size != classes.size:
            raise InputError("classes must be a non-empty list of distinct labels")
        unknown = ~np.isin(labels, classes)
        if unknown.any():
            raise InputError(f"y_s has label {labels[unknown][0]!r}, not in classes")
        return labels, classes, False


def check_seed(seed: object) -> int:
    """A seed: a non-negative integer."""
    return check_positive_int(seed, "seed", minimum=0)


__all__ = ["DPObfuscation", "DPSampling", "SampledLatents", "Suppression"]
