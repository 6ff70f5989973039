"""What Tabular-DDP's tiers share: the histograms, their noise and a record with both guarantees.

A tier only chooses one discrete Laplace scale per question from public inputs (``_plan``);
counting, noise, accuracy and the row-level comparison are here.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

import pandas as pd

from attrpriv._checks import EPSILON, SEED, Rule, instance_of, integer, names, optional
from attrpriv.data.aggregate import aggregator_for
from attrpriv.data.schema import Role, Schema
from attrpriv.dp.accuracy import Accuracy
from attrpriv.dp.ledger import BudgetLedger
from attrpriv.dp.mechanism import SAMPLER_CONSTRAINTS, Mechanism, NoisePlan, validated
from attrpriv.dp.noise import NoiseSampler
from attrpriv.dp.record import Release
from attrpriv.errors import InputError
from attrpriv.release._histograms import (
    Counts,
    Histograms,
    flat_bins,
    histogram_accuracy,
    split_bins,
)
from attrpriv.release.ddp.dependence import SUBSTITUTION_SENSITIVITY, discrete_laplace_mae
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


Progress = Callable[[int, int], None]
"""``progress(done, total)``: called after calibrating (1 of 2) and after counting (2 of 2)."""


class ScaledPlan(NoisePlan):
    """A plan that gives every released question one noise scale."""

    @abstractmethod
    def scales(self) -> dict[str, float]:
        """The noise scale of every released column, in release order."""


PlanT = TypeVar("PlanT", bound=ScaledPlan)


@dataclass(frozen=True)
class Questions(Generic[PlanT]):
    """The private input as measured: its exact histograms and the noise plan (public inputs)."""

    counts: Counts
    plan: PlanT


class AnswerHistograms(Mechanism[Questions[PlanT], PlanT]):
    """The template of a Tabular-DDP tier: subclasses give ``_plan`` and ``record``."""

    epsilon: float
    columns: Sequence[str] | None
    max_levels: int

    def release(
        self,
        data: Any,
        schema: Schema,
        *,
        ledger: BudgetLedger | None = None,
        label: str = "",
        progress: Progress | None = None,
    ) -> Release:
        """Calibrate from public inputs, count every question, charge the ledger, add noise.

        Parameters
        ----------
        data : pandas.DataFrame, str, pathlib.Path or dask.dataframe.DataFrame
            The private rows (only counted).
        schema : Schema
            The public domains of the columns.
        ledger : BudgetLedger or None, optional
            Charged with the release's record before any noise is drawn.
        label : str, optional
            A free-text name for the release in the ledger.
        progress : callable or None, optional
            Called as ``progress(done, 2)`` after calibrating and after counting.

        Returns
        -------
        Release
            The noisy histograms, their accuracy, the record and, in ``parts``, the scales.

        Raises
        ------
        BudgetExceededError
            The release does not fit the ledger's budget (nothing is released).
        """
        return self._release(data, schema, progress, ledger=ledger, label=label)

    @validated
    def calibrate(self, schema: Schema, sampler: NoiseSampler | None = None) -> PlanT:
        """The noise of a release over ``schema``, from public inputs only.

        Parameters
        ----------
        schema : Schema
            The public domains (which columns are released).
        sampler : NoiseSampler or None, optional
            The noise sampler; default the mechanism's own.

        Returns
        -------
        NoisePlan
            Every question's scale.
        """
        return self._plan(self._levels(schema), schema, sampler or self._sampler(), ())

    @abstractmethod
    def _plan(
        self,
        levels: Mapping[str, Levels],
        schema: Schema,
        sampler: NoiseSampler,
        inferred: tuple[str, ...],
    ) -> PlanT:
        """The plan from the levels, the schema and the tier's public structure only."""

    def _levels(self, schema: Schema) -> dict[str, Levels]:
        if self.columns is None:
            names = [c.name for c in schema.columns if c.role is not Role.IGNORE and c.domain]
        elif isinstance(self.columns, str):
            raise InputError(f"columns must be a list of column names, got {self.columns!r}")
        else:
            names = list(self.columns)
        return column_levels(schema, names, int(self.max_levels))

    def _measure(self, data: Any, schema: Schema, progress: Progress | None) -> Questions[PlanT]:
        # the plan first, from the levels, the schema and the public structure only: the
        # private rows are not read until it is made (and nothing about them can reach it)
        levels = self._levels(schema)
        inferred = schema.inferred_among(levels)
        plan = self._plan(levels, schema, self._sampler(), inferred)
        if progress is not None:
            progress(1, 2)
        with aggregator_for(data, schema) as aggregator:
            histograms = level_histograms(aggregator, levels)
        if progress is not None:
            progress(2, 2)
        return Questions(Counts(histograms, inferred), plan)

    def _calibrate(self, measured: Questions[PlanT], sampler: NoiseSampler) -> PlanT:
        return measured.plan

    def _noise(self, measured: Questions[PlanT], plan: PlanT) -> Histograms:
        histograms, scales = measured.counts.histograms, plan.scales()
        groups: dict[float, dict[str, Any]] = {}
        for column, scale in scales.items():
            groups.setdefault(scale, {})[column] = histograms[column]
        raw: Histograms = {}
        for scale, part in groups.items():  # one draw per scale
            flat = plan.sampler.discrete_laplace(flat_bins(part), scale)
            raw.update(split_bins(flat, part))
        return {c: raw[c] for c in scales}

    def _accuracy(self, plan: PlanT, values: Histograms) -> Accuracy:
        return histogram_accuracy(values, plan.scales())

    def _parts(self, measured: Questions[PlanT], plan: PlanT, noisy: Any) -> dict[str, Any]:
        scales = plan.scales()
        m = len(scales)
        laplace = SUBSTITUTION_SENSITIVITY * m / plan.epsilon  # row-level substitution Laplace
        bins = {c: len(measured.counts.histograms[c]) for c in scales}
        total = sum(bins.values())
        error = math.fsum(bins[c] * discrete_laplace_mae(scales[c]) for c in scales) / total
        return {
            "scales": scales,
            "laplace_scale": laplace,
            "expected_error": error,  # E|noise| per bin, over every bin released
            "laplace_error": discrete_laplace_mae(laplace),
            "gain": laplace / (math.fsum(scales.values()) / m),
        }


def any_law_epsilon(scales: Mapping[str, float]) -> float:
    """Loss of one answer under any law, in nats: ``sum_j SUBSTITUTION_SENSITIVITY / scales[j]``."""
    return math.fsum(SUBSTITUTION_SENSITIVITY / scale for scale in scales.values())


__all__ = [
    "AUX",
    "RESPONDENTS",
    "TIER_CONSTRAINTS",
    "AnswerHistograms",
    "PlanT",
    "Progress",
    "Questions",
    "ScaledPlan",
    "any_law_epsilon",
]
