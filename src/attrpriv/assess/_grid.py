"""The work of one assessment as independent, pure tasks of ``(GridData, Task)``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.model_selection import train_test_split

from attrpriv.assess import checkpoint
from attrpriv.assess.choices import OFFLINE_ATTACKS, REFERENCE_ATTACKS
from attrpriv.assess.inference import AttributeInferenceResult, attribute_inference
from attrpriv.assess.membership import (
    MembershipResult,
    ShadowModelAttack,
    auc_difference,
    candidates,
    loss_threshold_attack,
)
from attrpriv.assess.models import fit_without, per_record_loss
from attrpriv.assess.outcomes import ModelOutcome, TaskFailure
from attrpriv.assess.property import property_inference
from attrpriv.assess.reference import (
    MAX_CALIBRATION_ROWS,
    MIN_REFERENCE_ROWS,
    ReferenceTerm,
    fit_reference,
    known_rows,
    reference_attack,
    reference_rows,
)
from attrpriv.errors import InputError, private_values_shown
from attrpriv.stats import Score

__all__ = [
    "AUX_SHARE",
    "GridData",
    "ModelOutcome",
    "ReferenceLosses",
    "Task",
    "TaskFailure",
    "identifier_like",
    "make_split",
    "property_spec",
    "reseeded",
    "run_task",
    "skipped_attacks",
]

AUX_SHARE = 0.5  # share of the rows held out as the attacker's data for shadow models


@dataclass(frozen=True, eq=False)
class GridData:
    """What every task needs: the data, the unfitted estimator, the attack settings."""

    X: pd.DataFrame
    y: pd.Series
    estimator: Any
    classification: bool
    test_size: float
    membership: bool
    membership_attack: str
    n_shadows: int
    n_references: int
    attack_model: str
    max_attack_rows: int | None
    confidence: float
    seed: int
    sensitive: tuple[str, ...] = ()
    sensitive_values: pd.DataFrame | None = None
    checkpoint: str | None = None


@dataclass(frozen=True, eq=False)
class Task:
    """One task of a repeat: a reference, the full model, a retraining without a set, an attack."""

    kind: str
    repeat: int
    features: tuple[str, ...] = ()
    model: Any = None
    reference: MembershipResult | None = None
    index: int = 0
    normalizer: ReferenceTerm | None = None


@dataclass(frozen=True, eq=False)
class ReferenceLosses:
    """One reference model's losses on the candidates (and, offline, on population records)."""

    candidates: np.ndarray
    population: np.ndarray = field(default_factory=lambda: np.zeros(0))
    trained: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))


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
    """Train / test (and shadow aux rows) of one repeat; equal-sized members and non-members."""
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
    data: GridData, model: Any, split: _Split, columns: list[str], task: Task
) -> MembershipResult:
    """The whole-model attack on the columns this model was trained on."""
    members = (split.members[0][columns], split.members[1])
    non_members = (split.non_members[0][columns], split.non_members[1])
    seed = data.seed + task.repeat
    if data.membership_attack in REFERENCE_ATTACKS:
        assert task.normalizer is not None
        return reference_attack(
            model, members, non_members, task.normalizer, confidence=data.confidence
        )
    if data.membership_attack == "loss":
        return loss_threshold_attack(model, members, non_members, confidence=data.confidence)
    assert split.aux is not None
    shadow = ShadowModelAttack(n_shadows=data.n_shadows, seed=seed)
    shadow.fit(reseeded(data.estimator, seed), split.aux[0][columns], split.aux[1])
    return shadow.attack(model, members, non_members, confidence=data.confidence)


