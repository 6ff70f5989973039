"""The work of one assessment, as independent tasks (run by :mod:`attrpriv.assess.parallel`).

A task is one retraining (the full model, or the model without a feature set) with its
membership attack, utility and overfitting gap, or one feature-level attack on one feature; all
for one repeat. Every task rebuilds its split from ``seed + repeat``, so it is a pure function of
``(GridData, Task)`` and any backend gives the same results.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.model_selection import train_test_split

from attrpriv.assess.inference import attribute_inference
from attrpriv.assess.membership import (
    MembershipResult,
    ShadowModelAttack,
    auc_difference,
    loss_threshold_attack,
)
from attrpriv.assess.models import fit_without
from attrpriv.assess.property import property_inference
from attrpriv.assess.report import FeatureSetRisk, MembershipSummary, ModelSummary, RocCurve
from attrpriv.assess.scoring import (
    ScoreWeights,
    differential_score,
    modified_score,
    overall_score,
    score_flags,
)
from attrpriv.assess.stats import Score, pool_scores
from attrpriv.errors import InputError

__all__ = [
    "AUX_SHARE",
    "GridData",
    "ModelOutcome",
    "Outcomes",
    "Task",
    "make_split",
    "model_summary",
    "property_spec",
    "rank",
    "reseeded",
    "run_task",
    "set_risk",
    "summarize_membership",
]

AUX_SHARE = 0.5  # share of the rows held out as the attacker's data for shadow models


@dataclass(frozen=True, eq=False)
class GridData:
    """What every task needs: the data, the (unfitted) estimator and the attack settings."""

    X: pd.DataFrame
    y: pd.Series
    estimator: Any
    classification: bool
    test_size: float
    membership: bool
    membership_attack: str
    n_shadows: int
    attack_model: str
    max_attack_rows: int | None
    n_boot: int
    confidence: float
    seed: int


@dataclass(frozen=True, eq=False)
class Task:
    """``kind`` = ``"full"`` | ``"without"`` | ``"attribute"`` | ``"property"``.

    ``features``: the dropped set (``"without"``) or the one attacked feature (feature-level).
    ``model``: the full model of this repeat, for the attribute attack. ``reference``: the
    membership attack on the full model of this repeat (same records), for the paired
    differential score of a ``"without"`` task.
    """

    kind: str
    repeat: int
    features: tuple[str, ...] = ()
    model: Any = None
    reference: MembershipResult | None = None


@dataclass(frozen=True, eq=False)
class ModelOutcome:
    """A retrained model's utility (train and test metric) and membership attack."""

    utility_train: float
    utility_test: float
    membership: MembershipResult | None
    model: Any = None
    differential: Score | None = None

    @property
    def gap(self) -> float:
        return self.utility_train - self.utility_test


@dataclass(frozen=True, eq=False)
class _Split:
    train: tuple[pd.DataFrame, pd.Series]
    test: tuple[pd.DataFrame, pd.Series]
    members: tuple[pd.DataFrame, pd.Series]
    non_members: tuple[pd.DataFrame, pd.Series]
    aux: tuple[pd.DataFrame, pd.Series] | None


def reseeded(estimator: Any, seed: int) -> Any:
    """An unfitted clone with every ``random_state`` parameter (nested ones too) set to ``seed``."""
    model = clone(estimator)
    keys = [k for k in model.get_params(deep=True) if k.split("__")[-1] == "random_state"]
    if keys:
        model.set_params(**dict.fromkeys(keys, seed))
    return model


def _split_rows(
    X: pd.DataFrame, y: pd.Series, share: float, seed: int, stratify: bool
) -> tuple[pd.DataFrame, pd.DataFrame, pd.Series, pd.Series]:
    try:
        parts = train_test_split(
            X, y, test_size=share, random_state=seed, stratify=y if stratify else None
        )
    except ValueError as exc:
        raise InputError(f"cannot split the rows (target y): {exc}") from None
    return parts[0], parts[1], parts[2], parts[3]


def _sample(
    part: tuple[pd.DataFrame, pd.Series], n: int, rng: np.random.Generator
) -> tuple[pd.DataFrame, pd.Series]:
    idx = np.sort(rng.choice(len(part[0]), size=n, replace=False))
    return part[0].iloc[idx], part[1].iloc[idx]


