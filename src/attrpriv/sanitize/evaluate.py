"""Evaluate a sanitizer so that it cannot flatter: strong adversaries, utility on real rows.

Leakage (the stronger of a raw-aux and a sanitized-aux adversary), utility on real held-out
rows, AUC with DeLong's interval and Pareto fronts; scores are pooled over seeds. See
docs/sanitize/evaluation.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from sklearn.base import ClassifierMixin, clone
from sklearn.dummy import DummyClassifier
from sklearn.ensemble import HistGradientBoostingClassifier

from attrpriv._checks import check_positive, check_positive_int, check_probability
from attrpriv.errors import InputError
from attrpriv.stats import Score, delong_auc, pool_scores, rate_difference

Features = pd.DataFrame | np.ndarray

__all__ = [
    "AdversaryScore",
    "LeakageResult",
    "UtilityResult",
    "auc_score",
    "leakage",
    "pareto_auc",
    "pareto_front",
    "strong_classifier",
    "utility",
]

MAX_CATEGORIES = 255  # HistGradientBoosting's native categorical support: at most max_bins
OVR = "one-vs-rest macro"
MIN_CLASS_ROWS = 10  # fewer rows of a class: no early-stopping split (100 rounds instead)


def strong_classifier(seed: int = 0) -> HistGradientBoostingClassifier:
    """The default adversary and task model: histogram gradient boosting with early stopping.

    Up to 300 rounds, stopped after 10 without improvement on a 20% split; ``seed`` is its
    ``random_state``.
    """
    return HistGradientBoostingClassifier(
        max_iter=300,
        learning_rate=0.1,
        early_stopping=True,
        validation_fraction=0.2,
        n_iter_no_change=10,
        random_state=seed,
    )


@dataclass(frozen=True)
class AdversaryScore:
    """One adversary's pooled AUC and accuracy on the released rows.

    ``name`` is ``"raw-aux"`` or ``"sanitized-aux"``; ``accuracy`` is against always guessing
    ``prior_class``, the training majority.
    """

    name: str
    auc: Score
    accuracy: Score
    prior_class: Any
    n_train: int
    features: int
    model: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the fields, the scores as their ``to_dict()``."""
        return {"name": self.name, "auc": self.auc.to_dict(), "accuracy": self.accuracy.to_dict(),
                "prior_class": _plain(self.prior_class), "n_train": self.n_train,
                "features": self.features, "model": self.model}  # fmt: skip


@dataclass(frozen=True)
class LeakageResult:
    """Every adversary run (raw-aux first); the strongest, by AUC, is the leakage."""

    adversaries: tuple[AdversaryScore, ...]
    auc_form: str
    seeds: int

    @property
    def strongest(self) -> AdversaryScore:
        """The adversary with the highest pooled AUC (the first on a tie)."""
        return max(self.adversaries, key=lambda a: a.auc.attack)

    @property
    def auc(self) -> float:
        """The strongest adversary's AUC: 0.5 is chance, 1 recovers the attribute."""
        return self.strongest.auc.attack

    @property
    def auc_ci(self) -> tuple[float, float]:
        """The interval of :attr:`auc` (cut to [0, 1])."""
        return _value_ci(self.strongest.auc)

    @property
    def advantage(self) -> float:
        """``auc - 0.5``: the leakage on the privacy-utility plane (0 = nothing learnt)."""
        return self.strongest.auc.difference

    @property
    def accuracy(self) -> Score:
        """The strongest adversary's accuracy against the prior."""
        return self.strongest.accuracy

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the strongest adversary's scores, the settings, every adversary."""
        return {"auc": self.auc, "auc_ci": list(self.auc_ci), "advantage": self.advantage,
                "accuracy": self.accuracy.attack, "prior": self.accuracy.baseline,
                "strongest": self.strongest.name, "auc_form": self.auc_form, "seeds": self.seeds,
                "adversaries": [a.to_dict() for a in self.adversaries]}  # fmt: skip


