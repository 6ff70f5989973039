"""Membership inference: was this record in the model's training set? (whole-model attacks)

Two black-box attacks, each scoring every candidate record (higher = "member"):

- :func:`loss_threshold_attack` -- Yeom et al. (CSF 2018): a training record tends to have a
  lower loss. Score = minus the record's loss (for a classifier, the log of the probability the
  model gives its true class, i.e. the confidence attack too: the same ranking).
- :class:`ShadowModelAttack` -- Shokri et al. (S&P 2017): shadow models, clones of the target's
  estimator trained on auxiliary data where membership is known, teach an attack classifier
  (one per class) to tell members from non-members by the prediction vector and the label.

Both return a :class:`MembershipResult`: ROC curve, AUC, advantage, TPR at low FPR, and a
:class:`~attrpriv.stats.Score` (attack = AUC, baseline = 0.5, CI by stratified bootstrap).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import rankdata
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_curve
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from attrpriv._checks import check_choice, check_positive_int
from attrpriv.assess.models import (
    align,
    fit_without,
    per_record_loss,
    predict_outputs,
    task_of,
)
from attrpriv.errors import InputError
from attrpriv.stats import Score, bootstrap_difference, rate_difference

__all__ = [
    "MembershipResult",
    "ShadowModelAttack",
    "auc",
    "auc_difference",
    "loss_threshold_attack",
    "membership_result",
    "overfitting_gap",
    "shadow_features",
]

Labelled = tuple[pd.DataFrame, Any]


@dataclass(frozen=True, eq=False)  # holds arrays: compare fields, not results
class MembershipResult:
    """A membership attack's outcome on known members and non-members.

    ``labels`` (1 = member) and ``scores`` are per candidate record; they let two results on the
    same records be compared (:func:`auc_difference`) and are left out of :meth:`to_dict`.
    """

    auc: float
    advantage: float
    tpr_at_1pct_fpr: float
    tpr_at_01pct_fpr: float
    fpr: np.ndarray
    tpr: np.ndarray
    score: Score
    attack: str = ""
    labels: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False)
    scores: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False)

    @property
    def n_members(self) -> int:
        return int(self.labels.sum())

    @property
    def n_non_members(self) -> int:
        return int(self.labels.size - self.labels.sum())

    def to_dict(self) -> dict[str, Any]:
        return {
            "attack": self.attack,
            "auc": self.auc,
            "advantage": self.advantage,
            "tpr_at_1pct_fpr": self.tpr_at_1pct_fpr,
            "tpr_at_01pct_fpr": self.tpr_at_01pct_fpr,
            "n_members": self.n_members,
            "n_non_members": self.n_non_members,
            "roc": {"fpr": self.fpr.tolist(), "tpr": self.tpr.tolist()},
            "score": self.score.to_dict(),
        }


def auc(rows: np.ndarray) -> float:
    """AUC of rows ``(label, score)`` by the Mann-Whitney rank sum (ties count one half)."""
    labels = rows[:, 0] > 0.5
    n_pos = int(labels.sum())
    n_neg = labels.size - n_pos
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    ranks = rankdata(rows[:, 1])
    return float((ranks[labels].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def membership_result(
    labels: np.ndarray,
    scores: np.ndarray,
    *,
    attack: str,
    confidence: float = 0.95,
    n_boot: int = 1000,
    seed: int = 0,
) -> MembershipResult:
    """Metrics of per-record membership scores (``labels``: 1 = member, 0 = non-member)."""
    y = np.asarray(labels, dtype=np.int64)
    s = np.asarray(scores, dtype=float)
    if y.shape != s.shape or y.ndim != 1:
        raise InputError(f"labels and scores must be 1-d of equal length, got {y.shape}, {s.shape}")
    if y.sum() == 0 or y.sum() == y.size:
        raise InputError("a membership attack needs both members and non-members")
    s = np.nan_to_num(s, nan=-np.inf)
    fpr, tpr, _ = roc_curve(y, s)
    rows = np.column_stack([y, s])
    score = bootstrap_difference(
        auc, rows, 0.5, strata=y, n_boot=n_boot, seed=seed, confidence=confidence
    )
    return MembershipResult(
        auc=score.attack,
        advantage=float(np.max(tpr - fpr)),
        tpr_at_1pct_fpr=_tpr_at(fpr, tpr, 0.01),
        tpr_at_01pct_fpr=_tpr_at(fpr, tpr, 0.001),
        fpr=fpr,
        tpr=tpr,
        score=score,
        attack=attack,
        labels=y,
        scores=s,
    )


def loss_threshold_attack(
    model: Any,
    members: Labelled,
    non_members: Labelled,
    *,
    confidence: float = 0.95,
    n_boot: int = 1000,
    seed: int = 0,
) -> MembershipResult:
    """Yeom et al.'s attack: lower loss means member; every threshold is read off the ROC."""
    (x_in, y_in), (x_out, y_out) = (
        _labelled(members, "members"),
        _labelled(non_members, "non_members"),
    )
    scores = -np.concatenate(
        [per_record_loss(model, x_in, y_in), per_record_loss(model, x_out, y_out)]
    )
    labels = np.r_[np.ones(len(x_in), dtype=np.int64), np.zeros(len(x_out), dtype=np.int64)]
    return membership_result(
        labels, scores, attack="loss-threshold", confidence=confidence, n_boot=n_boot, seed=seed
    )


