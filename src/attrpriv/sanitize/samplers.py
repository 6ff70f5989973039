"""Local samplers: replace every record's sensitive latent ``z_S``.

Suppression (zeros), DP-obfuscation (clip and Laplace noise: local DP per record) and
DP-sampling (RON-Gauss per class: a DP model, then independent draws). DP noise comes from
:mod:`attrpriv.dp.noise`; numpy only post-processes DP outputs. See docs/sanitize/decoupler.md.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike

from attrpriv._checks import (
    EPSILON,
    POSITIVE,
    SEED,
    Rule,
    check_positive_int,
    distinct_values,
    integer,
    optional,
    probability,
)
from attrpriv._io import to_jsonable
from attrpriv.dp.accuracy import Accuracy
from attrpriv.dp.ledger import BudgetLedger
from attrpriv.dp.mechanism import SAMPLER_CONSTRAINTS, Mechanism, NoisePlan, P, X, Y
from attrpriv.dp.noise import NoiseSampler
from attrpriv.dp.record import Diagnostics, PrivacyRecord, Release
from attrpriv.dp.units import PrivacyUnit
from attrpriv.errors import InputError, offending
from attrpriv.sanitize import ron_gauss as rg

NS_CAVEAT = "z_NS is released unchanged: the guarantee covers z_S (and y_S) only"
SENSITIVE_LATENT = PrivacyUnit("dp", "substitute:z_S")
"""DP obfuscation's unit: one record's sensitive latent changed, the rest of it as it is."""
SENSITIVE_PART = PrivacyUnit("dp", "substitute:z_S,y_S")
"""DP sampling's unit: one record's sensitive latent and label changed, the rest as it is."""


@dataclass(frozen=True)
class LatentBound:
    """A public bound on the sensitive latents, learned from auxiliary data.

    ``box`` (per-dimension |z_S| quantile, for DP-obfuscation) and ``ball`` (||z_S||_2, for
    DP-sampling): clipping private latents to it costs accuracy, not privacy.
    """

    box: float
    ball: float
    per_dim: tuple[float, ...]
    quantile: float
    rows: int

    def for_sampler(self, sampler: Any) -> float | None:
        """The bound ``sampler`` clips to: ``box`` (obfuscation), ``ball`` (sampling), or None."""
        if isinstance(sampler, DPObfuscation):
            return self.box
        if isinstance(sampler, DPSampling):
            return self.ball
        return None

    def describe(self) -> str:
        """One line: the bound's numbers and their public source."""
        return (
            f"latent bound from the auxiliary (public) data: {self.quantile:g} quantile of "
            f"|z_S| over {self.rows} rows, box {self.box:.3g} (per dimension "
            f"{min(self.per_dim):.3g}-{max(self.per_dim):.3g}), l2 ball {self.ball:.3g}"
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: ``box``, ``ball``, ``per_dim``, ``quantile`` and ``rows``."""
        return {"box": self.box, "ball": self.ball, "per_dim": list(self.per_dim),
                "quantile": self.quantile, "rows": self.rows}  # fmt: skip

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LatentBound:
        """The bound :meth:`to_dict` wrote."""
        return cls(float(data["box"]), float(data["ball"]),
                   tuple(float(v) for v in data["per_dim"]), float(data["quantile"]),
                   int(data["rows"]))  # fmt: skip


def with_latent_bound(sampler: Any, bound: Any) -> Any:
    """``sampler``, or a copy with its ``None`` bound set from ``bound`` or a decoupler."""
    if bound is not None and not isinstance(bound, LatentBound):
        bound = getattr(bound, "latent_bound_", None)
    if bound is None or not isinstance(sampler, (DPObfuscation, DPSampling)):
        return sampler
    if sampler.bound is not None:
        return sampler
    value = bound.for_sampler(sampler)
    filled: Any = type(sampler)(**(sampler.get_params(deep=False) | {"bound": value}))
    filled._bound_source = bound.describe()
    return filled


def _require_bound(sampler: Any) -> float:
    if sampler.bound is None:
        raise InputError(
            f"{type(sampler).__name__} has no bound: pass bound= (a public number), or sanitize "
            "through Sanitizer / with_latent_bound(sampler, decoupler), which take the "
            "decoupler's latent_bound_ learned from its auxiliary data"
        )
    return float(sampler.bound)


def _bound_assumptions(sampler: Any) -> tuple[str, ...]:
    source = getattr(sampler, "_bound_source", None)
    if source is None:
        return ()
    return (f"{source}: a public parameter, so clipping to it keeps the guarantee",)


@dataclass(frozen=True, eq=False)  # holds arrays
class SampledLatents:
    """Replacement latents ``z_s`` (n, k), synthetic labels ``y_s`` (DP-sampling only), the record.

    Not a :class:`~attrpriv.dp.record.Release`: suppression (and a reference that keeps the
    latents) make no DP claim, so ``record`` may be None. ``diagnostics`` are public or noisy."""

    z_s: np.ndarray
    y_s: np.ndarray | None
    record: PrivacyRecord | None
    diagnostics: Diagnostics = field(default_factory=Diagnostics)
    accuracy: Accuracy | None = None

    @classmethod
    def of(cls, release: Release) -> SampledLatents:
        """The :class:`Draw` a DP sampler's ``release`` holds, with its record and diagnostics."""
        draw: Draw = release.values
        return cls(draw.z_s, draw.y_s, release.record, release.diagnostics, release.accuracy)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict: ``z_s``, ``y_s``, ``record``, ``diagnostics`` and ``accuracy``."""
        return {
            "z_s": to_jsonable(self.z_s),
            "y_s": None if self.y_s is None else to_jsonable(self.y_s),
            "record": None if self.record is None else self.record.to_dict(),
            "diagnostics": self.diagnostics.to_dict(),
            "accuracy": None if self.accuracy is None else self.accuracy.to_dict(),
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


class LocalSampler(ABC):
    """What replaces every record's ``z_S`` (and may draw ``y_S``): :meth:`sample`."""

    def sample(
        self,
        z_s: ArrayLike,
        y_s: ArrayLike | None = None,
        *,
        ledger: BudgetLedger | None = None,
        label: str = "",
    ) -> SampledLatents:
        """Replace the private latents ``z_s`` (n, k); DP-sampling also needs ``y_s`` (one label a
        row). A DP sampler charges ``ledger`` (entry ``label``) with its record before any noise."""
        return self._replace(z_s, y_s, ledger, label)

    @abstractmethod
    def _replace(
        self, z_s: ArrayLike, y_s: ArrayLike | None, ledger: BudgetLedger | None, label: str
    ) -> SampledLatents:
        """The replacements of ``z_s`` (and the labels drawn, if any)."""


class Suppression(LocalSampler):
    """Replace ``z_S`` by zeros: nothing about a record's sensitive latent is released, so
    there is no record and nothing is charged."""

    def _replace(
        self, z_s: ArrayLike, y_s: ArrayLike | None, ledger: BudgetLedger | None, label: str
    ) -> SampledLatents:
        return SampledLatents(np.zeros_like(_latents(z_s)), None, None)


@dataclass(frozen=True, eq=False)  # holds arrays
class Draw:
    """What a sampler releases: replacement latents and (DP-sampling only) labels."""

    z_s: np.ndarray
    y_s: np.ndarray | None


class LatentMechanism(Mechanism[X, Y, P], LocalSampler):
    """A DP sampler: replaces every record's ``z_S`` (and draws ``y_S``) from a noisy release."""

    def _replace(
        self, z_s: ArrayLike, y_s: ArrayLike | None, ledger: BudgetLedger | None, label: str
    ) -> SampledLatents:
        return SampledLatents.of(self._release(z_s, y_s, ledger=ledger, label=label))


@dataclass(frozen=True)
class LatentFacts:
    """What DP-obfuscation's calibration reads: ``k``, the dimension of ``z_S``."""

    k: int


@dataclass(frozen=True)
class ObfuscationDiagnostics(Diagnostics):
    """How the latents were obfuscated: each coordinate clipped to the public ``[-bound, bound]``,
    then Laplace noise of scale ``scale``."""

    bound: float
    scale: float

    def summary_lines(self) -> list[str]:
        """The clipping and the noise, in one line."""
        return [
            f"every z_S coordinate clipped to [-{self.bound:g}, {self.bound:g}] and given "
            f"Laplace noise of scale {self.scale:.4g}"
        ]


@dataclass(frozen=True)
class ObfuscationPlan(NoisePlan):
    """Laplace noise of one scale on every coordinate of a k-dimensional latent."""

    k: int
    bound: float
    sensitivity: float
    scale: float


class DPObfuscation(LatentMechanism[np.ndarray, LatentFacts, ObfuscationPlan]):
    """Local epsilon-DP per record: clip ``z_S`` to ``[-bound, bound]^k``, add Laplace noise.

    Laplace scale ``2 * bound * k / epsilon`` per coordinate. ``bound`` is public; left at
    ``None`` it is filled from the decoupler's ``latent_bound_.box``, else the sampler refuses.
    ``calibrate`` takes :class:`LatentFacts` (the latent dimension).
    """

    _constraints: ClassVar[Mapping[str, Rule]] = {
        "epsilon": EPSILON,
        "bound": optional(POSITIVE),
        **SAMPLER_CONSTRAINTS,
    }

    def __init__(
        self,
        epsilon: float,
        bound: float | None = None,
        *,
        sampler: NoiseSampler | None = None,
        allow_nonprivate: bool = False,
    ) -> None:
        self.epsilon = epsilon
        self.bound = bound
        self.sampler = sampler
        self.allow_nonprivate = allow_nonprivate

    def _measure(self, z_s: ArrayLike, y_s: ArrayLike | None) -> tuple[np.ndarray, LatentFacts]:
        """The latents (``y_s`` is not used) and their dimension."""
        latents = _latents(z_s)
        return latents, LatentFacts(latents.shape[1])

    def _calibrate(self, public: LatentFacts, sampler: NoiseSampler) -> ObfuscationPlan:
        k, bound, epsilon = public.k, _require_bound(self), float(self.epsilon)
        sensitivity = 2.0 * bound * k + sampler.rounding_slack(k)
        return ObfuscationPlan(epsilon, 0.0, sampler, k, bound, sensitivity, sensitivity / epsilon)

    def record(self, plan: ObfuscationPlan) -> PrivacyRecord:
        """The guarantee of obfuscating latents with ``plan``."""
        return self._record(
            plan,
            mechanism="dp-obfuscation",
            protects=(
                "the value of each record's sensitive latent z_S within the public box "
                f"[-{plan.bound:g}, {plan.bound:g}]^{plan.k} (local DP: any two values are "
                "indistinguishable)"
            ),
            sensitivity=plan.sensitivity,
            noise={"distribution": "laplace", "scale": plan.scale, "norm": "l1",
                   "per": "coordinate"},
            unit=SENSITIVE_LATENT,
            assumptions=(NS_CAVEAT, "each record is obfuscated independently",
                         *_bound_assumptions(self)),
        )  # fmt: skip

    def _add_noise(self, private: np.ndarray, plan: ObfuscationPlan) -> Draw:
        clipped = np.clip(private, -plan.bound, plan.bound)
        return Draw(plan.sampler.laplace(clipped, plan.scale), None)

    def _accuracy(self, plan: ObfuscationPlan, values: Draw) -> Accuracy:
        scales = np.full(values.z_s.shape, plan.scale)
        return Accuracy.of_scales("laplace", scales, of="the clipped latents")

    def _diagnostics(
        self, public: LatentFacts, plan: ObfuscationPlan, noisy: Draw
    ) -> ObfuscationDiagnostics:
        return ObfuscationDiagnostics(plan.bound, plan.scale)


@dataclass(frozen=True)
class SamplingPlan(NoisePlan):
    """The epsilons and sensitivities of the count, sum and scatter releases."""

    k: int
    p: int
    bound: float
    n_classes: int
    classes_seen: bool
    statistics: rg.StatisticNoise


@dataclass(frozen=True)
class SamplingFacts(LatentFacts):
    """What DP-sampling's calibration reads: ``k`` (as :class:`LatentFacts`), ``n_classes``, and
    ``classes_seen``: whether the classes were read off the private labels (the record says so)."""

    k: int
    n_classes: int
    classes_seen: bool = False


@dataclass(frozen=True, eq=False)  # holds arrays
class LabelledLatents:
    """DP-sampling's private input: the projected, clipped rows' statistics per class (private),
    and what a draw needs besides (the number of rows, the classes and the projection)."""

    n: int
    projection: np.ndarray
    statistics: rg.ClassStatistics
    classes: np.ndarray


@dataclass(frozen=True, eq=False)  # holds arrays
class SamplingDiagnostics(Diagnostics):
    """The DP model the replacements were drawn from (noisy quantities only): class ``shares``,
    projected-latent ``means`` (not in ``to_dict``), ``classes`` and ``projection_dim``."""

    shares: np.ndarray
    means: np.ndarray = field(repr=False)
    classes: tuple[Any, ...]
    projection_dim: int

    def summary_lines(self) -> list[str]:
        """The model's class shares, in one line."""
        shares = ", ".join(f"{c} {s:.3f}" for c, s in zip(self.classes, self.shares, strict=True))
        return [
            f"synthetic labelled latents drawn from a per-class Gaussian model of the "
            f"{self.projection_dim}-dimensional projected z_S (noisy class shares: {shares})"
        ]


@dataclass(frozen=True, eq=False)  # holds arrays
class SampledModel:
    """DP-sampling's DP output (the per-class Gaussian model) and the public facts to sample
    from it: the number of rows, the classes and the projection."""

    model: rg.GaussianClasses
    n: int
    classes: np.ndarray
    projection: np.ndarray


class DPSampling(LatentMechanism[LabelledLatents, SamplingFacts, SamplingPlan]):
    """epsilon-DP per-class Gaussian model of projected ``z_S`` (RON-Gauss), then sampling.

    Guarantee: epsilon-DP for one record's ``(z_S, y_S)`` substituted (the row count is public).
    ``bound`` (public l2 radius) left at ``None`` takes the decoupler's ``latent_bound_.ball``;
    ``class_share_epsilon`` (default ``0.1 * epsilon``) pays the class counts, ``mean_share`` of
    the rest the sums; ``classes`` default to the labels seen (flagged: that leaks them).
    ``calibrate`` takes :class:`SamplingFacts`. See docs/mechanisms/dp-sampling.md.
    """

    _constraints: ClassVar[Mapping[str, Rule]] = {
        "epsilon": EPSILON,
        "bound": optional(POSITIVE),
        "projection_dim": optional(integer()),
        "mean_share": probability(),
        "class_share_epsilon": optional(EPSILON),
        "classes": optional(distinct_values("labels")),
        "seed": SEED,
        **SAMPLER_CONSTRAINTS,
    }

    def __init__(
        self,
        epsilon: float,
        bound: float | None = None,
        *,
        projection_dim: int | None = None,
        mean_share: float = 0.3,
        class_share_epsilon: float | None = None,
        classes: Sequence[Any] | None = None,
        seed: int = 0,
        sampler: NoiseSampler | None = None,
        allow_nonprivate: bool = False,
    ) -> None:
        self.epsilon = epsilon
        self.bound = bound
        self.projection_dim = projection_dim
        self.mean_share = mean_share
        self.class_share_epsilon = class_share_epsilon
        self.classes = classes
        self.seed = seed
        self.sampler = sampler
        self.allow_nonprivate = allow_nonprivate

    def split(self) -> tuple[float, float, float]:
        """(epsilon_count, epsilon_sum, epsilon_scatter), summing to ``epsilon``."""
        epsilon = float(self.epsilon)
        counts = 0.1 * epsilon if self.class_share_epsilon is None else self.class_share_epsilon
        if counts >= epsilon:
            raise InputError(f"class_share_epsilon must be < epsilon ({epsilon:g}), got {counts:g}")
        rest = epsilon - counts
        return counts, self.mean_share * rest, rest - self.mean_share * rest

    def _calibrate(self, public: SamplingFacts, sampler: NoiseSampler) -> SamplingPlan:
        p = self._dim(public.k)
        statistics = self._sensitivities(p, sampler)
        return SamplingPlan(float(self.epsilon), 0.0, sampler, public.k, p, _require_bound(self),
                            public.n_classes, public.classes_seen, statistics)  # fmt: skip

    def _sensitivities(self, p: int, sampler: NoiseSampler) -> rg.StatisticNoise:
        """Epsilons and l1 sensitivities of the count, sum and scatter releases (substitution)."""
        bound = _require_bound(self)
        eps_count, eps_sum, eps_scatter = self.split()
        return rg.StatisticNoise(
            eps_count,
            eps_sum,
            eps_scatter,
            2.0,
            2.0 * rg.sum_sensitivity(p, bound) + sampler.rounding_slack(p),
            2.0 * rg.scatter_sensitivity(p, bound) + sampler.rounding_slack(rg.triangle_size(p)),
        )

    def _measure(
        self, z_s: ArrayLike, y_s: ArrayLike | None
    ) -> tuple[LabelledLatents, SamplingFacts]:
        latents = _latents(z_s)
        labels, classes, seen = self._labels(y_s, latents.shape[0])
        n, k = latents.shape
        projection = rg.orthonormal_projection(k, self._dim(k), int(self.seed))
        rows = rg.clip_rows(latents @ projection, _require_bound(self))
        stats = rg.class_statistics(rows, labels, classes)
        return LabelledLatents(n, projection, stats, classes), SamplingFacts(k, classes.size, seen)

    def _add_noise(self, private: LabelledLatents, plan: SamplingPlan) -> SampledModel:
        noisy = rg._noisy_statistics(private.statistics, plan.statistics, plan.sampler)
        model = rg.gaussian_classes(noisy, plan.bound)
        return SampledModel(model, private.n, private.classes, private.projection)

    def _post_process(self, noisy: SampledModel) -> Draw:
        """Draw the replacements from the released model (post-processing)."""
        rng = np.random.default_rng(int(self.seed))
        draws, index = rg.sample_classes(noisy.model, noisy.n, rng)
        return Draw(draws @ noisy.projection.T, noisy.classes[index])

    def _accuracy(self, plan: SamplingPlan, values: Draw) -> Accuracy:
        count, total, scatter = plan.statistics.scales
        return Accuracy.of_scales(
            "laplace",
            {"count": count, "sum": total, "scatter": scatter},
            of="the noisy class counts, sums and scatter entries the samples are drawn from",
        )

    def _diagnostics(
        self, public: SamplingFacts, plan: SamplingPlan, noisy: SampledModel
    ) -> SamplingDiagnostics:
        model = noisy.model
        return SamplingDiagnostics(model.shares, model.means, tuple(noisy.classes), plan.p)

    def record(self, plan: SamplingPlan) -> PrivacyRecord:
        """The guarantee: sequential over count/sum/scatter, each calibrated to a substitution."""
        calibration = plan.statistics
        extra = ("sensitive classes read off the private data (reveals which occur)",)
        return self._record(
            plan,
            mechanism="dp-sampling",
            protects=(
                "each private record's sensitive latent z_S and sensitive label y_S "
                "(substitution: neighbours differ in one record's (z_S, y_S); the number of "
                "records is public) in the synthetic labelled latents"
            ),
            sensitivity={"count": calibration.sensitivity_count,
                         "sum": calibration.sensitivity_sum,
                         "scatter": calibration.sensitivity_scatter},
            noise={**calibration.to_dict(), "composition": "sequential over count, sum, scatter; "
                   f"l1 over all {plan.n_classes} classes (a substitution moves one row)",
                   "latent_dim": plan.k,
                   "projection_dim": plan.p, "bound": plan.bound},
            unit=SENSITIVE_PART,
            assumptions=(NS_CAVEAT, *(extra if plan.classes_seen else ()),
                         *_bound_assumptions(self)),
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
            raise InputError(f"y_s has a label{offending(labels[unknown][0])} not in classes")
        return labels, classes, False


__all__ = [
    "DPObfuscation",
    "DPSampling",
    "LatentBound",
    "LatentFacts",
    "LatentMechanism",
    "LocalSampler",
    "ObfuscationDiagnostics",
    "SampledLatents",
    "SamplingDiagnostics",
    "SamplingFacts",
    "Suppression",
    "with_latent_bound",
]