def make_split(data: GridData, repeat: int) -> _Split:
    """Train / test (and the attacker's aux rows for shadow models) of one repeat.

    Members and non-members are equal-sized samples of train and test (at most
    ``max_attack_rows`` each), so a random guess scores 0.5.
    """
    seed = data.seed + repeat
    X, y, aux = data.X, data.y, None
    if data.membership_attack == "shadow":
        X, X_aux, y, y_aux = _split_rows(X, y, AUX_SHARE, seed, data.classification)
        aux = (X_aux, y_aux)
    X_tr, X_te, y_tr, y_te = _split_rows(X, y, data.test_size, seed, data.classification)
    n = min(len(X_tr), len(X_te), data.max_attack_rows or len(X_te))
    rng = np.random.default_rng(seed)
    members = _sample((X_tr, y_tr), n, rng)
    non_members = _sample((X_te, y_te), n, rng)
    return _Split((X_tr, y_tr), (X_te, y_te), members, non_members, aux)


def _membership(
    data: GridData, model: Any, split: _Split, columns: list[str], repeat: int
) -> MembershipResult:
    """The whole-model attack of claim 1, on the columns this model was trained on."""
    members = (split.members[0][columns], split.members[1])
    non_members = (split.non_members[0][columns], split.non_members[1])
    seed = data.seed + repeat
    if data.membership_attack == "loss":
        return loss_threshold_attack(
            model, members, non_members, confidence=data.confidence, n_boot=data.n_boot, seed=seed
        )
    assert split.aux is not None
    shadow = ShadowModelAttack(n_shadows=data.n_shadows, seed=seed)
    shadow.fit(reseeded(data.estimator, seed), split.aux[0][columns], split.aux[1])
    return shadow.attack(
        model, members, non_members, confidence=data.confidence, n_boot=data.n_boot
    )


def _retrain(data: GridData, task: Task) -> ModelOutcome:
    """Fit the full model, or the model without ``task.features``; measure it."""
    split = make_split(data, task.repeat)
    X_tr, y_tr = split.train
    X_te, y_te = split.test
    estimator = reseeded(data.estimator, data.seed + task.repeat)
    if task.kind == "full":
        model = estimator.fit(X_tr, y_tr)
    else:
        model = fit_without(estimator, X_tr, y_tr, task.features)
    columns = [c for c in X_tr.columns if c not in task.features]
    membership = _membership(data, model, split, columns, task.repeat) if data.membership else None
    differential = None
    if membership is not None and task.reference is not None:
        differential = auc_difference(
            task.reference,
            membership,
            n_boot=data.n_boot,
            seed=data.seed + task.repeat,
            confidence=data.confidence,
        )
    return ModelOutcome(
        utility_train=float(model.score(X_tr[columns], y_tr)),
        utility_test=float(model.score(X_te[columns], y_te)),
        membership=membership,
        model=model if task.kind == "full" else None,
        differential=differential,
    )


def property_spec(values: pd.Series) -> dict[str, Any]:
    """The property a property-inference attack tries to tell apart, read off the feature.

    Numeric feature: its mean, low/high = mean -+ half a standard deviation. Categorical: the
    share of its most frequent category, low/high = that share -+ 0.2 (kept inside [0.05, 0.95]).
    """
    if pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
        mean, spread = float(values.mean()), 0.5 * float(values.std())
        return {"property": "mean", "category": None, "low": mean - spread, "high": mean + spread}
    shares = values.value_counts(normalize=True)
    category, share = shares.index[0], float(shares.iloc[0])
    low, high = max(0.05, share - 0.2), min(0.95, share + 0.2)
    return {"property": "share", "category": category, "low": low, "high": high}


def _known(part: tuple[pd.DataFrame, pd.Series], feature: str) -> tuple[pd.DataFrame, pd.Series]:
    """The records whose ``feature`` is known: a missing value leaves nothing to infer."""
    X, y = part
    keep = X[feature].notna().to_numpy()
    return (X, y) if keep.all() else (X[keep], y[keep])


def _feature_attack(data: GridData, task: Task) -> Score:
    """A feature-level attack on one feature, for one repeat."""
    split = make_split(data, task.repeat)
    (feature,) = task.features
    seed = data.seed + task.repeat
    if task.kind == "attribute":
        X_m, y_m = _known(split.members, feature)
        result = attribute_inference(
            task.model,
            X_m,
            y_m,
            feature,
            seed=seed,
            confidence=data.confidence,
            attack_model=data.attack_model,
        )
        return result.score
    X_tr, y_tr = _known(split.train, feature)
    spec = property_spec(X_tr[feature])
    game = property_inference(
        reseeded(data.estimator, seed),
        X_tr,
        y_tr,
        feature,
        n_shadows=data.n_shadows,
        seed=seed,
        confidence=data.confidence,
        **spec,
    )
    return game.score


