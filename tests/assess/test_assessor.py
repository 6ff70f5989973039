"""FeatureRiskAssessor end to end on real data: ranking, backends, mitigation loop, checks.

The leaking feature is a record identifier left in the training data (a classic mistake): a
one-hot logistic regression learns one weight per training record, so its members get a low
loss and the loss-threshold membership attack finds them. Dropping the identifier removes the
leak; a random coin column leaks nothing.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.compose import ColumnTransformer, make_column_selector
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from sklearn.svm import SVC, LinearSVC

from attrpriv import datasets
from attrpriv.assess._grid import property_spec, skipped_attacks
from attrpriv.assess.assessor import FeatureRiskAssessor
from attrpriv.assess.membership import ShadowModelAttack
from attrpriv.assess.mitigation import Drop, Encrypt, LocalDPNoise
from attrpriv.assess.models import make_model
from attrpriv.assess.parallel import run_tasks
from attrpriv.assess.report import RiskReport
from attrpriv.errors import InputError, showing_private_values
from attrpriv.report import render_html

SETS = [["record_id"], ["coin"]]


def memorizer() -> Pipeline:
    """One-hot (every category kept) + weakly regularised logistic regression."""
    prepare = ColumnTransformer(
        [
            (
                "cat",
                OneHotEncoder(handle_unknown="ignore"),
                make_column_selector(dtype_include=["object", "string"]),
            ),
            ("num", StandardScaler(), make_column_selector(dtype_include="number")),
        ]
    )
    return make_pipeline(prepare, LogisticRegression(C=10.0, max_iter=2000))


@pytest.fixture(scope="module")
def leaky(adult_dataset: datasets.Dataset) -> tuple[pd.DataFrame, pd.Series]:
    frame = adult_dataset.frame.sample(800, random_state=1).reset_index(drop=True)
    rng = np.random.default_rng(1)
    X = frame[["age", "education_num", "hours_per_week", "sex"]].astype({"sex": object})
    X["record_id"] = [f"id{i:04d}" for i in rng.permutation(len(X))]
    X["coin"] = rng.integers(0, 2, len(X))
    return X, frame["income"]


def assessor(**kwargs: object) -> FeatureRiskAssessor:
    params: dict[str, object] = {
        "feature_sets": SETS,
        "attacks": ("membership",),
        "n_repeats": 2,
        "backend": "sequential",
    }
    params.update(kwargs)
    return FeatureRiskAssessor(memorizer(), **params)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def leak_report(leaky: tuple[pd.DataFrame, pd.Series]) -> RiskReport:
    X, y = leaky
    before = X.copy()
    report = assessor().assess(X, y)
    pd.testing.assert_frame_equal(X, before)  # the input is never modified
    return report


def test_a_record_identifier_ranks_above_a_noise_column(leak_report: RiskReport) -> None:
    first, second = leak_report.feature_sets
    assert first.features == ("record_id",) and second.features == ("coin",)
    leak, noise = first.attacks["membership"], second.attacks["membership"]
    assert leak.ci[0] > 0.03  # the model without the identifier is clearly harder to attack
    assert noise.ci[0] < 0.0 < noise.ci[1]  # the coin makes no detectable difference
    assert first.flagged and not second.flagged
    assert first.overfitting > 0.05  # the identifier is where the model overfits
    # the parts add up: the full model's attack rate is the report's membership AUC (the
    # identifier's differential pools its 6 repeats, the summary the 3 every set shares)
    assert noise.attack == pytest.approx(leak_report.model.membership.auc)
    assert leak.n == 2 * noise.n and first.flags["identifier"]
    assert leak.baseline == pytest.approx(first.membership_without.auc)


def test_flagging_on_the_lower_end_keeps_the_leak_and_drops_the_noise(
    leaky: tuple[pd.DataFrame, pd.Series],
) -> None:
    """At threshold 0 only a significant risk is flagged: the identifier, never the coin."""
    risk = assessor(threshold=0.0, flag_on="lower")
    report = risk.mitigate(*leaky, [Drop()], max_steps=2)
    assert [r.features for r in report.flagged] == [("record_id",)]
    assert report.flag_on == "lower"
    for r in report.feature_sets:
        low, high = r.modified_ci
        assert low < r.modified < high and r.flagged == (low > 0.0)
    path = report.mitigation
    assert path is not None and len(path.steps) == 2  # dropping the identifier was enough
    assert path.stopped.startswith("no score is significantly over the threshold")
    (coin,) = risk.final_report_.feature_sets
    assert coin.modified_ci[0] < 0.0


def results(report: RiskReport) -> dict[str, object]:
    """The report's JSON form without ``run`` (its date and seconds differ between runs)."""
    return {k: v for k, v in report.to_dict().items() if k != "run"}


