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

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from attrpriv._checks import check_choice, check_epsilon
from attrpriv.data.aggregate import aggregator_for
from attrpriv.data.schema import Schema
from attrpriv.dp.ledger import BudgetLedger
from attrpriv.dp.noise import NoiseSampler, default_sampler, require_private
from attrpriv.dp.record import PrivacyRecord, Release
from attrpriv.errors import InputError

NEIGHBOURS = ("add-remove", "substitute")


class LaplaceHistograms:
    """epsilon-DP counts of every value of the chosen columns, over their declared domains.

    Parameters
    ----------
    epsilon : total privacy loss of all the histograms together.
    columns : the (categorical or integer) columns to count; default every non-ignored one.
    neighbours : ``"add-remove"`` (sensitivity m) or ``"substitute"`` (2m).
    noise : a :class:`NoiseSampler`; default exact OpenDP noise.
    allow_nonprivate : accept a non-private sampler (reproducible tests only).
    """

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

        ``data`` is a DataFrame, a CSV/Parquet path (counted by DuckDB) or a Dask DataFrame.
        """
        epsilon = check_epsilon(self.epsilon)
        check_choice(self.neighbours, "neighbours", NEIGHBOURS)
        sampler = self.noise if self.noise is not None else default_sampler()
        require_private(sampler, allow_nonprivate=self.allow_nonprivate)
        with aggregator_for(data, schema) as aggregator:
            counts = aggregator.all_counts(self.columns)
        if not counts:
            raise InputError("no categorical or integer columns to count")
        record = self.record(len(counts), epsilon, sampler)
        if ledger is not None:
            ledger.charge(record, label=label)
        flat = np.concatenate([c.to_numpy() for c in counts.values()])
        noisy = sampler.discrete_laplace(flat, record.noise["scale"])
        values, start = {}, 0
        for name, true in counts.items():
            values[name] = pd.Series(noisy[start : start + true.size], index=true.index, name=name)
            start += true.size
        return Release(values, record, {"n_bins": int(flat.size)})

    def record(self, n_histograms: int, epsilon: float, sampler: NoiseSampler) -> PrivacyRecord:
        """The guarantee of releasing ``n_histograms`` histograms with this configuration."""
        per_row = 1 if self.neighbours == "add-remove" else 2
        sensitivity = float(per_row * n_histograms)
        assumptions = () if sampler.private else ("noise sampler is not private",)
        return PrivacyRecord(
            mechanism="laplace-histograms",
            definition="dp",
            epsilon=epsilon,
            delta=0.0,
            protects=(
                "whether any one respondent is in the data, hence every answer they gave "
                f"({self.neighbours} neighbours)"
            ),
            sensitivity=sensitivity,
            noise={
                "distribution": "discrete laplace",
                "scale": sensitivity / epsilon,
                "norm": "l1",
                **sampler.describe(),
            },
            assumptions=assumptions,
        )
