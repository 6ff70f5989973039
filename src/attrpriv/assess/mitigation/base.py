"""What every mitigation strategy shares: the protocol, the :class:`Applied` record, checks."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import pandas as pd

from attrpriv._checks import check_positive_int
from attrpriv._io import to_jsonable
from attrpriv.dp.mechanism import Parameters, validated
from attrpriv.errors import InputError

if TYPE_CHECKING:
    from attrpriv.dp.ledger import BudgetLedger


@dataclass(frozen=True)
class Applied:
    """What a strategy did to a feature set: its parameters and, for local DP, its epsilon."""

    name: str
    features: tuple[str, ...]
    params: Mapping[str, Any] = field(default_factory=dict)
    epsilon: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "features": list(self.features),
            "params": to_jsonable(dict(self.params)),
            "epsilon": self.epsilon,
        }


@dataclass(frozen=True, eq=False)  # holds frames
class Work:
    """What a strategy works on: a private copy of the frame, the features, the seed, the target
    (or ``None``) and the ledger to charge (or ``None``)."""

    X: pd.DataFrame
    features: tuple[str, ...]
    seed: int
    y: pd.Series | None
    ledger: BudgetLedger | None


Transformed = tuple[pd.DataFrame, dict[str, Any], float | None]
"""What a strategy's work gives: the new frame, the parameters used and the epsilon (local DP)."""


@runtime_checkable
class Mitigation(Protocol):
    """A way to reduce the risk of a feature set."""

    name: str

    def apply(
        self,
        X: pd.DataFrame,
        features: Sequence[str],
        *,
        seed: int = 0,
        y: pd.Series | None = None,
        ledger: BudgetLedger | None = None,
    ) -> pd.DataFrame:
        """A new frame with ``features`` mitigated; ``ledger`` charged before any noise."""
        ...


@runtime_checkable
class ModelMitigation(Protocol):
    """A way to reduce the risk of the whole model: a changed copy of the estimator."""

    name: str

    def apply_model(self, estimator: Any) -> Any:
        """A new estimator (the input is left unchanged)."""
        ...


class Strategy(Parameters, ABC):
    """Base class: checks the inputs, copies the frame, calls :meth:`_transform`, records it."""

    name: str = ""
    applied_: Applied | None = None

    @validated
    def apply(
        self,
        X: pd.DataFrame,
        features: Sequence[str],
        *,
        seed: int = 0,
        y: pd.Series | None = None,
        ledger: BudgetLedger | None = None,
    ) -> pd.DataFrame:
        """A new frame with ``features`` mitigated; sets ``applied_``, charges ``ledger`` first."""
        frame, names = check_inputs(X, features)
        seed = check_positive_int(seed, "seed", minimum=0)
        target = check_target(y, frame)
        work = Work(frame.copy(deep=True), names, seed, target, ledger)
        out, params, epsilon = self._transform(work)
        self.applied_ = Applied(self.name, names, params, epsilon)
        return out

    @abstractmethod
    def _transform(self, work: Work) -> Transformed:
        """Work on the private copy in ``work``: the frame, the parameters used, the epsilon."""


class Drop(Strategy):
    """Remove the feature set: the model is retrained on the remaining columns."""

    name = "drop"

    def _transform(self, work: Work) -> Transformed:
        if len(work.features) == work.X.shape[1]:
            raise InputError(f"dropping {list(work.features)} would leave no column")
        return work.X.drop(columns=list(work.features)), {}, None

    def __repr__(self) -> str:
        return "Drop()"


def check_frame(X: object) -> pd.DataFrame:
    """A pandas DataFrame with at least one row."""
    if not isinstance(X, pd.DataFrame):
        raise InputError(f"X must be a pandas DataFrame, got {type(X).__name__}")
    if X.shape[0] == 0:
        raise InputError("X has no rows")
    return X


def check_feature_names(features: object, X: pd.DataFrame) -> tuple[str, ...]:
    """Distinct columns of ``X``; a single name is accepted as a one-feature set."""
    names = [features] if isinstance(features, str) else features
    if not isinstance(names, Sequence) or not names:
        raise InputError(f"features must be a non-empty list of column names, got {features!r}")
    for name in names:
        if not isinstance(name, str) or name not in X.columns:
            shown = ", ".join(map(str, X.columns[:12])) + (" ..." if X.shape[1] > 12 else "")
            raise InputError(f"features: unknown column {name!r}; expected one of {shown}")
    return tuple(dict.fromkeys(names))


def check_inputs(X: object, features: object) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """``X`` checked by :func:`check_frame`, and ``features`` by :func:`check_feature_names`."""
    frame = check_frame(X)
    return frame, check_feature_names(features, frame)


def check_target(y: object, X: pd.DataFrame) -> pd.Series | None:
    """``None``, or a Series aligned with ``X`` (same length)."""
    if y is None:
        return None
    if not isinstance(y, pd.Series):
        raise InputError(f"y must be a pandas Series or None, got {type(y).__name__}")
    if len(y) != len(X):
        raise InputError(f"y must have one value per row of X ({len(X)}), got {len(y)}")
    return y


def is_numeric(values: pd.Series) -> bool:
    """Numbers (not booleans, not categories): binned, Laplace-noised, regressed."""
    return bool(pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values))


def with_values(original: pd.Series, values: Any, categories: Sequence[Any] | None = None) -> Any:
    """New values for a column, keeping a categorical dtype categorical (``categories`` first)."""
    if isinstance(original.dtype, pd.CategoricalDtype):
        known = list(categories) if categories is not None else list(original.cat.categories)
        seen = set(known)
        extra = [v for v in pd.unique(pd.Series(values).dropna()) if v not in seen]
        return pd.Categorical(values, categories=known + extra)
    return values