def test_joblib_processes_give_the_same_report(
    leaky: tuple[pd.DataFrame, pd.Series], leak_report: RiskReport
) -> None:
    X, y = leaky
    parallel = assessor(backend="joblib", n_jobs=2).assess(X, y)
    assert results(parallel) == results(leak_report)


def test_dask_local_cluster_gives_the_same_report(leaky: tuple[pd.DataFrame, pd.Series]) -> None:
    distributed = pytest.importorskip("distributed")
    X, y = leaky
    tiny = {"feature_sets": [["coin"]], "n_repeats": 1}
    expected = assessor(**tiny).assess(X, y)
    with (
        distributed.LocalCluster(n_workers=1, processes=True, dashboard_address=None) as cluster,
        distributed.Client(cluster),
    ):
        got = assessor(backend="dask", **tiny).assess(X, y)
    assert results(got) == results(expected)


def test_mitigation_drops_the_leak_and_stops_under_the_threshold(
    leaky: tuple[pd.DataFrame, pd.Series],
) -> None:
    X, y = leaky
    risk = assessor(threshold=0.05)
    report = risk.mitigate(X, y, [Drop()], max_steps=3)
    path = report.mitigation
    assert path is not None
    start, step = path.steps[0], path.steps[1]
    assert start.flagged == (("record_id",),)
    assert (step.feature_set, step.strategy) == (("record_id",), "drop")
    assert step.max_score < start.max_score
    assert path.stopped == "every score is under the threshold" and len(path.steps) == 2
    assert step.utility_paid == pytest.approx(start.utility - step.utility)
    assert "record_id" not in risk.mitigated_.columns and "record_id" in X.columns
    assert report.feature_sets[0].features == ("record_id",)  # the first assessment
    final = risk.final_report_  # the mitigated data's assessment, CIs included
    assert [r.features for r in final.feature_sets] == [("coin",)]
    assert final.max_score == pytest.approx(step.max_score) and not final.flagged


def test_encryption_does_not_lower_the_risk_and_the_loop_stops(
    leaky: tuple[pd.DataFrame, pd.Series],
) -> None:
    """Deterministic encryption keeps one token per value: the model learns the same thing."""
    X, y = leaky
    path = assessor(threshold=0.05).mitigate(X, y, [Encrypt()], max_steps=3).mitigation
    assert path is not None
    assert [s.strategy for s in path.steps] == [None, "encrypt"]
    assert ("record_id",) in path.final.flagged
    assert path.stopped == "no strategy left for the flagged feature sets"
    assert path.final.applied["params"]["cipher"] == "AES-SIV"


