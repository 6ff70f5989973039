"""Queries and secrets of the attribute-private Gaussian mechanism, and their values on data.

A statistic is a sum or mean over records of a column or a category's indicator; a secret is
one statistic with the values it may take.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from attrpriv._checks import check_finite_number
from attrpriv.data.aggregate import Aggregator, aggregator_for
from attrpriv.data.schema import Categorical, Numeric, Schema
from attrpriv.errors import InputError

Array = NDArray[np.float64]
AGGREGATES = ("mean", "sum", "share", "count")
_PATTERN = re.compile(r"^\s*(mean|sum|share|count)\((.+)\)\s*$")


@dataclass(frozen=True)
class Statistic:
    """A mean or sum over records of a column (``value=None``) or of a category's indicator.

    Parameters
    ----------
    aggregate : {"mean", "sum", "share", "count"}
        ``mean``/``sum`` of a column, ``share``/``count`` of a category's indicator.
    column : str
        The column (non-empty).
    value : hashable or None, optional
        The category, required for ``share`` and ``count``, ``None`` otherwise.
    """

    aggregate: str
    column: str
    value: Hashable | None = None

    def __post_init__(self) -> None:
        if self.aggregate not in AGGREGATES:
            raise InputError(f"statistic must be one of {list(AGGREGATES)}, got {self.aggregate!r}")
        if not isinstance(self.column, str) or not self.column:
            raise InputError(f"statistic column must be a non-empty name, got {self.column!r}")
        indicator = self.aggregate in ("share", "count")
        if indicator and self.value is None:
            raise InputError(f"{self.aggregate}({self.column}=...) needs a category value")
        if not indicator and self.value is not None:
            raise InputError(f"{self.aggregate}({self.column}) takes no category value")

    @classmethod
    def parse(cls, text: object) -> Statistic:
        """Parse ``"mean(age)"``, ``"sum(age)"``, ``"share(sex=Female)"`` or
        ``"count(income=>50K)"``.

        Parameters
        ----------
        text : str or Statistic
            The statistic as text (category split at the first ``=``, kept as text), or a statistic.

        Returns
        -------
        Statistic
            The statistic ``text`` names.
        """
        if isinstance(text, Statistic):
            return text
        match = _PATTERN.match(text) if isinstance(text, str) else None
        if match is None:
            raise InputError(
                f"statistic must look like mean(column), sum(column), share(column=value) or "
                f"count(column=value), got {text!r}"
            )
        aggregate, body = match.group(1), match.group(2).strip()
        if aggregate in ("share", "count"):
            column, sep, value = body.partition("=")
            if not sep:
                raise InputError(f"{text!r}: {aggregate} needs column=value")
            return cls(aggregate, column.strip(), value.strip())
        return cls(aggregate, body)

    @property
    def variable(self) -> str:
        """The per-record variable: the column, or ``column=value`` for an indicator."""
        return self.column if self.value is None else f"{self.column}={self.value}"

    @property
    def is_mean(self) -> bool:
        """A mean over records (``mean``, ``share``) rather than a sum (``sum``, ``count``)."""
        return self.aggregate in ("mean", "share")

    @property
    def is_indicator(self) -> bool:
        return self.value is not None

    def scale(self, n: int) -> float:
        """The factor of the sum over records of the variable.

        Parameters
        ----------
        n : int
            The number of records.

        Returns
        -------
        float
            ``1 / n`` for a mean or share, ``1.0`` for a sum or count.
        """
        return 1.0 / n if self.is_mean else 1.0

    def __str__(self) -> str:
        return f"{self.aggregate}({self.variable})"


@dataclass(frozen=True)
class Query:
    """The released statistics F (a vector of k statistics).

    Parameters
    ----------
    statistics : tuple of Statistic or str
        At least one, all distinct (strings are parsed); use :meth:`of` for a single one.
    """

    statistics: tuple[Statistic, ...]

    def __post_init__(self) -> None:
        stats = tuple(Statistic.parse(s) for s in self.statistics)
        if not stats:
            raise InputError("query needs at least one statistic")
        names = [str(s) for s in stats]
        if len(set(names)) != len(names):
            raise InputError(f"query statistics must be distinct, got {names}")
        object.__setattr__(self, "statistics", stats)

    @classmethod
    def of(cls, statistics: Query | Statistic | str | Sequence[Statistic | str]) -> Query:
        """A query from a query, one statistic or a list of them.

        Parameters
        ----------
        statistics : Query, Statistic, str or sequence of Statistic or str
            A :class:`Query` (returned as it is), one statistic or a list of them.

        Returns
        -------
        Query
            The query of those statistics.
        """
        if isinstance(statistics, Query):
            return statistics
        if isinstance(statistics, (Statistic, str)):
            return cls((Statistic.parse(statistics),))
        return cls(tuple(Statistic.parse(s) for s in statistics))

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(str(s) for s in self.statistics)

    @property
    def size(self) -> int:
        return len(self.statistics)

    def scales(self, n: int) -> Array:
        """The :meth:`Statistic.scale` of every statistic.

        Parameters
        ----------
        n
            As in :meth:`Statistic.scale`.

        Returns
        -------
        numpy.ndarray
            float64 of shape ``(k,)``.
        """
        return np.array([s.scale(n) for s in self.statistics])


@dataclass(frozen=True)
class Secret:
    """A protected statistic and its values: one of ``values``, ``interval`` or ``pairs``.

    Values are on the statistic's own scale (a share in [0, 1], a count in [0, n], a mean).

    Parameters
    ----------
    statistic : Statistic or str
        The protected statistic.
    values : tuple of float, optional
        At least two distinct values; every pair of them is protected.
    interval : tuple of float or None, optional
        ``(lower, upper)``, finite, ``lower < upper``: the values in it are protected.
    pairs : tuple of tuple of float, optional
        Explicit ``(a, b)`` pairs of two different finite values.
    name : str, optional
        A name for the secret; default ``str(statistic)``.
    """

    statistic: Statistic
    values: tuple[float, ...] = ()
    interval: tuple[float, float] | None = None
    pairs: tuple[tuple[float, float], ...] = ()
    name: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "statistic", Statistic.parse(self.statistic))
        given = [bool(self.values), self.interval is not None, bool(self.pairs)]
        if sum(given) != 1:
            raise InputError(
                f"secret {self.statistic}: give exactly one of values, interval or pairs"
            )
        label = str(self.statistic)
        values = tuple(check_finite_number(v, f"secret {label} value") for v in self.values)
        if self.values and len(set(values)) < 2:
            raise InputError(f"secret {label} needs at least two distinct values, got {values}")
        object.__setattr__(self, "values", values)
        if self.interval is not None:
            if isinstance(self.interval, str) or len(self.interval) != 2:
                raise InputError(f"secret {label} interval must be [lower, upper]")
            lo, hi = (check_finite_number(v, f"secret {label} interval") for v in self.interval)
            if not lo < hi:
                raise InputError(f"secret {label} interval must have lower < upper, got {lo, hi}")
            object.__setattr__(self, "interval", (lo, hi))
        pairs = tuple(_pair(p, label) for p in self.pairs)
        object.__setattr__(self, "pairs", pairs)
        object.__setattr__(self, "name", self.name or label)

    def candidate_values(self) -> tuple[float, ...]:
        """Every value named by the spec.

        Returns
        -------
        tuple of float
            ``values``, ``(lower, upper)`` for an interval, or the sorted values of ``pairs``.
        """
        if self.values:
            return self.values
        if self.interval is not None:
            return self.interval
        return tuple(sorted({v for p in self.pairs for v in p}))

    def value_pairs(self, values: Sequence[float]) -> tuple[tuple[float, float], ...]:
        """The protected pairs among ``values``.

        Parameters
        ----------
        values : sequence of float
            The secret values the model supports (ignored with explicit ``pairs``).

        Returns
        -------
        tuple of tuple of float
            ``pairs`` when given, else every ordered pair of the sorted ``values``.
        """
        if self.pairs:
            return self.pairs
        return tuple(itertools.combinations(sorted(values), 2))

    def describe(self) -> str:
        """The secret in words, for records and messages.

        Returns
        -------
        str
            E.g. ``"share(sex=F) in {0.4, 0.6}"`` or ``"count(sex=F): 10 vs 20"``.
        """
        if self.values:
            return f"{self.statistic} in {{{', '.join(f'{v:g}' for v in self.values)}}}"
        if self.interval is not None:
            return f"{self.statistic} in [{self.interval[0]:g}, {self.interval[1]:g}]"
        pairs = ", ".join(f"{a:g} vs {b:g}" for a, b in self.pairs)
        return f"{self.statistic}: {pairs}"


def _pair(pair: object, label: str) -> tuple[float, float]:
    if isinstance(pair, (str, bytes)) or not isinstance(pair, Sequence) or len(pair) != 2:
        raise InputError(f"secret {label} pairs must be (a, b) pairs, got {pair!r}")
    a, b = (check_finite_number(v, f"secret {label} pair value") for v in pair)
    if a == b:
        raise InputError(f"secret {label} pair ({a:g}, {b:g}) must have two different values")
    return a, b


def secret_per_record(statistic: Statistic, value: float, n: int) -> float:
    """A secret's value as the mean of its per-record variable (a count becomes a share)."""
    return value if statistic.is_mean else value / n


