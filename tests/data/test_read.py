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


@pytest.mark.parametrize(
    "options",
    [{}, {"load": True}, {"as_text": True}, {"infer_schema": True}, {"allow_empty": True}],
    ids=["path", "load", "as_text", "infer_schema", "allow_empty"],
)
@pytest.mark.parametrize("name", ["twice.csv", "twice.csv.gz", "twice.parquet"])
def test_a_column_named_twice_in_the_header_is_refused(
    tmp_path: Path, schema_file: Path, name: str, options: dict[str, bool]
) -> None:
    """pandas (and DuckDB) would rename the second ``age`` (``age.1``): every reading mode,
    CSV or Parquet, refuses the file naming the column, before it is loaded."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / name
    if name.endswith(".parquet"):
        table = pa.table([pa.array(["yes", "no"]), pa.array([30, 41]), pa.array([1, 2])],
                         names=["answer", "age", "age"])  # fmt: skip
        pq.write_table(table, path)
    else:
        pd.DataFrame([["yes", 30, 1], ["no", 41, 2]], columns=["answer", "age", "x"]).to_csv(
            path, index=False, header=["answer", "age", "age"]
        )
    schema = None if options.get("infer_schema") or options.get("as_text") else schema_file
    with pytest.raises(
        InputError, match=r"^data file '.*twice\..*' names column 'age' twice in its header; "
    ):
        read_data(path, schema, require_schema=schema is not None, **options)


def test_distinct_and_unnamed_columns_pass_the_header_check(tmp_path: Path) -> None:
    path = tmp_path / "quoted.csv"
    path.write_text('\n"answer","a,b",,\nyes,1,2,3\n')  # a blank line, a quoted comma, no names
    frame = read_data(path, load=True, require_schema=False).frame
    assert list(frame.columns)[:2] == ["answer", "a,b"] and len(frame.columns) == 4


@pytest.mark.parametrize("cell", ["inf", "-inf", "Infinity", "1e400"])
def test_an_infinite_number_is_refused_naming_column_and_row(tmp_path: Path, cell: str) -> None:
    path = tmp_path / "survey.csv"
    path.write_text(f"answer,income\nyes,1.5\nno,\nyes,{cell}\nno,{cell}\n")
    with pytest.raises(
        InputError,
        match=r"^data file '.*survey\.csv': column 'income' has an infinite number \(first at "
        r"row 2\); expected finite numbers",
    ) as caught:
        read_data(path, load=True, require_schema=False)
    assert cell.lstrip("-") not in str(caught.value).replace("infinite", "")  # value not shown
    with pytest.raises(InputError, match="column 'income' has an infinite number"):
        read_data(path, infer_schema=True)  # before any domain is read off the data
    text = read_data(path, as_text=True, require_schema=False).frame  # cells as written
    assert text["income"].tolist() == ["1.5", "", cell, cell]


def test_an_infinite_number_in_a_parquet_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "survey.parquet"
    pd.DataFrame({"answer": ["yes", "no"], "income": pd.array([1.0, -float("inf")],
                 dtype="Float64")}).to_parquet(path)  # fmt: skip
    with pytest.raises(
        InputError, match=r"column 'income' has an infinite number \(first at row 1"
    ):
        read_data(path, load=True, require_schema=False)
    path = tmp_path / "finite.parquet"
    pd.DataFrame({"income": [1.0, None]}).to_parquet(path)
    assert read_data(path, load=True, require_schema=False).frame["income"].isna().sum() == 1
