"""Public codes for the columns of a table: the cells the block resampler counts.

Codes come from public facts only (schema domains, bins from public rows or the schema's
range, a missing-value code); no private value chooses a cell.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from attrpriv.data.schema import Categorical, Integer, Numeric, Schema
from attrpriv.errors import InputError

EXACT_VALUES = 20
"""An integer column with at most this many values in its domain keeps one code per value."""


@dataclass(frozen=True, eq=False)  # holds arrays
class ColumnCode:
    """How one column's values map to codes ``0 .. size - 1`` (the last one: missing, if nullable).

    ``levels`` (one code per value) or ``edges`` (inner right-closed bin edges over
    [``lower``, ``upper``]); a bin's value is drawn from sorted ``public`` values, else uniformly.
    """

    name: str
    levels: tuple[Hashable, ...] | None
    edges: np.ndarray | None
    lower: float = 0.0
    upper: float = 0.0
    integer: bool = False
    public: np.ndarray | None = None
    nullable: bool = False

    @property
    def size(self) -> int:
        """How many codes, the missing one included."""
        return self.values + int(self.nullable)

    @property
    def values(self) -> int:
        """How many codes of values (levels or bins)."""
        if self.levels is not None:
            return len(self.levels)
        assert self.edges is not None
        return len(self.edges) + 1

    @property
    def missing(self) -> int:
        """The code of a missing value (-1 where none is allowed)."""
        return self.values if self.nullable else -1

    def encode(self, values: pd.Series, where: str) -> np.ndarray:
        """Each value's code; a value outside the public domain is refused (row named, value
        not shown)."""
        absent = np.asarray(values.isna())
        if self.levels is not None:
            codes = np.asarray(
                pd.Index(list(self.levels)).get_indexer(pd.Index(values.astype(object))),
                dtype=np.int64,
            )
        else:
            assert self.edges is not None
            number = pd.to_numeric(values, errors="coerce").to_numpy(dtype=np.float64)
            outside = ~absent & (np.isnan(number) | (number < self.lower) | (number > self.upper))
            codes = np.searchsorted(self.edges, number, side="left").astype(np.int64)
            codes[outside] = -1
        if absent.any() and not self.nullable:
            raise InputError(
                f"column {self.name!r} in {where} has a missing value at row "
                f"{int(np.flatnonzero(absent)[0])}, which its schema does not allow"
            )
        codes[absent] = self.missing
        bad = np.flatnonzero(codes < 0)
        if bad.size:
            raise InputError(
                f"column {self.name!r} in {where} has a value at row {int(bad[0])} outside its "
                f"public domain ({self._describe()})"
            )
        return codes

    def decode(self, codes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """A value for each code: the level, or a value inside the bin (a public value of that
        bin when there are any, else uniform over the bin); NaN for the missing code."""
        out = np.empty(codes.size, dtype=object)
        out[codes == self.missing] = np.nan
        if self.levels is not None:
            present = codes != self.missing
            levels = np.empty(len(self.levels), dtype=object)
            levels[:] = list(self.levels)
            out[present] = levels[codes[present]]
            return out
        assert self.edges is not None
        bounds = np.concatenate([[self.lower], self.edges, [self.upper]])
        for code in np.unique(codes[codes != self.missing]):
            rows = np.flatnonzero(codes == code)
            low, high = bounds[code], bounds[code + 1]
            pool = self._public_in(low, high, first=code == 0)
            if pool.size:
                out[rows] = rng.choice(pool, size=rows.size)
            elif self.integer:  # bins are right-closed: (low, high], the first [low, high]
                start = int(np.ceil(low)) if code == 0 else int(np.floor(low)) + 1
                end = max(start, int(np.floor(high)))
                out[rows] = rng.integers(start, end + 1, size=rows.size)
            else:
                out[rows] = rng.uniform(low, high, size=rows.size)
        return out

    def decode_seen(
        self,
        codes: np.ndarray,
        seen: np.ndarray,
        values: np.ndarray,
        groups: np.ndarray,
        rng: np.random.Generator,
    ) -> np.ndarray:
        """A value for each row's drawn ``codes[i]``, taken from another row ``j`` whose own
        value ``values[j]`` has that code (``seen[j]``), of the same ``groups`` value where one
        has it, else of any; :meth:`decode` where no other row has the code.

        For a binned column, the bin's values keep their law given the group (a target), which a
        uniform or public draw inside the bin loses. ``values`` must be outside the privacy unit.
        """
        out = self.decode(codes, rng)
        if self.edges is None:
            return out  # one code per value: the value is the code's
        values = np.asarray(values, dtype=object)
        for code in np.unique(codes[codes != self.missing]):
            of_code = seen == code
            for group in np.unique(groups[codes == code]):
                rows = np.flatnonzero((codes == code) & (groups == group))
                pool = np.flatnonzero(of_code & (groups == group))
                if pool.size < 2:
                    pool = np.flatnonzero(of_code)
                if pool.size < 2:
                    continue  # no other row to take it from
                out[rows] = values[_other_rows(pool, rows, rng)]
        return out

    def _public_in(self, low: float, high: float, *, first: bool) -> np.ndarray:
        if self.public is None:
            return np.empty(0)
        left = np.searchsorted(self.public, low, side="left" if first else "right")
        return self.public[left : np.searchsorted(self.public, high, side="right")]

    def _describe(self) -> str:
        if self.levels is not None:
            return f"{len(self.levels)} values"
        return f"[{self.lower:g}, {self.upper:g}]"


def _other_rows(pool: np.ndarray, rows: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """For each of ``rows``, a uniformly drawn member of the sorted ``pool`` other than itself
    (``pool`` has at least two members)."""
    position = np.searchsorted(pool, rows)
    inside = (position < pool.size) & (pool[np.minimum(position, pool.size - 1)] == rows)
    pick = rng.integers(0, pool.size - inside.astype(np.int64))
    pick += inside & (pick >= position)  # skip the row's own place
    picked: np.ndarray = pool[pick]
    return picked


def column_code(name: str, schema: Schema, public: pd.DataFrame | None, bins: int) -> ColumnCode:
    """The public code of column ``name`` from ``schema`` (``bins`` from ``public`` quantiles)."""
    if name not in schema:
        raise InputError(f"the schema has no column {name!r}: its public domain is needed")
    domain = schema.domain(name)
    nullable = schema[name].nullable
    if isinstance(domain, Categorical):
        return ColumnCode(name, tuple(domain.categories), None, nullable=nullable)
    if isinstance(domain, Integer) and domain.size <= EXACT_VALUES:
        return ColumnCode(name, tuple(domain.categories), None, nullable=nullable)
    if not isinstance(domain, (Integer, Numeric)):
        raise InputError(f"column {name!r} has no public domain in the schema (needed to count it)")
    lower, upper = float(domain.lower), float(domain.upper)
    values = None
    if public is not None and name in public.columns:
        found = pd.to_numeric(public[name], errors="coerce").to_numpy(dtype=np.float64)
        found = found[~np.isnan(found) & (found >= lower) & (found <= upper)]
        values = np.sort(found) if found.size else None
    if values is not None:
        inner = np.unique(np.quantile(values, np.linspace(0, 1, bins + 1)[1:-1]))
        inner = inner[(inner >= lower) & (inner < upper)]
    else:
        inner = np.linspace(lower, upper, bins + 1)[1:-1]
    return ColumnCode(name, None, inner, lower, upper, isinstance(domain, Integer), values,
                      nullable)  # fmt: skip


def codebook(
    names: tuple[str, ...], schema: Schema, public: pd.DataFrame | None, bins: int
) -> Mapping[str, ColumnCode]:
    """:func:`column_code` of each of ``names``."""
    return {name: column_code(name, schema, public, bins) for name in names}


__all__ = ["EXACT_VALUES", "ColumnCode", "codebook", "column_code"]


def typed_values(
    values: np.ndarray, schema: Schema, name: str, index: pd.Index | None = None
) -> pd.Series:
    """Drawn values as a column of the type the schema's domain says (public): a categorical
    column's values as they are, a numeric one as int64 / float64 (Int64 / Float64 with missing
    values)."""
    series = pd.Series(values, index=index, dtype=object, name=name)
    domain = schema.domain(name)
    if isinstance(domain, Categorical):
        return series.infer_objects()
    if series.isna().any():
        return series.astype("Int64" if isinstance(domain, Integer) else "Float64")
    return series.astype(np.int64 if isinstance(domain, Integer) else np.float64)
