"""Tabular data <-> tensors for the decoupler, built from the schema's public domains.

Numbers scaled by public bounds (with a missingness slot when nullable), categories one-hot;
only ``fill`` (medians, modes) is read off the auxiliary data.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import torch
from torch.nn import functional

from attrpriv.data.schema import Categorical, Column, Integer, Role, Schema
from attrpriv.errors import InputError, offending, plain
from attrpriv.sanitize._draw import draw_categories


@dataclass(frozen=True)
class Block:
    """Where one column lives in the encoded row: kind, slice start and width."""

    name: str
    kind: str  # "numeric" | "categorical"
    start: int
    width: int
    missing: bool = False


def modelled_columns(schema: Schema, exclude: tuple[str, ...]) -> tuple[str, ...]:
    """Columns the decoupler models: those with a public domain, not ignored, not excluded."""
    return tuple(
        c.name
        for c in schema.columns
        if c.domain is not None and c.role is not Role.IGNORE and c.name not in exclude
    )


class TabularCodec:
    """Encodes a DataFrame to a float matrix and decodes network outputs back to the schema."""

    def __init__(
        self, schema: Schema, columns: tuple[str, ...], fill: Mapping[str, Any] | None = None
    ) -> None:
        if not columns:
            raise InputError("schema has no column with a public domain for the decoupler to model")
        self.schema = schema.select(columns)
        self.columns = columns
        blocks, start = [], 0
        for name in columns:
            col = self.schema[name]
            width = _width(col)
            kind = "categorical" if isinstance(col.domain, Categorical) else "numeric"
            blocks.append(Block(name, kind, start, width, kind == "numeric" and col.nullable))
            start += width
        self.blocks = tuple(blocks)
        self.dim = start
        given = dict(fill or {})
        unknown = sorted(set(given) - set(columns))
        if unknown:
            raise InputError(f"fill names column(s) {unknown} that the codec does not model")
        self.fill: dict[str, Any] = {n: given.get(n, _domain_fill(self.schema[n])) for n in columns}

    # ----------------------------------------------------------------- fitting
    def learn(self, frame: pd.DataFrame) -> TabularCodec:
        """A codec like this one with ``fill`` (median or mode) read off ``frame``."""
        fill: dict[str, Any] = {}
        for name in self.columns:
            col, series = self.schema[name], frame[name]
            if isinstance(col.domain, Categorical):
                cats = list(col.domain.categories)
                counts = pd.Categorical(series, categories=cats).value_counts().to_numpy()
                fill[name] = plain(cats[int(np.argmax(counts))] if counts.sum() else cats[0])
                continue
            values = pd.to_numeric(series, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
            values = values[np.isfinite(values)]
            if len(values) == 0:
                fill[name] = _domain_fill(col)
                continue
            median = float(np.median(values))
            fill[name] = round(median) if isinstance(col.domain, Integer) else median
        return TabularCodec(self.schema, self.columns, fill)

    def conform(self, frame: pd.DataFrame) -> tuple[pd.DataFrame, dict[str, int]]:
        """(``frame`` with values brought into their domains, changed counts per column)."""
        changed: dict[str, pd.Series] = {}
        counts: dict[str, int] = {}
        for name in self.columns:
            if name not in frame.columns:
                continue
            col, series = self.schema[name], frame[name]
            domain = col.domain
            assert domain is not None
            if isinstance(domain, Categorical):
                bad = domain.outside(series)
                if bad.any():
                    fixed = series.astype(object).copy()
                    fixed[bad] = self.fill[name]
                    changed[name] = fixed
            elif pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_bool_dtype(series):
                bad = domain.outside(series)
                if bad.any():
                    numbers = series.to_numpy(dtype=float, na_value=np.nan)
                    clipped = np.clip(numbers, domain.lower, domain.upper)
                    if isinstance(domain, Integer):
                        clipped = np.round(clipped)
                    changed[name] = pd.Series(
                        np.where(bad, clipped, numbers), index=series.index, name=name
                    )
            else:
                continue
            if name in changed:
                counts[name] = int(bad.sum())
        if not changed:
            return frame, {}
        out = frame.copy()
        for name, series in changed.items():
            out[name] = series
        return out, counts

    # ----------------------------------------------------------------- encoding
    def encode(self, frame: pd.DataFrame) -> np.ndarray:
        """Float32 matrix (n, dim); raises :class:`InputError` on missing or non-finite values
        (missing values are fine in nullable columns)."""
        missing = [c for c in self.columns if c not in frame.columns]
        if missing:
            raise InputError(f"data lacks column(s) {missing} that the decoupler models")
        out = np.zeros((len(frame), self.dim), dtype=np.float32)
        for block in self.blocks:
            series = frame[block.name]
            if block.kind == "numeric":
                scaled, absent = self._scale(block.name, series)
                out[:, block.start] = scaled
                if block.missing:
                    out[:, block.start + 1] = absent
            else:
                out[:, block.start : block.start + block.width] = self._one_hot(block.name, series)
        return out

    def _scale(self, name: str, series: pd.Series) -> tuple[np.ndarray, np.ndarray]:
        """Values scaled to [0, 1] (missing ones imputed with ``fill``) and the missing mask."""
        col = self.schema[name]
        values = pd.to_numeric(series, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
        absent = np.isnan(values)
        if col.nullable:
            if np.isinf(values).any():
                raise InputError(f"column {name!r} has non-finite values; expected numbers")
            values = np.where(absent, float(self.fill[name]), values)
        elif not np.all(np.isfinite(values)):
            raise InputError(f"column {name!r} has missing or non-finite values; expected numbers")
        lo, hi = _bounds(col)
        return np.clip((values - lo) / (hi - lo), 0.0, 1.0), absent.astype(np.float32)

    def _one_hot(self, name: str, series: pd.Series) -> np.ndarray:
        col = self.schema[name]
        assert isinstance(col.domain, Categorical)
        cats = list(col.domain.categories)
        codes = pd.Categorical(series, categories=cats).codes.astype(int)
        unknown = series.notna().to_numpy() & (codes < 0)
        if unknown.any():
            raise InputError(
                f"column {name!r} has a value{offending(series[unknown].iloc[0])} outside its "
                "domain"
            )
        if (codes < 0).any() and not col.nullable:
            raise InputError(f"column {name!r} has missing values but is not nullable")
        codes = np.where(codes < 0, len(cats), codes)
        return np.asarray(np.eye(_width(col), dtype=np.float32)[codes])

    def reconstruction_loss(self, out: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        """Negative log-likelihood per row over the columns (missingness included)."""
        total = torch.zeros(out.shape[0], dtype=out.dtype)
        for b in self.blocks:
            pred, true = out[:, b.start : b.start + b.width], target[:, b.start : b.start + b.width]
            if b.kind == "numeric":
                error = 0.5 * (pred[:, 0] - true[:, 0]) ** 2 / 0.01
                if b.missing:
                    absent = true[:, 1]
                    error = error * (1.0 - absent) + functional.binary_cross_entropy_with_logits(
                        pred[:, 1], absent, reduction="none"
                    )
                total = total + error
            else:
                total = total + functional.cross_entropy(pred, true.argmax(-1), reduction="none")
        return total

    def decode(self, out: np.ndarray, rng: np.random.Generator | None = None) -> pd.DataFrame:
        """Network outputs -> DataFrame in the schema's domains; ``rng``: draw from the laws."""
        data: dict[str, Any] = {}
        for b in self.blocks:
            col, block = self.schema[b.name], out[:, b.start : b.start + b.width]
            if b.kind == "numeric":
                lo, hi = _bounds(col)
                values = lo + np.clip(block[:, 0], 0.0, 1.0) * (hi - lo)
                integer = isinstance(col.domain, Integer)
                if b.missing:
                    absent = (
                        block[:, 1] > 0.0
                        if rng is None
                        else rng.random(len(block)) < 1.0 / (1.0 + np.exp(-block[:, 1]))
                    )
                    if integer:
                        ints = pd.array(np.round(values).astype(np.int64), dtype="Int64")
                        ints[absent] = pd.NA
                        data[b.name] = ints
                    else:
                        data[b.name] = np.where(absent, np.nan, values)
                else:
                    data[b.name] = np.round(values).astype(np.int64) if integer else values
            else:
                assert isinstance(col.domain, Categorical)
                cats = pd.Index(list(col.domain.categories))
                if rng is None:
                    codes = block.argmax(-1).astype(np.int64)
                else:
                    codes = draw_categories(block, rng)
                data[b.name] = pd.Categorical.from_codes(
                    np.where(codes >= len(cats), -1, codes), cats
                )
        return pd.DataFrame(data, columns=list(self.columns))


def _width(col: Column) -> int:
    if isinstance(col.domain, Categorical):
        return col.domain.size + (1 if col.nullable else 0)
    return 2 if col.nullable else 1


def _bounds(col: Column) -> tuple[float, float]:
    domain = col.domain
    assert domain is not None and not isinstance(domain, Categorical)
    return float(domain.lower), float(domain.upper)


def _domain_fill(col: Column) -> Any:
    """A value of the public domain: the midpoint of a range, the first category."""
    domain = col.domain
    assert domain is not None
    if isinstance(domain, Categorical):
        return plain(domain.categories[0])
    middle = (float(domain.lower) + float(domain.upper)) / 2
    return round(middle) if isinstance(domain, Integer) else middle
