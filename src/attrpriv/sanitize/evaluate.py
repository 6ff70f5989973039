"""Evaluate a sanitizer (section 4 of the seed): leakage, utility, privacy-utility Pareto fronts.

- :func:`leakage` -- the paper's data-driven attacker: a classifier trained on the *sanitized
  auxiliary* data to recover the true ``y_S``, tested on the sanitized private data, next to the
  uninformed adversary that always guesses the auxiliary data's majority class (the prior).
- :func:`utility` -- accuracy of a task model trained on sanitized data, tested on sanitized data
  and, when given, on real data (classification accuracy score, CAS).
- :func:`pareto_front` / :func:`pareto_auc` -- the non-dominated (leakage, utility) points of a
  trade-off sweep and the area under their attainable-utility step function.

Scores reuse :class:`attrpriv.stats.Score` (rate, baseline rate, difference, Newcombe CI).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from sklearn.base import ClassifierMixin, clone
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from attrpriv._checks import check_positive, check_positive_int, check_probability
from attrpriv.errors import InputError
from attrpriv.stats import Score, rate_difference

Features = pd.DataFrame | np.ndarray


@dataclass(frozen=True)
class LeakageResult:
    """Adversary accuracy on the sanitized private data vs the prior, with its parts."""

    score: Score
    prior_class: Any
    n_train: int
    model: str

    @property
    def accuracy(self) -> float:
        return self.score.attack

    @property
    def prior(self) -> float:
        return self.score.baseline

    @property
    def difference(self) -> float:
        """The paper's leakage: adversary accuracy minus the uninformed prior."""
        return self.score.difference

    def to_dict(self) -> dict[str, Any]:
        return {"leakage": self.difference, "accuracy": self.accuracy, "prior": self.prior,
                "score": self.score.to_dict(), "prior_class": _plain(self.prior_class),
                "n_train": self.n_train, "model": self.model}  # fmt: skip


@dataclass(frozen=True)
class UtilityResult:
    """Task accuracy of a model trained on sanitized data, vs predicting the majority class."""

    on_sanitized: Score
    on_real: Score | None
    n_train: int
    model: str

    def to_dict(self) -> dict[str, Any]:
        real = None if self.on_real is None else self.on_real.to_dict()
        return {"accuracy": self.on_sanitized.attack, "cas": None if self.on_real is None
                else self.on_real.attack, "on_sanitized": self.on_sanitized.to_dict(),
                "on_real": real, "n_train": self.n_train, "model": self.model}  # fmt: skip


def leakage(
    x_aux_sanitized: Features,
    y_aux: ArrayLike,
    x_private_sanitized: Features,
    y_private: ArrayLike,
    *,
    model: ClassifierMixin | None = None,
    seed: int = 0,
    confidence: float = 0.95,
) -> LeakageResult:
    """Train the adversary on sanitized auxiliary data, attack the sanitized private data."""
    fitted, train_y, prior_class = _fit(x_aux_sanitized, y_aux, x_private_sanitized, model, seed)
    test_y = _labels(y_private, _rows(x_private_sanitized), "y_private")
    hits = fitted.predict(fitted.test_features) == test_y
    prior_hits = test_y == prior_class
    score = rate_difference(hits, prior_hits, check_probability(confidence, "confidence"))
    return LeakageResult(score, prior_class, train_y.size, fitted.name)


def utility(
    x_train_sanitized: Features,
    y_train: ArrayLike,
    x_test_sanitized: Features,
    y_test: ArrayLike,
    *,
    x_real: Features | None = None,
    y_real: ArrayLike | None = None,
    model: ClassifierMixin | None = None,
    seed: int = 0,
    confidence: float = 0.95,
) -> UtilityResult:
    """Accuracy on sanitized test data and, if ``x_real``/``y_real`` are given, on real data."""
    confidence = check_probability(confidence, "confidence")
    if (x_real is None) != (y_real is None):
        raise InputError("x_real and y_real must be given together (or neither)")
    tests = [x_test_sanitized] if x_real is None else [x_test_sanitized, x_real]
    fitted, train_y, majority = _fit(x_train_sanitized, y_train, tests, model, seed)
    scores: list[Score] = []
    for i, truth in enumerate([y_test] if y_real is None else [y_test, y_real]):
        features = fitted.test_features[fitted.test_slices[i]]
        labels = _labels(truth, features.shape[0], "y_test" if i == 0 else "y_real")
        hits = fitted.predict(features) == labels
        scores.append(rate_difference(hits, labels == majority, confidence))
    return UtilityResult(scores[0], scores[1] if len(scores) > 1 else None, train_y.size,
                         fitted.name)  # fmt: skip


def pareto_front(points: ArrayLike) -> np.ndarray:
    """The non-dominated (leakage, utility) points, sorted by leakage (lower leakage, higher
    utility is better; of equal points one is kept)."""
    array = _points(points)
    order = np.lexsort((-array[:, 1], array[:, 0]))
    front: list[np.ndarray] = []
    for point in array[order]:
        if not front or point[1] > front[-1][1]:
            front.append(point)
    return np.array(front)


