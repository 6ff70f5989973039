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
from attrpriv.dp.accuracy import Accuracy
from attrpriv.dp.ledger import BudgetLedger
from attrpriv.dp.mechanism import SAMPLER_CONSTRAINTS, Mechanism, NoisePlan, validated
from attrpriv.dp.noise import NoiseSampler
from attrpriv.dp.record import PrivacyRecord, Release
from attrpriv.dp.units import ROW_NEIGHBOURS, PrivacyUnit
from attrpriv.errors import InputError
from attrpriv.release._histograms import (
    Counts,
    Histograms,
    flat_bins,
    histogram_accuracy,
    histograms_sensitivity,
    split_bins,
)

NEIGHBOURS = ROW_NEIGHBOURS


@dataclass(frozen=True)
class LaplacePlan(NoisePlan):
    """One discrete Laplace scale for every bin of ``n_histograms`` histograms."""

    n_histograms: int
    sensitivity: float
    scale: float


class LaplaceHistograms(Mechanism[Counts, LaplacePlan]):
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
    noise : NoiseSampler or None, optional
        The noise sampler; default exact OpenDP noise.
    allow_nonprivate : bool, optional
        Accept a non-private sampler (reproducible tests only).
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
        """Count, charge the ledger (before any noise is drawn), add noise.

        Parameters
        ----------
        data : pandas.DataFrame, str, pathlib.Path or dask.dataframe.DataFrame
            The private data: a DataFrame, a CSV/Parquet path or a Dask DataFrame.
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

    @validated
    def calibrate(self, n_histograms: int, sampler: NoiseSampler | None = None) -> LaplacePlan:
        """The noise of ``n_histograms`` histograms (no data is used).

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
        """
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

    def _noise(self, measured: Counts, plan: LaplacePlan) -> Histograms:
        flat = plan.sampler.discrete_laplace(flat_bins(measured.histograms), plan.scale)
        return split_bins(flat, measured.histograms)

    def _accuracy(self, plan: LaplacePlan, values: Histograms) -> Accuracy:
        return histogram_accuracy(values, dict.fromkeys(values, plan.scale))

    def _parts(self, measured: Counts, plan: LaplacePlan, noisy: Any) -> dict[str, Any]:
        return {"n_bins": int(sum(c.size for c in measured.histograms.values()))}
