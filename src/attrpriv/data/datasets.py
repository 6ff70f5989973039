"""Bundled offline datasets: ``load(name)`` parses the raw files shipped in ``data/files``, with a
schema of *public* domains from the dataset's documentation (``data/files/<name>.schema.yaml``);
attribution and licences are in ``data/files/SOURCES.md``."""

from __future__ import annotations

import functools
from collections.abc import Hashable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from attrpriv.data.schema import Categorical, Column, Integer, Numeric, Schema
from attrpriv.errors import InputError, SchemaError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Dataset", "info", "load", "names"]

_FILES = Path(__file__).with_name("files")
_SPLIT = "split"  # the column naming the original file of each row, where there are two


@dataclass(frozen=True, eq=False)
class Dataset:
    """A bundled dataset: its frame and schema; unpacks as ``df, schema = load(name)``."""

    name: str
    frame: pd.DataFrame
    schema: Schema

    def __iter__(self) -> Iterator[Any]:
        yield self.frame
        yield self.schema

    def __repr__(self) -> str:
        rows, cols = self.frame.shape
        return f"Dataset(name={self.name!r}, rows={rows}, columns={cols})"


# -- decoding of the raw files -------------------------------------------------------------------

# German credit: the raw attribute codes and their meanings (the schema's categories), from the
# UCI Statlog (German Credit Data) documentation, german.doc.
_GERMAN_CODES: dict[str, dict[str, str]] = {
    "checking_status": {
        "A11": "< 0 DM",
        "A12": "0 <= ... < 200 DM",
        "A13": ">= 200 DM / salary assignments for at least 1 year",
        "A14": "no checking account",
    },
    "credit_history": {
        "A30": "no credits taken / all credits paid back duly",
        "A31": "all credits at this bank paid back duly",
        "A32": "existing credits paid back duly till now",
        "A33": "delay in paying off in the past",
        "A34": "critical account / other credits existing (not at this bank)",
    },
    "purpose": {
        "A40": "car (new)",
        "A41": "car (used)",
        "A42": "furniture/equipment",
        "A43": "radio/television",
        "A44": "domestic appliances",
        "A45": "repairs",
        "A46": "education",
        "A47": "vacation",
        "A48": "retraining",
        "A49": "business",
        "A410": "others",
    },
    "savings": {
        "A61": "< 100 DM",
        "A62": "100 <= ... < 500 DM",
        "A63": "500 <= ... < 1000 DM",
        "A64": ">= 1000 DM",
        "A65": "unknown / no savings account",
    },
    "employment_since": {
        "A71": "unemployed",
        "A72": "< 1 year",
        "A73": "1 <= ... < 4 years",
        "A74": "4 <= ... < 7 years",
        "A75": ">= 7 years",
    },
    "personal_status_sex": {
        "A91": "male: divorced/separated",
        "A92": "female: divorced/separated/married",
        "A93": "male: single",
        "A94": "male: married/widowed",
        "A95": "female: single",
    },
    "other_debtors": {"A101": "none", "A102": "co-applicant", "A103": "guarantor"},
    "property": {
        "A121": "real estate",
        "A122": "building society savings agreement / life insurance",
        "A123": "car or other",
        "A124": "unknown / no property",
    },
    "other_installment_plans": {"A141": "bank", "A142": "stores", "A143": "none"},
    "housing": {"A151": "rent", "A152": "own", "A153": "for free"},
    "job": {
        "A171": "unemployed / unskilled - non-resident",
        "A172": "unskilled - resident",
        "A173": "skilled employee / official",
        "A174": "management / self-employed / highly qualified employee / officer",
    },
    "telephone": {"A191": "none", "A192": "yes, registered under the customer's name"},
    "foreign_worker": {"A201": "yes", "A202": "no"},
    "credit_risk": {"1": "good", "2": "bad"},
}
# MNIST-5k: its pixel columns are read as uint8.
_PIXELS = tuple(f"pixel_{i}" for i in range(28 * 28))


# -- registry and parsing ------------------------------------------------------------------------


@dataclass(frozen=True)
class _Spec:
    """How to read one dataset's raw files: (split, file) pairs, read_csv options, decoding."""

    files: tuple[tuple[str, str], ...]
    options: Mapping[str, Any] = field(default_factory=dict)
    aliases: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    dtypes: Mapping[str, str] = field(default_factory=dict)


