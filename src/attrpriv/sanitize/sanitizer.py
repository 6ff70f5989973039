"""The Sanitizer pipeline: encode, replace z_S with a local sampler's draws, decode.

The decoupler (trained on public auxiliary data) is fixed; only the sampler touches the private
data's sensitive latents and labels, and the privacy record is the sampler's. The non-sensitive
latents z_NS pass through unchanged: the record's guarantee covers z_S and y_S only.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NoReturn, Protocol

import numpy as np
import pandas as pd

from attrpriv._display import html_pairs
from attrpriv._io import to_jsonable
from attrpriv.dp.ledger import BudgetLedger
from attrpriv.dp.record import PrivacyRecord
from attrpriv.errors import InputError
from attrpriv.sanitize.decoupler import GlobalDecoupler
from attrpriv.sanitize.samplers import SampledLatents


class LatentSampler(Protocol):
    """What a local sampler offers (Suppression, DPObfuscation, DPSampling)."""

    def sample(
        self, z_s: Any, y_s: Any, *, ledger: BudgetLedger | None = None, label: str = ""
    ) -> SampledLatents: ...


@dataclass(frozen=True)
class SanitizedData:
    """The sanitized data, the synthetic sensitive labels (DP-sampling) and the DP record."""

    data: pd.DataFrame | np.ndarray
    y_s: np.ndarray | None
    record: PrivacyRecord | None
    parts: dict[str, Any] = field(default_factory=dict)

    def _describe(self) -> tuple[str, str]:
        """(the data's shape in words, its guarantee in words)."""
        shape = np.shape(self.data)
        if isinstance(self.data, pd.DataFrame):
            size = f"{shape[0]} rows x {shape[1]} columns"
        else:
            size = f"{shape[0]} images of {' x '.join(str(d) for d in shape[1:])}"
        claim = "no DP claim (z_S suppressed)" if self.record is None else (
            f"{self.record.guarantee} on z_S and y_S")  # fmt: skip
        return size, claim

    def __repr__(self) -> str:
        size, claim = self._describe()
        labels = ", synthetic sensitive labels" if self.y_s is not None else ""
        return f"SanitizedData({size}{labels}; {claim})"

    def _repr_html_(self) -> str:
        size, claim = self._describe()
        pairs = [
            ("data", size),
            ("sensitive labels", "synthetic (drawn)" if self.y_s is not None else "none"),
            ("guarantee", claim),
            ("sampler", str(self.parts.get("sampler", "-"))),
        ]
        if self.record is not None:
            pairs.append(("protects", self.record.protects))
        return html_pairs("Sanitized data", pairs)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary (the data itself goes to a Parquet/NumPy file, not to JSON)."""
        shape = list(np.shape(self.data))
        columns = list(self.data.columns) if isinstance(self.data, pd.DataFrame) else None
        return {
            "shape": shape,
            "columns": columns,
            "synthetic_labels": self.y_s is not None,
            "record": None if self.record is None else self.record.to_dict(),
            "parts": to_jsonable(dict(self.parts)),
        }


def sensitive_labels(decoupler: Any, X: Any, y_s: Any) -> tuple[np.ndarray | None, str | None]:
    """The sensitive labels of ``X`` and the column they came from (None for given labels).

    ``y_s`` may be labels (one per row), a column name of ``X``, or None: then the decoupler's
    sensitive column when ``X`` is a DataFrame that has it, else no labels at all.
    """
    column = getattr(decoupler, "sensitive_column_", None)
    if isinstance(y_s, str):
        column = y_s
    if y_s is None or isinstance(y_s, str):
        if column is None or not isinstance(X, pd.DataFrame):
            return (None, None) if y_s is None else _missing(y_s)
        if column not in X.columns:
            return _missing(column)
        return np.asarray(X[column].astype(object)), column
    labels = np.asarray(y_s, dtype=object)
    if labels.ndim != 1 or len(labels) != len(X):
        raise InputError(f"y_s must have one label per row ({len(X)}), got shape {labels.shape}")
    return labels, None


def _missing(column: str) -> NoReturn:
    raise InputError(f"sensitive column {column!r} is not a column of the data")


class Sanitizer:
    """Decouple-and-sample: a fitted :class:`GlobalDecoupler` plus a local sampler."""

    def __init__(self, decoupler: GlobalDecoupler, sampler: LatentSampler) -> None:
        self.decoupler = decoupler
        self.sampler = sampler

    def sanitize(
        self, X: Any, y_s: Any = None, *, ledger: BudgetLedger | None = None, label: str = ""
    ) -> SanitizedData:
        """Sanitize private data ``X`` whose sensitive labels are ``y_s`` (or its column).

        Without ``y_s``, the decoupler's sensitive column of ``X`` is used. The ledger is charged
        by the sampler before any noise is drawn.
        """
        z_s, z_ns = self.decoupler.encode(X)  # first: data of another schema says so
        labels, column = sensitive_labels(self.decoupler, X, y_s)
        drawn = self.sampler.sample(z_s, labels, ledger=ledger, label=label)
        data = self.decoupler.decode(drawn.z_s, z_ns)
        if isinstance(data, pd.DataFrame) and column is not None and drawn.y_s is not None:
            data = self._with_labels(X, data, column, drawn.y_s)
        parts = {"rows": len(z_s), "sampler": type(self.sampler).__name__}
        if drawn.parts:
            parts["sampler_parts"] = {k: v for k, v in drawn.parts.items() if k != "means"}
        return SanitizedData(data, drawn.y_s, drawn.record, parts)

    @staticmethod
    def _with_labels(
        X: pd.DataFrame, data: pd.DataFrame, column: str, y: np.ndarray
    ) -> pd.DataFrame:
        """Put the synthetic labels in the sensitive column, keeping the input's column order."""
        out = data.copy()
        dtype = X[column].dtype
        out[column] = pd.Series(y, index=out.index).astype(dtype)
        order = [c for c in X.columns if c in out.columns]
        return out[order]
