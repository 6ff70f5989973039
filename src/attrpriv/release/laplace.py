"""DP one-way histograms over public domains: the Laplace mechanism on whole rows.

This is the row-level baseline that the attribute-privacy mechanisms must beat: it protects every
answer of every respondent by hiding whether the respondent is in the data at all.

Neighbouring datasets differ by adding or removing one row (``neighbours="add-remove"``), or by
changing one row (``"substitute"``). A row adds one count to each of the m histograms, so the
l1 sensitivity of all of them together is m (2m under substitution), and discrete Laplace noise
of scale ``sensitivity / epsilon`` on every bin gives epsilon-DP (Laplace mechanism; the discrete
version on integers is Ghosh, Roughgarden & Sundararajan 2009, sampled exactly by OpenDP).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from attrpriv._checks import Check, check_epsilon, one_of
from attrpriv.data.aggregate import aggregator_for
from attrpriv.data.schema import Schema
from attrpriv.dp.accuracy import Accuracy
from attrpriv.dp.ledger import BudgetLedger
from attrpriv.dp.mechanism import SAMPLER_CONSTRAINTS, Mechanism, NoisePlan
from attrpriv.dp.noise import NoiseSampler
from attrpriv.dp.record import PrivacyRecord, Release
from attrpriv.dp.units import ROW_NEIGHBOURS, PrivacyUnit
from attrpriv.errors import InputError

NEIGHBOURS = ROW_NEIGHBOURS
Histograms = dict[str, pd.Series]


@dataclass(frozen=True)
class Counts:
    """The exact histograms (private) and the columns' domain provenance (public)."""

    histograms: Histograms
    inferred: tuple[str, ...]


@dataclass(frozen=True)
class LaplacePlan(NoisePlan):
    """One discrete Laplace scale for every bin of ``n_histograms`` histograms."""

    n_histograms: int
    sensitivity: float
    scale: float


