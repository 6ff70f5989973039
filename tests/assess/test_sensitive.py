"""Named sensitive attributes: what the model reveals of each, and which sets are its proxies."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from attrpriv import InputError, datasets
from attrpriv.assess.assessor import FeatureRiskAssessor
from attrpriv.assess.models import make_model
from attrpriv.assess.report import RiskReport
from attrpriv.data.schema import Role
from attrpriv.report import render_html


def planted(n: int, seed: int = 1) -> tuple[pd.DataFrame, pd.Series]:
    """Adult rows plus a numeric row ID and a copy of ``sex`` with 5% of it flipped."""
    dataset = datasets.load("adult")
    frame = dataset.frame.sample(n, random_state=seed).reset_index(drop=True)
    ignored = set(dataset.schema.with_role(Role.IGNORE)) | {"income"}
    X = frame[[c for c in frame.columns if c not in ignored]].copy()
    rng = np.random.default_rng(seed)
    X["row_id"] = rng.permutation(n).astype(float)
    flip = rng.random(n) < 0.05
    other = np.where(X["sex"] == "Male", "Female", "Male")
    X["sex_copy"] = np.where(flip, other, X["sex"].astype(str))
    return X, frame["income"]


@pytest.mark.parametrize("sensitive_input", [True, False])
def test_a_planted_copy_ranks_first_as_a_proxy(sensitive_input: bool) -> None:
    X, y = planted(1200)
    X = X[["age", "education", "relationship", "hours_per_week", "sex", "sex_copy"]]
    report = FeatureRiskAssessor(
        make_model("logreg"),
        attacks=("attribute",),
        attack_model="logreg",
        n_repeats=1,
        sensitive=("sex",),
        sensitive_input=sensitive_input,
        backend="sequential",
    ).assess(X, y)
    (risk,) = report.sensitive
    assert risk.attribute == "sex" and risk.model_input is sensitive_input
    first = risk.proxies[0]
    assert first.label == "sex_copy" and first.drop.ci[0] > 0.05
    labels = [p.label for p in risk.proxies]
    assert "sex" not in labels  # never its own proxy (an input or not)
    assert first.flagged and [p.label for p in risk.proxies if p.flagged] == ["sex_copy"]
    assert ("sex" in [r.label for r in report.feature_sets]) is sensitive_input
    again = RiskReport.from_json(report.to_json())
    assert again.sensitive == report.sensitive
    page = render_html(report)
    assert "<h2>Sensitive attribute sex</h2>" in page and "inference drop" in page
    assert ("not a model input" in page) is not sensitive_input


def test_bad_sensitive_columns_are_refused() -> None:
    X, y = planted(200)
    for sensitive, message in (
        (("height",), "sensitive column 'height' is not a column of X"),
        ("sex", "sensitive must be a sequence of column names"),
    ):
        risk = FeatureRiskAssessor(make_model("logreg"), sensitive=sensitive, n_repeats=1)
        with pytest.raises(InputError, match=message):
            risk.assess(X, y)


@pytest.mark.slow
def test_a_planted_id_is_flagged_and_the_copy_is_the_flagged_proxy() -> None:
    """The planted check with the defaults (hgb, 3 repeats, offline RMIA): the row ID is
    flagged by the identifier rule, the copy of sex is its strongest and flagged proxy."""
    X, y = planted(2400)
    report = FeatureRiskAssessor(make_model("hgb"), sensitive=("sex",)).assess(X, y)
    risk = report["row_id"]
    assert risk.flagged and risk.attacks["membership"].ci[0] > 0 and risk.flags["identifier"]
    first = report.sensitive[0].proxies[0]
    assert first.label == "sex_copy" and first.flagged


def test_a_planted_row_id_is_flagged_although_its_score_is_under_the_threshold() -> None:
    """A forest learns the rows through a numeric row ID: its membership differential's CI is
    above 0 but its scores stay under the threshold; the identifier rule flags it, says why, and
    it ranks first. The same column made of repeated values is not identifier-like."""
    X, y = planted(1500)
    X = X[["age", "education", "relationship", "hours_per_week", "occupation", "row_id"]]
    assessor = FeatureRiskAssessor(
        make_model("rf"),
        attacks=("membership", "attribute"),
        attack_model="logreg",
        threshold=0.2,
        backend="sequential",
    )
    report = assessor.assess(X, y)
    risk = report["row_id"]
    membership = risk.attacks["membership"]
    assert membership.ci[0] > 0 and risk.modified < 0.2 and not risk.flags["membership"]
    assert risk.flags["identifier"] and risk.flagged and risk.rank == 1
    assert risk.why.startswith("an identifier-like column")
    assert any("'row_id' is identifier-like" in note for note in report.notes)
    coarse = X.assign(row_id=(X["row_id"] // 100).astype(float))
    again = assessor.assess(coarse, y)
    assert not again["row_id"].flags["identifier"]


def test_an_identifier_a_model_cannot_learn_is_not_flagged() -> None:
    """A logistic regression cannot memorise rows through a random row ID: its differential's
    CI, over the doubled repeats, holds 0, and the identifier rule does not fire."""
    X, y = planted(1500)
    X = X[["age", "education", "hours_per_week", "row_id"]]
    report = FeatureRiskAssessor(
        make_model("logreg"), attacks=("membership",), backend="sequential"
    ).assess(X, y)
    risk = report["row_id"]
    low, high = risk.attacks["membership"].ci
    assert low <= 0 <= high and not risk.flags["identifier"] and not risk.flagged
    assert "6 repeats of the membership differential instead of 3" in " ".join(report.notes)
