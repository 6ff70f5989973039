"""read_data: bundled names and CSV/Parquet files, with their schemas, as paths or frames."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from attrpriv import datasets
from attrpriv.data import JobData, PrivateDomainWarning, Schema, read_data
from attrpriv.errors import InputError

SCHEMA_TEXT = (
    "columns:\n"
    "  answer: {role: sensitive, domain: {type: categorical, categories: [yes, no, maybe]}}\n"
    "  age: {role: feature, domain: {type: integer, lower: 0, upper: 120}}\n"
)
FRAME = pd.DataFrame({"answer": ["yes", "no", "yes"], "age": [30, 41, 52]})


@pytest.fixture
def schema_file(tmp_path: Path) -> Path:
    path = tmp_path / "survey.yaml"
    path.write_text(SCHEMA_TEXT)
    return path


@pytest.fixture(params=["survey.csv", "survey.parquet"])
def table(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    path = tmp_path / request.param
    if path.suffix == ".csv":
        FRAME.to_csv(path, index=False)
    else:
        FRAME.to_parquet(path)
    return path


def test_a_bundled_name_gives_its_frame_and_schema() -> None:
    source = read_data("german_credit")
    expected = datasets.load("german_credit")
    assert isinstance(source, JobData)
    pd.testing.assert_frame_equal(source.frame, expected.frame)
    assert source.schema == expected.schema


def test_a_schema_file_replaces_the_bundled_schema(tmp_path: Path) -> None:
    path = datasets.info("anes96").select(["pid", "vote"]).save(tmp_path / "two.yaml")
    assert read_data("anes96", path).schema.names == ("pid", "vote")


def test_a_file_stays_a_path_unless_loaded(table: Path, schema_file: Path) -> None:
    source = read_data(str(table), schema_file)
    assert source.data == table and source.schema == Schema.load(schema_file)
    with pytest.raises(InputError, match="was not loaded: read it with load=True"):
        _ = source.frame
    loaded = read_data(table, schema_file, load=True)
    pd.testing.assert_frame_equal(loaded.frame, FRAME)


def test_inferring_the_schema_warns_and_marks_every_column(table: Path) -> None:
    with pytest.warns(PrivateDomainWarning, match="Schema.infer reads"):
        source = read_data(table, infer_schema=True)
    pd.testing.assert_frame_equal(source.frame, FRAME)
    assert source.schema.inferred == ("answer", "age")
    assert source.schema.domain("answer").categories == ("no", "yes")


def test_a_file_needs_a_schema_unless_the_caller_allows_none(table: Path) -> None:
    with pytest.raises(InputError, match=r"data file '.*survey\..*' needs a schema"):
        read_data(table)
    source = read_data(table, load=True, require_schema=False)
    assert source.schema is None
    pd.testing.assert_frame_equal(source.frame, FRAME)


def test_as_text_keeps_csv_cells_as_written(tmp_path: Path) -> None:
    path = tmp_path / "states.csv"
    path.write_text("state\n0\n\nNA\n 1\n")
    frame = read_data(path, as_text=True, require_schema=False).frame
    assert frame["state"].tolist() == ["0", "NA", " 1"]  # read_csv skips the blank line


def test_missing_data_is_named_by_its_parameter(tmp_path: Path) -> None:
    missing = tmp_path / "nope.csv"
    with pytest.raises(
        InputError,
        match=r"^aux '.*nope\.csv' is neither a bundled dataset nor an existing file "
        r"\(bundled: adult, anes96, census_kdd, german_credit, mnist_5k\)$",
    ):
        read_data(str(missing), what="aux")
    with pytest.raises(InputError, match=r"^sequence file '.*nope\.csv' is not an existing file$"):
        read_data(missing, what="sequence file")


def test_a_path_object_is_never_a_bundled_name(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError, match="'adult' is not an existing file"):
        read_data(Path("adult"))