class LaplaceHistograms(Mechanism[Counts, LaplacePlan]):
    """epsilon-DP counts of every value of the chosen columns, over their declared domains.

    Parameters
    ----------
    epsilon : float
        Total privacy loss of all the histograms together.
    columns : sequence of str, optional
        The (categorical or integer) columns to count; default every non-ignored one.
    neighbours : str, optional
        ``"add-remove"`` (sensitivity m) or ``"substitute"`` (2m).
    noise : NoiseSampler or None, optional
        A :class:`NoiseSampler`; default exact OpenDP noise.
    allow_nonprivate : bool, optional
        Accept a non-private sampler (reproducible tests only).
    """

    _constraints: ClassVar[Mapping[str, Check]] = {
        "epsilon": check_epsilon,
        "neighbours": one_of(NEIGHBOURS),
        **SAMPLER_CONSTRAINTS,
    }

    def __init__(
        self,
        epsilon: float,
        columns: Sequence[str] | None = None,
        *,
        neighbours: str = "add-remove",
        noise: NoiseSampler | None = None,
        allow_nonprivate: bool = False,
    ) -> None:
        self.epsilon = epsilon
        self.columns = columns
        self.neighbours = neighbours
        self.noise = noise
        self.allow_nonprivate = allow_nonprivate

    def release(
        self,
        data: Any,
        schema: Schema,
        *,
        ledger: BudgetLedger | None = None,
        label: str = "",
    ) -> Release:
        """Count, charge the ledger (before any noise is drawn), add noise, return values + record.

        Parameters
        ----------
        data : pandas.DataFrame, str, pathlib.Path or dask.dataframe.DataFrame
            The private data: a DataFrame, a CSV/Parquet path (counted by DuckDB) or a Dask
            DataFrame.
        schema : Schema
            The public domains of the columns.
        ledger : BudgetLedger or None, optional
            Charged with the release's record before any noise is drawn.
        label : str, optional
            A free-text name for the release in the ledger.

        Returns
        -------
        Release
            The noisy counts, their accuracy and the :class:`PrivacyRecord`.

        Raises
        ------
        InputError
            A parameter is invalid, or there is no categorical or integer column to count.
        BudgetExceededError
            The release does not fit the ledger's budget (nothing is released).
        """
        return self._release(data, schema, ledger=ledger, label=label)

    def calibrate(self, n_histograms: int, sampler: NoiseSampler | None = None) -> LaplacePlan:
        """The noise of ``n_histograms`` histograms (public: no data is used).

        Parameters
        ----------
        n_histograms : int
            The number of histograms released together.
        sampler : NoiseSampler or None, optional
            The noise sampler; default the mechanism's own.

        Returns
        -------
        LaplacePlan
            The discrete Laplace scale of every bin.

        Raises
        ------
        InputError
            A parameter of the mechanism is invalid.
        """
        self._validate_params()
        return self._plan(n_histograms, sampler or self._sampler(), ())

    def _plan(
        self, n_histograms: int, sampler: NoiseSampler, inferred: tuple[str, ...]
    ) -> LaplacePlan:
        sensitivity = histograms_sensitivity(n_histograms, self.neighbours)
        epsilon = float(self.epsilon)
        return LaplacePlan(
            epsilon,
            0.0,
            sampler,
            n_histograms,
            sensitivity,
            sensitivity / epsilon,
            inferred=inferred,
        )

    def _measure(self, data: Any, schema: Schema) -> Counts:
        with aggregator_for(data, schema) as aggregator:
            counts = aggregator.all_counts(self.columns)
        if not counts:
            raise InputError("no categorical or integer columns to count")
        return Counts(counts, schema.inferred_among(counts))

    def _calibrate(self, measured: Counts, sampler: NoiseSampler) -> LaplacePlan:
        return self._plan(len(measured.histograms), sampler, measured.inferred)

    def record(self, plan: LaplacePlan) -> PrivacyRecord:
        """The guarantee of releasing with ``plan``.

        Parameters
        ----------
        plan : LaplacePlan
            The noise plan of the release (from :meth:`calibrate` or a release).

        Returns
        -------
        PrivacyRecord
            ``(epsilon, 0)``-DP under the unit ``dp/<neighbours>`` (this mechanism's current
            ``neighbours``), with the plan's l1 sensitivity and discrete Laplace scale.
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

    def _noise(self, measured: Counts, plan: LaplacePlan) -> Histograms:
        return _noisy_histograms(measured.histograms, plan.scale, plan.sampler)

    def _accuracy(self, plan: LaplacePlan, values: Histograms) -> Accuracy:
        return histogram_accuracy(values, dict.fromkeys(values, plan.scale))

    def _parts(self, measured: Counts, plan: LaplacePlan, noisy: Any) -> dict[str, Any]:
        return {"n_bins": int(sum(c.size for c in measured.histograms.values()))}


def _noisy_histograms(
    histograms: Mapping[str, pd.Series], scale: float, sampler: NoiseSampler
) -> Histograms:
    """Every bin of every histogram plus discrete Laplace noise of ``scale``, in one draw."""
    flat = np.concatenate([h.to_numpy() for h in histograms.values()])
    noisy = sampler.discrete_laplace(flat, scale)
    values, start = {}, 0
    for name, true in histograms.items():
        values[name] = pd.Series(noisy[start : start + true.size], index=true.index, name=name)
        start += true.size
    return values


def histograms_sensitivity(n_histograms: int, neighbours: str) -> float:
    """The l1 sensitivity of ``n_histograms`` histograms of whole rows: one row adds one count
    to each (add/remove), or moves one count in each (substitution, twice that)."""
    return float((1 if neighbours == "add-remove" else 2) * n_histograms)


def histogram_accuracy(values: Histograms, scales: Mapping[str, float]) -> Accuracy:
    """The accuracy of discrete Laplace noise of ``scales[name]`` on every bin of ``name``."""
    shaped = {name: pd.Series(scales[name], index=v.index) for name, v in values.items()}
    return Accuracy.of_scales("discrete laplace", shaped)
