"""Aggregation with DuckDB: SQL over a CSV or Parquet file, never loaded into pandas.

The file path is a bound parameter and column names are quoted, so neither can inject SQL."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal, TypeVar

import duckdb
import numpy as np
import pandas as pd

from attrpriv.data.aggregate.base import Aggregator, BinStats, Groups, centred_comoment
from attrpriv.data.read import PARQUET_SUFFIXES
from attrpriv.data.schema import Categorical, Column, Integer, Numeric, Schema
from attrpriv.errors import InputError, SchemaError

T = TypeVar("T")

CSV_SUFFIXES = (".csv", ".csv.gz")
_FLOAT_TYPES = ("DOUBLE", "FLOAT", "REAL")
_NUMERIC_TYPES = (
    *_FLOAT_TYPES, "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "HUGEINT", "UTINYINT",
    "USMALLINT", "UINTEGER", "UBIGINT", "UHUGEINT", "DECIMAL",
)  # fmt: skip

Strategy = Literal["grouping_sets", "union_all", "per_column"]
ALL_COUNTS_STRATEGY: Strategy = "grouping_sets"
"""How :meth:`DuckDBAggregator.all_counts` counts many columns: GROUPING SETS is one scan, and
measured fastest on CSV by far and on a par on Parquet (see docs/benchmarks.md)."""
COLUMNS_PER_SCAN = 32
""":meth:`DuckDBAggregator.all_counts` counts at most this many columns per query. On 500
columns of 100,000 rows, one GROUPING SETS query peaked at 1.5 GiB (Parquet, 5.3 s CPU) and
2.8 GiB (CSV, 15 s); in batches of 32, at 0.4 GiB (Parquet, 2.3 s) and 0.5 GiB (CSV, 30 s)."""
CENTRE_ROWS = 10_000
"""Rows whose means shift the data before the one-pass covariance sums."""


def quote(name: str) -> str:
    """A SQL identifier for ``name``, safe whatever characters it holds."""
    return '"' + name.replace('"', '""') + '"'


def literal(text: str) -> str:
    """A SQL string literal for ``text``."""
    return "'" + text.replace("'", "''") + "'"


def file_format(source: str | Path) -> Literal["parquet", "csv"]:
    """``"parquet"`` or ``"csv"`` from the file name; :class:`InputError` for anything else."""
    name = str(source).lower()
    if name.endswith(PARQUET_SUFFIXES):
        return "parquet"
    if name.endswith(CSV_SUFFIXES):
        return "csv"
    suffixes = [*PARQUET_SUFFIXES, *CSV_SUFFIXES]
    raise InputError(f"data file {str(source)!r} must end in one of {suffixes}")


def _object_array(values: Sequence[Any]) -> np.ndarray:
    out = np.empty(len(values), dtype=object)
    out[:] = list(values)
    return out


def _bin_case(x: str, lo: int, hi: int) -> str:
    """SQL for the bin of ``x`` among bins lo..hi (x known to lie in them): a binary search."""
    if lo == hi:
        return str(lo)
    mid = (lo + hi + 1) // 2
    below, above = _bin_case(x, lo, mid - 1), _bin_case(x, mid, hi)
    return f"CASE WHEN {x} < $e{mid} THEN {below} ELSE {above} END"


class DuckDBAggregator(Aggregator):
    """Aggregates of a CSV (``.csv``, ``.csv.gz``) or Parquet (``.parquet``, ``.pq``) file.

    In-process DuckDB, released by :meth:`close`; floating-point ``NaN`` counts as missing.
    """

    def __init__(self, source: str | Path, schema: Schema) -> None:
        super().__init__(schema)
        if not isinstance(source, (str, Path)):
            raise InputError(f"source must be a file path, got {type(source).__name__}")
        self._format = file_format(source)
        self._path = str(Path(source).expanduser())
        if not Path(self._path).is_file():
            raise InputError(f"data file {self._path!r} does not exist")
        self._con: duckdb.DuckDBPyConnection | None = duckdb.connect()
        try:
            # Parquet min/max statistics exclude NaN; DuckDB's statistics propagation trusts
            # them and folds ``isnan(x)`` to false, so NaN would escape being read as missing.
            self._con.execute("SET disabled_optimizers = 'statistics_propagation'")
            self._types = self._describe(self._reader({}))
            self._require_present(list(self._types))
            self._types = self._describe(self._reader(self._csv_types()))
            self._source = self._source_sql()
        except BaseException:
            self.close()
            raise

    # -- SQL plumbing ------------------------------------------------------------------------
    def _csv_types(self) -> dict[str, str]:
        """CSV column types the schema fixes: DOUBLE for numbers, VARCHAR for text categories."""
        if self._format != "csv":
            return {}
        types = {}
        for col in self.schema.columns:
            if isinstance(col.domain, (Numeric, Integer)):
                types[col.name] = "DOUBLE"
            elif isinstance(col.domain, Categorical) and all(
                isinstance(c, str) for c in col.domain.categories
            ):
                types[col.name] = "VARCHAR"
        return types

    def _reader(self, types: dict[str, str]) -> str:
        if self._format == "parquet":
            return "read_parquet($path)"
        if not types:
            return "read_csv($path)"
        spec = ", ".join(f"{literal(name)}: {literal(kind)}" for name, kind in types.items())
        return f"read_csv($path, types = {{{spec}}})"

    def _describe(self, reader: str) -> dict[str, str]:
        rows = self._query(f"DESCRIBE SELECT * FROM {reader}")
        return {str(row[0]): str(row[1]) for row in rows}

    def _source_sql(self) -> str:
        """A subquery of the schema's columns, with floating-point NaN turned into NULL."""
        parts = []
        for col in self.schema.columns:
            if col.name not in self._types:
                continue
            q = quote(col.name)
            is_float = self._types[col.name] in _FLOAT_TYPES
            parts.append(f"CASE WHEN isnan({q}) THEN NULL ELSE {q} END AS {q}" if is_float else q)
        reader = self._reader(self._csv_types())
        return f"(SELECT {', '.join(parts)} FROM {reader}) AS src"

    def _query(self, sql: str, params: dict[str, Any] | None = None) -> list[tuple[Any, ...]]:
        return self._run(sql, lambda con: con.fetchall(), params)

    def _run(
        self,
        sql: str,
        fetch: Callable[[duckdb.DuckDBPyConnection], T],
        params: dict[str, Any] | None = None,
    ) -> T:
        """Execute ``sql`` and ``fetch`` its result; a DuckDB error is one clear line."""
        if self._con is None:
            raise InputError("this DuckDBAggregator is closed")
        try:
            return fetch(self._con.execute(sql, {"path": self._path, **(params or {})}))
        except duckdb.Error as exc:
            names = [col.name for col in self.schema.columns]
            raise _read_error(exc, self._path, names) from None

    def _number(self, column: str) -> str:
        """``column`` as a DOUBLE expression; :class:`SchemaError` if its type is not numeric."""
        kind = self._types[column]
        if not kind.startswith(_NUMERIC_TYPES):
            raise SchemaError(f"column {column!r} must be numeric for its domain, got type {kind}")
        return f"CAST({quote(column)} AS DOUBLE)"

    # -- primitives ----------------------------------------------------------------------------
    def close(self) -> None:
        """Close the DuckDB connection (idempotent)."""
        if self._con is not None:
            self._con.close()
            self._con = None

    def _n_rows(self) -> int:
        return int(self._query(f"SELECT count(*) FROM {self._source}")[0][0])

    def _group_counts(self, columns: Sequence[str]) -> Groups:
        keys = ", ".join(quote(c) for c in columns)
        present = " AND ".join(f"{quote(c)} IS NOT NULL" for c in columns)
        sql = f"SELECT {keys}, count(*) FROM {self._source} WHERE {present} GROUP BY ALL"
        rows = self._query(sql)
        width = len(columns)
        if not rows:
            return Groups.empty(width)
        keyed = tuple(_object_array([row[i] for row in rows]) for i in range(width))
        return Groups(keyed, np.array([row[width] for row in rows], dtype=np.int64))

    def _all_group_counts(self, columns: Sequence[str]) -> dict[str, Groups]:
        found: dict[str, Groups] = {}
        for start in range(0, len(columns), COLUMNS_PER_SCAN):  # bounded memory per query
            batch = columns[start : start + COLUMNS_PER_SCAN]
            found.update(self._all_group_counts_by(batch, ALL_COUNTS_STRATEGY))
        return found

    def _all_group_counts_by(self, columns: Sequence[str], strategy: Strategy) -> dict[str, Groups]:
        """One-way counts of many columns: one query (GROUPING SETS or UNION ALL) or one each."""
        if strategy == "per_column":
            return {name: self._group_counts([name]) for name in columns}
        if strategy == "grouping_sets":
            sql = self._grouping_sets_sql(columns)
        else:
            sql = self._union_all_sql(columns)
        found: list[list[tuple[Any, int]]] = [[] for _ in columns]
        # GROUPING SETS keeps the group of missing values (key None): it counts them for free
        missing: list[int | None] = [0 if strategy == "grouping_sets" else None for _ in columns]
        for set_id, count, *values in self._query(sql):
            if values[set_id] is not None:
                found[set_id].append((values[set_id], count))
            elif strategy == "grouping_sets":
                missing[set_id] = int(count)
        return {
            name: Groups(
                (_object_array([v for v, _ in pairs]),),
                np.array([n for _, n in pairs], np.int64),
                missing[i],
            )
            for i, (name, pairs) in enumerate(zip(columns, found, strict=True))
        }

    def _grouping_sets_sql(self, columns: Sequence[str]) -> str:
        quoted = [quote(c) for c in columns]
        set_id = " ".join(f"WHEN grouping({q}) = 0 THEN {i}" for i, q in enumerate(quoted))
        sets = ", ".join(f"({q})" for q in quoted)
        return (
            f"SELECT CASE {set_id} END, count(*), {', '.join(quoted)} FROM {self._source} "
            f"GROUP BY GROUPING SETS ({sets})"
        )

    def _union_all_sql(self, columns: Sequence[str]) -> str:
        branches = " UNION ALL BY NAME ".join(
            f"(SELECT {i} AS __set, count(*) AS __n, {quote(c)} AS __v{i} FROM {self._source} "
            f"WHERE {quote(c)} IS NOT NULL GROUP BY ALL)"
            for i, c in enumerate(columns)
        )
        values = ", ".join(f"__v{i}" for i in range(len(columns)))
        return f"SELECT __set, __n, {values} FROM ({branches})"

    def _bin_stats(self, column: str, edges: np.ndarray) -> BinStats:
        bins = len(edges) - 1
        params = {f"e{i}": float(e) for i, e in enumerate(edges)}
        code = _bin_case("x", 0, bins - 1)
        outside = f"x < $e0 OR x > $e{bins}"
        rows = self._query(
            f"SELECT CASE WHEN {outside} THEN NULL ELSE {code} END AS bin, count(*), min(x), "
            f"max(x) FROM (SELECT {self._number(column)} AS x FROM {self._source}) "
            "WHERE x IS NOT NULL GROUP BY bin",
            params,
        )
        counts = np.zeros(bins, dtype=np.int64)
        for code_value, count, _, _ in rows:
            if code_value is not None:
                counts[int(code_value)] += int(count)
        if not rows:
            return BinStats(counts, np.inf, -np.inf)
        return BinStats(counts, min(r[2] for r in rows), max(r[3] for r in rows))

    def _means(self, columns: Sequence[str]) -> np.ndarray:
        aggregates = ", ".join(f"avg({self._number(c)})" for c in columns)
        row = self._query(f"SELECT {aggregates} FROM {self._source}")[0]
        return np.array([np.nan if v is None else v for v in row], dtype=np.float64)

    def _comoments(self, columns: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """One scan grouped by missingness pattern: counts, sums and cross-products (shifted)."""
        k = len(columns)
        centre = self._provisional_centre(columns)
        ys = [f"({self._number(c)} - $s{i})" for i, c in enumerate(columns)]
        upper = np.triu_indices(k)
        aggregates = ["count(*)", *(f"sum({y})" for y in ys)]
        aggregates += [f"sum({ys[i]} * {ys[j]})" for i, j in zip(*upper, strict=True)]
        params = {f"s{i}": float(c) for i, c in enumerate(centre)}
        sql = f"SELECT {_pattern_key(ys)}, {', '.join(aggregates)} FROM {self._source} GROUP BY ALL"
        n, sums, products = np.zeros((k, k)), np.zeros((k, k)), np.zeros((k, k))
        for key, count, *values in self._query(sql, params):
            present = _present(key, k)
            totals = np.array([v or 0.0 for v in values], dtype=np.float64)
            n += np.outer(present, present) * count
            sums += np.outer(totals[:k], present)
            products[upper] += totals[k:]
        products = np.triu(products) + np.triu(products, 1).T
        return n, centred_comoment(n, sums, products)

    def _sample_rows(self, columns: Sequence[str], n: int, seed: int | None) -> pd.DataFrame:
        """A reservoir sample read by DuckDB without loading the file; values as the domain's."""
        names = ", ".join(quote(c) for c in columns)
        repeat = "" if seed is None else f" REPEATABLE ({int(seed)})"
        sql = f"SELECT {names} FROM {self._source} USING SAMPLE reservoir({int(n)} ROWS){repeat}"
        frame = self._run(sql, lambda con: con.df())
        return pd.DataFrame({c: _as_domain(frame[c], self.schema[c]) for c in columns})

    def _provisional_centre(self, columns: Sequence[str]) -> np.ndarray:
        """Means over the first rows (cheap: the scan stops there), else the domain midpoints."""
        means = ", ".join(f"avg({quote(c)})" for c in columns)
        picked = ", ".join(f"{self._number(c)} AS {quote(c)}" for c in columns)
        sql = f"SELECT {means} FROM (SELECT {picked} FROM {self._source} LIMIT {CENTRE_ROWS})"
        row = self._query(sql)[0]
        centre = []
        for name, value in zip(columns, row, strict=True):
            domain = self._numeric_domain(name, "covariance")
            centre.append((domain.lower + domain.upper) / 2 if value is None else value)
        return np.array(centre, dtype=np.float64)


def _read_error(exc: duckdb.Error, path: str, columns: Sequence[str]) -> InputError:
    """DuckDB's error as one line; a value that does not convert names its column and line only."""
    text = str(exc)
    if isinstance(exc, duckdb.ConversionException):
        for name in columns:
            if f'Error when converting column "{name}". Could not convert' not in text:
                continue
            line = re.search(r"CSV Error on Line: (\d+)", text)
            where = f"line {line[1]} of {path!r}" if line else repr(path)
            kind = re.search(rf"Column {re.escape(name)} is being converted as type (\w+)", text)
            what = (
                "is not a number"
                if kind is None or kind[1].startswith(_NUMERIC_TYPES)
                else f"cannot be read as {kind[1]}"
            )
            return SchemaError(f"column {name!r} has a value that {what} ({where})")
    first = text.strip().splitlines()[0] if text.strip() else type(exc).__name__
    return InputError(f"DuckDB could not read {path!r}: {first}")


def _pattern_key(values: Sequence[str]) -> str:
    """SQL for which of ``values`` are NULL: a bit mask (up to 62 columns) or a list."""
    if len(values) <= 62:
        return " + ".join(f"({v} IS NULL)::BIGINT * {1 << i}" for i, v in enumerate(values))
    return "[" + ", ".join(f"{v} IS NULL" for v in values) + "]"


def _present(key: int | list[bool], width: int) -> np.ndarray:
    """Decode :func:`_pattern_key`: which columns are present (float 0/1)."""
    missing = [bool(key >> i & 1) for i in range(width)] if isinstance(key, int) else key
    return np.array([0.0 if m else 1.0 for m in missing])


def _as_domain(values: pd.Series, column: Column) -> pd.Series:
    """Sampled values as those of the column's domain (``1`` read for ``'1'`` mapped back)."""
    domain = column.domain
    if not isinstance(domain, Categorical):
        return values
    lookup = {str(c): c for c in domain.categories}
    return values.map(lambda v: v if v is None or v is pd.NA else lookup.get(str(v), v))