def test_a_strategy_that_cannot_apply_is_skipped_for_the_next_rung(
    leaky: tuple[pd.DataFrame, pd.Series],
) -> None:
    """Local DP without public bounds is skipped (reason kept); encrypt, then drop, follow."""
    X, y = leaky
    ladder = [LocalDPNoise(1.0), Encrypt(), Drop()]
    risk = assessor(feature_sets=[["age", "record_id"]], n_repeats=1, threshold=0.05)
    report = risk.mitigate(X, y, ladder, max_steps=2, allow_unledgered=True)
    path = report.mitigation
    assert path is not None
    assert [s.strategy for s in path.steps] == [None, "encrypt", "drop"]
    page = render_html(report)
    assert "Step 1: skipped ldp:" in page and "became unordered categories" in page
    (why,) = path.steps[1].skipped
    assert why.startswith("ldp:") and "bounds" in why
    assert path.steps[2].skipped == ()
    # encrypting the numeric age turns it into unordered categories, and the step says so
    assert "['age']" in path.steps[1].applied["params"]["note"]
    assert "record_id" not in risk.mitigated_.columns


def test_the_loop_stops_when_no_rung_can_be_applied(
    leaky: tuple[pd.DataFrame, pd.Series],
) -> None:
    X, y = leaky
    risk = assessor(feature_sets=[["age", "record_id"]], n_repeats=1, threshold=0.05)
    ladder = [LocalDPNoise(1.0), LocalDPNoise(2.0)]
    path = risk.mitigate(X, y, ladder, allow_unledgered=True).mitigation
    assert path is not None and len(path.steps) == 1
    assert path.stopped.startswith("could not mitigate age+record_id: ldp:")
    assert path.stopped.count("ldp:") == 2


def test_the_loop_stops_at_max_steps(leaky: tuple[pd.DataFrame, pd.Series]) -> None:
    X, y = leaky
    path = assessor(threshold=0.05, n_repeats=1).mitigate(X, y, [Encrypt()], max_steps=1)
    assert path.mitigation is not None
    assert path.mitigation.stopped == "the most steps allowed (1) were taken"
    assert len(path.mitigation.steps) == 2


def test_shadow_attack_and_regression_run_through_the_same_grid() -> None:
    frame = datasets.load("german_credit").frame
    X = frame[["duration_months", "age", "purpose", "savings"]]
    risk = FeatureRiskAssessor(
        make_model("logreg", task="regression"),
        feature_sets=[["duration_months"]],
        attacks=("membership", "attribute"),
        membership_attack="shadow",
        n_shadows=2,
        attack_model="logreg",
        n_repeats=1,
        backend="sequential",
    )
    report = risk.assess(X, frame["credit_amount"])
    assert report.model.metric == "r2"
    (only,) = report.feature_sets
    assert 0.0 <= only.attacks["membership"].attack <= 1.0
    assert set(only.per_feature["duration_months"]) == {"attribute"}


def test_property_attack_scores_a_mean_and_a_share() -> None:
    frame = datasets.load("german_credit").frame
    X = frame[["duration_months", "age", "purpose", "foreign_worker"]]
    risk = FeatureRiskAssessor(
        make_model("logreg"),
        feature_sets=[["age"], ["foreign_worker"]],
        attacks=("property",),
        n_shadows=2,
        n_repeats=1,
        backend="sequential",
    )
    report = risk.assess(X, frame["credit_risk"])
    for risk_of_set in report.feature_sets:
        game = risk_of_set.attacks["property"]
        assert set(risk_of_set.attacks) == {"property"}
        assert game.n == 4  # 2 fresh test shadows per world, one guess each
        assert game.difference == pytest.approx(game.attack - game.baseline)
        assert risk_of_set.overall == pytest.approx(game.difference)
    assert report.model.membership is None


