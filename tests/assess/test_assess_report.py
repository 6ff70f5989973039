"""Risk scores, the RiskReport JSON round trip, and the HTML report (figures, no data rows)."""

from __future__ import annotations

import dataclasses
import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from attrpriv import datasets
from attrpriv.assess.assessor import FeatureRiskAssessor
from attrpriv.assess.mitigation import Drop
from attrpriv.assess.models import make_model
from attrpriv.assess.report import FeatureSetRisk, MitigationStep, RiskReport, RocCurve
from attrpriv.assess.scoring import (
    ScoreWeights,
    differential_score,
    evidence,
    flag_reason,
    mean_interval,
    modified_interval,
    modified_score,
    overall_score,
    score_flags,
)
from attrpriv.errors import InputError
from attrpriv.report import render_html, write_html
from attrpriv.stats import Score

FEATURES = ["duration_months", "credit_amount", "age", "purpose", "savings", "foreign_worker"]


def score(difference: float, half: float = 0.02, attack: float = 0.6) -> Score:
    return Score(
        attack, attack - difference, difference, (difference - half, difference + half), 100
    )


# -- scores ---------------------------------------------------------------------------------------


def test_overall_is_the_weighted_mean_of_the_differences_with_a_combined_ci() -> None:
    attacks = {"membership": score(0.10, 0.04), "attribute": score(0.02, 0.02)}
    weights = ScoreWeights(membership=3.0, attribute=1.0)
    value, (low, high) = overall_score(attacks, weights)
    assert value == pytest.approx((3 * 0.10 + 0.02) / 4)
    # se_k = half / z; combined half-width = z * sqrt(sum (w_k / W)^2 se_k^2)
    assert (high - low) / 2 == pytest.approx(math.hypot(0.75 * 0.04, 0.25 * 0.02))


def test_a_zero_weight_leaves_an_attack_out_and_no_weight_at_all_is_refused() -> None:
    attacks = {"membership": score(0.10), "attribute": score(0.30)}
    value, _ = overall_score(attacks, ScoreWeights(attribute=0.0))
    assert value == pytest.approx(0.10)
    with pytest.raises(InputError, match="no attack a weight"):
        overall_score({"property": score(0.1)}, ScoreWeights(property=0.0))


def test_modified_score_adds_overfitting_and_subtracts_importance() -> None:
    weights = ScoreWeights(overfitting=2.0, utility=0.5)
    assert modified_score(0.1, 0.03, 0.04, weights) == pytest.approx(0.1 + 0.06 - 0.02)


def test_flags_mark_every_score_over_the_threshold() -> None:
    attacks = {"membership": score(0.08), "attribute": score(0.01)}
    flags = score_flags(attacks, (0.045, (0.03, 0.06)), (0.06, (0.04, 0.08)), 0.05)
    assert flags == {
        "membership": True,
        "attribute": False,
        "overall": False,
        "modified": True,
        "identifier": False,
    }


def test_each_attack_is_judged_on_its_own_and_noise_over_the_threshold_is_not_a_flag() -> None:
    """The overall score averages a strong membership attack with an attribute attack at 0:
    the set is still flagged, by the membership attack. An attribute difference of 0.07 whose CI
    holds 0 is noise, not a flag."""
    attacks = {"membership": score(0.09), "attribute": score(0.0), "property": score(0.07, 0.1)}
    overall = (0.04, (0.02, 0.06))  # under the threshold
    flags = score_flags(attacks, overall, (0.04, (0.01, 0.07)), 0.05)
    assert flags["membership"] and not flags["overall"] and not flags["modified"]
    assert not flags["property"]
    risk = FeatureSetRisk(
        features=("x",),
        attacks=attacks,
        overall=0.04,
        overall_ci=(0.02, 0.06),
        modified=0.04,
        overfitting=0.0,
        importance=0.0,
        utility_without=0.8,
        modified_ci=(0.01, 0.07),
        overfitting_ci=(0.0, 0.0),
        importance_ci=(0.0, 0.0),
        flags=flags,
        rank=1,
        why=flag_reason(attacks, flags, (0.04, (0.01, 0.07)), 0.05),
    )
    assert (
        risk.flagged
        and risk.why == "membership attack +0.090 [+0.070, +0.110] over the threshold 0.05"
    )
    assert FeatureSetRisk.from_dict(risk.to_dict()).why == risk.why


def test_an_identifier_is_flagged_whenever_its_membership_differential_is_above_zero() -> None:
    """The planted row ID of the issue: +0.038 [+0.023, +0.054], under the 0.05 threshold."""
    attacks = {"membership": Score(0.8, 0.762, 0.038, (0.023, 0.054), 100)}
    flags = score_flags(attacks, (0.019, (0.0, 0.04)), (0.02, (0.0, 0.04)), 0.05, identifier=True)
    assert flags["identifier"] and not flags["membership"]
    assert flag_reason(attacks, flags, (0.02, (0.0, 0.04)), 0.05).startswith("an identifier-like")
    inconclusive = {"membership": Score(0.8, 0.79, 0.01, (-0.005, 0.025), 100)}
    assert not score_flags(inconclusive, (0.0, (0, 0)), (0.0, (0, 0)), 0.05, identifier=True)[
        "identifier"
    ]
    assert not score_flags(attacks, (0.019, (0.0, 0.04)), (0.02, (0.0, 0.04)), 0.05)["identifier"]


