"""assessment_data: what `attrpriv assess run` sees, reproducible from Python."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from attrpriv import datasets
from attrpriv.assess import assessment_data
from attrpriv.errors import InputError


def test_the_bundled_table_loses_its_target_and_ignored_columns() -> None:
    found = assessment_data("adult", "income")
    schema = datasets.info("adult")
    ignored = set(schema.with_role("ignore"))
    assert ignored and set(found.ignored) == ignored
    assert "income" not in found.X.columns and not ignored & set(found.X.columns)
    assert found.task == "classification" and len(found.X) == len(found.y) == len(found.rows)


def test_max_rows_is_a_seeded_sample_in_data_order() -> None:
    first = assessment_data("adult", "income", max_rows=500, seed=3)
    again = assessment_data("adult", "income", max_rows=500, seed=3)
    other = assessment_data("adult", "income", max_rows=500, seed=4)
    assert len(first.rows) == 500 and np.all(np.diff(first.rows) > 0)
    np.testing.assert_array_equal(first.rows, again.rows)
    assert not np.array_equal(first.rows, other.rows)
    whole = assessment_data("adult", "income")
    pd.testing.assert_frame_equal(first.X, whole.X.iloc[first.rows])


def test_a_numeric_target_with_many_values_is_a_regression(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    pd.DataFrame({"x": range(60), "y": np.linspace(0, 1, 60)}).to_csv(path, index=False)
    assert assessment_data(path, "y").task == "regression"
    assert assessment_data(path, "y", task="classification").task == "classification"


def test_bad_targets_and_settings_are_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    pd.DataFrame({"x": [1, 2, 3], "y": [1.0, None, 0.0]}).to_csv(path, index=False)
    for call, message in [
        (lambda: assessment_data(path, "z"), "target column 'z' is not in the data"),
        (lambda: assessment_data(path, "y"), "target column 'y' has 1 missing values"),
        (lambda: assessment_data(path, "x", max_rows=0), "max_rows"),
        (lambda: assessment_data(path, "x", task="ranking"), "task"),
    ]:
        with pytest.raises(InputError, match=message) as caught:
            call()
        assert "\n" not in str(caught.value)