def run_task(data: GridData, task: Task) -> ModelOutcome | Score:
    """Run one task of the grid (module-level, so worker processes can unpickle it)."""
    if task.kind in ("full", "without"):
        return _retrain(data, task)
    return _feature_attack(data, task)


# -- from outcomes to the ranked report ----------------------------------------------------------


def _pool(scores: Sequence[Score], confidence: float) -> Score:
    return scores[0] if len(scores) == 1 else pool_scores(scores, confidence)


def summarize_membership(
    outcomes: Sequence[ModelOutcome], confidence: float
) -> MembershipSummary | None:
    """One model's membership attack over the repeats: pooled score, mean metrics, first ROC."""
    results = [o.membership for o in outcomes if o.membership is not None]
    if not results:
        return None
    return MembershipSummary(
        score=_pool([r.score for r in results], confidence),
        auc=float(np.mean([r.auc for r in results])),
        advantage=float(np.mean([r.advantage for r in results])),
        tpr_at_1pct_fpr=float(np.mean([r.tpr_at_1pct_fpr for r in results])),
        tpr_at_01pct_fpr=float(np.mean([r.tpr_at_01pct_fpr for r in results])),
        roc=RocCurve.from_arrays(results[0].fpr, results[0].tpr),
    )


def _mean(outcomes: Sequence[ModelOutcome], attribute: str) -> float:
    return float(np.mean([getattr(o, attribute) for o in outcomes]))


@dataclass(frozen=True, eq=False)
class Outcomes:
    """The grid's results, grouped by (kind, features) in repeat order."""

    full: list[ModelOutcome]
    grouped: dict[tuple[str, tuple[str, ...]], list[Any]]

    @classmethod
    def collect(
        cls, full: list[ModelOutcome], tasks: Sequence[Task], results: Sequence[Any]
    ) -> Outcomes:
        grouped: dict[tuple[str, tuple[str, ...]], list[Any]] = {}
        for task, result in zip(tasks, results, strict=True):
            grouped.setdefault((task.kind, task.features), []).append(result)
        return cls(full, grouped)


def set_risk(
    group: tuple[str, ...],
    outcomes: Outcomes,
    data: GridData,
    weights: ScoreWeights,
    threshold: float,
) -> FeatureSetRisk:
    """Every score of one feature set (rank filled in by :func:`rank`)."""
    full = outcomes.full
    without: list[ModelOutcome] = outcomes.grouped[("without", group)]
    attacks: dict[str, Score] = {}
    paired = [o.differential for o in without if o.differential is not None]
    if paired:
        attacks["membership"] = differential_score(paired, data.confidence)
    per_feature: dict[str, dict[str, Score]] = {f: {} for f in group}
    for kind in ("attribute", "property"):
        for f in group:
            if (kind, (f,)) in outcomes.grouped:
                per_feature[f][kind] = _pool(outcomes.grouped[(kind, (f,))], data.confidence)
        present = [per_feature[f][kind] for f in group if kind in per_feature[f]]
        if present:
            attacks[kind] = max(present, key=lambda s: s.difference)
    overall, overall_ci = overall_score(attacks, weights)
    overfitting = _mean(full, "gap") - _mean(without, "gap")
    importance = _mean(full, "utility_test") - _mean(without, "utility_test")
    modified = modified_score(overall, overfitting, importance, weights)
    return FeatureSetRisk(
        features=group,
        attacks=attacks,
        overall=overall,
        overall_ci=overall_ci,
        modified=modified,
        overfitting=overfitting,
        importance=importance,
        utility_without=_mean(without, "utility_test"),
        flags=score_flags(attacks, overall, modified, threshold),
        rank=0,
        membership_without=summarize_membership(without, data.confidence),
        per_feature=per_feature,
    )


def rank(risks: Sequence[FeatureSetRisk]) -> tuple[FeatureSetRisk, ...]:
    """Riskiest first by modified score (ties by label), ranks 1..n."""
    ordered = sorted(risks, key=lambda r: (-r.modified, r.label))
    return tuple(replace(r, rank=i) for i, r in enumerate(ordered, start=1))


def model_summary(full: Sequence[ModelOutcome], data: GridData) -> ModelSummary:
    """The model on all features: mean train/test metric and its membership attack."""
    return ModelSummary(
        metric="accuracy" if data.classification else "r2",
        utility_train=_mean(full, "utility_train"),
        utility_test=_mean(full, "utility_test"),
        membership=summarize_membership(full, data.confidence),
    )
