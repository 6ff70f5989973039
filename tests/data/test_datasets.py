"""Bundled datasets: shapes, cleaning, schemas and the copy-on-load contract (real data)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import attrpriv.datasets
from attrpriv import datasets
from attrpriv.data import datasets as impl
from attrpriv.data.schema import Categorical, Role, Schema
from attrpriv.errors import InputError

NAMES = ("adult", "anes96", "census_kdd", "german_credit", "mnist_5k")
# (rows, data columns); adult and census_kdd also carry a `split` column.
SHAPES = {
    "adult": (48_842, 15),
    "anes96": (944, 11),
    "census_kdd": (299_285, 42),
    "german_credit": (1_000, 21),
    "mnist_5k": (5_000, 785),
}
HAS_SPLIT = {"adult", "census_kdd"}


@pytest.fixture(scope="module", params=NAMES)
def loaded(request: pytest.FixtureRequest) -> datasets.Dataset:
    """Each dataset once per module (the parse itself is cached for the session)."""
    return datasets.load(request.param)


def test_names_and_both_import_styles() -> None:
    assert datasets.names() == NAMES
    assert attrpriv.datasets.load is impl.load
    assert set(attrpriv.datasets.__all__) == {"Dataset", "info", "load", "names"}


def test_shape(loaded: datasets.Dataset) -> None:
    rows, cols = SHAPES[loaded.name]
    extra = 1 if loaded.name in HAS_SPLIT else 0
    assert loaded.frame.shape == (rows, cols + extra)
    assert list(loaded.frame.columns) == list(loaded.schema.names)


def test_schema_validates_and_is_documented(loaded: datasets.Dataset) -> None:
    schema = loaded.schema
    schema.validate(loaded.frame)
    assert schema.name == loaded.name
    assert schema.description and schema.source and schema.licence
    assert schema.target is not None
    for col in schema.columns:
        assert col.role is Role.IGNORE or col.domain is not None
        if not col.nullable:
            assert not loaded.frame[col.name].isna().any(), col.name


def test_categorical_columns_use_schema_categories(loaded: datasets.Dataset) -> None:
    for col in loaded.schema.columns:
        values = loaded.frame[col.name]
        if isinstance(col.domain, Categorical):
            assert isinstance(values.dtype, pd.CategoricalDtype), col.name
            assert tuple(values.cat.categories) == col.domain.categories, col.name
        elif col.domain is not None:
            assert pd.api.types.is_integer_dtype(values), col.name


def test_no_question_marks_or_padding(loaded: datasets.Dataset) -> None:
    for name, values in loaded.frame.items():
        assert isinstance(values.dtype, pd.CategoricalDtype) or pd.api.types.is_numeric_dtype(
            values
        ), name
        if isinstance(values.dtype, pd.CategoricalDtype):
            present = [str(v) for v in values.dropna().unique()]
            assert "?" not in present, name
            assert all(v == v.strip() and v for v in present), name


def test_adult_cleaning() -> None:
    df, schema = datasets.load("adult")
    assert set(df["income"].unique()) == {"<=50K", ">50K"}
    assert df["income"].value_counts().to_dict() == {"<=50K": 37_155, ">50K": 11_687}
    assert df["split"].value_counts().to_dict() == {"train": 32_561, "test": 16_281}
    assert df["workclass"].isna().sum() == 2_799
    assert schema.sensitive == ("race", "sex")
    assert schema.target == "income"
    assert schema["split"].role is Role.IGNORE


def test_census_kdd_labels_and_roles() -> None:
    df, schema = datasets.load("census_kdd")
    assert df["income"].value_counts().to_dict() == {"<50K": 280_717, "50K+": 18_568}
    assert df["split"].value_counts().to_dict() == {"train": 199_523, "test": 99_762}
    assert schema["instance_weight"].role is Role.IGNORE
    assert {"race", "sex"} <= set(schema.sensitive)
    assert "Not available" in df["hispanic_origin"].cat.categories
    assert df["citizenship"].str.endswith(" ").sum() == 0


def test_german_credit_decoded() -> None:
    df, schema = datasets.load("german_credit")
    assert df["credit_risk"].value_counts().to_dict() == {"good": 700, "bad": 300}
    assert df.loc[0, "checking_status"] == "< 0 DM"
    assert set(schema.sensitive) == {"personal_status_sex", "age", "foreign_worker"}
    assert not any(str(v).startswith("A") and str(v)[1:].isdigit() for v in df["purpose"])


def test_anes96_unpacks_and_derived_column() -> None:
    df, schema = datasets.load("anes96")
    assert isinstance(schema, Schema)
    assert schema.target == "vote"
    expected = (df["self_lr"] - df["dole_lr"]).abs() - (df["self_lr"] - df["clin_lr"]).abs()
    assert (df["reldist"] == expected).all()


def test_mnist_pixels_are_uint8() -> None:
    df, schema = datasets.load("mnist_5k")
    pixels = [f"pixel_{i}" for i in range(784)]
    assert (df[pixels].dtypes == np.uint8).all()
    assert df["label"].value_counts().eq(500).all()
    assert schema.target == "label"


def test_load_returns_a_copy() -> None:
    first = datasets.load("german_credit")
    first.frame.loc[0, "age"] = 99
    del first.frame["job"]
    again = datasets.load("german_credit")
    assert again.frame.loc[0, "age"] == 67
    assert "job" in again.frame.columns
    assert again.frame is not first.frame


def test_info_does_not_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_parsing(*args: object, **kwargs: object) -> None:
        raise AssertionError("info() must not parse the data files")

    monkeypatch.setattr("pandas.read_csv", no_parsing)
    impl._schema.cache_clear()
    for name in NAMES:
        schema = datasets.info(name)
        assert isinstance(schema, Schema) and schema.name == name
    assert datasets.info("census_kdd")["race"].role is Role.SENSITIVE


@pytest.mark.parametrize("bad", ["foo", "Adult", ""])
def test_unknown_name(bad: str) -> None:
    with pytest.raises(InputError, match=rf"unknown dataset '{bad}'; available: adult, anes96"):
        datasets.load(bad)
    with pytest.raises(InputError, match="unknown dataset"):
        datasets.info(bad)
