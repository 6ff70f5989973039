"""Attribute inference (black box, as ART's): learned and query attackers (Fredrikson et al., 2014)
minus the stronger model-free baseline, Newcombe's paired CI. See docs/assess/attacks.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from attrpriv._checks import check_choice, check_positive, check_probability
from attrpriv.assess.choices import MODEL_CHOICES
from attrpriv.assess.models import (
    class_columns,
    coded_columns,
    make_coder,
    make_model,
    make_preprocessor,
    predict_outputs,
    task_of,
)
from attrpriv.errors import InputError
from attrpriv.stats import Score, rate_difference

__all__ = ["AttributeInferenceResult", "attack_learner", "attribute_inference", "feature_kind"]

Kind = Literal["categorical", "continuous"]
MIN_RECORDS = 20
MAX_ATTACK_CLASSES = 20  # values of a feature the attackers learn apart; the rest are "rare"
RARE = "\x00rare"  # the learners' class of the rare values: never equal to a real value
EARLY_STOP_ROWS = 200  # boosted learners on at least this many rows stop early
INFERENCE_ATTACKS = ("learned", "learned_with_label", "query")
BASELINES = ("features_only", "features_and_label")


@dataclass(frozen=True)
class AttributeInferenceResult:
    """An attribute inference attack on one feature: attack, baselines, and the score.

    Parameters
    ----------
    feature : str
        The attacked feature.
    kind : str
        ``"categorical"`` or ``"continuous"``.
    metric : str
        What a rate counts: ``"accuracy"`` or ``"within T sd (±R)"``.
    score : Score
        Best attack minus the stronger model-free baseline, with Newcombe's paired CI.
    baselines : dict of str to float
        The rate of ``features_only``, ``features_and_label`` and ``prior``.
    attacks : dict of str to float, default {}
        The rate of each attack that ran.
    parts : dict of str to float or str, default {}
        Details: sizes, each threat model's gain, the best attack and baseline, R^2.
    hits : numpy.ndarray, default empty
        The best attack's hit (1) or miss (0) per judged record (not in :meth:`to_dict`).
    """

    feature: str
    kind: str
    metric: str
    score: Score
    baselines: dict[str, float]
    attacks: dict[str, float] = field(default_factory=dict)
    parts: dict[str, float | str] = field(default_factory=dict)
    hits: np.ndarray = field(default_factory=lambda: np.zeros(0), repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        """The result as JSON-ready values.

        Returns
        -------
        dict of str to object
            Every field but ``hits``; ``score`` as a dict.
        """
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

    Attackers learn on a random share of the records and are judged with the baselines on the
    rest: accuracy, or for a continuous feature hits within ``tolerance``.

    Parameters
    ----------
    model : object
        The fitted model under attack (black box), a classifier or a regressor.
    X, y : pandas.DataFrame, array_like
        The attacked (training) records, >= 20 with ``feature`` and another column, and labels.
    feature : str
        The column of ``X`` to infer, with no missing value.
    seed : int, default 0
        Seed of the split and of the attackers' learners.
    confidence : float, default 0.95
        Confidence level of the score's CI.
    kind : {"auto", "categorical", "continuous"}, default "auto"
        How the feature is scored; ``"auto"``: numeric non-bool columns are continuous.
    tolerance : float, default 0.25
        The continuous hit radius, in standard deviations; > 0.
    attack_model : {"logreg", "rf", "hgb", "mlp"}, default "hgb"
        The learner of every attacker.
    train_size : float, default 0.5
        The attacker's share of the records, in (0, 1).

    Returns
    -------
    AttributeInferenceResult
        The rates of the attacks and baselines, and the score.

    Raises
    ------
    InputError
        If ``X``, ``feature``, ``y`` or a parameter is invalid, or there are too few rows.
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
    task = "classification" if kind == "categorical" else "regression"
    boosted = attack_model == "hgb"
    fit_rows, known = _learned_target(target.iloc[learn], learn, kind, boosted)
    early = _early_stop(known, kind, boosted)
    # the other features, encoded once for all four views: as each learner's pipeline would,
    # or for boosting as codes it splits natively (one column per feature, not one per value)
    encoder = (make_coder() if boosted else make_preprocessor()).fit(others.iloc[fit_rows])
    names = encoder.get_feature_names_out() if boosted else None  # codes keep their names
    base = pd.DataFrame(encoder.transform(others), index=frame.index, columns=names).add_prefix(
        "feature_"
    )
    views = {
        "learned": pd.concat([base, outputs], axis=1),
        "learned_with_label": pd.concat([base, outputs], axis=1).assign(true_label=label),
        "features_only": base,
        "features_and_label": base.assign(true_label=label),
    }
    learners = {name: attack_learner(attack_model, task, seed, early_stop=early) for name in views}
    if boosted:
        views, learners = _unwrapped(views, learners, encoder)
    guesses = {}
    for name, view in views.items():
        learners[name].fit(view.iloc[fit_rows], known)
        guesses[name] = np.asarray(learners[name].predict(view.iloc[judge]))
    guesses["prior"] = _prior_guess(target.iloc[learn], kind, len(judge))
    queried = feature in getattr(model, "feature_names_in_", [feature])  # a model input
    if kind == "categorical" and task_of(model) == "classification" and queried:
        baseline = learners["features_only"]
        guesses["query"] = _query_attack(
            model, baseline, base.iloc[judge], frame.iloc[judge], labels[judge], feature
        )
    return _result(feature, kind, target, learn, judge, guesses, tolerance, confidence)


# -- helpers -------------------------------------------------------------------------------------


def attack_learner(name: str, task: str, seed: int, *, early_stop: bool = False) -> Any:
    """A built-in attacker learner; boosting shallower (8 leaves, rate 0.05) or stopping early."""
    learner = make_model(name, task=task, seed=seed)
    if name == "hgb":
        learner.set_params(
            model__max_leaf_nodes=8,
            model__learning_rate=0.1 if early_stop else 0.05,
            model__early_stopping=early_stop,
            model__validation_fraction=0.2,
            model__n_iter_no_change=5,
        )
    return learner


def _group_rare(values: np.ndarray) -> np.ndarray:
    """All but the ``MAX_ATTACK_CLASSES - 1`` most frequent values replaced by :data:`RARE`."""
    classes, counts = np.unique(values, return_counts=True)
    if classes.size <= MAX_ATTACK_CLASSES:
        return values
    order = np.argsort(-counts, kind="stable")
    rare = classes[order[MAX_ATTACK_CLASSES - 1 :]]
    return np.where(np.isin(values, rare), RARE, values).astype(object)


def _learned_target(
    values: pd.Series, learn: np.ndarray, kind: Kind, boosted: bool
) -> tuple[np.ndarray, np.ndarray]:
    """The attacker's rows the learners fit on, and the feature there as they learn it."""
    known = _target_values(values, kind)
    if kind != "categorical":
        return learn, known
    known = _group_rare(known)
    _, index, counts = np.unique(known, return_inverse=True, return_counts=True)
    keep = counts[index] > 1
    if boosted and not keep.all() and np.unique(known[keep]).size >= 2:
        return learn[keep], known[keep]
    return learn, known


