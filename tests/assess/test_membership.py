"""Membership inference on real data: overfit models are caught, non-leaking ones are not."""

from __future__ import annotations

import json
from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import Pipeline

from attrpriv import InputError
from attrpriv.assess.membership import (
    MembershipResult,
    ShadowModelAttack,
    auc_difference,
    loss_threshold_attack,
    membership_result,
    overfitting_gap,
    tpr_at_fpr,
    tpr_interval,
)
from attrpriv.assess.models import fit_without, make_model, make_preprocessor


@pytest.fixture(scope="module")
def adult(
    adult_xy: Callable[[int, int], tuple[pd.DataFrame, np.ndarray]],
) -> dict[str, tuple[pd.DataFrame, np.ndarray]]:
    """Disjoint parts of a 3,000-row Adult sample: members, non-members, aux, other."""
    X, y = adult_xy(3000, 7)
    cuts = {"members": (0, 500), "non_members": (500, 1000), "aux": (1000, 2000)}
    cuts["other"] = (2000, 3000)
    return {k: (X.iloc[a:b].reset_index(drop=True), y[a:b]) for k, (a, b) in cuts.items()}


@pytest.fixture(scope="module")
def forest(adult):
    """A full-depth random forest on 500 members: it memorises them."""
    X, y = adult["members"]
    return make_model("rf", seed=0).fit(X, y)


def test_loss_attack_catches_an_overfit_forest(adult, forest) -> None:
    result = loss_threshold_attack(forest, adult["members"], adult["non_members"])
    assert result.auc > 0.55
    assert result.advantage > 0.1
    assert result.score.baseline == 0.5
    assert result.score.difference == pytest.approx(result.auc - 0.5)
    assert result.score.ci[0] > 0  # the CI excludes a random guess
    assert result.n_members == 500 and result.n_non_members == 500


def test_loss_attack_catches_one_nearest_neighbour(adult) -> None:
    X, y = adult["members"]
    knn = Pipeline([("prepare", make_preprocessor()), ("model", KNeighborsClassifier(1))])
    result = loss_threshold_attack(knn.fit(X, y), adult["members"], adult["non_members"])
    assert result.auc > 0.55 and result.score.ci[0] > 0
    assert result.tpr_at_01pct_fpr <= result.tpr_at_1pct_fpr <= 1.0


def test_shadow_attack_catches_an_overfit_forest(adult, forest) -> None:
    attack = ShadowModelAttack(n_shadows=2, seed=1).fit(make_model("rf"), *adult["aux"])
    result = attack.attack(forest, adult["members"], adult["non_members"])
    assert result.attack == "shadow-model"
    assert result.auc > 0.55 and result.score.ci[0] > 0
    assert set(attack.attack_models_) == {None, "<=50K", ">50K"}  # per class, plus a fallback


def test_no_leak_when_neither_side_was_trained_on(adult) -> None:
    """Members and non-members both unseen: AUC near 0.5, CIs holding it at their level.

    Five random member/non-member splits of 1,000 unseen records; at 95% a CI may miss 0.5 on
    one split (P(two or more misses of five) is about 2%).
    """
    outsider = make_model("rf", seed=0).fit(*adult["other"])
    unseen_x = pd.concat([adult["members"][0], adult["non_members"][0]], ignore_index=True)
    unseen_y = np.concatenate([adult["members"][1], adult["non_members"][1]])
    shadow = ShadowModelAttack(n_shadows=2, seed=1).fit(make_model("rf"), *adult["aux"])
    aucs, covered = [], []
    for seed in range(5):
        order = np.random.default_rng(seed).permutation(len(unseen_x))
        fake_in, fake_out = order[:500], order[500:]
        sides = [(unseen_x.iloc[rows], unseen_y[rows]) for rows in (fake_in, fake_out)]
        for result in (
            loss_threshold_attack(outsider, *sides),
            shadow.attack(outsider, *sides),
        ):
            aucs.append(result.auc)
            covered.append(result.score.ci[0] <= 0 <= result.score.ci[1])
    assert abs(np.mean(aucs) - 0.5) < 0.03
    assert sum(covered[0::2]) >= 4 and sum(covered[1::2]) >= 4


def test_differential_attack_sees_the_leak_of_a_feature_set(adult, forest) -> None:
    """Claim 1: the same attack on the full model and on one retrained without most features."""
    X, y = adult["members"]
    keep = ["age", "sex"]
    reduced = fit_without(make_model("rf", seed=0), X, y, [c for c in X.columns if c not in keep])
    full = loss_threshold_attack(forest, adult["members"], adult["non_members"])
    modified = loss_threshold_attack(reduced, adult["members"], adult["non_members"])
    risk = auc_difference(full, modified)
    assert risk.attack == pytest.approx(full.auc) and risk.baseline == pytest.approx(modified.auc)
    assert risk.difference > 0 and risk.ci[0] > 0
    same = auc_difference(full, full)
    assert same.difference == 0 and same.ci == (0.0, 0.0)


def test_overfitting_gap(adult, forest) -> None:
    gap = overfitting_gap(forest, adult["members"], adult["non_members"])
    assert gap.attack > 0.95 and gap.difference > 0.1 and gap.ci[0] > 0
    assert gap.method == "newcombe-independent"