@dataclass(frozen=True)
class UtilityResult:
    """A task model trained on the release, scored on real held-out rows, pooled over seeds.

    ``accuracy`` (CAS) is against the release's ``majority_class``; ``auc`` against 0.5.
    """

    auc: Score
    accuracy: Score
    majority_class: Any
    n_train: int
    n_test: int
    auc_form: str
    seeds: int
    model: str

    @property
    def auc_ci(self) -> tuple[float, float]:
        """The interval of the AUC itself (cut to [0, 1])."""
        return _value_ci(self.auc)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``auc``, ``auc_ci``, ``accuracy``, ``majority``, the scores and settings."""
        return {"auc": self.auc.attack, "auc_ci": list(self.auc_ci),
                "accuracy": self.accuracy.attack, "majority": self.accuracy.baseline,
                "auc_score": self.auc.to_dict(), "accuracy_score": self.accuracy.to_dict(),
                "majority_class": _plain(self.majority_class), "n_train": self.n_train,
                "n_test": self.n_test, "auc_form": self.auc_form, "seeds": self.seeds,
                "model": self.model}  # fmt: skip


def auc_score(
    y_true: ArrayLike, proba: ArrayLike, classes: ArrayLike, *, confidence: float = 0.95
) -> Score:
    """AUC against 0.5 with DeLong's interval; one-vs-rest macro for more than two classes.

    Parameters
    ----------
    y_true : array-like
        The true labels, shape (n,); at least two classes.
    proba : array-like
        Predicted probabilities, shape (n, len(classes)), column j for ``classes[j]``.
    classes : array-like
        The classes of the columns of ``proba``.
    confidence : float, optional
        Two-sided confidence level, in (0, 1).

    Returns
    -------
    Score
        The AUC; for more classes the mean, with the mean half width (conservative).
    """
    level = check_probability(confidence, "confidence")
    labels = np.asarray(y_true, dtype=object)
    names = list(np.asarray(classes, dtype=object))
    scores = np.asarray(proba, dtype=float)
    if labels.ndim != 1 or scores.shape != (labels.size, len(names)):
        raise InputError(f"proba must have shape ({labels.size}, {len(names)}), got {scores.shape}")
    present = [c for c in pd.unique(labels)]
    if len(present) < 2:
        raise InputError("an AUC needs test rows of at least two classes; got one")
    if len(names) == 2 and set(present) <= set(names):
        return delong_auc(labels == names[1], scores[:, 1], level)
    parts = []
    for cls in sorted(present, key=str):
        column = scores[:, names.index(cls)] if cls in names else np.zeros(labels.size)
        parts.append(delong_auc(labels == cls, column, level))
    auc = float(np.mean([p.attack for p in parts]))
    half = float(np.mean([(p.ci[1] - p.ci[0]) / 2 for p in parts]))
    return Score(auc, 0.5, auc - 0.5, (auc - 0.5 - half, auc - 0.5 + half),
                 labels.size, level, f"delong-ovr-macro({len(parts)})")  # fmt: skip


def leakage(
    x_aux: Features,
    y_aux: ArrayLike,
    x_release: Features,
    y_release: ArrayLike,
    *,
    x_aux_sanitized: Features | None = None,
    model: ClassifierMixin | None = None,
    seeds: int = 3,
    seed: int = 0,
    confidence: float = 0.95,
) -> LeakageResult:
    """The strongest adversary's AUC (and accuracy) for the true ``y_release`` of the release.

    Parameters
    ----------
    x_aux, y_aux : array-like
        Raw auxiliary (public) rows and labels; every column of ``x_aux`` must be released.
    x_release, y_release : array-like
        The released rows and their true sensitive labels.
    x_aux_sanitized : pandas.DataFrame or numpy.ndarray or None, optional
        The auxiliary data run through the same sanitizer; ``None``: raw-aux adversary only.
    model : sklearn classifier or None, optional
        The adversary (cloned and seeded); ``None``: :func:`strong_classifier`.
    seeds, seed : int, optional
        Pool fits with seeds ``seed, ..., seed + seeds - 1``.
    confidence : float, optional
        Two-sided confidence level of the intervals, in (0, 1).

    Returns
    -------
    LeakageResult
        Each adversary's pooled AUC and accuracy.
    """
    runs = _seeds(seeds, seed)
    level = check_probability(confidence, "confidence")
    test_y = _labels(y_release, len(x_release), "y_release")
    raw = fit_models(x_aux, y_aux, runs, model, "y_aux")
    adversaries = [raw.score("raw-aux", x_release, test_y, level)]
    if x_aux_sanitized is not None:
        sanitized = fit_models(x_aux_sanitized, y_aux, runs, model, "y_aux")
        adversaries.append(sanitized.score("sanitized-aux", x_release, test_y, level))
    return LeakageResult(tuple(adversaries), _form(raw.classes, test_y), len(runs))


def utility(
    x_release: Features,
    y_release: ArrayLike,
    x_test: Features,
    y_test: ArrayLike,
    *,
    model: ClassifierMixin | None = None,
    seeds: int = 3,
    seed: int = 0,
    confidence: float = 0.95,
) -> UtilityResult:
    """Train the task on the release, test it on real held-out rows: AUC and accuracy.

    A release whose labels hold one class gets a constant predictor (AUC 0.5).

    Parameters
    ----------
    x_release, y_release : array-like
        The released rows (target left out) and their task labels.
    x_test, y_test : array-like
        Real rows used for nothing else, with the released columns, and their labels.
    model : sklearn classifier or None, optional
        The task model (cloned and seeded); ``None``: :func:`strong_classifier`.
    seeds, seed, confidence : optional
        How many fits are pooled, from which seed, and the intervals' level (as :func:`leakage`).

    Returns
    -------
    UtilityResult
        The pooled AUC and accuracy on the real rows, each against its baseline.
    """
    runs = _seeds(seeds, seed)
    level = check_probability(confidence, "confidence")
    test_y = _labels(y_test, len(x_test), "y_test")
    fitted = fit_models(x_release, y_release, runs, model, "y_release", one_class=True)
    scored = fitted.score("task", x_test, test_y, level)
    return UtilityResult(scored.auc, scored.accuracy, scored.prior_class, fitted.n_train,
                         len(test_y), _form(fitted.classes, test_y), len(runs),
                         fitted.name)  # fmt: skip


def pareto_front(points: ArrayLike) -> np.ndarray:
    """The (leakage, utility) points of an (n, 2) array that no other point beats, by leakage."""
    array = _points(points)
    order = np.lexsort((-array[:, 1], array[:, 0]))
    front: list[np.ndarray] = []
    for point in array[order]:
        if not front or point[1] > front[-1][1]:
            front.append(point)
    return np.array(front)


def pareto_auc(points: ArrayLike, *, max_leakage: float = 1.0) -> float:
    """Mean attainable utility over leakage budgets in [0, max_leakage] (higher is better).

    ``points``: (n, 2) (leakage, utility) pairs, leakages clipped into [0, max_leakage]; use
    ``max_leakage=0.5`` for leakage = AUC - 0.5. See docs/sanitize/evaluation.md.
    """
    limit = check_positive(max_leakage, "max_leakage")
    front = pareto_front(points)
    leak = np.clip(front[:, 0], 0.0, limit)
    edges = np.append(leak, limit)
    return float(np.sum(front[:, 1] * np.diff(edges)) / limit)


# ---------------------------------------------------------------------------- models and design
@dataclass(frozen=True)
class _Encoder:
    """DataFrame (or array) -> float matrix, learnt on the training rows only."""

    columns: tuple[Any, ...] | None
    width: int
    categories: dict[Any, list[Any]]
    one_hot: bool

    @classmethod
    def fit(cls, x: Features, one_hot: bool) -> _Encoder:
        if isinstance(x, pd.DataFrame):
            kept = tuple(c for c in x.columns if x[c].notna().any())
            cats = {c: _categories(x[c]) for c in kept if not _numeric(x[c])}
            return cls(kept, len(kept), cats, one_hot)
        return cls(None, _flat(x).shape[1], {}, one_hot)

    @property
    def mask(self) -> np.ndarray:
        """Which output columns are categorical codes (for ``categorical_features``)."""
        if self.columns is None or self.one_hot:
            return np.zeros(self._out_width(), dtype=bool)
        return np.array([len(self.categories.get(c, ())) in range(1, MAX_CATEGORIES + 1)
                         for c in self.columns])  # fmt: skip

    def transform(self, x: Features) -> np.ndarray:
        if self.columns is None:
            if isinstance(x, pd.DataFrame):
                raise InputError("features must be all DataFrames or all arrays, not a mix")
            matrix = _flat(x)
            if matrix.shape[1] != self.width:
                raise InputError("feature arrays must have the same number of features per row")
            return matrix
        if not isinstance(x, pd.DataFrame):
            raise InputError("features must be all DataFrames or all arrays, not a mix")
        missing = [c for c in self.columns if c not in x.columns]
        if missing:
            raise InputError(f"the rows to score lack column(s) {missing} the model was fitted on")
        blocks = [self._column(name, x[name]) for name in self.columns]
        return np.column_stack(blocks) if blocks else np.zeros((len(x), 0))

    def _column(self, name: Any, series: pd.Series) -> np.ndarray:
        if name not in self.categories:
            values = pd.to_numeric(series, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
            if self.one_hot and not np.isfinite(values).all():
                raise InputError(f"column {name!r} has missing or non-numeric values")
            return values
        cats = self.categories[name]
        codes = pd.Index(cats, dtype=object).get_indexer(series.astype(object)).astype(int)
        if self.one_hot:
            return np.eye(len(cats) + 1)[np.where(codes < 0, len(cats), codes)][:, : len(cats)]
        return np.where(codes < 0, np.nan, codes.astype(float))

    def _out_width(self) -> int:
        if self.columns is None:
            return self.width
        return sum(len(self.categories[c]) if c in self.categories and self.one_hot else 1
                   for c in self.columns)  # fmt: skip


@dataclass(frozen=True)
class FittedModels:
    """One classifier per seed on the same training rows, and how to encode rows for them."""

    encoder: _Encoder
    estimators: tuple[Any, ...]
    classes: np.ndarray
    prior_class: Any
    n_train: int
    name: str

    def proba(self, x: Features) -> list[np.ndarray]:
        """Each seed's class probabilities for the rows ``x``, columns in ``classes`` order."""
        matrix = self.encoder.transform(x)
        return [np.asarray(e.predict_proba(matrix), dtype=float) for e in self.estimators]

    def score(self, name: str, x: Features, y: np.ndarray, confidence: float) -> AdversaryScore:
        """Pooled AUC and accuracy against the prior on the rows ``x`` with labels ``y``."""
        aucs, accs = [], []
        prior_hits = y == self.prior_class
        for proba in self.proba(x):
            aucs.append(auc_score(y, proba, self.classes, confidence=confidence))
            hits = self.classes[np.argmax(proba, axis=1)] == y
            accs.append(rate_difference(hits, prior_hits, confidence))
        return AdversaryScore(name, pool_scores(aucs), pool_scores(accs), self.prior_class,
                              self.n_train, self.encoder.width, self.name)  # fmt: skip