def _early_stop(known: np.ndarray, kind: Kind, boosted: bool) -> bool:
    """Whether boosting stops early: enough rows and, its split stratified, 2 of every class."""
    return (
        boosted
        and len(known) >= EARLY_STOP_ROWS
        and (kind == "continuous" or np.unique(known, return_counts=True)[1].min() >= 2)
    )


def _unwrapped(
    views: dict[str, pd.DataFrame], learners: dict[str, Any], encoder: Any
) -> tuple[dict[str, pd.DataFrame], dict[str, Any]]:
    """Boosting's views made numeric (label one-hot) and its learners taken out of the pipeline."""
    coded = [f"feature_{c}" for c in coded_columns(encoder)] or None
    numeric = {name: _numeric(view) for name, view in views.items()}
    bare = {
        name: learner.named_steps["model"].set_params(categorical_features=coded)
        for name, learner in learners.items()
    }
    return numeric, bare


def _query_attack(
    model: Any,
    baseline: Any,
    features: pd.DataFrame,
    rows: pd.DataFrame,
    labels: np.ndarray,
    feature: str,
) -> np.ndarray:
    """The query attacker's guesses, its prior the features-only baseline's (rare class dropped)."""
    prior = baseline.predict_proba(features)
    candidates = baseline.classes_
    real = candidates != RARE
    return _query_guess(model, rows, labels, feature, prior[:, real], candidates[real])


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


def _numeric(view: pd.DataFrame) -> pd.DataFrame:
    """A view with its label column one-hot (boosting needs no scaling or imputation)."""
    if "true_label" not in view or not isinstance(view["true_label"].dtype, pd.CategoricalDtype):
        return view
    label = pd.get_dummies(view["true_label"], prefix="true_label", dtype=float)
    return pd.concat([view.drop(columns=["true_label"]), label], axis=1)


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
    """Fredrikson et al.'s MAP guess ``argmax_v P_model(label | others, v) P(v | others)``."""
    originals = {str(v): v for v in rows[feature].tolist()}
    columns = class_columns(model, labels)
    queried = pd.concat(
        [_with_value(rows, feature, originals.get(v, v)) for v in candidates.tolist()],
        ignore_index=True,
    )
    outputs = predict_outputs(model, queried).reshape(len(candidates), len(rows), -1)
    likelihood = outputs[:, np.arange(len(rows)), columns].T
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
        hits=hits[attack].astype(np.int64),
    )


def _r2(truth: np.ndarray, guess: np.ndarray) -> float:
    total = float(np.sum((truth - truth.mean()) ** 2))
    return 1.0 - float(np.sum((truth - guess.astype(float)) ** 2)) / total if total > 0 else 0.0