def test_flagging_on_the_lower_end_needs_the_whole_ci_over_the_threshold() -> None:
    """0.08 +- 0.02 is significantly over 0.05, 0.06 +- 0.02 is not."""
    attacks = {"membership": score(0.08), "attribute": score(0.06)}
    overall = (0.07, (0.055, 0.085))
    flags = score_flags(attacks, overall, (0.065, (0.045, 0.085)), 0.05, flag_on="lower")
    assert flags == {
        "membership": True,
        "attribute": False,
        "overall": True,
        "modified": False,
        "identifier": False,
    }
    assert score_flags(attacks, overall, (0.075, (0.055, 0.095)), 0.05, "lower")["modified"]


def test_mean_interval_is_a_t_interval_and_a_point_for_one_repeat() -> None:
    mean, (low, high) = mean_interval([0.01, 0.03, 0.05], 0.95)
    assert mean == pytest.approx(0.03) and mean - low == pytest.approx(high - mean)
    assert high - mean == pytest.approx(4.302653 * 0.02 / np.sqrt(3), rel=1e-5)  # t(2) = 4.3027
    assert mean_interval([0.02], 0.95) == (0.02, (0.02, 0.02))


def test_modified_interval_adds_the_terms_in_quadrature() -> None:
    weights = ScoreWeights(overfitting=0.5, utility=2.0)
    low, high = modified_interval((0.0, 0.06), (0.0, 0.16), (0.0, 0.02), 0.1, weights)
    half = np.sqrt(0.03**2 + (0.5 * 0.08) ** 2 + (2.0 * 0.01) ** 2)
    assert (low, high) == pytest.approx((0.1 - half, 0.1 + half))


def test_differential_score_pools_the_repeats() -> None:
    single = score(0.05)
    assert differential_score([single]) is single
    pooled = differential_score([score(0.04), score(0.06)])
    assert pooled.difference == pytest.approx(0.05)
    assert pooled.ci[0] < 0.04 and pooled.ci[1] > 0.06  # between-seed spread widens it
    assert pooled.method == "delong-paired, random-effects(2)"
    with pytest.raises(InputError, match="at least one repeat"):
        differential_score([])


@given(bad=st.floats(max_value=-1e-9, allow_nan=False, allow_infinity=False))
def test_negative_weights_are_refused(bad: float) -> None:
    with pytest.raises(InputError, match=r"weights\.utility must be >= 0"):
        ScoreWeights(utility=bad)


def test_weights_round_trip_and_refuse_unknown_names() -> None:
    weights = ScoreWeights(membership=2.0, overfitting=0.0)
    assert ScoreWeights.from_dict(weights.to_dict()) == weights
    with pytest.raises(InputError, match="unknown score weights"):
        ScoreWeights.from_dict({"membersihp": 1.0})


def test_roc_curve_is_thinned_but_keeps_its_end_points() -> None:
    fpr = np.linspace(0, 1, 1001)
    roc = RocCurve.from_arrays(fpr, np.sqrt(fpr), max_points=50)
    assert len(roc.fpr) <= 50 and roc.fpr[0] == 0.0 and roc.fpr[-1] == 1.0


# -- a real report: German credit, logistic regression, one mitigation step ----------------------


@pytest.fixture(scope="module")
def credit() -> tuple[pd.DataFrame, pd.Series]:
    frame = datasets.load("german_credit").frame
    return frame[FEATURES], frame["credit_risk"]


@pytest.fixture(scope="module")
def report(credit: tuple[pd.DataFrame, pd.Series]) -> RiskReport:
    X, y = credit
    assessor = FeatureRiskAssessor(
        make_model("logreg"),
        feature_sets=[["credit_amount"], ["age"], ["purpose", "savings"]],
        attacks=("membership", "attribute"),
        threshold=0.0,
        attack_model="logreg",
        n_repeats=2,
        backend="sequential",
    )
    return assessor.mitigate(X, y, [Drop()], max_steps=1)


