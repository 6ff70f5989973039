"""Property inference on Adult: a property that shifts the model is found, a random one is not."""

from __future__ import annotations

import json
from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attrpriv import InputError
from attrpriv.assess.models import make_model
from attrpriv.assess.property import _tilt, property_inference
from attrpriv.errors import showing_private_values

PERSONAL = ["relationship", "sex", "marital_status"]


@pytest.fixture(scope="module")
def adult(
    adult_xy: Callable[[int, int], tuple[pd.DataFrame, np.ndarray]],
) -> tuple[pd.DataFrame, np.ndarray]:
    X, y = adult_xy(4000, 0)
    X["noise_cat"] = np.random.default_rng(1).choice(["a", "b"], size=len(X))
    return X, y


def test_share_of_husbands_shows_through_the_base_rate(adult) -> None:
    """Husbands earn >50K far more often: a model without the personal columns shifts its base
    rate with their share, so shadows trained on 10% vs 70% husbands are told apart."""
    X, y = adult
    result = property_inference(
        make_model("logreg"),
        X,
        y,
        "relationship",
        property="share",
        category="Husband",
        low=0.1,
        high=0.7,
        n_shadows=12,
        sample_size=300,
        drop=PERSONAL,
        seed=0,
    )
    assert result.score.attack >= 0.9
    assert result.score.ci[0] > 0
    assert result.parts["realised_low"] == pytest.approx(0.1, abs=0.01)
    assert result.parts["realised_high"] == pytest.approx(0.7, abs=0.01)
    json.dumps(result.to_dict())


def test_share_of_a_random_column_is_not_found(adult) -> None:
    X, y = adult
    result = property_inference(
        make_model("logreg"),
        X,
        y,
        "noise_cat",
        property="share",
        category="a",
        low=0.3,
        high=0.7,
        n_shadows=12,
        sample_size=300,
        drop=["noise_cat"],
        seed=0,
    )
    assert result.score.ci[0] <= 0 <= result.score.ci[1]
    assert result.score.baseline == result.parts["control_accuracy"]


def test_mean_worlds_reach_their_targets(adult) -> None:
    X, y = adult[0].iloc[:600], adult[1][:600]
    result = property_inference(
        make_model("logreg"),
        X,
        y,
        "age",
        property="mean",
        low=33.0,
        high=45.0,
        n_shadows=2,
        sample_size=200,
        n_queries=20,
    )
    assert result.parts["realised_low"] == pytest.approx(33.0, abs=1.5)
    assert result.parts["realised_high"] == pytest.approx(45.0, abs=1.5)
    assert result.score.n == 4


@given(
    st.lists(st.floats(-1e3, 1e3), min_size=3, max_size=50, unique=True),
    st.floats(0.05, 0.95),
)
@settings(max_examples=50, deadline=None)
def test_tilting_hits_any_mean_inside_the_range(values: list[float], where: float) -> None:
    arr = np.array(values)
    target = arr.min() + where * (arr.max() - arr.min())
    weights = _tilt(arr, target)
    assert weights.min() >= 0 and weights.sum() == pytest.approx(1.0)
    assert weights @ arr == pytest.approx(target, abs=1e-6 * (arr.max() - arr.min()) + 1e-9)


MEAN = {"feature": "age", "low": 30.0, "high": 40.0}
SHARE = {"feature": "sex", "property": "share", "category": "Male", "low": 0.2, "high": 0.6}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (MEAN | {"property": "median"}, "property must be one of"),
        (SHARE | {"category": None}, "needs category="),
        (SHARE | {"category": "Other"}, "does not occur"),
        (MEAN | {"feature": "sex"}, "property='mean' needs a numeric feature"),
        (MEAN | {"low": 50.0, "high": 40.0}, "low must be < high"),
        (MEAN | {"low": 10.0}, "within the feature's mean range"),
        (SHARE | {"high": 1.5}, "within the feature's share range"),
        (MEAN | {"n_shadows": 1}, "n_shadows must be an integer >= 2"),
        (MEAN | {"n_queries": 590}, r"needs at least 610 records \(590 query"),
        (MEAN | {"feature": "height"}, "feature 'height' is not a column"),
        (MEAN | {"sample_size": 5}, "sample_size must be an integer >= 10"),
    ],
)
def test_bad_parameters(adult, kwargs: dict, message: str) -> None:
    X, y = adult[0].iloc[:600], adult[1][:600]
    with pytest.raises(InputError, match=message):
        property_inference(make_model("logreg"), X, y, **kwargs)


def test_a_missing_category_is_named_only_when_private_values_are_shown(adult) -> None:
    X, y = adult[0].iloc[:600], adult[1][:600]
    spec = SHARE | {"category": "Secret"}
    with pytest.raises(InputError, match=r"category \(value hidden: --debug shows it\) does"):
        property_inference(make_model("logreg"), X, y, **spec)
    with showing_private_values(), pytest.raises(InputError, match="category 'Secret' does"):
        property_inference(make_model("logreg"), X, y, **spec)
