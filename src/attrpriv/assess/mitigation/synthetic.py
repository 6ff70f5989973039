"""Synthetic replacement: each feature redrawn from a cross-fitted model given the rest."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from threadpoolctl import threadpool_limits

from attrpriv._checks import Rule, check_positive_int, integer, optional
from attrpriv.assess.mitigation.base import Strategy, Transformed, Work, is_numeric, with_values
from attrpriv.errors import InputError

_MAX_NATIVE_CATEGORIES = 250  # above this, HGB cannot treat a column as categorical


class SyntheticReplacement(Strategy):
    """Replace the set's values with draws from a model of each feature given the rest.

    ``n_folds`` (>= 2) cross-fitting folds; ``max_iter`` boosting rounds per model; ``n_threads``
    OpenMP threads (``None``: default; 1 in parallel workers).
    """

    name = "synthetic"

    _constraints: ClassVar[Mapping[str, Rule]] = {
        "n_folds": integer(2),
        "max_iter": integer(),
        "n_threads": optional(integer()),
    }

    def __init__(self, n_folds: int = 2, max_iter: int = 100, n_threads: int | None = None) -> None:
        self.n_folds = n_folds
        self.max_iter = max_iter
        self.n_threads = n_threads

    def __repr__(self) -> str:
        return f"SyntheticReplacement(n_folds={self.n_folds!r}, max_iter={self.max_iter!r})"

    def _transform(self, work: Work) -> Transformed:
        X, features, seed = work.X, work.features, work.seed
        n_folds = check_positive_int(self.n_folds, "n_folds", minimum=2)
        max_iter = check_positive_int(self.max_iter, "max_iter")
        threads = (
            None if self.n_threads is None else check_positive_int(self.n_threads, "n_threads")
        )
        if len(features) == X.shape[1]:
            raise InputError(f"synthetic replacement of {list(features)} needs other columns")
        if X.shape[0] < 2 * n_folds:
            raise InputError(f"X needs at least {2 * n_folds} rows for {n_folds} folds")
        rng = np.random.default_rng(seed)
        folds = rng.permutation(X.shape[0]) % n_folds
        predictors = [c for c in X.columns if c not in set(features)]
        used: dict[str, list[str]] = {}
        for feature in features:
            inputs = _as_model_inputs(X[predictors])
            target = X[feature]
            with threadpool_limits(limits=threads, user_api="openmp"):
                drawn = _redraw(inputs, target, folds, max_iter, rng, seed)
            X[feature] = with_values(target, drawn)
            used[feature] = list(predictors)
            predictors.append(feature)
        params = {"model": "HistGradientBoosting", "n_folds": n_folds, "max_iter": max_iter}
        return X, {**params, "predictors": used}, None


def _as_model_inputs(frame: pd.DataFrame) -> pd.DataFrame:
    """Columns HGB can read: categories (native) or numbers; high-cardinality text as codes."""
    out = {}
    for name in frame.columns:
        column = frame[name]
        if is_numeric(column):
            out[name] = column.astype(float)
        elif column.nunique(dropna=True) <= _MAX_NATIVE_CATEGORIES:
            text = column.astype(object).where(column.notna(), None)
            out[name] = pd.Series(pd.Categorical(text.map(_text)), index=column.index)
        else:
            out[name] = pd.Series(pd.factorize(column)[0], index=column.index).astype(float)
    return pd.DataFrame(out, index=frame.index)


def _text(value: Any) -> Any:
    return None if value is None else str(value)


def _redraw(
    inputs: pd.DataFrame,
    target: pd.Series,
    folds: np.ndarray,
    max_iter: int,
    rng: np.random.Generator,
    seed: int,
) -> np.ndarray:
    """New values for ``target``: each fold's rows from a model fit on the other folds."""
    known = np.asarray(target.notna())
    numeric = is_numeric(target)
    out = np.full(len(target), np.nan) if numeric else np.full(len(target), None, dtype=object)
    for fold in np.unique(folds):
        train, rows = known & (folds != fold), known & (folds == fold)
        if rows.any() and train.any():
            out[rows] = _predict(inputs, target, train, rows, numeric, max_iter, rng, seed)
    if not numeric:
        return out
    residuals = target.to_numpy(dtype=float, na_value=np.nan) - out  # held out: out-of-fold
    for fold in np.unique(folds):
        rows, others = known & (folds == fold), known & (folds != fold)
        if rows.any() and others.any():  # never a row's own residual: that would restore it
            out[rows] += rng.choice(residuals[others], size=int(rows.sum()))
    if isinstance(target.dtype, np.dtype) and target.dtype.kind in "iu":  # no missing values
        rounded = np.clip(np.rint(out), float(target.min()), float(target.max()))
        return np.asarray(rounded.astype(target.dtype))
    return out


def _predict(
    inputs: pd.DataFrame,
    target: pd.Series,
    train: np.ndarray,
    rows: np.ndarray,
    numeric: bool,
    max_iter: int,
    rng: np.random.Generator,
    seed: int,
) -> np.ndarray:
    """Fit on ``train``; the predicted mean (numeric) or a class drawn from the probabilities."""
    y_train = target[train]
    counts = y_train.astype(object).value_counts()
    if not numeric and counts.max() >= 2:  # early stopping stratifies: classes seen once go
        train = train & np.asarray(target.isin(counts.index[counts >= 2]))
        y_train = target[train]
    if y_train.nunique(dropna=True) < 2:
        return np.full(int(rows.sum()), y_train.iloc[0], dtype=float if numeric else object)
    classes = y_train.nunique(dropna=True)
    common = {
        "max_iter": max_iter,
        "early_stopping": numeric or 0.1 * len(y_train) >= classes,  # validation: 10%, stratified
        "random_state": seed,
        "categorical_features": "from_dtype",
    }
    if numeric:
        regressor = HistGradientBoostingRegressor(**common)
        regressor.fit(inputs[train], y_train.to_numpy(dtype=float))
        return np.asarray(regressor.predict(inputs[rows]), dtype=float)
    classifier = HistGradientBoostingClassifier(**common)
    classifier.fit(inputs[train], y_train.astype(object).to_numpy())
    proba = classifier.predict_proba(inputs[rows])
    picks = (rng.random((proba.shape[0], 1)) > np.cumsum(proba, axis=1)).sum(axis=1)
    labels = np.asarray(classifier.classes_, dtype=object)
    return np.asarray(labels[np.minimum(picks, proba.shape[1] - 1)], dtype=object)
