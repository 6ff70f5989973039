"""Attribute and property inference on real data: leaks found, non-leaks not, bad input named."""

from __future__ import annotations

import json
from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attrpriv import InputError
from attrpriv.assess.inference import attribute_inference, feature_kind
from attrpriv.assess.models import fit_without, make_model
from attrpriv.datasets import load


@pytest.fixture(scope="module")
def adult(
    adult_xy: Callable[[int, int], tuple[pd.DataFrame, np.ndarray]],
) -> tuple[pd.DataFrame, np.ndarray]:
    """3,000 Adult rows plus two random columns that carry no information."""
    X, y = adult_xy(3000, 0)
    rng = np.random.default_rng(0)
    X["noise"] = rng.normal(size=len(X))
    X["noise_cat"] = pd.Categorical(rng.choice(["a", "b", "c"], size=len(X)))
    return X, y


@pytest.fixture(scope="module")
def german() -> tuple[pd.DataFrame, np.ndarray]:
    frame = load("german_credit").frame.sample(frac=1.0, random_state=0).reset_index(drop=True)
    return frame.drop(columns=["credit_risk"]), frame["credit_risk"].astype(str).to_numpy()


# -- attribute inference -------------------------------------------------------------------------


def test_logistic_model_leaks_sex_on_adult(adult) -> None:
    """A linear model's score is a fixed function of sex given the rest: its output leaks it."""
    X, y = adult[0].iloc[:2000], adult[1][:2000]
    model = make_model("logreg").fit(X, y)
    result = attribute_inference(model, X, y, "sex")
    assert result.kind == "categorical" and result.metric == "accuracy"
    assert result.score.attack == max(result.attacks.values())
    assert result.score.baseline == max(
        result.baselines["features_only"], result.baselines["features_and_label"]
    )
    assert result.score.difference > 0.01 and result.score.ci[0] > 0  # measured: 0.024
    assert result.baselines["prior"] < result.baselines["features_only"]


def test_german_credit_personal_status_leaks(german) -> None:
    X, y = german[0].iloc[:500], german[1][:500]
    model = make_model("logreg").fit(X, y)
    result = attribute_inference(model, X, y, "personal_status_sex", attack_model="logreg")
    assert result.score.difference > 0 and result.score.ci[0] > 0


def test_forest_memorises_a_random_column_of_its_training_records(adult) -> None:
    """The query attack reads a random column off members (memorised), not off non-members."""
    X, y = adult
    members, outsiders = slice(0, 2000), slice(2000, 3000)
    forest = make_model("rf", seed=0).fit(X.iloc[members], y[members])
    on_members = attribute_inference(
        forest, X.iloc[members], y[members], "noise_cat", attack_model="logreg"
    )
    on_outsiders = attribute_inference(
        forest, X.iloc[outsiders], y[outsiders], "noise_cat", attack_model="logreg"
    )
    assert on_members.parts["best_attack"] == "query"
    assert on_members.score.ci[0] > 0
    assert on_outsiders.score.ci[0] <= 0 <= on_outsiders.score.ci[1]


@pytest.mark.parametrize("feature", ["noise", "noise_cat"])
def test_a_column_the_model_never_saw_does_not_leak(adult, feature: str) -> None:
    X, y = adult[0].iloc[:1200], adult[1][:1200]
    model = fit_without(make_model("rf", seed=0), X, y, [feature])
    result = attribute_inference(model, X, y, feature, attack_model="logreg")
    assert abs(result.score.difference) < 0.05
    assert result.score.ci[0] <= 0 <= result.score.ci[1]


def test_continuous_feature_is_scored_within_a_tolerance(adult) -> None:
    X, y = adult[0].iloc[:1200], adult[1][:1200]
    model = make_model("logreg").fit(X, y)
    result = attribute_inference(model, X, y, "age", attack_model="logreg", tolerance=0.5)
    assert result.kind == "continuous"
    assert result.metric.startswith("within 0.5 sd")
    assert set(result.attacks) == {"learned", "learned_with_label"}  # no query: continuous
    assert {"r2_learned", "r2_features_only", "r2_features_and_label"} <= set(result.parts)
    assert result.baselines["features_only"] > result.baselines["prior"]
    assert 0.0 <= result.score.attack <= 1.0


