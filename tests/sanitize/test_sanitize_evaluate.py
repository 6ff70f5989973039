"""Sanitizer evaluation: boosted adversaries (AUC headline), utility on real rows, Pareto area."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score
from sklearn.tree import DecisionTreeClassifier

from attrpriv import datasets
from attrpriv.errors import InputError
from attrpriv.sanitize.evaluate import (
    auc_score,
    leakage,
    pareto_auc,
    pareto_front,
    strong_classifier,
    utility,
)

FEATURES = ["age", "education", "occupation", "relationship", "hours_per_week"]


@pytest.fixture(scope="module")
def adult(adult_dataset: datasets.Dataset) -> tuple[pd.DataFrame, pd.DataFrame]:
    frame = adult_dataset.frame.sample(3000, random_state=0).reset_index(drop=True)
    return frame.iloc[:1500], frame.iloc[1500:].reset_index(drop=True)


def test_real_features_leak_sex_and_shuffled_ones_do_not(adult) -> None:  # type: ignore[no-untyped-def]
    aux, private = adult
    leaky = leakage(aux[FEATURES], aux["sex"], private[FEATURES], private["sex"], seeds=2)
    assert [a.name for a in leaky.adversaries] == ["raw-aux"] and leaky.auc_form == "binary"
    assert leaky.auc > 0.85 and leaky.auc_ci[0] > 0.8  # relationship reveals sex
    assert leaky.strongest.auc.method == "rubin-pooled(2)" and leaky.strongest.auc.n == 3000
    assert leaky.accuracy.baseline == pytest.approx((private["sex"] == "Male").mean())
    assert leaky.strongest.prior_class == "Male" and leaky.strongest.model == (
        "HistGradientBoostingClassifier")  # fmt: skip
    shuffled = private[FEATURES].sample(frac=1.0, random_state=1).reset_index(drop=True)
    noise = leakage(aux[FEATURES], aux["sex"], shuffled, private["sex"].to_numpy(), seeds=2)
    assert noise.auc_ci[0] < 0.5 < noise.auc_ci[1] and abs(noise.advantage) < 0.04
    out = noise.to_dict()
    assert out["auc"] == noise.auc and out["strongest"] == "raw-aux" and out["seeds"] == 2


def test_the_stronger_adversary_is_reported() -> None:
    """A sanitizer that relabels a proxy's categories fools the raw-aux adversary (AUC < 0.5),
    not the one trained on sanitized auxiliary data: the sanitized-aux AUC is reported."""
    rng = np.random.default_rng(0)
    secret = rng.integers(0, 2, 1200)
    proxy = np.where(rng.random(1200) < 0.85, secret, 1 - secret)
    raw = pd.DataFrame({"proxy": pd.Categorical(np.array(["a", "b"])[proxy], ["a", "b"]),
                        "x": rng.normal(size=1200)})  # fmt: skip
    flipped = raw.assign(proxy=raw["proxy"].map({"a": "b", "b": "a"}).astype(raw["proxy"].dtype))
    result = leakage(raw[:600], secret[:600], flipped[600:], secret[600:],
                     x_aux_sanitized=flipped[:600], seeds=1)  # fmt: skip
    by_name = {a.name: a for a in result.adversaries}
    assert by_name["raw-aux"].auc.attack < 0.25 and by_name["sanitized-aux"].auc.attack > 0.8
    assert result.strongest.name == "sanitized-aux" and result.auc > 0.8


def test_auc_is_the_headline_on_an_imbalanced_attribute() -> None:
    """A 9:1 attribute with a real signal: accuracy cannot beat the prior, the AUC shows it."""
    rng = np.random.default_rng(1)
    y = (rng.random(4000) < 0.1).astype(int)
    x = pd.DataFrame({"signal": rng.normal(size=4000) + 1.0 * y})
    result = leakage(x[:2000], y[:2000], x[2000:], y[2000:], seeds=1)
    assert abs(result.accuracy.difference) < 0.01  # accuracy-based leakage reads ~0
    assert result.auc > 0.65 and result.auc_ci[0] > 0.6  # ideal: Phi(1 / sqrt 2) = 0.76


def test_auc_score_matches_scikit_learn() -> None:
    rng = np.random.default_rng(2)
    y = rng.choice(["a", "b", "c"], 500)
    proba = rng.dirichlet(np.ones(3), 500) + np.eye(3)[pd.Categorical(y).codes] * 0.3
    multi = auc_score(y, proba, ["a", "b", "c"])
    normalised = proba / proba.sum(1, keepdims=True)
    expected = roc_auc_score(y, normalised, multi_class="ovr", average="macro")
    assert multi.attack == pytest.approx(expected)
    assert multi.method == "delong-ovr-macro(3)" and multi.ci[0] < multi.difference < multi.ci[1]
    binary = auc_score(y == "a", proba[:, :2], [False, True])
    assert binary.attack == pytest.approx(roc_auc_score(y == "a", proba[:, 1]))
    assert binary.method == "delong"
    # a class the model never saw scores 0 everywhere: AUC 0.5 for it
    unseen = auc_score(y, proba[:, :2], ["a", "b"])
    assert unseen.method == "delong-ovr-macro(3)"


def test_utility_trains_on_the_release_and_tests_on_real_rows(adult) -> None:  # type: ignore[no-untyped-def]
    aux, private = adult
    x, y = private[FEATURES], private["income"]
    real = utility(aux[FEATURES], aux["income"], x, y, seeds=1)
    assert real.auc.attack > 0.8 and real.n_train == 1500 and real.n_test == 1500
    assert real.accuracy.baseline == pytest.approx((y == "<=50K").mean())
    # a release whose target no longer goes with its rows is useless on real rows
    scrambled = aux["income"].sample(frac=1.0, random_state=3).to_numpy()
    useless = utility(aux[FEATURES], scrambled, x, y, seeds=1)
    assert useless.auc_ci[0] < 0.5 + 0.06 and useless.auc.attack < 0.56
    # a constant released target trains a constant predictor: exactly chance
    constant = utility(aux[FEATURES], np.full(1500, "<=50K"), x, y, seeds=1)
    assert constant.auc.attack == 0.5 and constant.model == "DummyClassifier"
    tree = utility(aux[FEATURES], aux["income"], x, y, model=DecisionTreeClassifier(max_depth=4))
    assert tree.model == "DecisionTreeClassifier" and tree.seeds == 3
    assert tree.to_dict()["accuracy"] == tree.accuracy.attack


def test_a_release_with_no_feature_scores_chance() -> None:
    """Nothing left to learn from (every column but the label dropped): the prior, AUC 0.5."""
    rng = np.random.default_rng(0)
    y = rng.choice(["a", "b"], 300, p=[0.3, 0.7])
    empty = pd.DataFrame(index=range(300))
    scored = utility(empty[:200], y[:200], empty[200:], y[200:], seeds=2)
    assert scored.auc.attack == 0.5 and scored.auc_ci == (0.5, 0.5)
    assert leakage(empty[:200], y[:200], empty[200:], y[200:], seeds=2).auc == 0.5


def test_images_are_flattened() -> None:
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 400)
    images = rng.random((400, 4, 4)) * 0.1 + y[:, None, None]
    result = leakage(images[:200], y[:200], images[200:], y[200:], seeds=1)
    assert result.auc == 1.0 and result.strongest.n_train == 200
    assert result.strongest.features == 16


def test_the_default_model_stops_early() -> None:
    model = strong_classifier(5)
    assert model.early_stopping is True and model.random_state == 5


def test_pareto_front_keeps_non_dominated_points_in_leakage_order() -> None:
    points = [(0.3, 0.8), (0.1, 0.6), (0.2, 0.5), (0.1, 0.55), (0.4, 0.7), (0.05, 0.4)]
    np.testing.assert_allclose(pareto_front(points), [[0.05, 0.4], [0.1, 0.6], [0.3, 0.8]])


def test_pareto_auc_is_the_mean_attainable_utility() -> None:
    points = [(0.05, 0.4), (0.1, 0.6), (0.3, 0.8), (0.2, 0.5)]
    # U = 0 on [0, .05), .4 on [.05, .1), .6 on [.1, .3), .8 on [.3, .5]; L = 0.5
    expected = (0.4 * 0.05 + 0.6 * 0.2 + 0.8 * 0.2) / 0.5
    assert pareto_auc(points, max_leakage=0.5) == pytest.approx(expected)
    assert pareto_auc([(-0.02, 0.7)]) == pytest.approx(0.7)  # below chance counts as 0
    assert pareto_auc([(0.0, 0.9)]) > pareto_auc([(0.2, 0.9)])


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: pareto_front([(0.1, 0.2, 0.3)]), r"\(n, 2\)"),
        (lambda: pareto_front([]), r"\(n, 2\)"),
        (lambda: pareto_auc([(0.1, np.nan)]), "NaN"),
        (lambda: pareto_auc([(0.1, 0.5)], max_leakage=0), "max_leakage must be > 0"),
        (lambda: leakage(np.zeros((4, 2)), [0, 1, 0], np.zeros((2, 2)), [0, 1]), "y_aux"),
        (lambda: leakage(np.zeros((4, 2)), [0, 0, 0, 0], np.zeros((2, 2)), [0, 1]), "single"),
        (lambda: leakage(np.zeros((4, 2)), [0, 1, 0, 1], np.zeros((2, 3)), [0, 1]), "same number"),
        (lambda: leakage(np.zeros((4, 2)), [0, 1, 0, 1], np.zeros((2, 2)), [1, 1]), "two classes"),
        (lambda: leakage(np.zeros((4, 2)), [0, 1, 0, 1], np.zeros((2, 2)), [0, 1], seeds=0),
         "seeds must be an integer >= 1"),
        (lambda: leakage(pd.DataFrame({"a": [1, 2, 3, 4]}), [0, 1, 0, 1],
                         pd.DataFrame({"b": [1, 2]}), [0, 1]), r"lack column\(s\) \['a'\]"),
        (lambda: utility(np.zeros((4, 2)), [0, 1, 0, 1], pd.DataFrame({"a": [1, 2]}), [0, 1]),
         "not a mix"),
    ],
)  # fmt: skip
def test_bad_input(call, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InputError, match=message):
        call()


def test_a_column_without_any_value_is_left_out_of_the_models() -> None:
    """A survey year that did not ask a question: the column is missing in every row (as
    census_kdd's migration columns in 1995); the models learn from the other columns, and a
    frame of such columns only is met by the prior."""
    from attrpriv.sanitize.evaluate import fit_models

    rng = np.random.default_rng(0)
    n = 400
    y = rng.choice(["a", "b"], n)
    x = pd.DataFrame({"signal": (y == "a") + rng.normal(0, 0.5, n),
                      "asked_later": pd.Categorical([None] * n, categories=[]),
                      "never": np.full(n, np.nan)})  # fmt: skip
    fitted = fit_models(x, y, [0], None, "y")
    assert fitted.encoder.columns == ("signal",)
    empty = fit_models(x[["asked_later", "never"]], y, [0], None, "y")
    assert empty.encoder.width == 0
