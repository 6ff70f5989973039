"""load_task: what `attrpriv assess run` sees, reproducible from Python."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from attrpriv import datasets
from attrpriv.assess import load_task
from attrpriv.errors import InputError


def test_the_bundled_table_loses_its_target_and_ignored_columns() -> None:
    found = load_task("adult", "income")
    schema = datasets.info("adult")
    ignored = set(schema.with_role("ignore"))
    assert ignored and set(found.ignored) == ignored
    assert "income" not in found.X.columns and not ignored & set(found.X.columns)
    assert found.task == "classification" and len(found.X) == len(found.y) == len(found.rows)


def test_max_rows_is_a_seeded_sample_in_data_order() -> None:
    first = load_task("adult", "income", max_rows=500, seed=3)
    again = load_task("adult", "income", max_rows=500, seed=3)
    other = load_task("adult", "income", max_rows=500, seed=4)
    assert len(first.rows) == 500 and np.all(np.diff(first.rows) > 0)
    np.testing.assert_array_equal(first.rows, again.rows)
    assert not np.array_equal(first.rows, other.rows)
    whole = load_task("adult", "income")
    pd.testing.assert_frame_equal(first.X, whole.X.iloc[first.rows])


def test_a_numeric_target_with_many_values_is_a_regression(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    pd.DataFrame({"x": range(60), "y": np.linspace(0, 1, 60)}).to_csv(path, index=False)
    assert load_task(path, "y").task == "regression"
    assert load_task(path, "y", task="classification").task == "classification"


def test_bad_targets_and_settings_are_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    pd.DataFrame({"x": [1, 2, 3], "y": [1.0, None, 0.0]}).to_csv(path, index=False)
    for call, message in [
        (lambda: load_task(path, "z"), "target column 'z' is not in the data"),
        (lambda: load_task(path, "y"), "target column 'y' has 1 missing values"),
        (lambda: load_task(path, "x", max_rows=0), "max_rows"),
        (lambda: load_task(path, "x", task="ranking"), "task"),
    ]:
        with pytest.raises(InputError, match=message) as caught:
            call()
        assert "\n" not in str(caught.value)


def test_sensitive_columns_are_named_or_the_schemas_sensitive_role(tmp_path: Path) -> None:
    found = load_task("adult", "income", max_rows=100)
    assert found.sensitive_columns(None) == ()
    assert found.sensitive_columns(["age"]) == ("age",)
    assert found.sensitive_columns(["schema"]) == ("race", "sex")
    path = tmp_path / "t.csv"
    pd.DataFrame({"x": range(30), "y": [0, 1] * 15}).to_csv(path, index=False)
    with pytest.raises(InputError, match="needs a schema"):
        load_task(path, "y").sensitive_columns(["schema"])
