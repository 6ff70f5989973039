"""Attribute inference: does the model's output reveal a feature of its training records?

Threat model (black box, in the manner of ART's ``AttributeInferenceBlackBox`` and its
baselines): the attacker knows every other feature of a target record, sees what the model
returns for the full record, and knows the true feature value of part of the records (the
attack's training half); every attacker is scored on the other half. Attacks:

- ``learned``: learns ``(other features, model output) -> feature``;
- ``learned_with_label``: the same, also given the record's true label;
- ``query`` (categorical features, classifiers): Fredrikson et al.'s (USENIX Security 2014) MAP
  guess, querying the model with each candidate value and weighing how well it then predicts the
  true label against the features-only attacker's belief.

Baselines, trained and scored on the same halves, without the model: ``features_only`` and
``features_and_label`` (the other features plus the true label, which a confident model nearly
gives away: a model that reveals the feature only through its label is doing its job, not
leaking), and ``prior`` (the most frequent value / the median). The headline
:class:`~attrpriv.stats.Score` is the best attack's rate minus the stronger of the first
two baselines, with Newcombe's paired CI (same records). ``parts`` also gives the gain of each
threat model on its own: ``learned - features_only`` and ``best with label - features_and_label``.

Categorical features are scored by accuracy. Continuous ones by the share of records whose
guess is within ``tolerance`` standard deviations of the truth (a 0/1 outcome per record, so the
same paired CI applies); R^2 of each attacker is reported alongside.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from attrpriv._checks import check_choice, check_positive, check_probability
from attrpriv.assess.models import (
    MODEL_CHOICES,
    class_columns,
    make_model,
    predict_outputs,
    task_of,
)
from attrpriv.errors import InputError
from attrpriv.stats import Score, rate_difference

__all__ = ["AttributeInferenceResult", "attack_learner", "attribute_inference", "feature_kind"]

Kind = Literal["categorical", "continuous"]
MIN_RECORDS = 20
INFERENCE_ATTACKS = ("learned", "learned_with_label", "query")
BASELINES = ("features_only", "features_and_label")


@dataclass(frozen=True)
class AttributeInferenceResult:
    """An attribute inference attack on one feature: attack, baselines, and the score."""

    feature: str
    kind: str
    metric: str
    score: Score
    baselines: dict[str, float]
    attacks: dict[str, float] = field(default_factory=dict)
    parts: dict[str, float | str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "feature": self.feature,
            "kind": self.kind,
            "metric": self.metric,
            "attacks": dict(self.attacks),
            "baselines": dict(self.baselines),
            "score": self.score.to_dict(),
            "parts": dict(self.parts),
        }


def feature_kind(values: pd.Series) -> Kind:
    """``continuous`` for numeric (non-bool) columns, else ``categorical``."""
    numeric = pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)
    return "continuous" if numeric else "categorical"


def attribute_inference(
    model: Any,
    X: pd.DataFrame,
    y: Any,
    feature: str,
    *,
    seed: int = 0,
    confidence: float = 0.95,
    kind: str = "auto",
    tolerance: float = 0.25,
    attack_model: str = "hgb",
    train_size: float = 0.5,
) -> AttributeInferenceResult:
    """Infer ``feature`` of the records ``X`` (labels ``y``) from the model's outputs.

    ``X`` holds the records under attack (the model's training records, to measure what the
    model leaks about them). ``kind``: ``"auto"`` (by dtype), ``"categorical"`` or
    ``"continuous"``. ``tolerance``: the continuous hit radius, in standard deviations of the
    feature on the attacker's half. ``attack_model``: the learner of every attacker (one of
    :data:`~attrpriv.assess.models.MODEL_CHOICES`).
    """
    frame, labels = _inputs(X, y, feature)
    kind = _kind(frame[feature], kind)
    tolerance = check_positive(tolerance, "tolerance")
    check_choice(attack_model, "attack_model", MODEL_CHOICES)
    train_size = check_probability(train_size, "train_size")
    learn, judge = _halves(len(frame), train_size, seed)
    target = frame[feature]
    others = frame.drop(columns=[feature])
    outputs = pd.DataFrame(predict_outputs(model, frame), index=frame.index).add_prefix(
        "model_output_"
    )
    label = _label_column(labels)
    views = {
        "learned": pd.concat([others, outputs], axis=1),
        "learned_with_label": pd.concat([others, outputs], axis=1).assign(true_label=label),
        "features_only": others,
        "features_and_label": others.assign(true_label=label),
    }
    task = "classification" if kind == "categorical" else "regression"
    known = _target_values(target.iloc[learn], kind)
    learners = {name: attack_learner(attack_model, task, seed) for name in views}
    guesses = {}
    for name, view in views.items():
        learners[name].fit(view.iloc[learn], known)
        guesses[name] = np.asarray(learners[name].predict(view.iloc[judge]))
    guesses["prior"] = _prior_guess(target.iloc[learn], kind, len(judge))
    if kind == "categorical" and task_of(model) == "classification":
        prior = learners["features_only"].predict_proba(others.iloc[judge])
        candidates = learners["features_only"].classes_
        guesses["query"] = _query_guess(
            model, frame.iloc[judge], labels[judge], feature, prior, candidates
        )
    return _result(feature, kind, target, learn, judge, guesses, tolerance, confidence)


# -- helpers -------------------------------------------------------------------------------------


def attack_learner(name: str, task: str, seed: int) -> Any:
    """A built-in model as an attacker's learner; boosting made shallower and slower.

    The attackers learn from half the records (often about a thousand), where scikit-learn's
    default boosting (31 leaves, rate 0.1) overfits and makes a weak baseline, which would
    inflate every gain: 8 leaves at rate 0.05 match sklearn's GradientBoostingClassifier
    (ART's attack model) as a features-only baseline (docs/assess/attacks.md).
    """
    learner = make_model(name, task=task, seed=seed)
    if name == "hgb":
        learner.set_params(model__max_leaf_nodes=8, model__learning_rate=0.05)
    return learner


def _inputs(X: Any, y: Any, feature: str) -> tuple[pd.DataFrame, np.ndarray]:
    if not isinstance(X, pd.DataFrame):
        raise InputError(f"X must be a pandas DataFrame, got {type(X).__name__}")
    if feature not in X.columns:
        raise InputError(f"feature {feature!r} is not a column of X ({list(X.columns)})")
    if X.shape[1] < 2:
        raise InputError("attribute inference needs at least one feature besides the target one")
    labels = np.asarray(y)
    if labels.shape != (len(X),):
        raise InputError(f"y has shape {labels.shape}, expected ({len(X)},)")
    if len(X) < MIN_RECORDS:
        raise InputError(f"attribute inference needs at least {MIN_RECORDS} records, got {len(X)}")
    if X[feature].isna().any():
        raise InputError(f"feature {feature!r} has missing values; drop or fill those records")
    return X.reset_index(drop=True), labels


def _kind(values: pd.Series, kind: str) -> Kind:
    kind = check_choice(kind, "kind", ("auto", "categorical", "continuous"))
    if kind == "auto":
        return feature_kind(values)
    if kind == "continuous" and feature_kind(values) == "categorical":
        raise InputError(f"feature {values.name!r} is not numeric, so it cannot be continuous")
    return "categorical" if kind == "categorical" else "continuous"


def _halves(n: int, train_size: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    order = np.random.default_rng(seed).permutation(n)
    cut = min(max(round(n * train_size), 1), n - 1)
    return np.sort(order[:cut]), np.sort(order[cut:])


def _label_column(labels: np.ndarray) -> Any:
    """The true label as a column: categorical unless it is a float (a regression target)."""
    if labels.dtype.kind == "f":
        return labels
    return pd.Categorical(labels.astype(str))


def _target_values(values: pd.Series, kind: Kind) -> np.ndarray:
    """The feature as the attackers learn it: strings (a class) or floats."""
    if kind == "categorical":
        return np.asarray(values.astype(str).to_numpy())
    return values.to_numpy(dtype=float)


def _query_guess(
    model: Any,
    rows: pd.DataFrame,
    labels: np.ndarray,
    feature: str,
    prior: np.ndarray,
    candidates: np.ndarray,
) -> np.ndarray:
    """Fredrikson et al.'s MAP guess: ``argmax_v P_model(true label | others, v) P(v | others)``.

    The model is queried once per candidate value with the feature set to it; ``prior`` is the
    features-only attacker's belief, so this attacker knows what that baseline knows, plus the
    label and query access to the model.
    """
    originals = {str(v): v for v in rows[feature].tolist()}
    columns = class_columns(model, labels)
    likelihood = np.empty((len(rows), len(candidates)))
    for j, value in enumerate(candidates.tolist()):
        queried = _with_value(rows, feature, originals.get(value, value))
        likelihood[:, j] = predict_outputs(model, queried)[np.arange(len(rows)), columns]
    log_post = np.log(np.clip(likelihood, 1e-12, 1.0)) + np.log(np.clip(prior, 1e-12, 1.0))
    return np.asarray(candidates[np.argmax(log_post, axis=1)])


def _with_value(rows: pd.DataFrame, feature: str, value: Any) -> pd.DataFrame:
    """``rows`` with ``feature`` set to ``value`` everywhere, its dtype kept (a new frame)."""
    column = rows[feature]
    if isinstance(column.dtype, pd.CategoricalDtype) and value in column.cat.categories:
        filled: Any = pd.Categorical([value] * len(rows), dtype=column.dtype)
    else:
        filled = [value] * len(rows)
    return rows.assign(**{feature: pd.Series(filled, index=rows.index)})


def _prior_guess(known: pd.Series, kind: Kind, n: int) -> np.ndarray:
    """The guess of an attacker who knows only the feature's distribution: mode or median."""
    if kind == "categorical":
        return np.full(n, known.astype(str).mode().iloc[0], dtype=object)
    return np.full(n, float(known.astype(float).median()))


def _result(
    feature: str,
    kind: Kind,
    target: pd.Series,
    learn: np.ndarray,
    judge: np.ndarray,
    guesses: dict[str, np.ndarray],
    tolerance: float,
    confidence: float,
) -> AttributeInferenceResult:
    truth = _target_values(target.iloc[judge], kind)
    parts: dict[str, float | str] = {"n_learn": learn.size, "n_judged": judge.size}
    if kind == "categorical":
        hits = {name: guess.astype(str) == truth for name, guess in guesses.items()}
        metric = "accuracy"
    else:
        radius = tolerance * float(target.iloc[learn].astype(float).std(ddof=0))
        hits = {
            name: np.abs(guess.astype(float) - truth) <= radius for name, guess in guesses.items()
        }
        metric = f"within {tolerance:g} sd (±{radius:.4g})"
        parts.update({f"r2_{name}": _r2(truth, guess) for name, guess in guesses.items()})
    rates = {name: float(h.mean()) for name, h in hits.items()}
    attack = max((n for n in INFERENCE_ATTACKS if n in rates), key=lambda name: rates[name])
    stronger = max(BASELINES, key=lambda name: rates[name])
    score = rate_difference(hits[attack], hits[stronger], confidence)
    with_label = max(rates[n] for n in INFERENCE_ATTACKS[1:] if n in rates)
    parts["gain_without_label"] = rates["learned"] - rates["features_only"]
    parts["gain_with_label"] = with_label - rates["features_and_label"]
    return AttributeInferenceResult(
        feature,
        kind,
        metric,
        score,
        baselines={name: rates[name] for name in (*BASELINES, "prior")},
        attacks={name: rates[name] for name in INFERENCE_ATTACKS if name in rates},
        parts=parts | {"best_attack": attack, "best_baseline": stronger},
    )


def _r2(truth: np.ndarray, guess: np.ndarray) -> float:
    total = float(np.sum((truth - truth.mean()) ** 2))
    return 1.0 - float(np.sum((truth - guess.astype(float)) ** 2)) / total if total > 0 else 0.0
