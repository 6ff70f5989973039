"""The :class:`Aggregator` interface. Missing values are never counted (covariances are pairwise);
counts are over the *declared* domain, in its order, and a value outside it is a
:class:`~attrpriv.errors.SchemaError`: a mechanism's privacy argument rests on the domain."""

from __future__ import annotations

import math
import numbers
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Self

import numpy as np
import pandas as pd

from attrpriv._checks import check_positive_int
from attrpriv.data.schema import Categorical, Domain, Integer, Numeric, Role, Schema
from attrpriv.errors import InputError, SchemaError, offending

DiscreteDomain = Categorical | Integer
"""Domains whose values can be counted one by one."""

MAX_CELLS = 2**27
"""Largest contingency table (in cells, 1 GiB of int64) that :meth:`contingency` builds."""


@dataclass(frozen=True)
class Groups:
    """Counts of distinct non-missing value combinations (a combination may repeat: summed)."""

    keys: tuple[np.ndarray, ...]
    counts: np.ndarray
    missing: int | None = None
    """Rows left out for a missing value in one of the columns; ``None`` if not counted."""

    @classmethod
    def concat(cls, parts: Sequence[Groups], width: int) -> Groups:
        """Stack group counts of ``width`` columns, e.g. from several partitions."""
        if not parts:
            return cls.empty(width)
        keys = tuple(np.concatenate([p.keys[i] for p in parts]) for i in range(width))
        missing = [p.missing for p in parts]
        total = None if None in missing else sum(m for m in missing if m is not None)
        return cls(keys, np.concatenate([p.counts for p in parts]), total)

    @classmethod
    def empty(cls, width: int) -> Groups:
        """No groups at all (no non-missing rows)."""
        return cls(tuple(np.empty(0, dtype=object) for _ in range(width)), np.zeros(0, np.int64))


@dataclass(frozen=True)
class BinStats:
    """Counts per histogram bin, with the smallest and largest non-missing value seen."""

    counts: np.ndarray
    low: float
    high: float

    def merge(self, other: BinStats) -> BinStats:
        """Combine the statistics of two disjoint sets of rows."""
        return BinStats(
            self.counts + other.counts, min(self.low, other.low), max(self.high, other.high)
        )


def plain(value: Any) -> Any:
    """numpy scalars to Python scalars, for readable error messages."""
    return value.item() if isinstance(value, np.generic) else value


def domain_index(domain: DiscreteDomain) -> pd.Index:
    """The domain values as a pandas Index, in domain order."""
    return pd.Index(list(domain.categories), tupleize_cols=False)


def domain_positions(column: str, domain: DiscreteDomain, values: np.ndarray) -> np.ndarray:
    """Position of each value in the domain; :class:`SchemaError` for a value outside it."""
    target = pd.Index(values, dtype=object, tupleize_cols=False)
    positions = np.asarray(domain_index(domain).get_indexer(target), dtype=np.intp)
    bad = np.flatnonzero(positions < 0)
    if bad.size:
        raise SchemaError(
            f"column {column!r} has a value{offending(values[bad[0]])} outside its domain: "
            f"expected {domain.describe()}"
        )
    return positions


def fill_counts(
    columns: Sequence[str], domains: Sequence[DiscreteDomain], groups: Groups
) -> np.ndarray:
    """Scatter group counts into a dense int64 array of shape (|D1|, ..., |Dk|)."""
    shape = tuple(len(d.categories) for d in domains)
    table = np.zeros(math.prod(shape), dtype=np.int64)
    if groups.counts.size:
        axes = [
            domain_positions(name, dom, np.asarray(keys))
            for name, dom, keys in zip(columns, domains, groups.keys, strict=True)
        ]
        flat = np.ravel_multi_index(tuple(axes), shape)
        np.add.at(table, flat, np.asarray(groups.counts, dtype=np.int64))
    return table.reshape(shape)


def counts_series(column: str, domain: DiscreteDomain, groups: Groups) -> pd.Series:
    """A domain-ordered int64 Series of counts for one column."""
    values = fill_counts([column], [domain], groups)
    return pd.Series(values, index=domain_index(domain), name=column, dtype=np.int64)