def test_a_skewed_feature_and_a_constant_one_in_the_property_attack(
    adult_dataset: datasets.Dataset,
) -> None:
    """Adult's mostly-zero capital_gain gets reachable means; a constant feature is left out
    before any work (named in the report), and a set naming it is refused."""
    frame = adult_dataset.frame.sample(1500, random_state=0)
    X = frame[["age", "capital_gain", "education"]].assign(constant=1.0)
    params: dict[str, Any] = {
        "attacks": ("property",),
        "n_shadows": 2,
        "n_repeats": 1,
        "backend": "sequential",
    }
    report = FeatureRiskAssessor(make_model("logreg"), **params).assess(X, frame["income"])
    assert set(report["capital_gain"].attacks) == {"property"}
    assert "constant" not in [r.label for r in report.feature_sets]
    assert report.notes[0] == (
        "left out 'constant': it takes a single value (nothing to attack or retrain without)"
    )
    explicit = FeatureRiskAssessor(make_model("logreg"), feature_sets=[["constant"]], **params)
    with pytest.raises(InputError, match="column 'constant' cannot be assessed: it takes a"):
        explicit.assess(X, frame["income"])


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.floats(min_value=-1e6, max_value=1e6, allow_nan=False), min_size=2, max_size=50
    ).filter(lambda v: len(set(v)) > 1)
)
def test_property_spec_means_lie_strictly_inside_the_observed_range(values: list[float]) -> None:
    """Either both targets lie strictly inside the range, or the property game is skipped."""
    spec = property_spec(pd.Series(values))
    skipped = skipped_attacks(pd.DataFrame({"x": values}), ["x"], ["property"])
    inside = min(values) < spec["low"] < spec["high"] < max(values)
    assert inside != (("property", "x") in skipped)


def test_values_closer_than_float_resolution_skip_the_property_game() -> None:
    """0 and 1e-244 differ, but their variance underflows to 0: no two means to tell apart."""
    skipped = skipped_attacks(pd.DataFrame({"x": [0.0, 5e-244] * 10}), ["x"], ["property"])
    assert "floating point" in skipped["property", "x"]


def test_an_identifier_is_not_attribute_attacked(leaky: tuple[pd.DataFrame, pd.Series]) -> None:
    """No other record shows an identifier's value: the attack is skipped, and said so."""
    X, y = leaky
    report = assessor(attacks=("attribute",), attack_model="logreg", n_repeats=1).assess(X, y)
    identifier, coin = report["record_id"], report["coin"]
    assert identifier.attacks == {} and math.isnan(identifier.modified)
    assert not identifier.flagged and identifier.rank == 2
    assert set(coin.attacks) == {"attribute"} and report.max_score == coin.modified
    (note,) = report.notes
    assert "'record_id'" in note and "100%" in note
    assert RiskReport.from_json(report.to_json()).to_json() == report.to_json()


# -- parameter and input checks ------------------------------------------------------------------


@pytest.fixture(scope="module")
def small() -> tuple[pd.DataFrame, pd.Series]:
    frame = datasets.load("german_credit").frame.head(100)
    return frame[["age", "purpose"]], frame["credit_risk"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n_repeats": 0}, "n_repeats must be an integer >= 1"),
        ({"attacks": ("membership", "membership")}, "attacks must be distinct"),
        ({"attacks": ("leakage",)}, "attacks must be one of"),
        ({"backend": "spark"}, "backend must be one of"),
        ({"test_size": 1.0}, r"test_size must be in \(0, 1\)"),
        ({"membership_attack": "reference"}, "membership_attack must be one of"),
        ({"weights": {"membership": 1.0}}, "weights must be a ScoreWeights"),
        ({"n_jobs": 0}, "n_jobs must be an integer >= 1"),
        ({"n_references": 0}, "n_references must be an integer >= 1"),
        ({"attack_model": "svm"}, "attack_model must be one of"),
        ({"flag_on": "upper"}, "flag_on must be one of"),
        ({"feature_sets": [["height"]]}, "unknown column 'height'"),
    ],
)
def test_bad_parameters_are_refused(
    small: tuple[pd.DataFrame, pd.Series], kwargs: dict[str, object], message: str
) -> None:
    with pytest.raises(InputError, match=message):
        FeatureRiskAssessor(make_model("logreg"), **kwargs).assess(*small)  # type: ignore[arg-type]


