"""Property inference: the game of Ganju et al. (CCS 2018) and Suri & Evans (PETS 2022) with shadow
models; score = meta-accuracy minus a shuffled control's. See docs/assess/attacks.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy.optimize import brentq
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from attrpriv._checks import check_choice, check_finite_number, check_positive_int
from attrpriv.assess.inference import feature_kind
from attrpriv.assess.models import fit_without, predict_outputs, task_of
from attrpriv.errors import InputError, offending
from attrpriv.stats import Score, rate_difference

__all__ = ["PropertyInferenceResult", "property_inference"]


@dataclass(frozen=True)
class PropertyInferenceResult:
    """The property game's outcome: meta-classifier accuracy against the control, and its setting.

    Parameters
    ----------
    feature : str
        The feature whose property is inferred.
    property : str
        ``"mean"`` (the feature's mean) or ``"share"`` (the share of ``category``).
    category : str or None
        The category whose share is inferred (as text), ``None`` for a mean.
    low, high : float
        The property's value in the low and the high world.
    n_shadows : int
        Shadow models per world, for meta-training and again for meta-testing.
    score : Score
        Attack accuracy minus control accuracy, with Newcombe's CI (independent).
    parts : dict of str to float, default {}
        Control accuracy, realised low/high, ``sample_size`` and ``n_queries``.
    """

    feature: str
    property: str
    category: str | None
    low: float
    high: float
    n_shadows: int
    score: Score
    parts: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The result as JSON-ready values.

        Returns
        -------
        dict of str to object
            Every field; ``score`` as a dict.
        """
        return {
            "feature": self.feature,
            "property": self.property,
            "category": self.category,
            "low": self.low,
            "high": self.high,
            "n_shadows": self.n_shadows,
            "score": self.score.to_dict(),
            "parts": dict(self.parts),
        }


def property_inference(
    estimator: Any,
    X: pd.DataFrame,
    y: Any,
    feature: str,
    *,
    property: str = "mean",
    category: Any = None,
    low: float,
    high: float,
    n_shadows: int = 8,
    seed: int = 0,
    confidence: float = 0.95,
    sample_size: int | None = None,
    n_queries: int = 100,
    drop: Sequence[str] = (),
) -> PropertyInferenceResult:
    """Can the property of ``feature`` (its mean, or ``category``'s share) be told low vs high?

    Costs ``8 * n_shadows`` fits of ``estimator``, each on ``sample_size`` records.

    Parameters
    ----------
    estimator : object
        The training algorithm (a scikit-learn classifier or regressor), cloned per shadow.
    X, y : pandas.DataFrame, array_like
        The pool (>= ``n_queries + 20`` records) and its labels.
    feature : str
        The column of ``X`` whose property is inferred.
    property : {"mean", "share"}, default "mean"
        The feature's mean (numeric, complete), or the share of ``category``.
    category : object, optional
        The value whose share is inferred; needed when ``property="share"``.
    low, high : float
        The property in the low and high worlds; ``low < high``, inside the feature's range.
    n_shadows : int, default 8
        Shadow models per world, for meta-training and again for meta-testing; >= 2.
    seed : int, default 0
        Seed of the queries, the draws and the control's shuffle.
    confidence : float, default 0.95
        Confidence level of the score's CI.
    sample_size : int, optional
        Records per shadow (>= 10); default at most a tenth of what the pool supplies, 50-2000.
    n_queries : int, default 100
        Records held out as the fixed query set; >= 1.
    drop : sequence of str, default ()
        Columns the shadows are trained without (e.g. the feature itself).

    Returns
    -------
    PropertyInferenceResult
        The worlds, the score and the realised values.

    Raises
    ------
    InputError
        If the data or a parameter are invalid, too few records, or a share cannot be reached.
    """
    frame, labels = _frame_labels(X, y, feature)
    prop = check_choice(property, "property", ("mean", "share"))
    n_shadows = check_positive_int(n_shadows, "n_shadows", minimum=2)
    n_queries = check_positive_int(n_queries, "n_queries")
    values = _property_values(frame[feature], prop, category)
    low, high = _bounds(values, prop, low, high)
    if len(frame) - n_queries < 20:
        raise InputError(
            f"property inference needs at least {n_queries + 20} records ({n_queries} query "
            f"records + 20 for the shadow datasets), got {len(frame)}"
        )
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(frame))
    queries, pool = order[:n_queries], order[n_queries:]
    m = _sample_size(sample_size, values[pool], prop, low, high)
    game = _Game(
        estimator, frame, labels, queries, pool, tuple(drop), n_shadows, m, prop, low, high
    )
    attack, realised = game.play(values, rng)
    control, _ = game.play(rng.permutation(values), rng)
    score = rate_difference(attack, control, confidence, paired=False)
    parts = {
        "control_accuracy": float(control.mean()),
        "realised_low": realised[0],
        "realised_high": realised[1],
        "sample_size": float(game.sample_size),
        "n_queries": float(n_queries),
    }
    name = None if category is None else str(category)
    return PropertyInferenceResult(feature, prop, name, low, high, n_shadows, score, parts)


