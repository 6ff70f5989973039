"""DP one-way histograms over public domains: discrete Laplace noise on whole rows.

The row-level baseline. See docs/mechanisms/laplace-histograms.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from attrpriv._checks import EPSILON, Rule, names, one_of, optional
from attrpriv.data.aggregate import aggregator_for
from attrpriv.data.schema import Schema
from attrpriv.dp.mechanism import SAMPLER_CONSTRAINTS, NoisePlan
from attrpriv.dp.noise import NoiseSampler
from attrpriv.dp.record import Diagnostics, PrivacyRecord
from attrpriv.dp.units import ROW_NEIGHBOURS, PrivacyUnit
from attrpriv.errors import InputError
from attrpriv.release._histograms import HistogramMechanism, Histograms, histograms_sensitivity

NEIGHBOURS = ROW_NEIGHBOURS


@dataclass(frozen=True)
class HistogramFacts:
    """The public facts a Laplace release is calibrated on.

    Parameters
    ----------
    n_histograms : int
        The number of histograms released together.
    inferred : tuple of str, default ()
        The columns whose domains were read off the private data.
    """

    n_histograms: int
    inferred: tuple[str, ...] = ()


@dataclass(frozen=True)
class LaplacePlan(NoisePlan):
    """One discrete Laplace scale for every bin of ``n_histograms`` histograms."""

    n_histograms: int
    sensitivity: float
    scale: float


@dataclass(frozen=True)
class LaplaceDiagnostics(Diagnostics):
    """How a Laplace release was made: ``n_histograms`` and ``n_bins`` (all together), the l1
    ``sensitivity`` and every bin's discrete Laplace ``scale``."""

    n_histograms: int
    n_bins: int
    sensitivity: float
    scale: float

    def summary_lines(self) -> list[str]:
        """The sensitivity and the noise scale, in one line."""
        return [
            f"sensitivity={self.sensitivity:g}, discrete Laplace scale={self.scale:g} "
            f"({self.n_histograms} histograms, {self.n_bins} bins)"
        ]


class LaplaceHistograms(HistogramMechanism[HistogramFacts, LaplacePlan]):
    """epsilon-DP counts of every value of the chosen columns, over their declared domains.

    Protects whole rows: discrete Laplace noise of scale ``m / epsilon`` (``2m`` under
    substitution) on the m histograms. See docs/mechanisms/laplace-histograms.md.

    Parameters
    ----------
    epsilon : float
        Total privacy loss of all the histograms together.
    columns : sequence of str, optional
        The (categorical or integer) columns to count; default every non-ignored one.
    neighbours : str, optional
        ``"add-remove"`` (sensitivity m) or ``"substitute"`` (2m).
    sampler, allow_nonprivate
        As in :class:`~attrpriv.dp.mechanism.Mechanism`.
    """

    _constraints: ClassVar[Mapping[str, Rule]] = {
        "epsilon": EPSILON,
        "neighbours": one_of(NEIGHBOURS),
        "columns": optional(names()),
        **SAMPLER_CONSTRAINTS,
    }

    def __init__(
        self,
        epsilon: float,
        columns: Sequence[str] | None = None,
        *,
        neighbours: str = "add-remove",
        sampler: NoiseSampler | None = None,
        allow_nonprivate: bool = False,
    ) -> None:
        self.epsilon = epsilon
        self.columns = columns
        self.neighbours = neighbours
        self.sampler = sampler
        self.allow_nonprivate = allow_nonprivate

    def _public_facts(self) -> HistogramFacts:
        if self.columns is None:
            raise InputError(
                "LaplaceHistograms.calibrate needs the number of histograms: pass "
                "HistogramFacts(n_histograms), or set columns"
            )
        return HistogramFacts(len(self.columns))

    def _measure(self, data: Any, schema: Schema) -> tuple[Histograms, HistogramFacts]:
        with aggregator_for(data, schema) as aggregator:
            counts = aggregator.all_counts(self.columns)
        if not counts:
            raise InputError("no categorical or integer columns to count")
        return counts, HistogramFacts(len(counts), schema.inferred_among(counts))

    def _calibrate(self, public: HistogramFacts, sampler: NoiseSampler) -> LaplacePlan:
        sensitivity = histograms_sensitivity(public.n_histograms, self.neighbours)
        epsilon = float(self.epsilon)
        return LaplacePlan(
            epsilon,
            0.0,
            sampler,
            public.n_histograms,
            sensitivity,
            sensitivity / epsilon,
            inferred=public.inferred,
        )

    def record(self, plan: LaplacePlan) -> PrivacyRecord:
        """The guarantee of releasing with ``plan``.

        Parameters
        ----------
        plan : LaplacePlan
            The noise plan of the release (from :meth:`calibrate` or a release).

        Returns
        -------
        PrivacyRecord
            ``(epsilon, 0)``-DP under ``dp/<neighbours>``.
        """
        return self._record(
            plan,
            mechanism="laplace-histograms",
            protects=(
                "whether any one respondent is in the data, hence every answer they gave "
                f"({self.neighbours} neighbours)"
            ),
            sensitivity=plan.sensitivity,
            noise={
                "distribution": "discrete laplace",
                "scale": plan.scale,
                "norm": "l1",
            },
            unit=PrivacyUnit("dp", self.neighbours),
            assumptions=(),
        )

    def _scale(self, plan: LaplacePlan) -> float:
        return plan.scale

    def _diagnostics(
        self, public: HistogramFacts, plan: LaplacePlan, noisy: Histograms
    ) -> LaplaceDiagnostics:
        n_bins = int(sum(h.size for h in noisy.values()))
        return LaplaceDiagnostics(plan.n_histograms, n_bins, plan.sensitivity, plan.scale)


__all__ = [
    "NEIGHBOURS",
    "HistogramFacts",
    "LaplaceDiagnostics",
    "LaplaceHistograms",
    "LaplacePlan",
]
