"""In-memory aggregation with pandas, and the per-partition statistics Dask reuses. Every statistic
is *mergeable*: computed on disjoint pieces and combined, it gives the statistic of the whole.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import reduce
from typing import Protocol, Self, TypeVar

import numpy as np
import pandas as pd

from attrpriv.data.aggregate.base import Aggregator, BinStats, Groups, centred_comoment
from attrpriv.data.schema import Schema
from attrpriv.errors import InputError, SchemaError

CHUNK_ROWS = 2**20
"""Rows converted to float at a time, which bounds the working memory of numeric statistics."""


class Mergeable(Protocol):
    """A statistic of some rows that combines with the statistic of other rows."""

    def merge(self, other: Self) -> Self: ...


MergeableT = TypeVar("MergeableT", bound=Mergeable)


def merge_all(parts: Iterable[MergeableT]) -> MergeableT:
    """Merge the statistics of disjoint pieces into the statistic of their union."""
    return reduce(lambda a, b: a.merge(b), parts)


def chunked(frame: pd.DataFrame, statistic: Callable[[pd.DataFrame], MergeableT]) -> MergeableT:
    """``statistic`` of ``frame``, computed on row chunks of :data:`CHUNK_ROWS` and merged."""
    starts = range(0, max(len(frame), 1), CHUNK_ROWS)
    return merge_all(statistic(frame.iloc[start : start + CHUNK_ROWS]) for start in starts)


def float_matrix(frame: pd.DataFrame, columns: Sequence[str]) -> np.ndarray:
    """The columns as a float64 array (rows x columns), missing values as NaN."""
    out = np.empty((len(frame), len(columns)), dtype=np.float64)
    for j, name in enumerate(columns):
        values = frame[name]
        if pd.api.types.is_bool_dtype(values) or not pd.api.types.is_numeric_dtype(values):
            raise SchemaError(
                f"column {name!r} must be numeric for its domain, got dtype {values.dtype}"
            )
        out[:, j] = values.to_numpy(dtype=np.float64, na_value=np.nan)
    return out


def group_counts(frame: pd.DataFrame, columns: Sequence[str]) -> Groups:
    """Counts of each combination of non-missing values of ``columns``."""
    sizes = frame.groupby(list(columns), dropna=True, observed=True, sort=False).size()
    sizes = sizes[sizes > 0]
    index = sizes.index
    if isinstance(index, pd.MultiIndex):
        keys = tuple(index.get_level_values(i).to_numpy(dtype=object) for i in range(len(columns)))
    else:
        keys = (index.to_numpy(dtype=object),)
    missing = int(frame[list(columns)].isna().any(axis=1).sum())
    return Groups(keys, sizes.to_numpy(dtype=np.int64), missing)


def all_group_counts(frame: pd.DataFrame, columns: Sequence[str]) -> dict[str, Groups]:
    """One-way :func:`group_counts` of each column."""
    return {name: group_counts(frame, [name]) for name in columns}


def bin_stats(frame: pd.DataFrame, column: str, edges: np.ndarray) -> BinStats:
    """Bin counts over ``[e0, e1), ..., [e_{m-2}, e_{m-1}]`` (last bin closed) and value range."""
    values = float_matrix(frame, [column])[:, 0]
    values = values[~np.isnan(values)]
    bins = len(edges) - 1
    if values.size == 0:
        return BinStats(np.zeros(bins, np.int64), np.inf, -np.inf)
    code = np.searchsorted(edges, values, side="right") - 1
    code[values == edges[-1]] = bins - 1
    inside = (code >= 0) & (code < bins)
    counts = np.bincount(code[inside], minlength=bins).astype(np.int64)
    return BinStats(counts, float(values.min()), float(values.max()))


@dataclass(frozen=True)
class Sums:
    """Sums and counts of the non-missing values of each column."""

    total: np.ndarray
    n: np.ndarray

    def merge(self, other: Sums) -> Sums:
        return Sums(self.total + other.total, self.n + other.n)

    def means(self) -> np.ndarray:
        out = np.full(self.total.shape, np.nan)
        np.divide(self.total, self.n, out=out, where=self.n > 0)
        return out


def sums(frame: pd.DataFrame, columns: Sequence[str]) -> Sums:
    """:class:`Sums` of ``columns``."""
    values = float_matrix(frame, columns)
    present = ~np.isnan(values)
    return Sums(np.where(present, values, 0.0).sum(axis=0), present.sum(axis=0).astype(np.int64))


@dataclass(frozen=True)
class Moments:
    """Pairwise-complete counts, means and co-moments of k columns, mergeable (Chan et al.)."""

    n: np.ndarray
    mean: np.ndarray
    comoment: np.ndarray

    def merge(self, other: Moments) -> Moments:
        n = self.n + other.n
        weight = np.divide(other.n, n, out=np.zeros(n.shape), where=n > 0)
        delta = other.mean - self.mean
        comoment = self.comoment + other.comoment + delta * delta.T * self.n * weight
        return Moments(n, self.mean + delta * weight, comoment)


def moments(frame: pd.DataFrame, columns: Sequence[str]) -> Moments:
    """:class:`Moments` of ``columns``, from data shifted by the column means (accurate)."""
    values = float_matrix(frame, columns)
    present = ~np.isnan(values)
    weights = present.astype(np.float64)
    n = weights.T @ weights
    own = present.sum(axis=0)
    total = np.where(present, values, 0.0).sum(axis=0)
    shift = np.divide(total, own, out=np.zeros(own.shape), where=own > 0)
    shifted = np.where(present, values - shift, 0.0)
    sum_pair = shifted.T @ weights  # [i, j]: sum of column i over rows where j is present too
    mean_pair = np.divide(sum_pair, n, out=np.zeros(n.shape), where=n > 0)
    comoment = centred_comoment(n, sum_pair, shifted.T @ shifted)
    return Moments(n, mean_pair + shift[:, None], comoment)


class PandasAggregator(Aggregator):
    """Aggregates of an in-memory pandas DataFrame (held by reference, never modified)."""

    def __init__(self, frame: pd.DataFrame, schema: Schema) -> None:
        super().__init__(schema)
        if not isinstance(frame, pd.DataFrame):
            raise InputError(f"frame must be a pandas DataFrame, got {type(frame).__name__}")
        self._require_present([str(c) for c in frame.columns])
        self._frame = frame

    def _n_rows(self) -> int:
        return len(self._frame)

    def _group_counts(self, columns: Sequence[str]) -> Groups:
        return group_counts(self._frame, columns)

    def _bin_stats(self, column: str, edges: np.ndarray) -> BinStats:
        return chunked(self._frame, lambda part: bin_stats(part, column, edges))

    def _means(self, columns: Sequence[str]) -> np.ndarray:
        return chunked(self._frame, lambda part: sums(part, columns)).means()

    def _comoments(self, columns: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        result = chunked(self._frame, lambda part: moments(part, columns))
        return result.n, result.comoment

    def _sample_rows(self, columns: Sequence[str], n: int, seed: int | None) -> pd.DataFrame:
        frame = self._frame.loc[:, list(columns)]
        if len(frame) > n:
            frame = frame.sample(n=n, random_state=np.random.default_rng(seed))
        return frame