def test_regression_targets(adult) -> None:
    X, _ = adult["members"]
    Xn, _ = adult["non_members"]
    hours, hours_out = X["hours_per_week"].to_numpy(float), Xn["hours_per_week"].to_numpy(float)
    model = fit_without(make_model("rf", task="regression"), X, hours, ["hours_per_week"])
    result = loss_threshold_attack(model, (X, hours), (Xn, hours_out))
    assert result.auc > 0.55 and result.score.ci[0] > 0
    gap = overfitting_gap(model, (X, hours), (Xn, hours_out))
    assert gap.method == "bootstrap" and gap.difference > 0
    Xa, _ = adult["aux"]
    shadow = ShadowModelAttack(n_shadows=2, attack_model="rf").fit(
        make_model("rf", task="regression"),
        Xa.drop(columns=["hours_per_week"]),
        Xa["hours_per_week"].to_numpy(float),
    )
    assert set(shadow.attack_models_) == {None}  # regressors: one attack model
    shadowed = shadow.attack(
        model,
        (X.drop(columns=["hours_per_week"]), hours),
        (Xn.drop(columns=["hours_per_week"]), hours_out),
    )
    assert shadowed.auc > 0.55 and shadowed.score.ci[0] > 0


def test_auc_ci_covers_a_null_attack_at_its_level() -> None:
    rng = np.random.default_rng(0)
    labels = np.r_[np.ones(100, dtype=int), np.zeros(100, dtype=int)]
    covered = 0
    for _ in range(80):
        result = membership_result(labels, rng.normal(size=200), attack="null")
        covered += result.score.ci[0] <= 0 <= result.score.ci[1]
    assert covered >= 70  # 95% nominal


def test_result_is_json_ready_and_holds_no_records(adult, forest) -> None:
    result = loss_threshold_attack(forest, adult["members"], adult["non_members"])
    payload = result.to_dict()
    json.dumps(payload)
    assert set(payload) >= {"auc", "advantage", "tpr_at_1pct_fpr", "tpr_at_01pct_fpr", "roc"}
    assert "scores" not in payload and "labels" not in payload
    fpr, tpr = np.array(payload["roc"]["fpr"]), np.array(payload["roc"]["tpr"])
    assert fpr[0] == 0 and fpr[-1] == 1 and (np.diff(fpr) >= 0).all() and (np.diff(tpr) >= 0).all()


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda f, d: loss_threshold_attack(f, d["members"][0], d["non_members"]), "tuple"),
        (
            lambda f, d: loss_threshold_attack(f, (d["members"][0], [1, 2]), d["non_members"]),
            r"members: y has shape \(2,\)",
        ),
        (
            lambda f, d: ShadowModelAttack().attack(f, d["members"], d["non_members"]),
            "not fitted yet: call fit",
        ),
        (lambda f, d: ShadowModelAttack(n_shadows=0).fit(f, *d["aux"]), "n_shadows must be"),
        (lambda f, d: ShadowModelAttack(attack_model="svm").fit(f, *d["aux"]), "attack_model"),
        (lambda f, d: membership_result(np.ones(3), np.ones(3), attack="x"), "both members and"),
    ],
)
def test_bad_input_is_named(adult, forest, call, message: str) -> None:
    with pytest.raises(InputError, match=message):
        call(forest, adult)


def _brute_tpr(labels: np.ndarray, scores: np.ndarray, target: float) -> float:
    best = 0.0
    for tau in np.r_[np.unique(scores), np.inf]:
        if np.mean(scores[labels == 0] >= tau) <= target:
            best = max(best, float(np.mean(scores[labels == 1] >= tau)))
    return best


def test_tpr_at_fpr_tries_every_threshold_even_on_tied_scores() -> None:
    rng = np.random.default_rng(4)
    for _ in range(200):
        labels = np.r_[np.ones(rng.integers(3, 80)), np.zeros(rng.integers(3, 80))].astype(int)
        scores = np.round(rng.normal(size=labels.size) + labels, int(rng.integers(0, 2)))
        for target in (0.001, 0.01, 0.1, 0.5):
            assert tpr_at_fpr(labels, scores, target) == _brute_tpr(labels, scores, target)


def test_tpr_interval_holds_the_tpr_and_narrows_with_more_records() -> None:
    rng = np.random.default_rng(5)

    def result(n: int) -> MembershipResult:
        labels = np.r_[np.ones(n), np.zeros(n)].astype(int)
        return membership_result(labels, rng.normal(size=2 * n) + 1.5 * labels, attack="x")

    small, large = tpr_interval(result(300), 0.05), tpr_interval(result(3000), 0.05)
    for score in (small, large):
        low, high = (v + 0.05 for v in score.ci)
        assert low <= score.attack <= high and score.baseline == 0.05
    assert (large.ci[1] - large.ci[0]) < 0.6 * (small.ci[1] - small.ci[0])
    assert abs(large.attack - 0.442) < 0.05  # Phi(1.5 - 1.645): the normal model's TPR at 5%
