"""What Tabular-DDP's tiers share: the histograms, their noise and a record with both guarantees.

A tier finds its public structure (modules, a model) from public inputs only, then chooses one
discrete Laplace scale per question from it (``_plan``); counting, noise, accuracy and the
row-level comparison are here.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

import pandas as pd

from attrpriv._checks import EPSILON, SEED, Rule, instance_of, integer, names, optional
from attrpriv.data.aggregate import aggregator_for
from attrpriv.data.schema import Schema
from attrpriv.dp.accuracy import Accuracy
from attrpriv.dp.mechanism import SAMPLER_CONSTRAINTS, NoisePlan
from attrpriv.dp.noise import NoiseSampler
from attrpriv.dp.record import ANY_LAW, Diagnostics, Guarantee, PrivacyRecord
from attrpriv.dp.units import ANSWER, PrivacyUnit
from attrpriv.errors import InputError
from attrpriv.release._histograms import Histograms, flat_bins, histogram_accuracy, split_bins
from attrpriv.release.ddp.dependence import SUBSTITUTION_SENSITIVITY, discrete_laplace_mae
from attrpriv.release.ddp.survey import Progress, SurveyMechanism, question_names
from attrpriv.release.graph.learning import Levels, column_levels, level_histograms

AUX = "aux"
"""The value of a tier's structure parameter that learns it from public auxiliary rows."""


RESPONDENTS = "respondents are independent of one another"
"""What every tier assumes beside its class of laws: one respondent's row tells nothing about
another's (the other rows' likelihood then cancels from every loss)."""

TIER_CONSTRAINTS: Mapping[str, Rule] = {
    "epsilon": EPSILON,
    "max_levels": integer(2),
    "max_aux_rows": integer(10),
    "seed": SEED,
    "aux": optional(
        instance_of((pd.DataFrame, str, Path), "public rows: a DataFrame or a file path")
    ),
    "columns": optional(names()),
    **SAMPLER_CONSTRAINTS,
}
"""The constraints of the parameters every tier has."""


class ScaledPlan(NoisePlan):
    """A plan that gives every released question one noise scale."""

    @abstractmethod
    def scales(self) -> dict[str, float]:
        """The noise scale of every released column, in release order."""


PlanT = TypeVar("PlanT", bound=ScaledPlan)
S = TypeVar("S")


@dataclass(frozen=True)
class SurveyFacts(Generic[S]):
    """The public facts a tier calibrates from: the schema, and the structure found from it.

    Parameters
    ----------
    schema : Schema
        The public domains of the survey's columns (the released questions and their levels).
    structure : modules, TreeModel or None, optional
        The tier's public structure once found from public inputs (a release finds it before
        it counts); default found by the calibration.
    """

    schema: Schema
    structure: S | None = None


@dataclass(frozen=True)
class TierDiagnostics(Diagnostics):
    """How a tier's noise compares with row-level Laplace noise on the same histograms: each
    question's discrete Laplace ``scales``, the row-level ``laplace_scale`` ``2 m / epsilon``, the
    expected |noise| per bin (``expected_error``, ``laplace_error``), ``gain`` (Laplace / mean)."""

    scales: Mapping[str, float]
    laplace_scale: float
    expected_error: float
    laplace_error: float
    gain: float

    def summary_lines(self) -> list[str]:
        """The noise's source and its gain over the row-level Laplace scale, in one line."""
        return [
            f"{self._source()}, {self.gain:.2f}x smaller on average than the row-level Laplace "
            f"scale {self.laplace_scale:.4g}"
        ]

    def _source(self) -> str:
        """What the scales were calibrated from, in words."""
        return f"{len(self.scales)} questions"


def tier_diagnostics(plan: ScaledPlan, histograms: Histograms) -> dict[str, Any]:
    """The fields of :class:`TierDiagnostics` for ``plan`` over the released ``histograms``."""
    scales = plan.scales()
    m = len(scales)
    laplace = SUBSTITUTION_SENSITIVITY * m / plan.epsilon  # row-level substitution Laplace
    bins = {c: len(histograms[c]) for c in scales}
    total = sum(bins.values())
    error = math.fsum(bins[c] * discrete_laplace_mae(scales[c]) for c in scales) / total
    return {
        "scales": scales,
        "laplace_scale": laplace,
        "expected_error": error,  # E|noise| per bin, over every bin released
        "laplace_error": discrete_laplace_mae(laplace),
        "gain": laplace / (math.fsum(scales.values()) / m),
    }