@settings(max_examples=25, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    threshold=st.floats(allow_nan=False).filter(lambda t: not 0.0 <= t <= 1.0)
    | st.sampled_from([float("nan"), float("inf")])
)
def test_a_threshold_outside_0_1_is_refused(
    small: tuple[pd.DataFrame, pd.Series], threshold: float
) -> None:
    with pytest.raises(InputError, match="threshold must"):
        FeatureRiskAssessor(make_model("logreg"), threshold=threshold).assess(*small)


def test_bad_data_is_refused(small: tuple[pd.DataFrame, pd.Series]) -> None:
    X, y = small
    risk = FeatureRiskAssessor(make_model("logreg"))
    with pytest.raises(InputError, match="at least 2 columns"):
        risk.assess(X[["age"]], y)
    with pytest.raises(InputError, match="one value per row"):
        risk.assess(X, y.iloc[:50])
    with pytest.raises(InputError, match="missing values"):
        risk.assess(X, y.astype(object).where(y.index > 0))
    with pytest.raises(InputError, match="scikit-learn estimator"):
        FeatureRiskAssessor(object()).assess(X, y)
    with pytest.raises(InputError, match="non-empty sequence of Mitigation"):
        risk.mitigate(X, y, [])
    with pytest.raises(InputError, match=r"single class \(value hidden: --debug shows it\)"):
        risk.assess(X, pd.Series(["good"] * len(X)))
    with pytest.raises(InputError, match=r"rarest class \(value hidden.*\) of y has 1 row"):
        risk.assess(X, pd.Series(["good"] * (len(X) - 1) + ["bad"]))


def test_class_labels_are_named_only_when_private_values_are_shown(
    small: tuple[pd.DataFrame, pd.Series],
) -> None:
    """A label of y is data: messages say which class (the rarest) and hide its value."""
    X, _ = small
    risk = FeatureRiskAssessor(make_model("logreg"))
    single = pd.Series(["secret"] * len(X))
    rare = pd.Series(["good"] * (len(X) - 1) + ["secret"])
    for y in (single, rare):
        with pytest.raises(InputError) as caught:
            risk.assess(X, y)
        assert "secret" not in str(caught.value) and "--debug shows it" in str(caught.value)
    with showing_private_values():
        with pytest.raises(InputError, match="single class 'secret'; a classifier"):
            risk.assess(X, single)
        with pytest.raises(InputError, match="rarest class 'secret' of y has 1 row"):
            risk.assess(X, rare)
        shadow = FeatureRiskAssessor(make_model("logreg"), membership_attack="shadow")
        with pytest.raises(InputError, match="rarest class 'b' of y has 3 rows"):
            shadow.assess(X, pd.Series(["a"] * 97 + ["b"] * 3))
        with pytest.raises(InputError, match=r"rarest aux class 'b' has 1 record\(s\)"):
            ShadowModelAttack().fit(make_model("logreg"), X, pd.Series(["a"] * 99 + ["b"]))


@pytest.mark.parametrize("estimator", [make_model("logreg", task="regression"), LinearRegression()])
def test_a_regressor_needs_a_numeric_target(
    small: tuple[pd.DataFrame, pd.Series], estimator: object
) -> None:
    with pytest.raises(InputError, match=r"target 'credit_risk' must be numeric for a regressor"):
        FeatureRiskAssessor(estimator).assess(*small)


@pytest.mark.parametrize("backend", ["sequential", "joblib"])
def test_an_estimator_that_cannot_take_x_is_an_input_error(backend: str) -> None:
    frame = datasets.load("german_credit").frame.head(200)
    X, y = frame.drop(columns="credit_risk"), frame["credit_risk"]
    risk = FeatureRiskAssessor(LogisticRegression(), n_repeats=1, backend=backend)
    with pytest.raises(InputError) as caught:
        risk.assess(X, y)
    message = str(caught.value)
    assert message.startswith("estimator LogisticRegression could not be trained on X (")
    assert "could not convert string to float" in message and "make_model" in message
    assert "\n" not in message
    assert "float: '" not in message and "--debug shows them" in message  # no cell value of X
    if backend == "sequential":  # the switch is not carried to joblib's worker processes
        with showing_private_values(), pytest.raises(InputError) as shown:
            risk.assess(X, y)
        assert "could not convert string to float: '" in str(shown.value)


