"""Membership inference: loss threshold (Yeom et al., CSF 2018) and shadow models (Shokri et al.,
S&P 2017). See docs/assess/attacks.md.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_curve
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from attrpriv._checks import SEED, Rule, check_choice, check_positive_int, integer, one_of
from attrpriv.assess.models import (
    align,
    fit_without,
    per_record_loss,
    predict_outputs,
    task_of,
)
from attrpriv.dp.mechanism import Parameters, check_fitted, validated
from attrpriv.errors import InputError, offending
from attrpriv.stats import (
    Score,
    bootstrap_difference,
    delong_auc,
    delong_difference,
    rate_difference,
)

__all__ = [
    "MembershipResult",
    "ShadowModelAttack",
    "auc_difference",
    "loss_threshold_attack",
    "membership_result",
    "overfitting_gap",
    "shadow_features",
    "tpr_at_fpr",
    "tpr_interval",
]

Labelled = tuple[pd.DataFrame, Any]


@dataclass(frozen=True, eq=False)  # holds arrays: compare fields, not results
class MembershipResult:
    """A membership attack's outcome on known members and non-members.

    Parameters
    ----------
    auc : float
        Area under the ROC curve of the scores (0.5 = a random guess).
    advantage : float
        The largest ``TPR - FPR`` over all thresholds.
    tpr_at_1pct_fpr, tpr_at_01pct_fpr : float
        The highest TPR among thresholds whose FPR is at most 1%, and 0.1%.
    fpr, tpr : numpy.ndarray
        The ROC curve.
    score : Score
        The AUC against the 0.5 baseline, with DeLong's CI.
    attack : str, default ""
        The attack's name.
    labels, scores : numpy.ndarray, default empty
        Per candidate: 1 = member, and the score (NaN read as ``-inf``); not in :meth:`to_dict`.
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
        """The result as JSON-ready values, without the per-record ``labels`` and ``scores``.

        Returns
        -------
        dict of str to object
            The metrics, ``n_members``, ``n_non_members``, ``roc`` and ``score``.
        """
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


