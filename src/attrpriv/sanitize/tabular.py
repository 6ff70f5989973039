"""Tabular data <-> tensors for the decoupler, built from the schema's public domains.

Numeric and integer columns are scaled to [0, 1] with their *public* bounds (Gaussian head,
squared error); categorical columns are one-hot (softmax head, cross-entropy), with one extra
slot for missing values when the column is nullable. Nothing is read off the data but the values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import torch
from torch.nn import functional

from attrpriv.data.schema import Categorical, Column, Integer, Role, Schema
from attrpriv.errors import InputError, offending


@dataclass(frozen=True)
class Block:
    """Where one column lives in the encoded row: kind, slice start and width."""

    name: str
    kind: str  # "numeric" | "categorical"
    start: int
    width: int


def modelled_columns(schema: Schema, exclude: tuple[str, ...]) -> tuple[str, ...]:
    """Columns the decoupler models: those with a public domain, not ignored, not excluded."""
    return tuple(
        c.name
        for c in schema.columns
        if c.domain is not None and c.role is not Role.IGNORE and c.name not in exclude
    )


class TabularCodec:
    """Encodes a DataFrame to a float matrix and decodes network outputs back to the schema."""

    def __init__(self, schema: Schema, columns: tuple[str, ...]) -> None:
        if not columns:
            raise InputError("schema has no column with a public domain for the decoupler to model")
        self.schema = schema.select(columns)
        self.columns = columns
        blocks, start = [], 0
        for name in columns:
            col = self.schema[name]
            width = _width(col)
            kind = "categorical" if isinstance(col.domain, Categorical) else "numeric"
            blocks.append(Block(name, kind, start, width))
            start += width
        self.blocks = tuple(blocks)
        self.dim = start

    def encode(self, frame: pd.DataFrame) -> np.ndarray:
        """Float32 matrix (n, dim); raises :class:`InputError` on missing or non-finite values."""
        missing = [c for c in self.columns if c not in frame.columns]
        if missing:
            raise InputError(f"data lacks column(s) {missing} that the decoupler models")
        out = np.zeros((len(frame), self.dim), dtype=np.float32)
        for block in self.blocks:
            series = frame[block.name]
            if block.kind == "numeric":
                out[:, block.start] = self._scale(block.name, series)
            else:
                out[:, block.start : block.start + block.width] = self._one_hot(block.name, series)
        return out

    def _scale(self, name: str, series: pd.Series) -> np.ndarray:
        values = pd.to_numeric(series, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
        if not np.all(np.isfinite(values)):
            raise InputError(f"column {name!r} has missing or non-finite values; expected numbers")
        lo, hi = _bounds(self.schema[name])
        return np.clip((values - lo) / (hi - lo), 0.0, 1.0)

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
        """Negative log-likelihood per row: 0.5 * squared error + cross-entropy per column."""
        total = torch.zeros(out.shape[0], dtype=out.dtype)
        for b in self.blocks:
            pred, true = out[:, b.start : b.start + b.width], target[:, b.start : b.start + b.width]
            if b.kind == "numeric":
                total = total + 0.5 * ((pred - true) ** 2).sum(-1) / 0.01
            else:
                total = total + functional.cross_entropy(pred, true.argmax(-1), reduction="none")
        return total

    def decode(self, out: np.ndarray) -> pd.DataFrame:
        """Network outputs -> DataFrame with the schema's columns, dtypes and domains."""
        data: dict[str, Any] = {}
        for b in self.blocks:
            col, block = self.schema[b.name], out[:, b.start : b.start + b.width]
            if b.kind == "numeric":
                lo, hi = _bounds(col)
                values = lo + np.clip(block[:, 0], 0.0, 1.0) * (hi - lo)
                data[b.name] = (
                    np.round(values).astype(np.int64) if isinstance(col.domain, Integer) else values
                )
            else:
                assert isinstance(col.domain, Categorical)
                cats = pd.Index(list(col.domain.categories))
                codes = block.argmax(-1).astype(np.int64)
                data[b.name] = pd.Categorical.from_codes(
                    np.where(codes >= len(cats), -1, codes), cats
                )
        return pd.DataFrame(data, columns=list(self.columns))


def _width(col: Column) -> int:
    if isinstance(col.domain, Categorical):
        return col.domain.size + (1 if col.nullable else 0)
    return 1


def _bounds(col: Column) -> tuple[float, float]:
    domain = col.domain
    assert domain is not None and not isinstance(domain, Categorical)
    return float(domain.lower), float(domain.upper)
