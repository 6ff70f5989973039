"""Generalization: numbers to ranges, rare categories merged; no formal guarantee."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from attrpriv._checks import (
    Rule,
    check_choice,
    check_delta,
    check_finite_number,
    check_positive_int,
    integer,
    one_of,
)
from attrpriv.assess.mitigation.base import Strategy, Transformed, Work, is_numeric
from attrpriv.errors import InputError

BINNING_METHODS = ("quantile", "tree")
OTHER = "other"


class Generalize(Strategy):
    """Coarsen features: at most ``bins`` (>= 2) ranges per number, rare categories merged.

    ``method``: ``"quantile"`` edges, or ``"tree"`` edges from a tree on ``y`` (``min_share`` then
    also bounds a range's share).
    """

    name = "generalize"

    _constraints: ClassVar[Mapping[str, Rule]] = {
        "bins": integer(2),
        "method": one_of(BINNING_METHODS),
        "min_share": Rule("a number in [0, 1)", check_delta),
    }

    def __init__(self, bins: int = 5, method: str = "quantile", min_share: float = 0.05) -> None:
        self.bins = bins
        self.method = method
        self.min_share = min_share

    def __repr__(self) -> str:
        return (
            f"Generalize(bins={self.bins!r}, method={self.method!r}, min_share={self.min_share!r})"
        )

    def _transform(self, work: Work) -> Transformed:
        X, features, y = work.X, work.features, work.y
        bins = check_positive_int(self.bins, "bins", minimum=2)
        method = check_choice(self.method, "method", BINNING_METHODS)
        min_share = check_finite_number(self.min_share, "min_share")
        if not 0.0 <= min_share < 1.0:
            raise InputError(f"min_share must be in [0, 1), got {min_share}")
        if method == "tree" and y is None and any(is_numeric(X[f]) for f in features):
            raise InputError("Generalize(method='tree') needs the target: pass y=")
        categories: dict[str, list[str]] = {}
        for feature in features:
            column = X[feature]
            if is_numeric(column):
                edges = _edges(column, bins, method, min_share, y, work.seed)
                X[feature] = _to_ranges(column, edges)
            else:
                X[feature] = _merge_rare(column, min_share)
            categories[feature] = [str(c) for c in X[feature].cat.categories]
        params = {"bins": bins, "method": method, "min_share": min_share, "categories": categories}
        return X, params, None


def _edges(
    column: pd.Series,
    bins: int,
    method: str,
    min_share: float,
    y: pd.Series | None,
    seed: int,
) -> np.ndarray:
    """Sorted distinct edges from the column's minimum to its maximum."""
    values = column.to_numpy(dtype=float, na_value=np.nan)
    known = ~np.isnan(values)
    if not known.any():
        raise InputError(f"column {column.name!r} has no values to generalize")
    low, high = float(values[known].min()), float(values[known].max())
    if method == "quantile":
        # observed values as edges ("lower"), so that every range holds at least one value
        inner = np.quantile(values[known], np.linspace(0.0, 1.0, bins + 1)[1:-1], method="lower")
    else:
        assert y is not None  # checked by the caller
        inner = _tree_thresholds(values[known], y[known], bins, min_share, seed)
    return np.unique(np.concatenate([[low], inner, [high]]))


def _tree_thresholds(
    values: np.ndarray, y: pd.Series, bins: int, min_share: float, seed: int
) -> np.ndarray:
    """Split points of a tree with at most ``bins`` leaves predicting ``y`` from the column."""
    keep = np.asarray(y.notna())
    target = y[keep]
    leaf = max(1, math.ceil(min_share * int(keep.sum())))
    tree: DecisionTreeClassifier | DecisionTreeRegressor
    if is_numeric(target) and target.nunique() > 10:
        tree = DecisionTreeRegressor(max_leaf_nodes=bins, min_samples_leaf=leaf, random_state=seed)
        tree.fit(values[keep].reshape(-1, 1), target.to_numpy(dtype=float))
    else:
        tree = DecisionTreeClassifier(max_leaf_nodes=bins, min_samples_leaf=leaf, random_state=seed)
        tree.fit(values[keep].reshape(-1, 1), target.astype(str).to_numpy())
    split = tree.tree_.feature >= 0
    return np.sort(tree.tree_.threshold[split])


def _to_ranges(column: pd.Series, edges: np.ndarray) -> Any:
    """Ordered categorical of ranges ``(a, b]`` (the first closed), open-ended at both ends."""
    values = column.to_numpy(dtype=float, na_value=np.nan)
    integer = pd.api.types.is_integer_dtype(column) or bool(
        np.all(np.mod(values[~np.isnan(values)], 1) == 0)
    )
    labels = _labels(edges, integer)
    if len(edges) == 1:
        codes = np.where(np.isnan(values), -1, 0)
    else:
        codes = np.searchsorted(edges[1:-1], values, side="left")
        codes = np.where(np.isnan(values), -1, codes)
    return pd.Categorical.from_codes(codes.astype(np.int64), pd.Index(labels), ordered=True)


def _labels(edges: np.ndarray, integer: bool) -> list[str]:
    """One label per range, the outer ones open-ended; integer ranges list whole numbers."""
    if len(edges) == 1:
        return [_format(edges[0], integer, 6)]
    if len(edges) == 2:
        return ["all"]
    bounds = []
    for i in range(len(edges) - 1):
        low, high = float(edges[i]), float(edges[i + 1])
        if integer:
            low = low if i == 0 else math.floor(low) + 1.0
            high = float(math.floor(high))
        bounds.append((low, high))
    for digits in range(4, 18):
        inner = [_range_label(low, high, integer, digits) for low, high in bounds[1:-1]]
        first = f"<= {_format(bounds[0][1], integer, digits)}"
        # a float range (a, b] excludes a; an integer one starts at its first whole number
        last = (">= " if integer else "> ") + _format(
            bounds[-1][0] if integer else float(edges[-2]), integer, digits
        )
        labels = [first, *inner, last]
        if len(set(labels)) == len(labels):
            return labels
    return [f"range {i + 1}" for i in range(len(bounds))]  # pragma: no cover - ties at 17 digits


def _range_label(low: float, high: float, integer: bool, digits: int) -> str:
    first, last = _format(low, integer, digits), _format(high, integer, digits)
    if first == last:
        return first
    return f"{first} to {last}" if low < 0 or high < 0 else f"{first}-{last}"


def _format(value: float, integer: bool, digits: int) -> str:
    return str(int(value)) if integer else f"{value:.{digits}g}"


def _merge_rare(column: pd.Series, min_share: float) -> Any:
    """Categories under ``min_share`` of the non-missing rows become ``"other"``."""
    shares = column.value_counts(normalize=True, dropna=True)
    shares = shares[shares > 0]  # declared but unseen categories are dropped, not merged
    rare = set(shares.index[shares < min_share])
    order: Sequence[Any] = (
        list(column.cat.categories)
        if isinstance(column.dtype, pd.CategoricalDtype)
        else list(shares.index)
    )
    kept = [c for c in order if c in shares.index and c not in rare]
    merged = column.astype(object).where(~column.isin(rare) | column.isna(), OTHER)
    labels = [str(c) for c in kept] + ([OTHER] if rare and OTHER not in map(str, kept) else [])
    as_text = merged.map(lambda v: v if pd.isna(v) else str(v))
    return pd.Categorical(as_text, categories=labels, ordered=False)
