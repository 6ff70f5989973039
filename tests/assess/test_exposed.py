"""Per-record risk: the training rows the membership attack singles out, by row number only."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from attrpriv.assess import _grid
from attrpriv.assess._summary import exposed_records
from attrpriv.assess.membership import membership_result
from attrpriv.assess.models import make_model
from attrpriv.assess.report import ExposedRecord, MembershipSummary, RiskReport


def outcome(scores: list[float]) -> _grid.ModelOutcome:
    labels = np.r_[np.ones(4), np.zeros(4)].astype(int)
    result = membership_result(labels, np.array(scores), attack="loss")
    return _grid.ModelOutcome(0.9, 0.8, result)


def test_a_rows_fpr_is_the_share_of_non_members_scoring_at_least_as_high(grid_data) -> None:
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=60), "b": rng.normal(size=60)})
    data = grid_data(X, pd.Series(rng.integers(0, 2, size=60)))
    # repeat 0: members score 9, 5, 3, 0 against non-members 4, 3, 2, 1
    full = [outcome([9, 5, 3, 0, 4, 3, 2, 1]), outcome([1, 1, 1, 1, 9, 9, 9, 9])]
    found = exposed_records(full, data)
    first = _grid.make_split(data, 0).members[0].index.tolist()
    second = _grid.make_split(data, 1).members[0].index.tolist()
    expected: dict[int, list[float]] = {}
    for rows, rates in ((first, [0.0, 0.0, 0.5, 1.0]), (second, [1.0] * 4)):
        for row, rate in zip(rows, rates, strict=True):
            expected.setdefault(row, []).append(rate)
    assert {r.row: r.fpr for r in found} == {k: float(np.mean(v)) for k, v in expected.items()}
    assert [r.fpr for r in found] == sorted(r.fpr for r in found)  # most exposed first
    assert found[0].fpr == 0.0 and {r.repeats for r in found} <= {1, 2}


def test_exposed_records_round_trip_and_make_a_frame() -> None:
    records = (ExposedRecord(12, 3, 0.0), ExposedRecord(7, 1, 0.25))
    summary = MembershipSummary.from_dict(
        {
            "score": {"attack": 0.7, "baseline": 0.5, "difference": 0.2, "ci": [0.1, 0.3], "n": 8},
            "auc": 0.7,
            "advantage": 0.4,
            "tpr_at_1pct_fpr": 0.1,
            "tpr_at_01pct_fpr": 0.0,
            "roc": {"fpr": [0, 1], "tpr": [0, 1]},
            "exposed": [r.to_dict() for r in records],
        }
    )
    assert summary.exposed == records
    assert MembershipSummary.from_dict(summary.to_dict()) == summary
    older = summary.to_dict()
    del older["exposed"]
    assert MembershipSummary.from_dict(older).exposed == ()


def test_the_assessment_lists_its_most_exposed_rows(adult_xy) -> None:
    X, y = adult_xy(1200, 3)
    from attrpriv.assess.assessor import FeatureRiskAssessor

    report = FeatureRiskAssessor(
        make_model("rf"),
        feature_sets=[["age"]],
        attacks=("membership",),
        n_repeats=2,
        backend="sequential",
    ).assess(X, y)
    frame = report.to_frame("records")
    assert list(frame.columns) == ["repeats", "fpr"] and 0 < len(frame) <= 100
    assert frame["fpr"].is_monotonic_increasing and frame.index.max() < len(X)
    again = RiskReport.from_json(report.to_json())
    assert again.to_frame("records").equals(frame)
    with pytest.raises(Exception, match="part must be one of"):
        report.to_frame("rows")