def check_secret_range(secret: Secret, values: Sequence[float], n: int, bounds: Any) -> None:
    """Shares in [0, 1], counts in [0, n], means inside the variable's ``bounds`` if known."""
    stat = secret.statistic
    for value in values:
        per_record = secret_per_record(stat, value, n)
        lo, hi = (0.0, 1.0) if stat.is_indicator else (bounds or (-math.inf, math.inf))
        if not lo <= per_record <= hi:
            where = f"[{lo * (1 if stat.is_mean else n):g}, {hi * (1 if stat.is_mean else n):g}]"
            raise InputError(
                f"secret {stat} value {value:g} is outside the model's support {where}"
            )


def resolve_category(schema: Schema, statistic: Statistic) -> Hashable:
    """The domain value an indicator statistic names (matched as text for integer domains)."""
    domain = schema.domain(statistic.column)
    if isinstance(domain, Numeric):
        raise InputError(
            f"statistic {statistic}: column {statistic.column!r} is continuous; "
            f"use mean({statistic.column}) or sum({statistic.column})"
        )
    categories = domain.categories
    for category in categories:
        if category == statistic.value or str(category) == str(statistic.value):
            return category
    raise InputError(
        f"statistic {statistic}: {statistic.value!r} is not in the domain of column "
        f"{statistic.column!r} ({domain.describe()})"
    )