def test_report_holds_every_part_of_every_score(report: RiskReport) -> None:
    assert [r.rank for r in report.feature_sets] == [1, 2, 3]
    keys = [(r.flagged, evidence(r.attacks)) for r in report.feature_sets]
    assert keys == sorted(keys, reverse=True)  # flagged first, then the strongest evidence
    for risk in report.feature_sets:
        assert set(risk.attacks) == {"membership", "attribute"}
        membership = risk.attacks["membership"]
        assert membership.difference == pytest.approx(membership.attack - membership.baseline)
        assert risk.importance == pytest.approx(report.model.utility_test - risk.utility_without)
        assert set(risk.per_feature) == set(risk.features)
        best = max(risk.per_feature.values(), key=lambda s: s["attribute"].difference)
        assert risk.attacks["attribute"] == best["attribute"]
        by_attack = any(
            s.difference > report.threshold and s.ci[0] > 0 for s in risk.attacks.values()
        )
        assert risk.flagged == (risk.modified > report.threshold or by_attack)
        assert bool(risk.why) == risk.flagged
        assert risk.modified_ci[0] <= risk.modified <= risk.modified_ci[1]
        assert risk.overfitting_ci[0] <= risk.overfitting <= risk.overfitting_ci[1]
        assert risk.importance_ci[0] <= risk.importance <= risk.importance_ci[1]
        # the terms' spread over the 2 repeats widens the modified CI beyond the overall one
        assert risk.modified_ci[1] - risk.modified_ci[0] >= risk.overall_ci[1] - risk.overall_ci[0]
    path = report.mitigation
    assert path is not None and path.steps[0].strategy is None
    assert path.steps[0].max_score == pytest.approx(report.max_score)
    assert len(path.steps) <= 2


def test_a_report_without_term_intervals_still_loads(report: RiskReport) -> None:
    """Reports written before the overfitting/importance CIs: point terms, shifted CI."""
    spec = report.to_dict()
    for risk in spec["feature_sets"]:
        for key in ("modified_ci", "overfitting_ci", "importance_ci"):
            del risk[key]
    old = RiskReport.from_dict(spec)
    for was, now in zip(report.feature_sets, old.feature_sets, strict=True):
        shift = was.modified - was.overall
        low, high = was.overall_ci
        assert now.modified_ci == pytest.approx((low + shift, high + shift))
        assert now.overfitting_ci == (was.overfitting, was.overfitting)


def test_json_round_trip(report: RiskReport, tmp_path: Path) -> None:
    text = report.to_json()
    again = RiskReport.from_json(text)
    assert again.to_json() == text
    assert again["age"].attacks["membership"] == report["age"].attacks["membership"]
    saved = report.save(tmp_path / "report.json")
    assert RiskReport.load(saved).to_dict() == json.loads(text)
    with pytest.raises(InputError, match="not an attrpriv risk report"):
        RiskReport.from_dict({"format": "something else"})
    with pytest.raises(InputError, match="was not assessed"):
        report["telephone"]


def test_html_has_the_figures_and_no_data_row(
    report: RiskReport, credit: tuple[pd.DataFrame, pd.Series], tmp_path: Path
) -> None:
    page = write_html(report, tmp_path / "report.html").read_text(encoding="utf-8")
    images = re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
    assert len(images) == 3  # risk per set, ROC with/without, mitigation path
    assert all(len(image) > 1000 for image in images)
    for heading in (
        "Feature sets, riskiest first",
        "Membership attack with and without",
        "Mitigation loop",
    ):
        assert heading in page
    assert "purpose+savings" in page
    text = re.sub(r"data:image/png;base64,[A-Za-z0-9+/=]+", "", page)
    X, _ = credit
    amounts = X["credit_amount"].astype(str)
    rare = amounts[~amounts.duplicated(keep=False)].head(20)  # values that identify one record
    assert len(rare) == 20
    for value in rare:
        assert not re.search(rf"\b{value}\b", text), value
    assert render_html(report) == render_html(RiskReport.from_json(report.to_json()))
    assert "any one attack exceeds it with a CI above 0" in page
    assert "Most exposed training rows" in page
    exposed = report.model.membership.exposed
    assert exposed and all(f"<td>{r.row}</td>" in page for r in exposed[:10])


def test_html_says_when_flags_need_the_ci_over_the_threshold(report: RiskReport) -> None:
    lower = dataclasses.replace(report, settings={**report.settings, "flag_on": "lower"})
    assert "the lower end of its 95% CI exceeds it" in render_html(lower)


def test_a_step_keeps_its_skipped_strategies_and_older_json_still_loads() -> None:
    step = MitigationStep(
        step=1,
        feature_set=("age",),
        strategy="drop",
        utility=0.7,
        utility_paid=0.01,
        max_score=0.02,
        flagged=(),
        scores={"age": 0.02},
        skipped=("ldp: numeric feature 'age' needs public bounds",),
        scores_ci={"age": (0.01, 0.03)},
        total_excess=0.0,
        candidates=({"feature_set": ["age"], "strategy": "drop", "verdict": "chosen"},),
        charges=(3, 4),
    )
    spec = json.loads(json.dumps(step.to_dict()))
    assert MitigationStep.from_dict(spec) == step
    for key in ("skipped", "scores_ci", "total_excess", "candidates", "charges"):
        del spec[key]  # written before the fields existed
    old = MitigationStep.from_dict(spec)
    assert (old.skipped, old.scores_ci, old.total_excess, old.candidates, old.charges) == (
        (),
        {},
        None,
        (),
        (),
    )