class AnswerHistograms(SurveyMechanism[Histograms, SurveyFacts[S], PlanT], Generic[S, PlanT]):
    """The template of a Tabular-DDP tier: subclasses give ``_structure``, ``_plan``, ``record``.

    A release finds the structure (public inputs only), reports ``progress(1, 2)``, counts
    every question and reports ``progress(2, 2)``.
    """

    epsilon: float
    columns: Sequence[str] | None
    max_levels: int

    @abstractmethod
    def _structure(self, levels: Mapping[str, Levels], schema: Schema) -> S:
        """The tier's public structure over the questions, from public inputs only."""

    @abstractmethod
    def _plan(
        self,
        structure: S,
        levels: Mapping[str, Levels],
        sampler: NoiseSampler,
        inferred: tuple[str, ...],
    ) -> PlanT:
        """The plan from the structure, the levels and epsilon only."""

    def _public_facts(self) -> SurveyFacts[S]:
        raise InputError(
            f"{type(self).__name__}.calibrate needs the survey's schema: pass SurveyFacts(schema)"
        )

    def _levels(self, schema: Schema) -> dict[str, Levels]:
        return column_levels(schema, question_names(schema, self.columns), int(self.max_levels))

    def _measure(
        self, data: Any, schema: Schema, progress: Progress | None
    ) -> tuple[Histograms, SurveyFacts[S]]:
        # the structure first, from the schema and public inputs only: the private rows are
        # not read until it is found (and nothing about them can reach it)
        levels = self._levels(schema)
        structure = self._structure(levels, schema)
        if progress is not None:
            progress(1, 2)
        with aggregator_for(data, schema) as aggregator:
            histograms = level_histograms(aggregator, levels)
        if progress is not None:
            progress(2, 2)
        return histograms, SurveyFacts(schema, structure)

    def _calibrate(self, public: SurveyFacts[S], sampler: NoiseSampler) -> PlanT:
        schema = public.schema
        levels = self._levels(schema)
        found = public.structure
        structure = self._structure(levels, schema) if found is None else found
        return self._plan(structure, levels, sampler, schema.inferred_among(levels))

    def _add_noise(self, private: Histograms, plan: PlanT) -> Histograms:
        scales = plan.scales()
        groups: dict[float, dict[str, Any]] = {}
        for column, scale in scales.items():
            groups.setdefault(scale, {})[column] = private[column]
        raw: Histograms = {}
        for scale, part in groups.items():  # one draw per scale
            flat = plan.sampler.discrete_laplace(flat_bins(part), scale)
            raw.update(split_bins(flat, part))
        return {c: raw[c] for c in scales}

    def _accuracy(self, plan: PlanT, values: Histograms) -> Accuracy:
        return histogram_accuracy(values, plan.scales())

    def _tier_record(
        self,
        plan: PlanT,
        *,
        mechanism: str,
        moving: str,
        per: str,
        model: str,
        laws: tuple[str, str] | None,
    ) -> PrivacyRecord:
        """The record of a tier under ``dependent-dp/answer@<model>``: ``laws`` is the class of
        laws and the assumption that names it, or None where the guarantee holds for any law."""
        scales = plan.scales()
        assumptions: tuple[str, ...] = (RESPONDENTS,)
        guarantees: tuple[Guarantee, ...] = (Guarantee(plan.epsilon, 0.0, ANY_LAW),)
        if laws is not None:
            assumptions += (laws[1],)
            guarantees = (
                Guarantee(plan.epsilon, 0.0, laws[0]),
                Guarantee(any_law_epsilon(scales), 0.0, ANY_LAW),
            )
        return self._record(
            plan,
            mechanism=mechanism,
            protects=(
                "any one answer of any one respondent, changed from any value to any other, with "
                f"the respondent's other answers {moving}"
            ),
            sensitivity=dict.fromkeys(scales, SUBSTITUTION_SENSITIVITY),
            noise={"distribution": "discrete laplace", "scale": scales, "norm": "l1", "per": per},
            unit=PrivacyUnit("dependent-dp", f"{ANSWER}@{model}"),
            assumptions=assumptions,
            guarantees=guarantees,
        )


def any_law_epsilon(scales: Mapping[str, float]) -> float:
    """Loss of one answer under any law, in nats: ``sum_j SUBSTITUTION_SENSITIVITY / scales[j]``."""
    return math.fsum(SUBSTITUTION_SENSITIVITY / scale for scale in scales.values())


__all__ = [
    "AUX",
    "RESPONDENTS",
    "TIER_CONSTRAINTS",
    "AnswerHistograms",
    "PlanT",
    "ScaledPlan",
    "SurveyFacts",
    "TierDiagnostics",
    "any_law_epsilon",
    "tier_diagnostics",
]