def fit_models(
    x: Features,
    y: ArrayLike,
    seeds: Sequence[int],
    model: ClassifierMixin | None,
    what: str,
    *,
    one_class: bool = False,
) -> FittedModels:
    """Fit ``model`` (default :func:`strong_classifier`) once per seed on ``x``, ``y``.

    With ``one_class``, one-class labels (or no feature column) get a constant predictor.
    """
    labels = _labels(y, len(x), what)
    values, counts = np.unique(labels, return_counts=True)
    if values.size < 2 and not one_class:
        raise InputError(f"{what} holds a single class; need at least two to train on")
    probe = strong_classifier() if model is None else clone(model)
    encoder = _Encoder.fit(x, one_hot="categorical_features" not in probe.get_params())
    if values.size < 2 or encoder.width == 0:
        model = probe = DummyClassifier(strategy="prior")
    matrix = encoder.transform(x)
    if encoder.one_hot is False and np.isinf(matrix).any():
        raise InputError("features have infinite values")
    mask = encoder.mask
    fitted = []
    for run in seeds:
        estimator = strong_classifier(run) if model is None else clone(model)
        if model is None and counts.min() < MIN_CLASS_ROWS:  # too few for a stratified split
            estimator.set_params(early_stopping=False, max_iter=100)
        params = estimator.get_params()
        if "random_state" in params:
            estimator.set_params(random_state=run)
        if "categorical_features" in params:
            estimator.set_params(categorical_features=mask if mask.any() else None)
        fitted.append(estimator.fit(matrix, labels))
    classes = np.asarray(fitted[0].classes_, dtype=object)
    name = type(probe).__name__
    return FittedModels(encoder, tuple(fitted), classes, values[np.argmax(counts)], labels.size,
                        name)  # fmt: skip