def _reference_losses(data: GridData, task: Task) -> ReferenceLosses:
    """Reference model ``task.index`` of the repeat and its losses (offline: unattacked rows)."""
    split = make_split(data, task.repeat)
    seed = data.seed + task.repeat
    estimator = reseeded(data.estimator, seed + 7919 * (task.index + 1))
    labels = data.y.to_numpy()
    stratify = labels if data.classification else None
    both = candidates(split.members, split.non_members)
    if data.membership_attack not in OFFLINE_ATTACKS:
        rows = reference_rows(stratify, len(labels) // 2, index=task.index, seed=seed)
        model = _fit_all(estimator, lambda: fit_reference(estimator, data.X, labels, rows))
        return ReferenceLosses(per_record_loss(model, both.X, both.y))
    pool = population_rows(data, split)
    trained = split.train[0].index.to_numpy()
    rows = known_rows(stratify, pool, trained, index=task.index, seed=seed)
    model = _fit_all(estimator, lambda: fit_reference(estimator, data.X, labels, rows))
    probe = np.sort(np.random.default_rng([seed, 104729]).permutation(pool)[:MAX_CALIBRATION_ROWS])
    return ReferenceLosses(
        per_record_loss(model, both.X, both.y),
        per_record_loss(model, data.X.iloc[probe], labels[probe]),
        np.isin(probe, rows),
    )


def population_rows(data: GridData, split: _Split) -> np.ndarray:
    """Positions of the unattacked rows an offline reference may train on (InputError below 20)."""
    attacked = np.r_[split.members[0].index.to_numpy(), split.non_members[0].index.to_numpy()]
    pool = np.setdiff1d(np.arange(len(data.X)), attacked)
    if pool.size < MIN_REFERENCE_ROWS:
        raise InputError(
            f"offline reference models need at least {MIN_REFERENCE_ROWS} rows that are not "
            f"attacked, got {pool.size}; lower max_attack_rows or use "
            "membership_attack='rmia-online'"
        )
    return pool


def _fit_all(estimator: Any, fit: Callable[[], Any]) -> Any:
    """``fit()`` of the full model; an estimator that cannot take X is an InputError."""
    try:
        return fit()
    except (ValueError, TypeError) as exc:
        cause = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        if not private_values_shown() and ":" in cause:  # "could not convert ...: 'A11'"
            cause = f"{cause.split(':')[0]}: details hidden, --debug shows them"
        raise InputError(
            f"estimator {type(estimator).__name__} could not be trained on X ({cause}); "
            "if X has categorical columns, use a pipeline that encodes them, e.g. "
            "attrpriv.assess.models.make_model"
        ) from None


def _retrain(data: GridData, task: Task) -> ModelOutcome:
    """Fit the full model, or the model without ``task.features``; measure it."""
    split = make_split(data, task.repeat)
    X_tr, y_tr = split.train
    estimator = reseeded(data.estimator, data.seed + task.repeat)
    if task.kind == "full":
        model = _fit_all(estimator, lambda: estimator.fit(X_tr, y_tr))
    else:
        model = fit_without(estimator, X_tr, y_tr, task.features)
    columns = [c for c in X_tr.columns if c not in task.features]
    membership = _membership(data, model, split, columns, task) if data.membership else None
    differential = None
    if membership is not None and task.reference is not None:
        differential = auc_difference(task.reference, membership, confidence=data.confidence)
    seed = data.seed + task.repeat
    sensitive = {a: _infer_sensitive(data, model, split, columns, a, seed) for a in data.sensitive}
    return ModelOutcome(
        utility_train=float(model.score(split.members[0][columns], split.members[1])),
        utility_test=float(model.score(split.non_members[0][columns], split.non_members[1])),
        membership=membership,
        model=model if task.kind == "full" else None,
        differential=differential,
        sensitive=sensitive,
    )


def _infer_sensitive(
    data: GridData, model: Any, split: _Split, columns: list[str], attribute: str, seed: int
) -> AttributeInferenceResult:
    """How well an attacker who queries this model infers ``attribute`` of the members."""
    X_m, y_m = split.members
    source = data.X if attribute in data.X.columns else data.sensitive_values
    assert source is not None
    known = X_m[[c for c in columns if c != attribute]]
    frame = known.assign(**{attribute: source[attribute].loc[X_m.index]})
    present = frame[attribute].notna().to_numpy()
    return attribute_inference(
        model,
        frame[present],
        y_m[present],
        attribute,
        seed=seed,
        confidence=data.confidence,
        attack_model=data.attack_model,
    )


IDENTIFIER_SHARE = 0.5  # a categorical feature with more singleton values is identifier-like


def identifier_like(
    X: pd.DataFrame, features: Sequence[str], *, categorical_only: bool = False
) -> dict[str, float]:
    """Features most of whose values occur once, with that share."""
    found = {}
    for feature in features:
        values = X[feature].dropna()
        numeric = pd.api.types.is_numeric_dtype(values) and not isinstance(
            values.dtype, pd.CategoricalDtype
        )
        if categorical_only and numeric:
            continue
        counts = values.value_counts()
        share = float(counts[counts == 1].sum()) / max(len(values), 1)
        if share > IDENTIFIER_SHARE:
            found[feature] = share
    return found


def skipped_attacks(
    X: pd.DataFrame, features: Sequence[str], attacks: Sequence[str]
) -> dict[tuple[str, str], str]:
    """(attack, feature) pairs a feature-level attack cannot run on, with the reason."""
    found: dict[tuple[str, str], str] = {}
    if "attribute" in attacks:
        for feature, share in identifier_like(X, features, categorical_only=True).items():
            found["attribute", feature] = (
                f"{share:.0%} of its values occur once (an identifier: no other record shows "
                "its value)"
            )
    if "property" in attacks:
        for feature in features:
            if X[feature].nunique(dropna=True) < 2:
                found["property", feature] = "it takes a single value (no property to tell apart)"
            elif not _separable(X[feature], property_spec(X[feature])):
                found["property", feature] = (
                    "its values are too close for floating point to hold two different means"
                )
    return found


def _separable(values: pd.Series, spec: dict[str, Any]) -> bool:
    """Whether the property's two targets are distinct values strictly inside the range."""
    if spec["property"] != "mean":
        return True
    return bool(values.min() < spec["low"] < spec["high"] < values.max())


def property_spec(values: pd.Series) -> dict[str, Any]:
    """The property to tell apart: mean -+ sd/2 inside the range, or top share -+ 0.2."""
    if pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
        mean, spread = float(values.mean()), 0.5 * float(values.std())
        low = max(mean - spread, (float(values.min()) + mean) / 2)
        high = min(mean + spread, (float(values.max()) + mean) / 2)
        return {"property": "mean", "category": None, "low": low, "high": high}
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


def run_task(data: GridData, task: Task) -> ModelOutcome | Score | ReferenceLosses | TaskFailure:
    """Run one task of the grid (module-level, so worker processes can unpickle it)."""
    if task.kind == "reference":
        return _reference_losses(data, task)
    if task.kind == "full":
        return _retrain(data, task)
    if data.checkpoint is None:
        return _guarded(data, task)
    path = checkpoint.result_path(data.checkpoint, task.kind, task.repeat, task.features)
    found: ModelOutcome | Score | TaskFailure | None = checkpoint.from_json(path)
    if found is not None:
        return found
    result = _guarded(data, task)
    checkpoint.to_json(result, path)
    return result


def _guarded(data: GridData, task: Task) -> ModelOutcome | Score | TaskFailure:
    """A retraining without a set or a feature-level attack; a failure is returned."""
    try:
        return _retrain(data, task) if task.kind == "without" else _feature_attack(data, task)
    except Exception as exc:  # one failed part is recorded, the audit goes on
        return TaskFailure(task.kind, task.repeat, task.features, _reason(exc))


def _reason(exc: Exception) -> str:
    """The first line of an exception, cut before any quoted value unless values are shown."""
    line = (str(exc).strip().splitlines() or [""])[0] or type(exc).__name__
    if not private_values_shown() and ":" in line and not isinstance(exc, InputError):
        line = f"{line.split(':')[0]}: details hidden, --debug shows them"
    return f"{type(exc).__name__}: {line}"