def check_statistic(schema: Schema, statistic: Statistic) -> None:
    """The column exists, has a suitable domain, and may not be missing."""
    column = schema[statistic.column]
    domain = schema.domain(statistic.column)
    if statistic.is_indicator:
        resolve_category(schema, statistic)
    elif isinstance(domain, Categorical):
        raise InputError(
            f"statistic {statistic}: column {statistic.column!r} is categorical; use "
            f"share({statistic.column}=value) or count({statistic.column}=value)"
        )
    if column.nullable:
        raise InputError(
            f"statistic {statistic}: column {statistic.column!r} may have missing values "
            "(nullable in the schema); the mechanism needs complete columns"
        )


def design_matrix(reference: Any, schema: Schema, statistics: Sequence[Statistic]) -> Array:
    """Per-record variables of ``statistics`` (rows x vars), validated; missing values refused."""
    if not isinstance(reference, pd.DataFrame):
        raise InputError(f"reference data must be a pandas DataFrame, got {type(reference)}")
    columns = []
    for stat in statistics:
        column = schema[stat.column]  # names the column and the schema's columns if absent
        if stat.column not in reference.columns:
            raise InputError(f"reference data has no column {stat.column!r}")
        column.validate(reference[stat.column])
        if reference[stat.column].isna().any():
            raise InputError(f"reference column {stat.column!r} has missing values")
        if stat.is_indicator:
            category = resolve_category(schema, stat)
            columns.append((reference[stat.column] == category).to_numpy(dtype=np.float64))
        elif isinstance(schema.domain(stat.column), Categorical):
            raise InputError(f"statistic {stat}: column {stat.column!r} is categorical")
        else:
            columns.append(reference[stat.column].to_numpy(dtype=np.float64))
    return np.column_stack(columns) if columns else np.empty((len(reference), 0))