@dataclass(frozen=True)
class _Game:
    """One distinguishing game: shadows per world, their outputs on the queries, the guesses."""

    estimator: Any
    frame: pd.DataFrame
    labels: np.ndarray
    queries: np.ndarray
    pool: np.ndarray
    drop: tuple[str, ...]
    n_shadows: int
    sample_size: int
    prop: str
    low: float
    high: float

    def play(
        self, values: np.ndarray, rng: np.random.Generator
    ) -> tuple[np.ndarray, tuple[float, float]]:
        """Hits of the meta-classifier on fresh test shadows, and each world's mean property."""
        outputs, worlds, realised = [], [], []
        for _split in ("train", "test"):
            for world, target in ((0, self.low), (1, self.high)):
                for _ in range(self.n_shadows):
                    rows = self.pool[
                        _draw(values[self.pool], self.prop, target, self.sample_size, rng)
                    ]
                    outputs.append(self._outputs(rows))
                    worlds.append(world)
                    realised.append((world, float(values[rows].mean())))
        features, truth = np.vstack(outputs), np.array(worlds)
        half = 2 * self.n_shadows
        meta = make_pipeline(StandardScaler(), LogisticRegression(C=0.1, max_iter=2000))
        meta.fit(features[:half], truth[:half])
        hits = np.asarray(meta.predict(features[half:]) == truth[half:])
        means = tuple(float(np.mean([v for w, v in realised if w == k])) for k in (0, 1))
        return hits, (means[0], means[1])

    def _outputs(self, rows: np.ndarray) -> np.ndarray:
        """A shadow's answers on the queries: log-probabilities, or a regressor's predictions."""
        shadow = fit_without(self.estimator, self.frame.iloc[rows], self.labels[rows], self.drop)
        outputs = predict_outputs(shadow, self.frame.iloc[self.queries])
        if task_of(shadow) == "classification":
            outputs = np.log(np.clip(outputs, 1e-6, None))
        return outputs.ravel()


def _frame_labels(X: Any, y: Any, feature: str) -> tuple[pd.DataFrame, np.ndarray]:
    if not isinstance(X, pd.DataFrame):
        raise InputError(f"X must be a pandas DataFrame, got {type(X).__name__}")
    if feature not in X.columns:
        raise InputError(f"feature {feature!r} is not a column of X ({list(X.columns)})")
    labels = np.asarray(y)
    if labels.shape != (len(X),):
        raise InputError(f"y has shape {labels.shape}, expected ({len(X)},)")
    return X.reset_index(drop=True), labels


def _property_values(column: pd.Series, prop: str, category: Any) -> np.ndarray:
    """Per-record values whose mean is the property: the feature, or 1 for ``category``."""
    if prop == "share":
        if category is None:
            raise InputError("property='share' needs category=<the value whose share is inferred>")
        hits = column.astype(object) == category
        if not hits.any():
            raise InputError(
                f"the category{offending(category)} does not occur in feature {column.name!r}"
            )
        return np.asarray(hits.to_numpy(dtype=float))
    if feature_kind(column) != "continuous":
        raise InputError(f"property='mean' needs a numeric feature; {column.name!r} is not")
    if column.isna().any():
        raise InputError(f"feature {column.name!r} has missing values; fill or drop them first")
    return column.to_numpy(dtype=float)


def _bounds(values: np.ndarray, prop: str, low: object, high: object) -> tuple[float, float]:
    lo, hi = check_finite_number(low, "low"), check_finite_number(high, "high")
    if not lo < hi:
        raise InputError(f"low must be < high, got low={lo}, high={hi}")
    floor, ceiling = (0.0, 1.0) if prop == "share" else (float(values.min()), float(values.max()))
    if lo < floor or hi > ceiling or (prop == "mean" and not floor < lo < hi < ceiling):
        raise InputError(
            f"low and high must lie within the feature's {prop} range [{floor:g}, {ceiling:g}], "
            f"got {lo:g} and {hi:g}"
        )
    return lo, hi


def _sample_size(
    sample_size: int | None, values: np.ndarray, prop: str, low: float, high: float
) -> int:
    """The shadows' size: given, or a tenth of what the pool supplies, within 50-2000."""
    if sample_size is not None:
        return check_positive_int(sample_size, "sample_size", minimum=10)
    if prop == "share":
        inside = float(values.sum())
        capacity = min(inside / high, (values.size - inside) / (1.0 - low))
    else:
        capacity = min(1.0 / float(np.sum(_tilt(values, t) ** 2)) for t in (low, high))
    return int(max(50, min(capacity / 10, values.size // 3, 2000)))


def _draw(values: np.ndarray, prop: str, target: float, m: int, rng: np.random.Generator) -> Any:
    """Indices (into ``values``) of a sample of size ``m`` whose property is about ``target``."""
    if prop == "share":
        inside, outside = np.flatnonzero(values == 1.0), np.flatnonzero(values == 0.0)
        k = round(target * m)
        if (k and not inside.size) or (m - k and not outside.size):
            raise InputError("cannot reach the share: one side of the category has no records")
        chosen = [
            rng.choice(inside, size=k, replace=k > inside.size),
            rng.choice(outside, size=m - k, replace=m - k > outside.size),
        ]
        return rng.permutation(np.concatenate(chosen))
    return rng.choice(values.size, size=m, replace=True, p=_tilt(values, target))


def _tilt(values: np.ndarray, target: float) -> np.ndarray:
    """Weights ``exp(lambda z)``, z the standardised values, whose weighted mean is ``target``."""
    spread = float(values.std()) or 1.0
    z = (values - values.mean()) / spread

    def weights(lam: float) -> np.ndarray:
        w = np.exp(lam * z - np.max(lam * z))
        return np.asarray(w / w.sum())

    def gap(lam: float) -> float:
        return float(weights(lam) @ values) - target

    lam = (
        brentq(gap, -50.0, 50.0) if gap(-50.0) < 0 < gap(50.0) else (50.0 if gap(0) < 0 else -50.0)
    )
    return weights(float(lam))