def test_integer_codes_can_be_attacked_as_categories(adult) -> None:
    """education_num is a code of education, which the attacker sees: found exactly."""
    X, y = adult[0].iloc[:600], adult[1][:600]
    model = make_model("logreg").fit(X, y)
    result = attribute_inference(
        model, X, y, "education_num", kind="categorical", attack_model="logreg"
    )
    assert result.kind == "categorical" and "query" in result.attacks
    assert result.baselines["features_only"] > 0.95 > result.baselines["prior"]


def test_regression_model(adult) -> None:
    X = adult[0].iloc[:800]
    hours = X["hours_per_week"].to_numpy(dtype=float)
    model = fit_without(make_model("logreg", task="regression"), X, hours, ["hours_per_week"])
    result = attribute_inference(model, X, hours, "sex", attack_model="logreg")
    assert set(result.attacks) == {"learned", "learned_with_label"}  # no query: a regressor
    json.dumps(result.to_dict())


def test_inputs_are_not_modified(adult) -> None:
    X, y = adult[0].iloc[:400].copy(), adult[1][:400].copy()
    before = X.copy()
    model = make_model("logreg").fit(X, y)
    attribute_inference(model, X, y, "race", attack_model="logreg")
    pd.testing.assert_frame_equal(X, before)


def test_feature_kind() -> None:
    assert feature_kind(pd.Series([1.0, 2.0])) == "continuous"
    assert feature_kind(pd.Series([1, 2])) == "continuous"
    assert feature_kind(pd.Series(["a", "b"])) == "categorical"
    assert feature_kind(pd.Series([True, False])) == "categorical"
    assert feature_kind(pd.Series(pd.Categorical(["a"]))) == "categorical"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"feature": "height"}, "feature 'height' is not a column"),
        ({"kind": "ordinal"}, "kind must be one of"),
        ({"feature": "sex", "kind": "continuous"}, "not numeric"),
        ({"tolerance": 0.0}, "tolerance must be > 0"),
        ({"attack_model": "svm"}, "attack_model must be one of"),
    ],
)
def test_bad_parameters(adult, kwargs: dict, message: str) -> None:
    X, y = adult[0].iloc[:100], adult[1][:100]
    model = make_model("logreg").fit(X, y)
    arguments = {"feature": "race"} | kwargs
    with pytest.raises(InputError, match=message):
        attribute_inference(model, X, y, **arguments)


def test_bad_data(adult) -> None:
    X, y = adult[0].iloc[:100], adult[1][:100]
    model = make_model("logreg").fit(X, y)
    with pytest.raises(InputError, match="X must be a pandas DataFrame"):
        attribute_inference(model, X.to_numpy(), y, "race")
    with pytest.raises(InputError, match=r"y has shape \(3,\)"):
        attribute_inference(model, X, y[:3], "race")
    with pytest.raises(InputError, match="at least 20 records"):
        attribute_inference(model, X.iloc[:5], y[:5], "race")
    holed = X.assign(race=X["race"].where(np.arange(100) > 3))
    with pytest.raises(InputError, match="feature 'race' has missing values"):
        attribute_inference(model, holed, y, "race")


@given(st.one_of(st.floats(max_value=0.0), st.floats(min_value=1.0), st.just(float("nan"))))
@settings(max_examples=20, deadline=None)
def test_train_size_outside_the_unit_interval_is_refused(train_size: float) -> None:
    frame = pd.DataFrame({"a": np.arange(30.0), "b": ["x", "y", "z"] * 10})
    with pytest.raises(InputError, match="train_size must"):
        attribute_inference(object(), frame, np.zeros(30), "b", train_size=train_size)


# -- property inference --------------------------------------------------------------------------
