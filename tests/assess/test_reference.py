"""The reference-model attacks (offline and online RMIA, LiRA): their scores exactly, their
power, offline RMIA's a, and no false alarm."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin

from attrpriv import InputError
from attrpriv.assess import _grid
from attrpriv.assess.membership import loss_threshold_attack
from attrpriv.assess.models import make_model, per_record_loss
from attrpriv.assess.reference import (
    A_GRID,
    UNCALIBRATED_A,
    ReferenceAttack,
    calibrate_a,
    known_rows,
    reference_attack,
    reference_rows,
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


MEMBERS = (pd.DataFrame({"p": [0.9, 1.0]}), np.array([1, 1]))
NON_MEMBERS = (pd.DataFrame({"p": [0.5, 0.2]}), np.array([1, 0]))
OWN = np.array([0.9, 1.0, 0.5, 0.8])  # the target's probability of each candidate's true class
# reference probabilities of each candidate's true class, two reference models
REF = np.array([[0.3, 1.0, 0.5, 0.6], [0.5, 1.0, 0.7, 0.9]])


def scores_of(attack: str, a: float | None = None) -> np.ndarray:
    term = reference_term(-np.log(REF), "classification", attack, a=a)
    result = reference_attack(Fixed().fit(None, None), MEMBERS, NON_MEMBERS, term)
    assert result.attack == attack and result.score.method == "delong"
    return result.scores


def test_offline_rmia_divides_by_the_papers_corrected_out_probability() -> None:
    expected = np.log(OWN) - np.log(((1 + 0.2) * REF.mean(axis=0) + (1 - 0.2)) / 2)
    assert scores_of("rmia", a=0.2) == pytest.approx(expected)
    # a = 1: the plain ratio to the mean OUT probability; a = 0: Pr(x) = (1 + mean) / 2
    assert scores_of("rmia", a=1.0) == pytest.approx(np.log(OWN / REF.mean(axis=0)))
    assert scores_of("rmia", a=0.0) == pytest.approx(np.log(OWN / ((1 + REF.mean(axis=0)) / 2)))
    assert scores_of("rmia") == pytest.approx(scores_of("rmia", a=UNCALIBRATED_A))


def test_online_rmia_is_the_log_ratio_to_the_mean_reference_probability() -> None:
    scores = scores_of("rmia-online")
    assert scores == pytest.approx(np.log(OWN) - np.log(REF.mean(axis=0)))  # mean of probabilities
    assert scores[1] == pytest.approx(0.0)  # easy everywhere: not evidence of membership


def test_lira_compares_logits() -> None:
    def logit(p: np.ndarray) -> np.ndarray:
        p = np.clip(p, 1e-12, 1 - 1e-12)
        return np.log(p / (1 - p))

    expected = logit(OWN) - logit(REF).mean(axis=0)
    assert scores_of("lira")[[0, 2, 3]] == pytest.approx(expected[[0, 2, 3]], rel=1e-9)


def test_regression_uses_the_mean_reference_loss() -> None:
    losses = np.array([[1.0, 4.0], [3.0, 0.0]])
    for attack in ("rmia", "rmia-online", "lira"):
        term = reference_term(losses, "regression", attack)
        assert term.values == pytest.approx([-2.0, -2.0]) and term.signal == "loss"


def test_a_is_the_grid_value_with_the_best_auc_of_the_references_games() -> None:
    """Three references on 400 records: each record's probability under a model that trained on
    it is ``a_true * p + (1 - a_true)`` with p its probability otherwise (the paper's model of
    a), plus noise; the AUC of the a it picks is the best of the grid, recomputed here by brute
    force, and better than that of a = 1 (no correction)."""
    rng = np.random.default_rng(0)
    a_true, k, m = 0.4, 3, 400
    p = rng.uniform(0.05, 0.95, size=m)
    trained = rng.random((k, m)) < 0.5
    noisy = np.clip(p + rng.normal(0, 0.05, size=(k, m)), 1e-3, 1 - 1e-3)
    proba = np.where(trained, a_true * noisy + (1 - a_true), noisy)
    chosen = calibrate_a(-np.log(proba), trained)
    assert chosen in A_GRID

    def mean_auc(a: float) -> float:
        from sklearn.metrics import roc_auc_score

        aucs = []
        for j in range(k):
            others = [i for i in range(k) if i != j]
            out = ~trained[others]
            keep = out.any(axis=0)
            p_out = (proba[others] * out).sum(axis=0)[keep] / out.sum(axis=0)[keep]
            score = np.log(proba[j, keep]) - np.log(((1 + a) * p_out + 1 - a) / 2)
            aucs.append(roc_auc_score(trained[j, keep], score))
        return float(np.mean(aucs))

    assert mean_auc(chosen) == pytest.approx(max(mean_auc(a) for a in A_GRID))
    assert mean_auc(chosen) > mean_auc(1.0) + 0.01
    assert calibrate_a(-np.log(proba[:1]), trained[:1]) == UNCALIBRATED_A  # nothing to compare


def test_offline_rmia_beats_the_loss_and_the_online_attack_on_a_memorising_forest(adult) -> None:
    forest = make_model("rf", seed=0).fit(*adult["members"])
    offline = ReferenceAttack(n_references=2, train_size=1000, seed=3)
    offline.fit(make_model("rf"), *adult["other"])  # never saw a candidate
    strong = offline.attack(forest, adult["members"], adult["non_members"])
    online = ReferenceAttack(n_references=2, variant="rmia-online", seed=3)
    middle = online.fit(make_model("rf"), *population(adult)).attack(
        forest, adult["members"], adult["non_members"]
    )
    weak = loss_threshold_attack(forest, adult["members"], adult["non_members"])
    assert strong.auc > middle.auc > weak.auc + 0.05 and strong.score.ci[0] > 0
    assert strong.tpr_at_1pct_fpr > weak.tpr_at_1pct_fpr + 0.05
    assert strong.tpr_at_01pct_fpr > middle.tpr_at_01pct_fpr + 0.02
    assert len(offline.models_) == 2 and offline.a_ in A_GRID and online.a_ is None


def test_no_false_alarm_and_the_check_catches_biased_references(adult) -> None:
    """A model trained on neither side: the attack's CI holds 0.5. References trained on the
    non-members only (a broken attacker who knows who is out) make them look like outsiders."""
    outsider = make_model("rf", seed=0).fit(*adult["other"])
    attack = ReferenceAttack(n_references=2, seed=5).fit(make_model("rf"), *adult["other"])
    fair = attack.attack(outsider, adult["members"], adult["non_members"])
    assert fair.score.ci[0] <= 0 <= fair.score.ci[1]
    X, y = population(adult)
    biased = [make_model("rf", seed=k).fit(*adult["non_members"]) for k in range(2)]
    losses = np.array([per_record_loss(m, X, y) for m in biased])
    broken = reference_attack(
        outsider,
        adult["members"],
        adult["non_members"],
        reference_term(losses, "classification", a=attack.a_),
    )
    assert broken.score.ci[0] > 0  # a spurious "leak" the fair attack does not report


def test_reference_rows_are_seeded_and_keep_every_class() -> None:
    y = np.array([0] * 90 + [1] * 10)
    rows = reference_rows(y, 50, index=1, seed=0)
    assert np.array_equal(rows, reference_rows(y, 50, index=1, seed=0))
    assert not np.array_equal(rows, reference_rows(y, 50, index=2, seed=0))
    assert np.bincount(y[rows]).tolist() == [45, 5]
    pool = np.arange(20, 100)
    inside = reference_rows(y, 40, index=0, seed=0, rows=pool)
    assert set(inside) <= set(pool) and (y[inside] == 1).sum() == 5
    assert reference_rows(y, 5, index=0, seed=0).size >= 2  # a tiny share still sees class 1


def test_offline_references_of_the_assessment_never_train_on_an_attacked_row(
    adult_xy, grid_data
) -> None:
    X, y = adult_xy(1500, 2)
    data = grid_data(
        X.reset_index(drop=True),
        pd.Series(y),
        test_size=0.3,
        membership_attack="rmia",
        max_attack_rows=300,
        seed=4,
    )
    split = _grid.make_split(data, 1)
    attacked = set(split.members[0].index) | set(split.non_members[0].index)
    pool = _grid.population_rows(data, split)
    assert len(attacked) == 600 and not attacked & set(pool) and pool.size == 900
    found = _grid.run_task(data, _grid.Task("reference", 1, index=0))
    assert isinstance(found, _grid.ReferenceLosses)
    assert found.candidates.shape == (600,) and found.population.shape == found.trained.shape
    # informed: all 750 unattacked training rows, and the 150 other unattacked rows as filler
    # for the 300 attacked members (too few to reach the target's 1,050): every pool row
    assert found.trained.all()
    small = _grid.GridData(**{**data.__dict__, "max_attack_rows": 2000, "test_size": 0.5})
    with pytest.raises(InputError, match="rows that are not attacked"):
        _grid.population_rows(small, _grid.make_split(small, 0))


def test_informed_references_know_every_unattacked_training_row_and_keep_its_size() -> None:
    y = np.array([0, 1] * 50)
    trained = np.arange(60)  # the target's training rows; 0-19 are attacked members
    pool = np.arange(20, 90)  # unattacked: training rows 20-59 and other rows 60-89
    rows = [known_rows(y, pool, trained, index=k, seed=3) for k in (0, 1)]
    for chosen in rows:
        assert set(range(20, 60)) <= set(chosen) and set(chosen) <= set(pool)
        assert chosen.size == trained.size and np.bincount(y[chosen]).tolist() == [30, 30]
    assert not np.array_equal(rows[0], rows[1])  # each reference its own filler
    few = known_rows(y, np.arange(20, 64), trained, index=0, seed=3)
    assert few.tolist() == list(range(20, 64))  # not enough spare rows: all of them
    assert known_rows(None, pool, trained, index=0, seed=3).size == trained.size


def test_bad_use_is_refused(adult) -> None:
    with pytest.raises(NotFittedError, match="call fit"):
        ReferenceAttack().attack(None, adult["members"], adult["non_members"])
    with pytest.raises(InputError, match="n_references must be an integer >= 1"):
        ReferenceAttack(n_references=0).fit(make_model("logreg"), *population(adult))
    with pytest.raises(InputError, match="variant must be one of"):
        ReferenceAttack(variant="lira-online").fit(make_model("logreg"), *population(adult))
    with pytest.raises(InputError, match="train_size must be below"):
        ReferenceAttack(train_size=2000).fit(make_model("logreg"), *population(adult))
    with pytest.raises(InputError, match="at least 20 records"):
        ReferenceAttack().fit(make_model("logreg"), adult["other"][0][:10], adult["other"][1][:10])
    forest = make_model("rf", seed=0).fit(*adult["members"])
    term = reference_term(np.zeros((2, 3)), "classification")
    with pytest.raises(InputError, match="one value per member, then per non-member"):
        reference_attack(forest, adult["members"], adult["non_members"], term)
    with pytest.raises(InputError, match=r"a must be in \[0, 1\]"):
        reference_term(np.zeros((2, 3)), "classification", a=1.5)
