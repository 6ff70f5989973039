"""Sanitizer evaluation: leakage vs prior, utility / CAS, Pareto front and its area."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.tree import DecisionTreeClassifier

from attrpriv import datasets
from attrpriv.errors import InputError
from attrpriv.sanitize.evaluate import leakage, pareto_auc, pareto_front, utility

FEATURES = ["age", "education", "occupation", "relationship", "hours_per_week"]


@pytest.fixture(scope="module")
def adult(adult_dataset: datasets.Dataset) -> tuple[pd.DataFrame, pd.DataFrame]:
    frame = adult_dataset.frame.sample(3000, random_state=0).reset_index(drop=True)
    return frame.iloc[:1500], frame.iloc[1500:]


def test_real_features_leak_sex_and_shuffled_ones_do_not(adult) -> None:  # type: ignore[no-untyped-def]
    aux, private = adult
    leaky = leakage(aux[FEATURES], aux["sex"], private[FEATURES], private["sex"])
    assert leaky.prior_class == "Male"
    assert leaky.prior == pytest.approx((private["sex"] == "Male").mean())
    assert leaky.score.significant and leaky.difference > 0.1  # relationship reveals sex
    shuffled = private[FEATURES].sample(frac=1.0, random_state=1).reset_index(drop=True)
    noise = leakage(aux[FEATURES], aux["sex"], shuffled, private["sex"].to_numpy(), seed=0)
    assert not noise.score.significant and noise.difference < 0.02  # no better than the prior
    assert noise.to_dict()["leakage"] == noise.difference


def test_utility_reports_accuracy_on_sanitized_and_real_data(adult) -> None:  # type: ignore[no-untyped-def]
    aux, private = adult
    result = utility(aux[FEATURES], aux["income"], private[FEATURES], private["income"],
                     x_real=private[FEATURES], y_real=private["income"],
                     model=DecisionTreeClassifier(max_depth=4))  # fmt: skip
    assert result.on_real is not None
    assert result.on_sanitized.attack == result.on_real.attack  # same data here
    assert result.on_sanitized.attack > result.on_sanitized.baseline
    assert result.model == "DecisionTreeClassifier" and result.n_train == 1500
    assert result.to_dict()["cas"] == result.on_real.attack


def test_images_are_flattened() -> None:
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 400)
    images = rng.random((400, 4, 4)) * 0.1 + y[:, None, None]
    result = leakage(images[:200], y[:200], images[200:], y[200:])
    assert result.accuracy == 1.0 and result.n_train == 200


def test_pareto_front_keeps_non_dominated_points_in_leakage_order() -> None:
    points = [(0.3, 0.8), (0.1, 0.6), (0.2, 0.5), (0.1, 0.55), (0.4, 0.7), (0.05, 0.4)]
    np.testing.assert_allclose(pareto_front(points), [[0.05, 0.4], [0.1, 0.6], [0.3, 0.8]])


def test_pareto_auc_is_the_mean_attainable_utility() -> None:
    points = [(0.05, 0.4), (0.1, 0.6), (0.3, 0.8), (0.2, 0.5)]
    # U = 0 on [0, .05), .4 on [.05, .1), .6 on [.1, .3), .8 on [.3, .5]; L = 0.5
    expected = (0.4 * 0.05 + 0.6 * 0.2 + 0.8 * 0.2) / 0.5
    assert pareto_auc(points, max_leakage=0.5) == pytest.approx(expected)
    assert pareto_auc([(-0.02, 0.7)]) == pytest.approx(0.7)  # below the prior counts as 0
    assert pareto_auc([(0.0, 0.9)]) > pareto_auc([(0.2, 0.9)])


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: pareto_front([(0.1, 0.2, 0.3)]), r"\(n, 2\)"),
        (lambda: pareto_front([]), r"\(n, 2\)"),
        (lambda: pareto_auc([(0.1, np.nan)]), "NaN"),
        (lambda: pareto_auc([(0.1, 0.5)], max_leakage=0), "max_leakage must be > 0"),
        (lambda: leakage(np.zeros((4, 2)), [0, 1, 0], np.zeros((2, 2)), [0, 1]), "y_train"),
        (lambda: leakage(np.zeros((4, 2)), [0, 0, 0, 0], np.zeros((2, 2)), [0, 1]), "single"),
        (lambda: leakage(np.zeros((4, 2)), [0, 1, 0, 1], np.zeros((2, 3)), [0, 1]), "same number"),
        (
            lambda: utility(
                np.zeros((4, 2)), [0, 1, 0, 1], np.zeros((2, 2)), [0, 1], x_real=np.zeros((2, 2))
            ),
            "together",
        ),
    ],
)
def test_bad_input(call, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InputError, match=message):
        call()
