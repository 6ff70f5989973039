"""Aggregation with Dask: the pandas statistics computed per partition, then merged.

Dask is an optional extra (``pip install 'attrpriv[distributed]'``), imported on first use."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from attrpriv.data.aggregate import pandas as stats
from attrpriv.data.aggregate.base import Aggregator, BinStats, Groups
from attrpriv.data.aggregate.pandas import MergeableT
from attrpriv.data.schema import Schema
from attrpriv.errors import InputError

T = TypeVar("T")


def import_dask() -> tuple[ModuleType, ModuleType]:
    """``(dask, dask.dataframe)``, or an :class:`InputError` saying how to install them."""
    try:
        import dask
        import dask.dataframe as dd
    except ImportError as exc:
        raise InputError(
            f"the Dask engine needs dask[dataframe] ({exc}); install it with "
            "pip install 'attrpriv[distributed]'"
        ) from None
    return dask, dd


def is_dask_frame(data: object) -> bool:
    """Whether ``data`` is a Dask DataFrame (without importing Dask if it is not loaded)."""
    dd = sys.modules.get("dask.dataframe")
    return dd is not None and isinstance(data, dd.DataFrame)


class DaskAggregator(Aggregator):
    """Aggregates of a Dask DataFrame, per partition with the pandas engine's code, then merged."""

    def __init__(self, frame: Any, schema: Schema) -> None:
        super().__init__(schema)
        self._dask, dd = import_dask()
        if not isinstance(frame, dd.DataFrame):
            raise InputError(f"frame must be a dask DataFrame, got {type(frame).__name__}")
        self._require_present([str(c) for c in frame.columns])
        self._frame = frame

    def _per_partition(
        self, columns: Sequence[str], statistic: Callable[[pd.DataFrame], T]
    ) -> list[T]:
        """``statistic`` of each partition of ``columns``, computed in one Dask graph."""
        delayed = self._dask.delayed
        tasks = [delayed(statistic)(part) for part in self._frame[list(columns)].to_delayed()]
        return list(self._dask.compute(*tasks))

    def _merged(
        self, columns: Sequence[str], statistic: Callable[[pd.DataFrame], MergeableT]
    ) -> MergeableT:
        """``statistic`` of the whole frame, merged from its partitions."""
        return stats.merge_all(self._per_partition(columns, statistic))

    def _n_rows(self) -> int:
        return len(self._frame)

    def _group_counts(self, columns: Sequence[str]) -> Groups:
        parts = self._per_partition(columns, lambda f: stats.group_counts(f, columns))
        return Groups.concat(parts, len(columns))

    def _all_group_counts(self, columns: Sequence[str]) -> dict[str, Groups]:
        parts = self._per_partition(columns, lambda f: stats.all_group_counts(f, columns))
        return {name: Groups.concat([p[name] for p in parts], 1) for name in columns}

    def _bin_stats(self, column: str, edges: np.ndarray) -> BinStats:
        return self._merged([column], lambda f: stats.bin_stats(f, column, edges))

    def _means(self, columns: Sequence[str]) -> np.ndarray:
        return self._merged(columns, lambda f: stats.sums(f, columns)).means()

    def _comoments(self, columns: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        result = self._merged(columns, lambda f: stats.moments(f, columns))
        return result.n, result.comoment

    def _sample_rows(self, columns: Sequence[str], n: int, seed: int | None) -> pd.DataFrame:
        """Each partition sampled at the rate that gives about ``n`` rows, then cut to ``n``."""
        frame = self._frame[list(columns)]
        total = len(frame)
        if total <= n:
            return pd.DataFrame(frame.compute())
        fraction = min(1.0, 1.1 * n / total)  # a little over, so the cut rarely runs short
        sample = pd.DataFrame(frame.sample(frac=fraction, random_state=seed).compute())
        if len(sample) < n:
            sample = pd.DataFrame(frame.compute()).sample(n=n, random_state=seed)
        return sample.iloc[:n]
