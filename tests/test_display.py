"""Notebooks: every result shows itself in one short line and a compact HTML table, and the
tabular ones export a DataFrame; the estimators follow scikit-learn's conventions."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from attrpriv import datasets
from attrpriv.assess.assessor import FeatureRiskAssessor
from attrpriv.assess.models import make_model
from attrpriv.assess.report import RiskReport
from attrpriv.dp import BudgetLedger, PrivacyRecord, Release
from attrpriv.dp.accuracy import Accuracy
from attrpriv.errors import InputError, NotFittedError
from attrpriv.release import LaplaceHistograms

SHORT = 200  # characters of a repr
COMPACT = 6000  # characters of a notebook table


class _Cells(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.cells = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.cells += tag in ("td", "th")


def compact_table(page: str) -> int:
    """The number of cells of a short HTML table (asserted short, with a table, no script)."""
    parser = _Cells()
    parser.feed(page)
    assert "table" in parser.tags and "script" not in parser.tags
    assert len(page) < COMPACT, len(page)
    return parser.cells


@pytest.fixture(scope="module")
def release() -> Release:
    anes = datasets.load("anes96")
    return LaplaceHistograms(1.0, ["pid", "vote", "educ"]).release(anes.frame, anes.schema)


def test_a_release_is_one_line_a_small_table_and_a_frame(release: Release) -> None:
    text = repr(release)
    assert len(text) < SHORT and "\n" not in text
    assert text.startswith("Release(laplace-histograms, dp/add-remove, (epsilon=1, delta=0)-dp")
    assert "3 histograms, 16 values" in text
    assert compact_table(release._repr_html_()) > 10
    frame = release.to_frame()
    assert list(frame.columns) == ["name", "level", "value", "half_width", "lower", "upper"]
    assert len(frame) == 16 and set(frame["name"]) == {"pid", "vote", "educ"}
    pid = frame[frame["name"] == "pid"]
    assert pid["value"].tolist() == release.values["pid"].tolist()
    np.testing.assert_allclose(pid["upper"] - pid["value"], release.accuracy.half_width["pid"])


def test_statistics_and_a_single_value_have_frames_too(release: Release) -> None:
    record = release.record
    names = ["share(sex=Female)", "mean(age)"]
    statistics = Release(
        pd.Series([0.31, 12.5], index=names),
        record,
        accuracy=Accuracy.of_scales("gaussian", pd.Series([0.01, 0.4], index=names)),
    )
    frame = statistics.to_frame()
    assert frame["name"].tolist() == ["share(sex=Female)", "mean(age)"]
    assert frame["level"].tolist() == ["", ""]
    assert frame["half_width"].iloc[1] == pytest.approx(0.4 * 1.959964, rel=1e-5)
    single = Release(3.5, record).to_frame()
    assert single[["name", "value"]].values.tolist() == [["value", 3.5]]
    assert single["half_width"].isna().all()
    assert "1 value" in repr(Release(3.5, record))


def test_a_record_is_one_line_and_a_table(release: Release) -> None:
    record = release.record
    assert repr(record) == (
        "PrivacyRecord(laplace-histograms: (epsilon=1, delta=0)-dp, unit dp/add-remove)"
    )
    html = record._repr_html_()
    compact_table(html)
    assert "whether any one respondent is in the data" in html
    assert PrivacyRecord.from_dict(record.to_dict()) == record  # display changes nothing


def test_a_ledger_and_its_summary(tmp_path: Path, release: Release) -> None:
    ledger = BudgetLedger(tmp_path / "x.ledger")
    ledger.set_budget(3.0)
    ledger.set_budget(2.0, unit="dependent-dp/answer")
    ledger.charge(release.record, "first")
    text = repr(ledger)
    assert len(text) < SHORT and "dp/add-remove epsilon 1 of epsilon 3 used" in text
    assert "dependent-dp/answer epsilon 2 of epsilon 2 used" in text  # converted: 2 x 1
    summary = ledger.summary()
    assert repr(summary).startswith("LedgerSummary(") and "1 releases" in repr(summary)
    assert compact_table(ledger._repr_html_()) >= 12
    frame = summary.to_frame()
    assert frame.index.tolist() == ["dp/add-remove", "dependent-dp/answer"]
    assert frame.loc["dp/add-remove", "used_epsilon"] == 1.0
    assert frame.loc["dp/add-remove", "remaining_epsilon"] == 2.0
    assert frame.loc["dependent-dp/answer", "converted_charges"] == 1
    assert bool(frame["proven"].all())
    (tmp_path / "x.ledger").write_bytes(b"garbage" * 100)
    assert "unreadable" in repr(ledger)  # a repr never raises


@pytest.fixture(scope="module")
def assessed() -> tuple[FeatureRiskAssessor, RiskReport]:
    frame = datasets.load("german_credit").frame
    X = frame[["duration_months", "credit_amount", "age", "purpose"]]
    assessor = FeatureRiskAssessor(
        make_model("logreg"), feature_sets="singles", attacks=("membership",), n_repeats=1,
        n_references=1, backend="sequential", threshold=0.0,
    )  # fmt: skip
    fitted = assessor.fit(X, frame["credit_risk"])
    assert fitted is assessor  # fit returns the estimator
    return assessor, assessor.report_


def test_a_risk_report_is_one_line_a_table_and_a_frame(
    assessed: tuple[FeatureRiskAssessor, RiskReport],
) -> None:
    _, report = assessed
    text = repr(report)
    assert len(text) < 400 and text.startswith("RiskReport(4 feature sets; flagged over 0:")
    assert len(repr(report.feature_sets[0])) < SHORT
    compact_table(report._repr_html_())
    frame = report.to_frame()
    assert frame.index.tolist() == [r.label for r in report.feature_sets]
    first = report.feature_sets[0]
    row = frame.loc[first.label]
    assert row["rank"] == 1 and row["modified"] == first.modified
    assert (row["membership_ci_low"], row["membership_ci_high"]) == first.attacks["membership"].ci
    assert (row["modified_ci_low"], row["modified_ci_high"]) == first.modified_ci
    assert {"overall", "overfitting_ci_low", "importance_ci_high", "flagged"} <= set(frame)
    assert "attribute" not in frame and "property_ci_low" not in frame  # not run


def test_the_assessor_follows_scikit_learn(
    assessed: tuple[FeatureRiskAssessor, RiskReport],
) -> None:
    assessor, _ = assessed
    copy = clone(assessor)
    assert copy.get_params()["threshold"] == 0.0 and copy.get_params()["n_repeats"] == 1
    assert repr(copy) == repr(assessor) and len(repr(copy)) < 400
    assert "ColumnTransformer | LogisticRegression" in repr(copy)
    with pytest.raises(NotFittedError, match=r"no report_ yet: call fit\(X, y\)"):
        copy.report_  # noqa: B018
    with pytest.raises(NotFittedError, match=r"call mitigate\(X, y, strategies\)"):
        assessor.mitigated_  # noqa: B018
    assert not hasattr(copy, "feature_names_in_")  # NotFittedError is an AttributeError
    assert copy.set_params(threshold=0.2) is copy and copy.threshold == 0.2
    with pytest.raises(InputError, match="has no parameter 'treshold'"):
        copy.set_params(treshold=0.2)
    assert "threshold=0.2" in repr(copy) and "n_references=1" in repr(copy)
    assert "attacks" in repr(copy) and "weights" not in repr(copy)  # defaults are not shown


def test_numbers_read_in_full_in_notebook_tables() -> None:
    from attrpriv._display import number

    assert number(41760) == "41,760" and number(41760.4) == "41,760"
    assert number(0.123456) == "0.1235" and number(-141.26) == "-141.3"
    assert number(None) == "-" and number(float("inf")) == "inf" and number(2e20) == "2e+20"