def membership_result(
    labels: np.ndarray,
    scores: np.ndarray,
    *,
    attack: str,
    confidence: float = 0.95,
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
    score = delong_auc(y, s, confidence)
    return MembershipResult(
        auc=score.attack,
        advantage=float(np.max(tpr - fpr)),
        tpr_at_1pct_fpr=tpr_at_fpr(y, s, 0.01),
        tpr_at_01pct_fpr=tpr_at_fpr(y, s, 0.001),
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
) -> MembershipResult:
    """Yeom et al.'s attack: lower loss means member; every threshold is read off the ROC.

    Parameters
    ----------
    model : object
        The fitted target: a classifier with ``predict_proba`` (log loss) or a regressor.
    members, non_members : tuple of (pandas.DataFrame, array_like)
        ``(X, y)`` of records in, and not in, the model's training set (at least 2 each).
    confidence : float, default 0.95
        Confidence level of the AUC's DeLong CI.

    Returns
    -------
    MembershipResult
        The attack's ROC, AUC, advantage and TPRs at low FPR.

    Raises
    ------
    InputError
        If the records are malformed, a label is unknown or ``confidence`` is invalid.
    """
    return scored_candidates(
        members,
        non_members,
        lambda both: -per_record_loss(model, both.X, both.y),
        attack="loss-threshold",
        confidence=confidence,
    )


def auc_difference(
    first: MembershipResult,
    second: MembershipResult,
    *,
    confidence: float = 0.95,
) -> Score:
    """The differential attack: ``first.auc - second.auc`` on the same records, DeLong's paired CI.

    Parameters
    ----------
    first, second : MembershipResult
        The same attack on the full model, and on the model retrained without the set.
    confidence : float, default 0.95
        Confidence level of the CI.

    Returns
    -------
    Score
        ``first``'s AUC as the attack, ``second``'s as the baseline, with the paired CI.

    Raises
    ------
    InputError
        If the two results are not on the same records or ``confidence`` is invalid.
    """
    if first.labels.shape != second.labels.shape or not np.array_equal(first.labels, second.labels):
        raise InputError("auc_difference needs two results on the same candidate records")
    return delong_difference(first.labels, first.scores, second.scores, confidence)


def overfitting_gap(
    model: Any, train: Labelled, test: Labelled, *, confidence: float = 0.95, seed: int = 0
) -> Score:
    """Train minus test accuracy (Newcombe CI) or R^2 (bootstrap CI); bounds the loss attack.

    Parameters
    ----------
    model : object
        The fitted model, a classifier or a regressor.
    train, test : tuple of (pandas.DataFrame, array_like)
        ``(X, y)`` of its training records and of held-out records (at least 2 each).
    confidence : float, default 0.95
        Confidence level of the CI.
    seed : int, default 0
        Seed of the bootstrap (regressors only).

    Returns
    -------
    Score
        Train performance as the attack, test performance as the baseline, with the CI.

    Raises
    ------
    InputError
        If ``train`` or ``test`` is malformed or ``confidence`` is invalid.
    """
    (x_tr, y_tr), (x_te, y_te) = labelled(train, "train"), labelled(test, "test")
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


class BlackBoxAttack(Parameters, ABC):
    """A membership attack fitted once, then run on any target's members and non-members."""

    _fitted: ClassVar[str]
    """The attribute :meth:`fit` sets."""

    def attack(
        self,
        model: Any,
        members: Labelled,
        non_members: Labelled,
        *,
        confidence: float = 0.95,
    ) -> MembershipResult:
        """Score the target's members and non-members.

        Parameters
        ----------
        model : object
            The fitted target model (black box: only its outputs are read).
        members, non_members, confidence
            As in :func:`loss_threshold_attack`.

        Returns
        -------
        MembershipResult
            As in :func:`loss_threshold_attack`.

        Raises
        ------
        NotFittedError
            If called before ``fit``.
        InputError
            If the records are malformed or ``confidence`` is invalid.
        """
        check_fitted(self, self._fitted)
        return scored_candidates(
            members,
            non_members,
            lambda both: self._scores(model, both),
            attack=self._attack_name(),
            confidence=confidence,
        )

    @abstractmethod
    def _scores(self, model: Any, both: Candidates) -> np.ndarray:
        """Each candidate's membership score against ``model``."""

    @abstractmethod
    def _attack_name(self) -> str:
        """The attack's name in its result."""


class ShadowModelAttack(BlackBoxAttack):
    """Shokri et al.'s shadow-model membership attack, against a black-box classifier or regressor.

    The attacker knows the training algorithm and holds auxiliary records (give about twice the
    target's training-set size). See docs/assess/attacks.md.

    Parameters
    ----------
    n_shadows : int, default 4
        Shadow models, >= 1.
    attack_model : {"hgb", "rf", "logreg"}, default "hgb"
        The attack classifier.
    seed : int, default 0
        Seed of the shadows' halves and of the attack models.
    """

    _constraints: ClassVar[Mapping[str, Rule]] = {
        "n_shadows": integer(),
        "attack_model": one_of(ATTACK_MODELS),
        "seed": SEED,
    }

    _fitted = "attack_models_"

    def __init__(self, n_shadows: int = 4, attack_model: str = "hgb", seed: int = 0) -> None:
        self.n_shadows = n_shadows
        self.attack_model = attack_model
        self.seed = seed

    @validated
    def fit(self, estimator: Any, X_aux: pd.DataFrame, y_aux: Any) -> ShadowModelAttack:
        """Train the shadows on halves of the auxiliary data, then the attack models.

        Parameters
        ----------
        estimator : object
            The target's training algorithm (a scikit-learn classifier or regressor), cloned.
        X_aux, y_aux : pandas.DataFrame, array_like
            Auxiliary records (>= 20) and their labels (>= 2 per class for a classifier).

        Returns
        -------
        ShadowModelAttack
            This attack, with ``task_``, ``classes_`` and ``attack_models_`` learned.

        Raises
        ------
        InputError
            If a parameter is invalid, the data are malformed or there are too few records.
        """
        n_shadows = check_positive_int(self.n_shadows, "n_shadows")
        check_choice(self.attack_model, "attack_model", ATTACK_MODELS)
        X, y = labelled((X_aux, y_aux), "aux")
        if len(X) < 20:
            raise InputError(f"aux must hold at least 20 records, got {len(X)}")
        self.task_ = task_of(estimator)
        self.classes_ = np.unique(y) if self.task_ == "classification" else np.zeros(0)
        if self.task_ == "classification":
            classes, counts = np.unique(y, return_counts=True)
            if counts.min() < 2:
                rare = classes[counts.argmin()]
                raise InputError(
                    f"the rarest aux class{offending(rare)} has {int(counts.min())} record(s); "
                    "each class needs at "
                    "least 2, one for each half a shadow model is trained and tested on"
                )
        rng = np.random.default_rng(self.seed)
        features, membership, labels = [], [], []
        for _ in range(n_shadows):
            inside, outside = stratified_halves(
                y if self.task_ == "classification" else None, len(X), rng
            )
            shadow = fit_without(estimator, X.iloc[inside], y[inside])
            for rows, member in ((inside, 1), (outside, 0)):
                features.append(self._features(shadow, X.iloc[rows], y[rows]))
                membership.append(np.full(rows.size, member))
                labels.append(y[rows])
        self._fit_attack_models(
            np.vstack(features), np.concatenate(membership), np.concatenate(labels)
        )
        return self

    def _scores(self, model: Any, both: Candidates) -> np.ndarray:
        return self._membership_scores(self._features(model, both.X, both.y), both.y)

    def _attack_name(self) -> str:
        return "shadow-model"

    def _features(self, model: Any, X: pd.DataFrame, y: np.ndarray) -> np.ndarray:
        """Shadow features, probability columns in the aux data's class order."""
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


def stratified_halves(
    y: np.ndarray | None, n: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """A random half of ``n`` rows and the rest, split within each class when ``y`` is given."""
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


def tpr_at_fpr(labels: np.ndarray, scores: np.ndarray, target: float) -> float:
    """The highest TPR among all thresholds whose FPR is at most ``target``."""
    inside, outside = scores[labels == 1], np.sort(scores[labels == 0])[::-1]
    k = int(np.floor(target * outside.size + 1e-9))
    if k >= outside.size:
        return 1.0
    return float(np.mean(inside > outside[k]))


def tpr_interval(
    result: MembershipResult,
    target: float,
    *,
    confidence: float = 0.95,
    n_boot: int = 200,
    seed: int = 0,
) -> Score:
    """The TPR at FPR <= ``target`` against ``target``, with a stratified bootstrap CI."""
    rows = np.column_stack([result.labels, result.scores])
    return bootstrap_difference(
        lambda r: tpr_at_fpr(r[:, 0], r[:, 1], target),
        rows,
        float(target),
        strata=result.labels,
        n_boot=n_boot,
        seed=seed,
        confidence=confidence,
    )


@dataclass(frozen=True, eq=False)
class Candidates:
    """The records a membership attack scores, members first (``labels``: 1 = member)."""

    X: pd.DataFrame
    y: np.ndarray
    labels: np.ndarray


def candidates(members: Labelled, non_members: Labelled) -> Candidates:
    """Check both ``(X, y)`` pairs (:func:`labelled`) and stack them, members first."""
    (x_in, y_in), (x_out, y_out) = (
        labelled(members, "members"),
        labelled(non_members, "non_members"),
    )
    labels = np.r_[np.ones(len(x_in), dtype=np.int64), np.zeros(len(x_out), dtype=np.int64)]
    X = pd.concat([x_in, x_out], ignore_index=True)
    return Candidates(X, np.concatenate([y_in, y_out]), labels)


def scored_candidates(
    members: Labelled,
    non_members: Labelled,
    score: Callable[[Candidates], np.ndarray],
    *,
    attack: str,
    confidence: float,
) -> MembershipResult:
    """The :func:`membership_result` of ``score`` on the :func:`candidates`."""
    both = candidates(members, non_members)
    return membership_result(both.labels, score(both), attack=attack, confidence=confidence)


def labelled(pair: Labelled, name: str) -> tuple[pd.DataFrame, np.ndarray]:
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
    """What the shadow attack sees of a record: the output vector, the true class's log-probability
    and the entropy (regressors: prediction, label, squared error).
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