def centred_comoment(n: np.ndarray, sums: np.ndarray, products: np.ndarray) -> np.ndarray:
    """Pairwise co-moments from raw sums over the rows where both columns are present."""
    means = np.divide(sums, n, out=np.zeros(n.shape), where=n > 0)
    return np.asarray(products - sums * means.T, dtype=np.float64)


def covariance_from_comoments(n: np.ndarray, comoment: np.ndarray, ddof: int) -> np.ndarray:
    """Pairwise covariances ``C / (n - ddof)``; NaN where ``n - ddof <= 0``."""
    divisor = np.asarray(n, dtype=np.float64) - ddof
    out = np.full(divisor.shape, np.nan)
    np.divide(comoment, divisor, out=out, where=divisor > 0)
    return out


class Aggregator(ABC):
    """Aggregates of a dataset (counts, histograms, contingency tables, means, covariances).

    Back ends: pandas, DuckDB (CSV/Parquet files), Dask; :func:`aggregator_for` picks one.

    Parameters
    ----------
    schema : Schema
        The schema whose public domains the aggregates are computed over.
    """

    def __init__(self, schema: Schema) -> None:
        if not isinstance(schema, Schema):
            raise InputError(f"schema must be an attrpriv Schema, got {type(schema).__name__}")
        self._schema = schema

    @property
    def schema(self) -> Schema:
        """The schema whose public domains the aggregates are computed over."""
        return self._schema

    # -- back-end primitives -------------------------------------------------------------------
    @abstractmethod
    def _n_rows(self) -> int:
        """Number of rows."""

    @abstractmethod
    def _group_counts(self, columns: Sequence[str]) -> Groups:
        """Counts of each combination of values, rows missing in any column dropped."""

    def _all_group_counts(self, columns: Sequence[str]) -> dict[str, Groups]:
        """One-way group counts of each column (back ends override to do it in one pass)."""
        return {name: self._group_counts([name]) for name in columns}

    @abstractmethod
    def _bin_stats(self, column: str, edges: np.ndarray) -> BinStats:
        """Bin counts over ``[e0, e1), ..., [e_{m-2}, e_{m-1}]`` and the value range."""

    @abstractmethod
    def _means(self, columns: Sequence[str]) -> np.ndarray:
        """Mean of the non-missing values of each column (NaN when there are none)."""

    @abstractmethod
    def _comoments(self, columns: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Pairwise-complete counts ``n[i, j]`` and centred co-moments ``C[i, j]``."""

    @abstractmethod
    def _sample_rows(self, columns: Sequence[str], n: int, seed: int | None) -> pd.DataFrame:
        """At most ``n`` rows of ``columns``, a uniform sample (all rows when there are fewer)."""

    # -- life cycle ----------------------------------------------------------------------------
    def close(self) -> None:  # noqa: B027 - a no-op by default, not abstract
        """Release the back end's resources (nothing to release by default)."""

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- public API ----------------------------------------------------------------------------
    def n_rows(self) -> int:
        """Number of rows in the dataset (missing values included).

        Returns
        -------
        int
            The number of rows.
        """
        return int(self._n_rows())

    def counts(self, column: str) -> pd.Series:
        """Counts of each value of a categorical or integer column, over its declared domain.

        Parameters
        ----------
        column : str
            A schema column with a categorical or integer domain (numeric: use :meth:`histogram`).

        Returns
        -------
        pandas.Series
            int64 counts indexed by the domain values in domain order (zero for unseen values).

        Raises
        ------
        SchemaError
            A value lies outside the domain, or missing values in a column that is not nullable.
        """
        domain = self._discrete_domain(column)
        groups = self._group_counts([column])
        self._check_missing({column: groups})
        return counts_series(column, domain, groups)

    def all_counts(self, columns: Sequence[str] | None = None) -> dict[str, pd.Series]:
        """:meth:`counts` of several columns at once (one pass over the data where possible).

        Parameters
        ----------
        columns : sequence of str, optional
            Distinct columns with discrete domains; default every such non-ignored column.

        Returns
        -------
        dict of str to pandas.Series
            The :meth:`counts` of each column, by name.
        """
        names = self._default_discrete() if columns is None else self._names(columns)
        domains = [self._discrete_domain(name) for name in names]
        groups = self._all_group_counts(names) if names else {}
        self._check_missing(groups)
        return {
            name: counts_series(name, dom, groups[name])
            for name, dom in zip(names, domains, strict=True)
        }

    def sample_rows(self, columns: Sequence[str], n: int, seed: int | None = 0) -> pd.DataFrame:
        """At most ``n`` rows of ``columns`` (a uniform sample, reproducible for a ``seed``).

        Rows, not aggregates: for learning a model of the data, whose records must then say so.

        Parameters
        ----------
        columns : sequence of str
            Distinct schema columns.
        n : int
            The largest number of rows to return (>= 1).
        seed : int or None, optional
            Seed of the sample (default 0); ``None`` for an unseeded one.

        Returns
        -------
        pandas.DataFrame
            At most ``n`` rows, with the columns ``columns``.
        """
        names = self._names(columns)
        count = check_positive_int(n, "n")
        return self._sample_rows(names, count, seed)

    def histogram(self, column: str, edges: Sequence[float]) -> pd.Series:
        """Counts of a numeric column in bins ``[e0, e1), ..., [e_{m-2}, e_{m-1}]`` (last closed).

        Parameters
        ----------
        column : str
            A schema column with a numeric or integer domain.
        edges : sequence of float
            At least 2 finite, strictly increasing edges that cover the declared domain.

        Returns
        -------
        pandas.Series
            int64 counts, one per bin, indexed by an ``IntervalIndex``.

        Raises
        ------
        SchemaError
            A value lies outside the domain.
        """
        domain = self._numeric_domain(column, "histogram")
        cuts = _check_edges(column, edges, domain)
        stats = self._bin_stats(column, cuts)
        if stats.low > stats.high and not self._schema[column].nullable and self.n_rows() > 0:
            raise SchemaError(_no_values(column))
        if stats.low <= stats.high:
            for value in (stats.low, stats.high):
                if not domain.lower <= value <= domain.upper:
                    raise SchemaError(
                        f"column {column!r} has a value{offending(value)} outside its domain: "
                        f"expected {domain.describe()}"
                    )
        index = pd.IntervalIndex.from_breaks(cuts, closed="left", name=column)
        return pd.Series(np.asarray(stats.counts, np.int64), index=index, name=column)

    def contingency(self, columns: Sequence[str]) -> np.ndarray:
        """The k-way table of counts, axes in domain order; rows missing in any column are dropped.

        Parameters
        ----------
        columns : sequence of str
            Distinct columns with discrete domains: the table's axes, in order.

        Returns
        -------
        numpy.ndarray
            int64 counts of shape ``(|D1|, ..., |Dk|)``.

        Raises
        ------
        InputError
            The table would have more than :data:`MAX_CELLS` cells.
        SchemaError
            A value lies outside a column's domain.
        """
        names = self._names(columns)
        domains = [self._discrete_domain(name) for name in names]
        cells = math.prod(len(d.categories) for d in domains)
        if cells > MAX_CELLS:
            raise InputError(
                f"contingency table of {names} would have {cells} cells; at most {MAX_CELLS} "
                "are supported (use fewer columns or coarser domains)"
            )
        return fill_counts(names, domains, self._group_counts(names))

    def mean(self, columns: Sequence[str]) -> pd.Series:
        """Mean of each numeric or integer column over its non-missing values.

        Parameters
        ----------
        columns : sequence of str
            Distinct schema columns with numeric or integer domains.

        Returns
        -------
        pandas.Series
            float64 means by column name (NaN for a column without values).
        """
        names = self._numeric_names(columns, "mean")
        values = np.asarray(self._means(names), dtype=np.float64)
        return pd.Series(values, index=pd.Index(names), name="mean", dtype=np.float64)

    def covariance(self, columns: Sequence[str], ddof: int = 1) -> pd.DataFrame:
        """Pairwise-complete covariance matrix of numeric or integer columns.

        Parameters
        ----------
        columns : sequence of str
            Distinct schema columns with numeric or integer domains.
        ddof : int, optional
            Delta degrees of freedom (>= 0; default 1): entry (i, j) divides by ``n_ij - ddof``.

        Returns
        -------
        pandas.DataFrame
            The float64 ``k x k`` covariance matrix by column name (NaN where ``n_ij - ddof <= 0``).
        """
        if isinstance(ddof, bool) or not isinstance(ddof, numbers.Integral) or ddof < 0:
            raise InputError(f"ddof must be an integer >= 0, got {ddof!r}")
        names = self._numeric_names(columns, "covariance")
        n, comoment = self._comoments(names)
        values = covariance_from_comoments(n, comoment, int(ddof))
        return pd.DataFrame(values, index=pd.Index(names), columns=pd.Index(names))

    # -- argument checks -----------------------------------------------------------------------
    def _check_missing(self, groups: Mapping[str, Groups]) -> None:
        """Refuse disallowed missing values (no rows is fine: under add/remove, a neighbour too)."""
        for name, found in groups.items():
            if self._schema[name].nullable:
                continue
            if not int(found.counts.sum()) and self.n_rows() > 0:
                raise SchemaError(_no_values(name))
            if found.missing:
                raise SchemaError(  # no count: how many are missing is a private statistic
                    f"column {name!r} has missing values; the schema does not allow missing "
                    "values (set nullable: true)"
                )

    def _require_present(self, present: Sequence[str]) -> None:
        """Every schema column with a domain must be in the data (ignored ones may be absent)."""
        available = set(present)
        for col in self._schema.columns:
            if col.role is not Role.IGNORE and col.name not in available:
                raise SchemaError(f"column {col.name!r} is in the schema but not in the data")

    def _names(self, columns: Sequence[str]) -> list[str]:
        """Check a non-empty list of distinct schema column names."""
        if isinstance(columns, str) or not isinstance(columns, Sequence):
            raise InputError(f"columns must be a list of column names, got {columns!r}")
        names = list(columns)
        if not names:
            raise InputError("columns must name at least one column, got an empty list")
        for name in names:
            self._schema[name]  # raises SchemaError naming the column and the available ones
        if len(set(names)) != len(names):
            dupes = sorted({n for n in names if names.count(n) > 1})
            raise InputError(f"columns must be distinct, got {dupes} more than once")
        return names

    def _domain(self, column: str) -> Domain:
        if not isinstance(column, str):
            raise InputError(f"column must be a column name, got {column!r}")
        return self._schema.domain(column)

    def _discrete_domain(self, column: str) -> DiscreteDomain:
        domain = self._domain(column)
        if isinstance(domain, Numeric):
            raise InputError(
                f"column {column!r} is continuous ({domain.describe()}); counts need a "
                "categorical or integer domain: use histogram(column, edges)"
            )
        return domain

    def _numeric_domain(self, column: str, what: str) -> Numeric | Integer:
        domain = self._domain(column)
        if isinstance(domain, Categorical):
            raise InputError(
                f"column {column!r} is categorical; {what} needs a numeric or integer column"
            )
        return domain

    def _numeric_names(self, columns: Sequence[str], what: str) -> list[str]:
        names = self._names(columns)
        for name in names:
            self._numeric_domain(name, what)
        return names

    def _default_discrete(self) -> list[str]:
        return [
            c.name
            for c in self._schema.columns
            if c.role is not Role.IGNORE and isinstance(c.domain, (Categorical, Integer))
        ]


def _no_values(column: str) -> str:
    return (
        f"column {column!r} has no values (only missing ones, or no rows); the schema does not "
        "allow missing values (set nullable: true)"
    )


def _check_edges(column: str, edges: Sequence[float], domain: Numeric | Integer) -> np.ndarray:
    """Histogram edges as float64: finite, strictly increasing, covering the domain."""
    try:
        cuts = np.asarray(edges, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"histogram edges for {column!r} must be numbers, got {edges!r}") from None
    if cuts.ndim != 1 or cuts.size < 2:
        raise InputError(f"histogram edges for {column!r} must be a list of at least 2 numbers")
    if not np.isfinite(cuts).all() or not (np.diff(cuts) > 0).all():
        raise InputError(
            f"histogram edges for {column!r} must be finite and strictly increasing, "
            f"got {cuts.tolist()}"
        )
    if cuts[0] > domain.lower or cuts[-1] < domain.upper:
        raise InputError(
            f"histogram edges for {column!r} must cover its domain [{domain.lower:g}, "
            f"{domain.upper:g}], got [{cuts[0]:g}, {cuts[-1]:g}]"
        )
    return cuts