def test_the_shadow_attack_needs_rows_of_every_class(small: tuple[pd.DataFrame, pd.Series]) -> None:
    X, _ = small
    y = pd.Series(["a"] * 97 + ["b"] * 3)
    risk = FeatureRiskAssessor(make_model("logreg"), membership_attack="shadow")
    with pytest.raises(InputError, match=r"class \(value hidden.*\) of y has 3 rows; the shadow"):
        risk.assess(X, y)


def test_an_estimator_without_predict_proba_is_refused(
    small: tuple[pd.DataFrame, pd.Series],
) -> None:
    X, y = small
    with pytest.raises(InputError, match=r"LinearSVC has no predict_proba.*CalibratedClassifierCV"):
        FeatureRiskAssessor(LinearSVC()).assess(X[["age"]].assign(age2=X["age"] ** 2), y)
    hidden = make_pipeline(StandardScaler(), SVC(probability=False))
    with pytest.raises(InputError, match="Pipeline has no predict_proba"):
        FeatureRiskAssessor(hidden).mitigate(X, y, [Drop()])


@pytest.mark.parametrize(
    ("rows", "kwargs", "message"),
    [
        (60, {"membership_attack": "shadow"}, "shadow-model attack gets 15 of the 60 rows"),
        (45, {"attacks": ("attribute",)}, "attribute inference gets 14 of the 45 rows"),
        (100, {"attacks": ("property",)}, "property inference gets 70 of the 100 rows"),
    ],
)
def test_too_few_rows_for_an_attack_are_refused(
    small: tuple[pd.DataFrame, pd.Series], rows: int, kwargs: dict[str, object], message: str
) -> None:
    X, y = small
    risk = FeatureRiskAssessor(make_model("logreg"), **kwargs)  # type: ignore[arg-type]
    with pytest.raises(InputError, match=message):
        risk.assess(X.head(rows), y.head(rows))


def _square(offset: int, value: int) -> int:
    return offset + value * value


@pytest.mark.parametrize("backend", ["sequential", "joblib"])
def test_run_tasks_keeps_the_order_of_the_tasks(backend: str) -> None:
    assert run_tasks(_square, 1, list(range(7)), backend=backend, n_jobs=2) == [
        1 + v * v for v in range(7)
    ]


def test_shadow_models_see_every_class_or_refuse(small: tuple[pd.DataFrame, pd.Series]) -> None:
    """Halves are split within each class: two rows of a class put one in each half."""
    X, _ = small
    rare = pd.Series(["a"] * 98 + ["b"] * 2)
    ShadowModelAttack(n_shadows=3).fit(make_model("logreg"), X, rare)  # no single-class shadow
    with pytest.raises(InputError, match=r"aux class \(value hidden.*\) has 1 record\(s\)"):
        ShadowModelAttack().fit(make_model("logreg"), X, pd.Series(["a"] * 99 + ["b"]))