def pareto_auc(points: ArrayLike, *, max_leakage: float = 1.0) -> float:
    """Mean attainable utility over leakage budgets in [0, max_leakage] (higher is better).

    ``U(l) = max{u_i : l_i <= l}`` over the front (0 where no point fits the budget), and the
    result is ``(1 / L) * integral_0^L U(l) dl`` with ``L = max_leakage``; leakages are clipped
    into [0, L] first (an adversary below the prior counts as leakage 0).
    """
    limit = check_positive(max_leakage, "max_leakage")
    front = pareto_front(points)
    leak = np.clip(front[:, 0], 0.0, limit)
    edges = np.append(leak, limit)
    return float(np.sum(front[:, 1] * np.diff(edges)) / limit)


@dataclass(frozen=True)
class _Fitted:
    estimator: Any
    test_features: np.ndarray
    test_slices: list[slice]
    name: str

    def predict(self, features: np.ndarray) -> np.ndarray:
        return np.asarray(self.estimator.predict(features))


def _fit(
    x_train: Features,
    y_train: ArrayLike,
    x_tests: Features | list[Features],
    model: ClassifierMixin | None,
    seed: int,
) -> tuple[_Fitted, np.ndarray, Any]:
    """Encode features consistently, fit the classifier, return it with the majority class."""
    seed = check_positive_int(seed, "seed", minimum=0)
    tests: list[Features] = x_tests if isinstance(x_tests, list) else [x_tests]
    train, encoded = _design([x_train, *tests])
    labels = _labels(y_train, train.shape[0], "y_train")
    values, counts = np.unique(labels, return_counts=True)
    if values.size < 2:
        raise InputError("the training labels hold a single class; need at least two")
    estimator = _estimator(model, seed).fit(train, labels)
    sizes = np.cumsum([0, *(t.shape[0] for t in encoded)])
    slices = [slice(int(a), int(b)) for a, b in pairwise(sizes)]
    name = type(model).__name__ if model is not None else "LogisticRegression"
    fitted = _Fitted(estimator, np.vstack(encoded), slices, name)
    return fitted, labels, values[np.argmax(counts)]


def _estimator(model: ClassifierMixin | None, seed: int) -> Any:
    if model is None:
        return make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000, random_state=seed))
    estimator = clone(model)
    if "random_state" in estimator.get_params():
        estimator.set_params(random_state=seed)
    return estimator


def _design(blocks: list[Features]) -> tuple[np.ndarray, list[np.ndarray]]:
    """Numeric design matrices: DataFrames one-hot encoded together, arrays flattened per row."""
    if all(isinstance(b, pd.DataFrame) for b in blocks):
        frames = [b for b in blocks if isinstance(b, pd.DataFrame)]
        columns = list(frames[0].columns)
        for frame in frames[1:]:
            if list(frame.columns) != columns:
                raise InputError("sanitized frames must have the same columns in the same order")
        joined = pd.get_dummies(pd.concat(frames, ignore_index=True), dtype=float)
        matrix = joined.to_numpy(dtype=float)
    elif any(isinstance(b, pd.DataFrame) for b in blocks):
        raise InputError("features must be all DataFrames or all arrays, not a mix")
    else:
        arrays = [np.asarray(b, dtype=float).reshape(len(b), -1) for b in blocks]
        if len({a.shape[1] for a in arrays}) != 1:
            raise InputError("feature arrays must have the same number of features per row")
        matrix = np.vstack(arrays)
    if not np.isfinite(matrix).all():
        raise InputError("features have NaN or infinite values; expected finite numbers")
    sizes = np.cumsum([0, *(_rows(b) for b in blocks)])
    parts = [matrix[a:b] for a, b in pairwise(sizes)]
    return parts[0], parts[1:]


def _rows(block: Features) -> int:
    return len(block)


def _labels(values: ArrayLike, n: int, name: str) -> np.ndarray:
    labels = np.asarray(values)
    if labels.ndim != 1 or labels.size != n:
        raise InputError(f"{name} must hold one label per row ({n}), got shape {labels.shape}")
    return labels


def _points(points: ArrayLike) -> np.ndarray:
    try:
        array = np.asarray(points, dtype=float)
    except (TypeError, ValueError):
        raise InputError("points must be (leakage, utility) pairs of numbers") from None
    if array.ndim != 2 or array.shape[1] != 2 or array.shape[0] == 0:
        raise InputError(f"points must be a non-empty (n, 2) array, got shape {array.shape}")
    if not np.isfinite(array).all():
        raise InputError("points have NaN or infinite values")
    return array


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


__all__ = ["LeakageResult", "UtilityResult", "leakage", "pareto_auc", "pareto_front", "utility"]
