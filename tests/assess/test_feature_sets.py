"""Target feature sets: families, bounded power set, pre-selection, and the spec parser."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attrpriv import datasets
from attrpriv.assess.feature_sets import (
    MAX_ENUMERATED,
    pairs,
    power_set,
    power_set_size,
    preselect,
    resolve_feature_sets,
    selection_scores,
    singles,
)
from attrpriv.errors import InputError


@pytest.fixture(scope="module")
def adult(adult_dataset: datasets.Dataset) -> pd.DataFrame:
    frame = adult_dataset.frame
    return frame.drop(columns=["income", "split", "fnlwgt"]).sample(3000, random_state=0)


def test_singles_and_pairs_cover_every_feature_once(adult: pd.DataFrame) -> None:
    columns = list(adult.columns)
    assert singles(columns) == [(c,) for c in columns]
    got = pairs(columns)
    assert len(got) == math.comb(len(columns), 2) == len({frozenset(p) for p in got})
    assert got[0] == (columns[0], columns[1])


def test_power_set_enumerates_by_size_then_position() -> None:
    sets = power_set(["a", "b", "c"], max_size=2)
    assert sets == [("a",), ("b",), ("c",), ("a", "b"), ("a", "c"), ("b", "c")]
    assert power_set(["a", "b"], max_size=5) == [("a",), ("b",), ("a", "b")]


def test_power_set_count_limit_samples_deterministically(adult: pd.DataFrame) -> None:
    columns = list(adult.columns)
    every = power_set(columns, 3)
    assert len(every) == power_set_size(len(columns), 3)
    first = power_set(columns, 3, max_count=25, seed=4)
    assert first == power_set(columns, 3, max_count=25, seed=4)
    assert first != power_set(columns, 3, max_count=25, seed=5)
    assert len(first) == len(set(first)) == 25
    assert set(first) <= set(every)
    assert [len(s) for s in first] == sorted(len(s) for s in first)


def test_power_set_sampling_by_rejection_is_uniform_over_subsets() -> None:
    features = [f"f{i}" for i in range(30)]
    total = power_set_size(30, 7)
    assert total > 1_000_000  # the rejection sampler, not the enumeration
    sets = power_set(features, 7, max_count=2000, seed=0)
    assert len(set(sets)) == 2000 and all(1 <= len(s) <= 7 for s in sets)
    share = math.comb(30, 7) / total  # uniform subsets: size 7 with this probability
    observed = sum(len(s) == 7 for s in sets)
    tolerance = 4 * math.sqrt(2000 * share * (1 - share))
    assert abs(observed - 2000 * share) < tolerance


def test_power_set_without_a_count_limit_is_bounded() -> None:
    features = [f"f{i}" for i in range(40)]
    assert power_set_size(40, 4) > MAX_ENUMERATED
    with pytest.raises(InputError, match="max_count is needed"):
        power_set(features, 4)


def test_uniqueness_scores_match_their_definition(adult: pd.DataFrame) -> None:
    scores = selection_scores(adult, "uniqueness")
    counts = adult["capital_gain"].value_counts()
    assert scores["capital_gain"] == pytest.approx((counts == 1).sum() / len(adult))
    assert scores["sex"] == 0.0
    top = preselect(adult, "uniqueness", 2)
    assert [s[0] for s in top] == sorted(scores, key=lambda c: -scores[c])[:2]


def test_cardinality_and_variance_scores(adult: pd.DataFrame) -> None:
    cardinality = selection_scores(adult, "cardinality")
    assert cardinality["sex"] == 2 and cardinality["race"] == adult["race"].nunique()
    variance = selection_scores(adult, "variance")
    assert set(variance) == {c for c in adult.columns if adult[c].dtype.kind in "if"}
    age = adult["age"].to_numpy(dtype=float)
    expected = np.var((age - age.min()) / (age.max() - age.min()))
    assert variance["age"] == pytest.approx(expected)
    assert all(0.0 <= v <= 0.25 for v in variance.values())
    assert preselect(adult[["sex", "race"]], "cardinality", top=10) == [("race",), ("sex",)]
    with pytest.raises(InputError, match="numeric column"):
        preselect(adult[["sex", "race"]], "variance")


def test_resolve_every_form(adult: pd.DataFrame) -> None:
    n = adult.shape[1]
    assert len(resolve_feature_sets("singles", adult)) == n
    assert len(resolve_feature_sets(" PAIRS ", adult)) == math.comb(n, 2)
    assert len(resolve_feature_sets("power:2", adult)) == n + math.comb(n, 2)
    assert resolve_feature_sets("power:2:10", adult, seed=3) == power_set(
        list(adult.columns), 2, 10, seed=3
    )
    assert resolve_feature_sets("preselect:uniqueness:3", adult) == preselect(
        adult, "uniqueness", 3
    )
    assert len(resolve_feature_sets("preselect:variance", adult)) == 5
    assert resolve_feature_sets("age, sex; race", adult) == [("age", "sex"), ("race",)]
    assert resolve_feature_sets("age,sex;sex,age;race", adult) == [("age", "sex"), ("race",)]
    assert resolve_feature_sets([["age", "sex"], "race"], adult) == [("age", "sex"), ("race",)]


def test_sets_must_leave_a_column(adult: pd.DataFrame) -> None:
    small = adult[["age", "sex", "race"]]
    assert all(len(s) <= 2 for s in resolve_feature_sets("power:5", small))
    with pytest.raises(InputError, match="covers every column"):
        resolve_feature_sets("age,sex,race", small)
    with pytest.raises(InputError, match="leaves a column"):
        resolve_feature_sets("singles", adult[["age"]])


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("", "feature_sets is empty"),
        ("height", "unknown column 'height'"),
        ("age,,sex", "empty or non-text name"),
        ("power", "expected 'power:K'"),
        ("power:two", "K .* must be a whole number"),
        ("power:0", "must be >= 1"),
        ("power:2:0", "N .* must be >= 1"),
        ("preselect:entropy:3", "BY one of"),
        ("preselect:variance:x", "K .* whole number"),
        ("singles:3", "takes no ':' arguments"),
        ("grid:3", "unknown form 'grid'"),
        ([], "names no set"),
        ([[1, 2]], "non-text name"),
        (42, "must be a string"),
    ],
)
def test_bad_specs_name_the_bad_part(adult: pd.DataFrame, spec: object, message: str) -> None:
    with pytest.raises(InputError, match=message):
        resolve_feature_sets(spec, adult)  # type: ignore[arg-type]


def test_bad_frames_and_parameters() -> None:
    with pytest.raises(InputError, match="X must be a pandas DataFrame"):
        resolve_feature_sets("singles", [[1, 2]])  # type: ignore[arg-type]
    with pytest.raises(InputError, match="by must be one of"):
        selection_scores(pd.DataFrame({"a": [1]}), "entropy")
    with pytest.raises(InputError, match="max_size must be an integer >= 1"):
        power_set(["a", "b"], 0)
    with pytest.raises(InputError, match="features must be a sequence"):
        singles("age")


_SMALL = pd.DataFrame({"a": [1, 2, 2, 3], "b": ["x", "y", "x", "x"], "c": [0.5, 1.5, 2.5, 0.5]})
_WORDS = st.sampled_from(["singles", "pairs", "power", "preselect", "uniqueness", "a", "b", "c"])
_SPECS = st.one_of(
    st.text(max_size=30),
    st.lists(st.one_of(_WORDS, st.text(max_size=4), st.integers(-3, 9).map(str)), max_size=4).map(
        lambda parts: ":".join(parts)
    ),
    st.lists(st.lists(_WORDS, max_size=3).map(",".join), max_size=3).map(";".join),
)


@settings(max_examples=300, deadline=None)
@given(spec=_SPECS)
def test_any_string_gives_sets_or_an_input_error(spec: str) -> None:
    try:
        sets = resolve_feature_sets(spec, _SMALL)
    except InputError as exc:
        assert "\n" not in str(exc)
        return
    assert sets and all(s and set(s) <= {"a", "b", "c"} and len(s) < 3 for s in sets)


@settings(max_examples=150, deadline=None)
@given(
    spec=st.lists(
        st.one_of(st.text(max_size=3), st.lists(st.one_of(st.text(max_size=3), st.none())))
    )
)
def test_any_explicit_list_gives_sets_or_an_input_error(spec: list[object]) -> None:
    try:
        sets = resolve_feature_sets(spec, _SMALL)  # type: ignore[arg-type]
    except InputError:
        return
    assert all(set(s) <= {"a", "b", "c"} for s in sets)