def test_local_dp_in_the_loop_is_charged_once_per_draw(
    leaky: tuple[pd.DataFrame, pd.Series], tmp_path
) -> None:
    """Every noise draw of the mitigation is charged to the ledger before it is drawn; a set's
    draw is reused when later steps replay it on the same input (one charge, not one a step);
    a strategy the budget cannot pay for is skipped with the ledger's reason."""
    from attrpriv.assess.loop import Replays
    from attrpriv.dp import BudgetLedger
    from attrpriv.errors import BudgetExceededError

    X, y = leaky
    ledger = BudgetLedger(tmp_path / "mitigate.ledger")
    ledger.set_budget(5.0, unit="dp/substitute:coin")
    ldp = LocalDPNoise(1.0, domain={"coin": [0, 1]})
    done = Replays(ledger)
    first, _ = done.apply(ldp, 0, X, ("coin",), 0, y)
    again, _ = done.apply(ldp, 0, X.copy(), ("coin",), 0, y)  # the same input: reused
    assert again is first and len(ledger.entries()) == 1
    done.apply(ldp, 0, X.assign(age=X["age"] + 1), ("coin",), 0, y)  # another input: drawn
    assert [e.record.unit.key for e in ledger.entries()] == ["dp/substitute:coin"] * 2
    with pytest.raises(BudgetExceededError):  # no budget covers age: nothing drawn
        Replays(ledger).apply(LocalDPNoise(1.0, bounds={"age": (17, 90)}), 0, X, ("age",), 0, y)
    assert len(ledger.entries()) == 2
    # through mitigate: local DP on the identifier (charged), then drop; a tiny budget skips
    ids = LocalDPNoise(1.0, domain={"record_id": sorted(X["record_id"])})
    ledger.set_budget(5.0, unit="dp/substitute:record_id")
    risk = assessor(feature_sets=[["record_id"], ["coin"]], n_repeats=1, threshold=0.05)
    path = risk.mitigate(X, y, [ids, Drop()], max_steps=3, ledger=ledger).mitigation
    assert path is not None and [s.strategy for s in path.steps][:2] == [None, "ldp"]
    assert len(ledger.entries()) == 3  # one more draw, however often the loop replayed it
    assert path.steps[1].charges == (ledger.entries()[-1].id,)  # the step names its charge
    assert all(s.charges == () for s in path.steps[2:])
    small = BudgetLedger(tmp_path / "small.ledger")
    small.set_budget(0.5, unit="dp/substitute:record_id")
    path = risk.mitigate(X, y, [ids, Drop()], max_steps=1, ledger=small).mitigation
    assert path is not None and path.steps[1].strategy == "drop"
    assert "would exceed the budget" in path.steps[1].skipped[0] and not small.entries()


# -- choose="best": the step that removes the most excess risk per utility lost ---------------


class MoveIdentifier(Drop):
    """A broken "fix": blanks the set but copies the identifier into another column (the risk
    moves there; a probe on the flagged set alone sees it fall)."""

    name = "move"

    def _transform(self, work: Any) -> Any:
        frame = work.X
        (feature,) = work.features
        ids = frame[feature]
        frame = frame.assign(**{feature: "same", "coin": ids})
        return frame, {}, None


class Shrink:
    """A model-level strategy: the same pipeline, far more regularized."""

    name = "shrink"

    def apply_model(self, estimator: Any) -> Any:
        from sklearn.base import clone

        return clone(estimator).set_params(logisticregression__C=1e-4)


def test_best_takes_the_step_that_removes_risk_and_says_why_it_left_the_others(
    leaky: tuple[pd.DataFrame, pd.Series],
) -> None:
    """Encrypting the identifier removes nothing; dropping it removes the excess. "best" probes
    both, takes drop in one step and records each candidate's measured reduction and cost."""
    from attrpriv.assess.mitigation.choice import excess

    X, y = leaky
    risk = assessor(threshold=0.05, n_repeats=1)
    report = risk.mitigate(X, y, [Encrypt(), Drop()], max_steps=3, choose="best")
    path = report.mitigation
    assert path is not None and [s.strategy for s in path.steps] == [None, "drop"]
    start, step = path.steps
    flagged = report.flagged[0]
    assert start.total_excess == pytest.approx(excess(flagged, 0.05)) and start.total_excess > 0
    verdicts = {c["strategy"]: c for c in step.candidates}
    assert verdicts["drop"]["verdict"] == "chosen" and verdicts["drop"]["risk_reduction"] > 0
    assert verdicts["encrypt"]["verdict"].startswith("removes no risk")
    assert step.total_excess == 0.0 and path.stopped == "every score is under the threshold"
    low, high = step.scores_ci["coin"]
    assert low <= step.scores["coin"] <= high
    # the ladder, in the same order, spends a step on encryption first
    ladder = assessor(threshold=0.05, n_repeats=1).mitigate(X, y, [Encrypt(), Drop()])
    assert [s.strategy for s in ladder.mitigation.steps][:2] == [None, "encrypt"]


