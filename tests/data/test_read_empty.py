"""Data with no rows, or that cannot be parsed, is refused where it is read (one-line errors)."""

from __future__ import annotations

import gzip
from pathlib import Path

import pandas as pd
import pytest

from attrpriv.data import read_data
from attrpriv.data.aggregate import aggregator_for
from attrpriv.data.schema import Categorical, Column, Role, Schema
from attrpriv.errors import InputError, SchemaError

SCHEMA = Schema((Column("a", Role.FEATURE, Categorical(("x", "y"))),))


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("zero.csv", b"", r"is empty \(0 bytes\)"),
        ("header.csv", b"a\n", "has a header line but no rows"),
        ("blank.csv", b"a\n\n  \n", "has a header line but no rows"),
        ("spaces.csv", b"\n\n", "holds only blank lines"),
        ("header.csv.gz", gzip.compress(b"a\n"), "has a header line but no rows"),
        ("broken.parquet", b"PAR1 not really", "cannot be read as Parquet"),
    ],
)
@pytest.mark.parametrize("load", [False, True], ids=["path", "loaded"])
def test_files_without_rows_are_refused(
    tmp_path: Path, name: str, content: bytes, message: str, load: bool
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(InputError, match=message) as info:
        read_data(path, require_schema=False, load=load, what="aux")
    assert str(info.value).startswith(f"aux file '{path}'") and "\n" not in str(info.value)


def test_a_release_may_read_a_header_without_rows(tmp_path: Path) -> None:
    path = tmp_path / "header.csv"
    path.write_bytes(b"a\n")
    assert read_data(path, _schema_file(tmp_path), allow_empty=True).data == path
    assert len(read_data(path, _schema_file(tmp_path), allow_empty=True, load=True).data) == 0
    zero = tmp_path / "zero.csv"
    zero.write_bytes(b"")
    with pytest.raises(InputError, match="0 bytes"):
        read_data(zero, _schema_file(tmp_path), allow_empty=True)


def _schema_file(folder: Path) -> Path:
    path = folder / "schema.yaml"
    SCHEMA.save(path)
    return path


def test_an_empty_parquet_file_and_a_malformed_csv(tmp_path: Path) -> None:
    path = tmp_path / "empty.parquet"
    pd.DataFrame({"a": pd.Series([], dtype=object)}).to_parquet(path)
    with pytest.raises(InputError, match="has no rows"):
        read_data(path, require_schema=False)
    ragged = tmp_path / "ragged.csv"
    ragged.write_text('a,b\n1,2\n"3,4\n')
    with pytest.raises(InputError, match="cannot be read as CSV"):
        read_data(ragged, require_schema=False, load=True)


def test_the_engines_refuse_a_column_that_may_not_be_missing_but_has_no_value(
    tmp_path: Path,
) -> None:
    frame = pd.DataFrame({"a": pd.Series([None, None], dtype=object)})
    path = tmp_path / "missing.csv"
    frame.to_csv(path, index=False)
    for data in (frame, path):
        with aggregator_for(data, SCHEMA) as agg, pytest.raises(SchemaError, match="no values"):
            agg.all_counts()
    # no rows at all: zero counts, not a refusal (the empty table is an add/remove neighbour)
    header = tmp_path / "header.csv"
    header.write_text("a\n")
    for data in (frame.iloc[:0], header):
        with aggregator_for(data, SCHEMA) as agg:
            assert agg.all_counts()["a"].tolist() == [0, 0]
    partly = pd.DataFrame({"a": ["x", None, "y"]})
    with (
        aggregator_for(partly, SCHEMA) as agg,
        pytest.raises(SchemaError, match="has missing values"),
    ):
        agg.counts("a")
    nullable = Schema((Column("a", Role.FEATURE, Categorical(("x", "y")), nullable=True),))
    with aggregator_for(partly, nullable) as agg:
        assert agg.all_counts()["a"].tolist() == [1, 1]
