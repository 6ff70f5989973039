"""The reference-model attack (RMIA): its score exactly, its power, and no false alarm."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin

from attrpriv import InputError
from attrpriv.assess.membership import loss_threshold_attack
from attrpriv.assess.models import make_model, per_record_loss
from attrpriv.assess.reference import (
    ReferenceAttack,
    fit_reference,
    reference_attack,
    reference_term,
)
from attrpriv.errors import NotFittedError


@pytest.fixture(scope="module")
def adult(
    adult_xy: Callable[[int, int], tuple[pd.DataFrame, np.ndarray]],
) -> dict[str, tuple[pd.DataFrame, np.ndarray]]:
    """A 4,000-row Adult sample: the first 1,000 are the target's members, the next 1,000 its
    non-members; all 2,000 are the attacker's population; 'other' are never candidates."""
    X, y = adult_xy(4000, 11)
    parts = {"members": (0, 1000), "non_members": (1000, 2000), "other": (2000, 4000)}
    return {k: (X.iloc[a:b].reset_index(drop=True), y[a:b]) for k, (a, b) in parts.items()}


def population(adult: dict) -> tuple[pd.DataFrame, np.ndarray]:
    (x_in, y_in), (x_out, y_out) = adult["members"], adult["non_members"]
    return pd.concat([x_in, x_out], ignore_index=True), np.concatenate([y_in, y_out])


class Fixed(ClassifierMixin, BaseEstimator):
    """A classifier whose probability of class 1 is read from a column (for exact scores)."""

    def fit(self, X: pd.DataFrame, y: np.ndarray) -> Fixed:
        self.classes_ = np.array([0, 1])
        return self

    def predict_proba(self, X: pd.DataFrame) -> np.ndarray:
        p = X["p"].to_numpy()
        return np.column_stack([1 - p, p])


def test_the_score_is_the_log_ratio_to_the_mean_reference_probability() -> None:
    members = (pd.DataFrame({"p": [0.9, 1.0]}), np.array([1, 1]))
    non_members = (pd.DataFrame({"p": [0.5, 0.2]}), np.array([1, 0]))
    # reference probabilities of each candidate's true class, two reference models
    ref = np.array([[0.3, 1.0, 0.5, 0.6], [0.5, 1.0, 0.7, 0.9]])
    term = reference_term(-np.log(ref), "classification")
    assert term == pytest.approx(np.log(ref.mean(axis=0)))  # the mean of probabilities
    result = reference_attack(Fixed().fit(None, None), members, non_members, term)
    own = np.log([0.9, 1.0, 0.5, 0.8])
    assert result.scores == pytest.approx(own - np.log(ref.mean(axis=0)))
    assert result.scores[1] == pytest.approx(0.0)  # easy everywhere: not evidence of membership
    assert result.attack == "reference" and result.score.method == "delong"


def test_regression_uses_the_mean_reference_loss() -> None:
    losses = np.array([[1.0, 4.0], [3.0, 0.0]])
    assert reference_term(losses, "regression") == pytest.approx([-2.0, -2.0])


def test_it_beats_the_loss_attack_on_a_memorising_forest(adult) -> None:
    forest = make_model("rf", seed=0).fit(*adult["members"])
    attack = ReferenceAttack(n_references=2, seed=3).fit(make_model("rf"), *population(adult))
    strong = attack.attack(forest, adult["members"], adult["non_members"])
    weak = loss_threshold_attack(forest, adult["members"], adult["non_members"])
    assert strong.auc > weak.auc + 0.05 and strong.score.ci[0] > 0
    assert strong.tpr_at_1pct_fpr > weak.tpr_at_1pct_fpr + 0.02
    assert len(attack.models_) == 2


def test_no_false_alarm_and_the_check_catches_biased_references(adult) -> None:
    """A model trained on neither side: the attack's CI holds 0.5. References trained on the
    non-members only (a broken attacker who knows who is out) make them look like outsiders."""
    outsider = make_model("rf", seed=0).fit(*adult["other"])
    X, y = population(adult)
    attack = ReferenceAttack(n_references=2, seed=5).fit(make_model("rf"), X, y)
    fair = attack.attack(outsider, adult["members"], adult["non_members"])
    assert fair.score.ci[0] <= 0 <= fair.score.ci[1]
    biased = [make_model("rf", seed=k).fit(*adult["non_members"]) for k in range(2)]
    losses = np.array([per_record_loss(m, X, y) for m in biased])
    broken = reference_attack(
        outsider, adult["members"], adult["non_members"], reference_term(losses, "classification")
    )
    assert broken.score.ci[0] > 0  # a spurious "leak" the fair attack does not report


def test_each_reference_model_sees_half_of_each_class(adult) -> None:
    X, y = population(adult)
    model = fit_reference(make_model("logreg"), X, y, index=1, seed=0, drop=["age"])
    assert "age" not in model.feature_names_in_
    again = fit_reference(make_model("logreg"), X, y, index=1, seed=0, drop=["age"])
    other = fit_reference(make_model("logreg"), X, y, index=2, seed=0, drop=["age"])
    assert np.array_equal(model.predict_proba(X), again.predict_proba(X))
    assert not np.array_equal(model.predict_proba(X), other.predict_proba(X))


def test_bad_use_is_refused(adult) -> None:
    with pytest.raises(NotFittedError, match="call fit"):
        ReferenceAttack().attack(None, adult["members"], adult["non_members"])
    with pytest.raises(InputError, match="n_references must be an integer >= 1"):
        ReferenceAttack(n_references=0).fit(make_model("logreg"), *population(adult))
    with pytest.raises(InputError, match="at least 20 records"):
        ReferenceAttack().fit(make_model("logreg"), adult["other"][0][:10], adult["other"][1][:10])
    forest = make_model("rf", seed=0).fit(*adult["members"])
    with pytest.raises(InputError, match="one value per member, then per non-member"):
        reference_attack(forest, adult["members"], adult["non_members"], np.zeros(3))