def variable_bounds(schema: Schema, statistic: Statistic) -> tuple[float, float]:
    """The public range of a per-record variable: [0, 1] for an indicator, else the domain's."""
    if statistic.is_indicator:
        return 0.0, 1.0
    domain = schema.domain(statistic.column)
    if isinstance(domain, Categorical):
        raise InputError(f"statistic {statistic}: column {statistic.column!r} is categorical")
    return float(domain.lower), float(domain.upper)


def check_schema(schema: Schema, query: Query, secrets: Sequence[Secret], n: int) -> None:
    """Every statistic and secret names a suitable schema column; secrets are in its domain."""
    if not isinstance(schema, Schema):
        raise InputError(f"schema must be an attrpriv Schema, got {type(schema).__name__}")
    for stat in query.statistics:
        check_statistic(schema, stat)
    for secret in secrets:
        _check_secret_schema(schema, secret, n)


def evaluate(data: Any, schema: Schema, query: Query, secrets: Sequence[Secret], n: int) -> Array:
    """F on the data (no noise); checks columns, domains, completeness and the size n."""
    check_schema(schema, query, secrets, n)
    with aggregator_for(data, schema) as agg:
        rows = agg.n_rows()
        if rows != n:
            raise InputError(f"data has {rows} rows; the model describes datasets of n={n}")
        return np.array([_statistic_value(agg, schema, s, n) for s in query.statistics])


def _check_secret_schema(schema: Schema, secret: Secret, n: int) -> None:
    """The secret's column is in the schema and its values lie in the public domain."""
    stat = secret.statistic
    bounds = None
    if stat.is_indicator:
        resolve_category(schema, stat)
    else:
        bounds = variable_bounds(schema, stat)
    check_secret_range(secret, secret.candidate_values(), n, bounds)


def _statistic_value(agg: Aggregator, schema: Schema, stat: Statistic, n: int) -> float:
    """One statistic on the data; a column with missing values is refused."""
    if stat.is_indicator:
        counts = agg.counts(stat.column)
        present = int(counts.sum())
        value = float(counts.iloc[list(counts.index).index(resolve_category(schema, stat))])
    else:
        lower, upper = variable_bounds(schema, stat)
        edges = [lower, upper] if upper > lower else [lower - 0.5, upper + 0.5]
        present = int(agg.histogram(stat.column, edges).sum())
        value = float(agg.mean([stat.column]).iloc[0]) * (1 if stat.is_mean else n)
        return _complete(stat, present, n, value)
    return _complete(stat, present, n, value / n if stat.is_mean else value)


def _complete(stat: Statistic, present: int, n: int, value: float) -> float:
    if present != n:
        raise InputError(
            f"statistic {stat}: column {stat.column!r} has {n - present} missing values"
        )
    if not math.isfinite(value):
        raise InputError(f"statistic {stat}: the value on the data is not finite")
    return value


__all__ = [
    "AGGREGATES",
    "Query",
    "Secret",
    "Statistic",
    "check_schema",
    "check_secret_range",
    "check_statistic",
    "design_matrix",
    "evaluate",
    "resolve_category",
    "secret_per_record",
    "variable_bounds",
]