def _form(classes: np.ndarray, y: np.ndarray) -> str:
    return "binary" if len(set(classes) | set(pd.unique(y))) == 2 else OVR


def _seeds(seeds: int, seed: int) -> list[int]:
    first = check_positive_int(seed, "seed", minimum=0)
    return list(range(first, first + check_positive_int(seeds, "seeds")))


def _numeric(series: pd.Series) -> bool:
    return bool(pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series))


def _categories(series: pd.Series) -> list[Any]:
    if isinstance(series.dtype, pd.CategoricalDtype):
        return list(series.dtype.categories)
    return sorted(pd.unique(series.dropna().astype(object)), key=str)


def _flat(x: Any) -> np.ndarray:
    try:
        matrix = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise InputError("feature arrays must hold numbers") from None
    matrix = matrix.reshape(len(matrix), -1)
    if not np.isfinite(matrix).all():
        raise InputError("features have NaN or infinite values; expected finite numbers")
    return matrix


def _labels(values: ArrayLike, n: int, name: str) -> np.ndarray:
    labels = np.asarray(values)
    if labels.ndim != 1 or labels.size != n:
        raise InputError(f"{name} must hold one label per row ({n}), got shape {labels.shape}")
    if labels.dtype == object:  # numbers held as objects: scikit-learn wants their own dtype
        labels = pd.Series(labels, dtype=object).infer_objects().to_numpy()
    if pd.isna(labels).any():
        raise InputError(f"{name} has missing labels")
    return labels


def _value_ci(score: Score) -> tuple[float, float]:
    """The interval of the metric itself (an AUC or a rate), cut to [0, 1]."""
    low, high = score.ci[0] + score.baseline, score.ci[1] + score.baseline
    return (min(max(low, 0.0), 1.0), min(max(high, 0.0), 1.0))


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
