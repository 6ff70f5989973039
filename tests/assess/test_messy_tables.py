"""Messy user tables: unusable columns are named and left out, a failed part does not stop."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin, clone

from attrpriv import InputError, datasets
from attrpriv.assess.assessor import FeatureRiskAssessor
from attrpriv.assess.models import make_model
from attrpriv.assess.screening import screen_columns


@pytest.fixture(scope="module")
def messy() -> tuple[pd.DataFrame, pd.Series]:
    """German credit plus an all-missing, a constant and a 400-value free-text column."""
    frame = datasets.load("german_credit").frame
    rng = np.random.default_rng(0)
    X = frame[["age", "credit_amount", "purpose", "savings"]].assign(
        notes=[f"note {i}" for i in rng.integers(0, 400, len(frame))],
        empty=np.nan,
        constant="same",
    )
    return X, frame["credit_risk"]


def test_screening_names_each_unusable_column(messy: tuple[pd.DataFrame, pd.Series]) -> None:
    X, _ = messy
    screening = screen_columns(X)
    assert screening.left_out == {
        "empty": "every value is missing",
        "constant": "it takes a single value (nothing to attack or retrain without)",
    }
    (note,) = screening.notes
    assert note.startswith("'notes' has 3") and "19 most frequent" in note
    assert "note 1" not in " ".join(screening.report_notes())  # names, never values


def test_a_messy_table_completes_with_every_column_named(
    messy: tuple[pd.DataFrame, pd.Series],
) -> None:
    X, y = messy
    before = X.copy()
    report = FeatureRiskAssessor(
        make_model("logreg"), attack_model="logreg", n_repeats=1, backend="sequential"
    ).assess(X, y)
    pd.testing.assert_frame_equal(X, before)  # not mutated
    assert {r.label for r in report.feature_sets} == {
        "age",
        "credit_amount",
        "purpose",
        "savings",
        "notes",
    }
    text = "\n".join(report.notes)
    assert "left out 'empty': every value is missing" in text
    assert "left out 'constant'" in text and "'notes' has" in text
    assert set(report["notes"].attacks) == {"membership", "attribute"}


def test_a_set_of_unusable_columns_only_is_refused(messy: tuple[pd.DataFrame, pd.Series]) -> None:
    X, y = messy
    risk = FeatureRiskAssessor(make_model("logreg"), n_repeats=1, backend="sequential")
    with pytest.raises(InputError, match="1 usable column"):
        risk.assess(X[["age", "empty", "constant"]], y)


class BreaksWithoutAge(ClassifierMixin, BaseEstimator):
    """A model that cannot be trained without the ``age`` column (a failure in one part)."""

    def fit(self, X: pd.DataFrame, y: pd.Series) -> BreaksWithoutAge:
        if "age" not in X.columns:
            raise RuntimeError("age is required: got columns 'x'")
        self.model_ = clone(make_model("logreg")).fit(X, y)
        self.classes_ = self.model_.classes_
        return self

    def predict_proba(self, X: pd.DataFrame) -> np.ndarray:
        return np.asarray(self.model_.predict_proba(X))

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        return np.asarray(self.model_.predict(X))


def test_a_failed_retraining_is_recorded_and_the_audit_goes_on(
    messy: tuple[pd.DataFrame, pd.Series],
) -> None:
    X, y = messy
    report = FeatureRiskAssessor(
        BreaksWithoutAge(),
        attacks=("membership",),
        n_repeats=2,
        n_references=1,
        backend="sequential",
    ).assess(X[["age", "credit_amount", "purpose"]], y)
    age = report["age"]
    assert age.attacks == {} and np.isnan(age.modified) and age.rank == 3
    assert set(report["purpose"].attacks) == {"membership"}  # the others are scored
    (note,) = [n for n in report.notes if n.startswith("retraining without")]
    assert note.startswith("retraining without age failed in 2 of 2 repeats (RuntimeError: ")
    assert "details hidden" in note and "'x'" not in note and note.endswith("it has no score")


def test_a_full_model_attack_that_finds_nothing_makes_the_differentials_inconclusive() -> None:
    """A logistic model on 2,000 Adult rows does not overfit: its membership CI holds 0.5."""
    dataset = datasets.load("adult")
    frame = dataset.frame.sample(2000, random_state=3)
    X = frame[["age", "education_num", "hours_per_week", "sex"]]
    report = FeatureRiskAssessor(
        make_model("logreg"), attacks=("membership",), n_repeats=1, backend="sequential"
    ).assess(X, frame["income"])
    assert report.membership_inconclusive
    assert report.notes[0].startswith(
        "the membership attack on the full model cannot tell members from non-members"
    )
    rows = report.run["rows"]
    assert rows["all"] == 2000 and rows["attacked_members"] == rows["attacked_non_members"] == 600
    assert {"attrpriv", "scikit-learn", "python"} <= set(report.run["versions"])