def auc_difference(
    first: MembershipResult,
    second: MembershipResult,
    *,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> Score:
    """``first.auc - second.auc`` for two attacks on the same records (paired bootstrap).

    The differential attack of claim 1: ``first`` against the model trained on all features,
    ``second`` against the one retrained without the target feature set.
    """
    if first.labels.shape != second.labels.shape or not np.array_equal(first.labels, second.labels):
        raise InputError("auc_difference needs two results on the same candidate records")
    rows_a = np.column_stack([first.labels, first.scores])
    rows_b = np.column_stack([second.labels, second.scores])
    return bootstrap_difference(
        auc, rows_a, rows_b, strata=first.labels, n_boot=n_boot, seed=seed, confidence=confidence
    )


def overfitting_gap(
    model: Any, train: Labelled, test: Labelled, *, confidence: float = 0.95, seed: int = 0
) -> Score:
    """Train minus test performance: accuracy (Newcombe CI) or R^2 (bootstrap CI).

    The generalisation gap bounds the loss attack's advantage (Yeom et al. 2018, thm. 2), so a
    feature set that widens it raises the membership risk.
    """
    (x_tr, y_tr), (x_te, y_te) = _labelled(train, "train"), _labelled(test, "test")
    if task_of(model) == "classification":
        hits_tr = np.asarray(model.predict(align(model, x_tr))) == np.asarray(y_tr)
        hits_te = np.asarray(model.predict(align(model, x_te))) == np.asarray(y_te)
        return rate_difference(hits_tr, hits_te, confidence, paired=False)
    rows_tr = np.column_stack([np.asarray(y_tr, dtype=float), predict_outputs(model, x_tr)[:, 0]])
    rows_te = np.column_stack([np.asarray(y_te, dtype=float), predict_outputs(model, x_te)[:, 0]])
    return bootstrap_difference(
        _r2, rows_tr, rows_te, paired=False, seed=seed, confidence=confidence
    )


ATTACK_MODELS = ("hgb", "rf", "logreg")
MIN_CLASS_RECORDS = 50


class ShadowModelAttack:
    """Shokri et al.'s shadow-model membership attack, against a black-box classifier/regressor.

    Threat model: the attacker knows the training algorithm (``estimator``, cloned for every
    shadow) and holds auxiliary records from the target's distribution. Each shadow is trained on
    a random half of the auxiliary data (half of each class, for a classifier); its outputs on
    that half (members) and on the other half (non-members) train the attack models: one per
    class (on records of that class, as in the paper) plus one for all records, used for classes
    with fewer than 50 shadow records. Give
    about twice as many auxiliary records as the target was trained on, so the shadows see as
    much data as the target did.
    """

    def __init__(self, n_shadows: int = 4, attack_model: str = "hgb", seed: int = 0) -> None:
        self.n_shadows = n_shadows
        self.attack_model = attack_model
        self.seed = seed

    def fit(self, estimator: Any, X_aux: pd.DataFrame, y_aux: Any) -> ShadowModelAttack:
        """Train the shadows on halves of the auxiliary data, then the attack models."""
        n_shadows = check_positive_int(self.n_shadows, "n_shadows")
        check_choice(self.attack_model, "attack_model", ATTACK_MODELS)
        X, y = _labelled((X_aux, y_aux), "aux")
        if len(X) < 20:
            raise InputError(f"aux must hold at least 20 records, got {len(X)}")
        self.task_ = task_of(estimator)
        self.classes_ = np.unique(y) if self.task_ == "classification" else np.zeros(0)
        if self.task_ == "classification":
            classes, counts = np.unique(y, return_counts=True)
            if counts.min() < 2:
                rare = classes[counts.argmin()]
                raise InputError(
                    f"aux class {rare!r} has {int(counts.min())} record(s); each class needs at "
                    "least 2, one for each half a shadow model is trained and tested on"
                )
        rng = np.random.default_rng(self.seed)
        features, membership, labels = [], [], []
        for _ in range(n_shadows):
            inside, outside = _halves(y if self.task_ == "classification" else None, len(X), rng)
            shadow = fit_without(estimator, X.iloc[inside], y[inside])
            for rows, member in ((inside, 1), (outside, 0)):
                features.append(self._features(shadow, X.iloc[rows], y[rows]))
                membership.append(np.full(rows.size, member))
                labels.append(y[rows])
        self._fit_attack_models(
            np.vstack(features), np.concatenate(membership), np.concatenate(labels)
        )
        return self

    def attack(
        self,
        model: Any,
        members: Labelled,
        non_members: Labelled,
        *,
        confidence: float = 0.95,
        n_boot: int = 1000,
    ) -> MembershipResult:
        """Score the target's members and non-members with the attack models."""
        if not hasattr(self, "attack_models_"):
            raise InputError("ShadowModelAttack.attack called before fit")
        x_in, y_in = _labelled(members, "members")
        x_out, y_out = _labelled(non_members, "non_members")
        x_all = pd.concat([x_in, x_out], ignore_index=True)
        y_all = np.concatenate([y_in, y_out])
        scores = self._membership_scores(self._features(model, x_all, y_all), y_all)
        labels = np.r_[np.ones(len(x_in), dtype=np.int64), np.zeros(len(x_out), dtype=np.int64)]
        return membership_result(
            labels,
            scores,
            attack="shadow-model",
            confidence=confidence,
            n_boot=n_boot,
            seed=self.seed,
        )

    def _features(self, model: Any, X: pd.DataFrame, y: np.ndarray) -> np.ndarray:
        """Shadow features with the probability columns laid out in the aux data's class order."""
        if self.task_ == "regression":
            return shadow_features(model, X, y)
        outputs = np.zeros((len(X), self.classes_.size))
        known = {c: i for i, c in enumerate(self.classes_.tolist())}
        given = predict_outputs(model, X)
        for j, cls in enumerate(np.asarray(model.classes_).tolist()):
            if cls in known:
                outputs[:, known[cls]] = given[:, j]
        return _output_features(outputs, y, self.classes_)

    def _fit_attack_models(
        self, features: np.ndarray, membership: np.ndarray, labels: np.ndarray
    ) -> None:
        models: dict[Any, Any] = {None: self._new_attack_model().fit(features, membership)}
        if self.task_ == "classification":
            for cls in self.classes_.tolist():
                mask = labels == cls
                if mask.sum() >= MIN_CLASS_RECORDS and np.unique(membership[mask]).size == 2:
                    models[cls] = self._new_attack_model().fit(features[mask], membership[mask])
        self.attack_models_ = models

    def _membership_scores(self, features: np.ndarray, labels: np.ndarray) -> np.ndarray:
        scores = self.attack_models_[None].predict_proba(features)[:, 1]
        for cls, attack_model in self.attack_models_.items():
            mask = labels == cls if cls is not None else np.zeros(labels.size, dtype=bool)
            if mask.any():
                scores[mask] = attack_model.predict_proba(features[mask])[:, 1]
        return np.asarray(scores)

    def _new_attack_model(self) -> Any:
        if self.attack_model == "hgb":
            return HistGradientBoostingClassifier(max_iter=100, random_state=self.seed)
        if self.attack_model == "rf":
            return RandomForestClassifier(
                n_estimators=100, min_samples_leaf=5, random_state=self.seed
            )
        return make_pipeline(StandardScaler(), LogisticRegression(max_iter=1000))


# -- helpers -------------------------------------------------------------------------------------


def _halves(
    y: np.ndarray | None, n: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """A random half of ``n`` rows and the rest; split within each class when ``y`` is given,
    so that every class is in both halves (a shadow must see every class it is tested on).
    """
    if y is None:
        order = rng.permutation(n)
        return order[: n // 2], order[n // 2 :]
    inside, outside = [], []
    for cls in np.unique(y):
        rows = rng.permutation(np.flatnonzero(y == cls))
        inside.append(rows[: rows.size // 2])
        outside.append(rows[rows.size // 2 :])
    return np.sort(np.concatenate(inside)), np.sort(np.concatenate(outside))


def _r2(rows: np.ndarray) -> float:
    residual = float(np.sum((rows[:, 0] - rows[:, 1]) ** 2))
    total = float(np.sum((rows[:, 0] - rows[:, 0].mean()) ** 2))
    return 1.0 - residual / total if total > 0 else 0.0


def _tpr_at(fpr: np.ndarray, tpr: np.ndarray, target: float) -> float:
    """The highest TPR among thresholds whose FPR is at most ``target``."""
    allowed = fpr <= target
    return float(tpr[allowed].max()) if allowed.any() else 0.0


def _labelled(pair: Labelled, name: str) -> tuple[pd.DataFrame, np.ndarray]:
    """Check an ``(X, y)`` pair: a DataFrame and labels of the same length (>= 2 rows)."""
    if not isinstance(pair, tuple) or len(pair) != 2:
        raise InputError(f"{name} must be a tuple (X, y), got {type(pair).__name__}")
    X, y = pair
    if not isinstance(X, pd.DataFrame):
        raise InputError(f"{name}: X must be a pandas DataFrame, got {type(X).__name__}")
    labels = np.asarray(y)
    if labels.shape != (len(X),):
        raise InputError(f"{name}: y has shape {labels.shape}, expected ({len(X)},)")
    if len(X) < 2:
        raise InputError(f"{name} must hold at least 2 records, got {len(X)}")
    return X, labels


def shadow_features(model: Any, X: pd.DataFrame, y: np.ndarray) -> np.ndarray:
    """What the shadow attack sees of a record: the model's output vector and the label.

    Classifiers: the probability vector, the log-probability of the true class and the vector's
    entropy. Regressors: the prediction, the label and the squared error.
    """
    outputs = predict_outputs(model, X)
    if task_of(model) == "regression":
        truth = y.astype(float)
        return np.column_stack([outputs[:, 0], truth, (truth - outputs[:, 0]) ** 2])
    return _output_features(outputs, y, np.asarray(model.classes_))


def _output_features(outputs: np.ndarray, y: np.ndarray, classes: np.ndarray) -> np.ndarray:
    lookup = {c: i for i, c in enumerate(classes.tolist())}
    columns = np.array([lookup.get(v, -1) for v in y.tolist()])
    true_proba = np.where(columns >= 0, outputs[np.arange(len(y)), np.maximum(columns, 0)], 0.0)
    clipped = np.clip(outputs, 1e-12, 1.0)
    entropy = -np.sum(clipped * np.log(clipped), axis=1)
    return np.column_stack([outputs, np.log(np.clip(true_proba, 1e-12, 1.0)), entropy])