def test_best_rejects_a_step_the_full_reassessment_does_not_confirm(
    leaky: tuple[pd.DataFrame, pd.Series], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The probe on the flagged set sees the identifier's risk fall; the full re-assessment (made
    to find the risk moved, as a privacy onion would) does not, and the step is rejected:
    nothing else is left, so the loop stops naming the set and the reason."""
    X, y = leaky
    risk = assessor(threshold=0.05, n_repeats=1)
    real = FeatureRiskAssessor._assess
    first: list[RiskReport] = []

    def assess(self: FeatureRiskAssessor, frame: pd.DataFrame, *args: Any, **kw: Any) -> Any:
        report = real(self, frame, *args, **kw)
        if not first:
            first.append(report)
        moved = (frame["record_id"] == "same").all() and len(report.feature_sets) == 2
        return first[0] if moved else report  # the full re-assessment: as risky as before

    monkeypatch.setattr(FeatureRiskAssessor, "_assess", assess)
    path = risk.mitigate(X, y, [MoveIdentifier()], choose="best").mitigation
    assert path is not None and len(path.steps) == 1
    assert path.stopped.startswith("no candidate step removes risk within the utility budget")
    assert "move on record_id: re-assessed on every set, the excess" in path.stopped
    pd.testing.assert_frame_equal(risk.mitigated_, X)  # nothing applied


def test_best_within_a_utility_budget_and_a_model_level_strategy(
    leaky: tuple[pd.DataFrame, pd.Series],
) -> None:
    """A heavily regularized model stops memorising the identifier but pays test utility: with
    no budget it is a candidate like any other; with budget 0 nothing that costs utility is
    taken, and the stop reason says what each candidate would have paid."""
    X, y = leaky
    risk = assessor(threshold=0.05, n_repeats=1)
    path = risk.mitigate(X, y, [Shrink()], choose="best").mitigation
    assert path is not None and [s.strategy for s in path.steps] == [None, "shrink"]
    assert path.steps[1].feature_set is None  # the model, not a feature set
    assert risk.mitigated_estimator_.get_params()["logisticregression__C"] == 1e-4
    assert risk.estimator.get_params()["logisticregression__C"] == 10.0  # not mutated
    paid = path.steps[1].utility_paid
    assert paid > 0
    tight = assessor(threshold=0.05, n_repeats=1)
    stopped = tight.mitigate(X, y, [Shrink()], choose="best", max_utility_loss=paid / 2)
    assert stopped.mitigation is not None and len(stopped.mitigation.steps) == 1
    assert f"over the budget {paid / 2:g}" in stopped.mitigation.stopped
    assert "shrink on the model" in stopped.mitigation.stopped


def test_a_noise_drawing_strategy_needs_a_ledger(leaky: tuple[pd.DataFrame, pd.Series]) -> None:
    X, y = leaky
    ids = LocalDPNoise(1.0, domain={"record_id": sorted(X["record_id"])})
    with pytest.raises(InputError, match=r"strategy 'ldp' draws noise: pass ledger="):
        assessor(n_repeats=1).mitigate(X, y, [ids, Drop()], choose="best")
    with pytest.raises(InputError, match=r"choose must be one of \['ladder', 'best'\]"):
        assessor(n_repeats=1).mitigate(X, y, [Drop()], choose="greedy")
    with pytest.raises(InputError, match="max_utility_loss must be >= 0"):
        assessor(n_repeats=1).mitigate(X, y, [Drop()], max_utility_loss=-0.1)