_REGISTRY: dict[str, _Spec] = {
    "adult": _Spec(
        (("train", "adult.data.gz"), ("test", "adult.test.gz")),
        {"comment": "|"},
        {"income": {"<=50K.": "<=50K", ">50K.": ">50K"}},
    ),
    "anes96": _Spec((("", "anes96.csv.gz"),), {"sep": " ", "header": 0}),
    "census_kdd": _Spec(
        (("train", "census-income-kdd.train.csv.gz"), ("test", "census-income-kdd.test.csv.gz")),
        aliases={
            "income": {"- 50000.": "<50K", "50000+.": "50K+"},
            "hispanic_origin": {"NA": "Not available"},
        },
    ),
    "german_credit": _Spec((("", "german.data.gz"),), {"sep": " "}, _GERMAN_CODES),
    "mnist_5k": _Spec((("", "mnist_5k.csv.gz"),), dtypes=dict.fromkeys(_PIXELS, "uint8")),
}


def _spec(name: str) -> _Spec:
    if not isinstance(name, str) or name not in _REGISTRY:
        raise InputError(f"unknown dataset {name!r}; available: {', '.join(names())}")
    return _REGISTRY[name]


def _dtype(column: Column, overrides: Mapping[str, str]) -> str | None:
    """The read_csv dtype of a column: category, int64 (Int64 if nullable) or float64."""
    if column.name in overrides:
        return overrides[column.name]
    if isinstance(column.domain, Categorical):
        return "category"
    if isinstance(column.domain, Integer):
        return "Int64" if column.nullable else "int64"
    if isinstance(column.domain, Numeric):
        return "float64"
    return None


def _read_file(path: Path, spec: _Spec, columns: tuple[Column, ...]) -> pd.DataFrame:
    """Parse one raw file with the C engine: strip leading spaces, '?' is missing."""
    import pandas as pd

    dtypes = {c.name: d for c in columns if (d := _dtype(c, spec.dtypes)) is not None}
    options: dict[str, Any] = {"header": None, "sep": ",", **spec.options}
    frame: pd.DataFrame = pd.read_csv(
        path,
        names=[c.name for c in columns],
        dtype=dtypes,
        engine="c",
        skipinitialspace=True,
        na_values=["?"],
        keep_default_na=False,
        **options,
    )
    return frame


def _to_category(
    values: pd.Series, categories: tuple[Hashable, ...], aliases: Mapping[str, str]
) -> pd.Series:
    """Re-code a parsed column onto the schema's categories (stripped, aliases applied)."""
    import numpy as np
    import numpy.typing as npt
    import pandas as pd

    raw = values.astype("category")
    labels = [aliases.get(s, s) for s in (str(c).strip() for c in raw.cat.categories)]
    unknown = sorted(set(labels) - set(categories), key=str)
    if unknown:
        raise SchemaError(
            f"column {values.name!r} has values {unknown[:5]} outside its published categories"
        )
    positions = pd.Index(categories).get_indexer(pd.Index(labels))
    lookup = np.append(positions, -1).astype(np.intp)  # code -1 (missing) stays missing
    codes: npt.NDArray[np.intp] = lookup[raw.cat.codes.to_numpy()]
    return pd.Series(
        pd.Categorical.from_codes(codes, dtype=pd.CategoricalDtype(list(categories))),
        index=values.index,
        name=values.name,
    )


@functools.cache
def _parse(name: str) -> pd.DataFrame:
    """Read, concatenate, re-code and validate a dataset (cached; callers get copies)."""
    import numpy as np
    import pandas as pd

    spec, schema = _REGISTRY[name], info(name)
    columns = tuple(c for c in schema.columns if c.name != _SPLIT)
    parts = [_read_file(_FILES / file, spec, columns) for _, file in spec.files]
    frame = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
    for column in columns:
        if isinstance(column.domain, Categorical):
            aliases = spec.aliases.get(column.name, {})
            frame[column.name] = _to_category(frame[column.name], column.domain.categories, aliases)
    if _SPLIT in schema:
        splits = [s for s, _ in spec.files]
        frame[_SPLIT] = pd.Categorical(
            np.repeat(splits, [len(p) for p in parts]), categories=splits
        )
    schema.validate(frame)
    return frame


# -- public API ----------------------------------------------------------------------------------


def names() -> tuple[str, ...]:
    """Names of the bundled datasets, sorted."""
    return tuple(sorted(_REGISTRY))


@functools.cache
def _schema(name: str) -> Schema:
    return Schema.load(_FILES / f"{name}.schema.yaml")


def info(name: str) -> Schema:
    """The schema (roles, public domains, source, licence) of ``name``, without parsing data."""
    _spec(name)
    return _schema(name)


def load(name: str) -> Dataset:
    """Parse the bundled files of ``name`` offline; the frame is a fresh copy on every call."""
    _spec(name)
    return Dataset(name, _parse(name).copy(), _schema(name))
