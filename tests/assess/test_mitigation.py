"""Mitigation strategies on real Adult columns: new frames, records, guarantees, bad input."""

from __future__ import annotations

import itertools
import json
import math
import re
import warnings
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attrpriv import datasets
from attrpriv.assess.mitigation import (
    Drop,
    Encrypt,
    Generalize,
    LocalDPNoise,
    Mitigation,
    Strategy,
    SyntheticReplacement,
    parse_strategy,
)
from attrpriv.assess.mitigation.ldp import LocalDPDiagnostics, LocalFacts
from attrpriv.assess.mitigation.randomizers import (
    keep_probability,
    privacy_ratio,
    realised_epsilon,
    replace_probability,
)
from attrpriv.data.schema import PrivateDomainWarning, Schema
from attrpriv.dp import BudgetLedger, OpenDPNoise, SeededNumpyNoise, audit, clopper_pearson
from attrpriv.errors import BudgetExceededError, InputError

FEATURES = ["age", "occupation"]


@pytest.fixture(scope="module")
def adult_full(adult_dataset: datasets.Dataset) -> datasets.Dataset:
    return adult_dataset


@pytest.fixture(scope="module")
def schema(adult_full: datasets.Dataset) -> Schema:
    return adult_full.schema


@pytest.fixture(scope="module")
def adult(adult_full: datasets.Dataset) -> pd.DataFrame:
    frame = adult_full.frame.drop(columns=["split", "fnlwgt"]).sample(1500, random_state=1)
    return frame.drop(columns=["income"])


@pytest.fixture(scope="module")
def income(adult_full: datasets.Dataset, adult: pd.DataFrame) -> pd.Series:
    return adult_full.frame.loc[adult.index, "income"]


def _strategies(schema: Schema) -> list[Strategy]:
    return [
        Drop(),
        Generalize(bins=4),
        Generalize(bins=4, method="tree"),
        LocalDPNoise(1.0, schema=schema, sampler=SeededNumpyNoise(0), allow_nonprivate=True),
        SyntheticReplacement(max_iter=30, n_threads=1),
        Encrypt(),
    ]


def test_every_strategy_returns_a_new_frame_and_keeps_the_input(
    adult: pd.DataFrame, income: pd.Series, schema: Schema
) -> None:
    before, y_before = adult.copy(deep=True), income.copy(deep=True)
    for strategy in _strategies(schema):
        assert isinstance(strategy, Mitigation)
        out = strategy.apply(adult, FEATURES, seed=3, y=income)
        pd.testing.assert_frame_equal(adult, before)
        pd.testing.assert_series_equal(income, y_before)
        assert out is not adult and out.index.equals(adult.index)
        kept = [c for c in adult.columns if c not in FEATURES]
        pd.testing.assert_frame_equal(out[kept], adult[kept])
        expected = kept if isinstance(strategy, Drop) else list(adult.columns)
        assert list(out.columns) == expected
        applied = strategy.applied_
        assert applied is not None and applied.name == strategy.name
        assert applied.features == tuple(FEATURES)
        json.dumps(applied.to_dict())  # plain JSON, for reports


def _range_of(label: str, column: pd.Series) -> tuple[int, int]:
    """Bounds of a range label; the open-ended outer ranges end at the column's extremes."""
    if label.startswith("<= "):
        return int(column.min()), int(label[3:])
    if label.startswith(">= "):
        return int(label[3:]), int(column.max())
    low, _, high = label.partition("-")
    return int(low), int(high or low)


@pytest.mark.parametrize("method", ["quantile", "tree"])
def test_generalize_numbers_to_at_most_bins_ordered_ranges(
    adult: pd.DataFrame, income: pd.Series, method: str
) -> None:
    out = Generalize(bins=5, method=method).apply(adult, ["age", "hours_per_week"], y=income)
    for column in ("age", "hours_per_week"):
        ranges = out[column]
        assert ranges.cat.ordered and 2 <= len(ranges.cat.categories) <= 5
        labels = [str(label) for label in ranges.cat.categories]
        assert re.fullmatch(r"<= \d+", labels[0]) and re.fullmatch(r">= \d+", labels[-1])
        assert all(re.fullmatch(r"\d+(-\d+)?", label) for label in labels[1:-1])
        bounds = [_range_of(label, adult[column]) for label in labels]
        assert all(a <= b < c for (a, b), (c, _) in itertools.pairwise(bounds))
        for label, value in zip(ranges.astype(str), adult[column], strict=True):
            low, high = _range_of(label, adult[column])
            assert low <= value <= high


@pytest.mark.parametrize("method", ["quantile", "tree"])
def test_generalize_labels_never_show_a_columns_minimum_or_maximum(method: str) -> None:
    """The extremes are single people's values: the outer ranges are open-ended instead."""
    frame = datasets.load("german_credit").frame
    features = ["credit_amount", "age"]
    strategy = Generalize(bins=5, method=method)
    out = strategy.apply(frame, features, y=frame["credit_risk"])
    assert strategy.applied_ is not None
    text = json.dumps(strategy.applied_.to_dict()) + " ".join(
        str(c) for f in features for c in out[f].cat.categories
    )
    numbers = {float(n) for n in re.findall(r"\d+(?:\.\d+)?", text)}
    for feature in features:
        assert float(frame[feature].min()) not in numbers
        assert float(frame[feature].max()) not in numbers


def test_generalize_labels_floats_open_ended_and_a_single_range() -> None:
    frame = pd.DataFrame({"v": np.linspace(0.5, 9.5, 40), "b": [0, 1] * 20})
    out = Generalize(bins=3).apply(frame, ["v", "b"])
    labels = [str(c) for c in out["v"].cat.categories]
    assert labels[0].startswith("<= ") and labels[-1].startswith("> ")
    assert not {"0.5", "9.5"} & set(re.findall(r"\d+(?:\.\d+)?", " ".join(labels)))
    assert list(out["b"].cat.categories) == ["all"]


def test_tree_bins_follow_the_target(adult: pd.DataFrame, income: pd.Series) -> None:
    """The tree's ranges separate incomes better than quantile ranges with the same bins."""

    def purity(column: pd.Series) -> float:
        table = pd.crosstab(column, income)
        return float(table.max(axis=1).sum() / table.to_numpy().sum())

    tree = Generalize(bins=3, method="tree").apply(adult, ["age"], y=income)["age"]
    quantile = Generalize(bins=3).apply(adult, ["age"])["age"]
    assert purity(tree) >= purity(quantile)
    with pytest.raises(InputError, match="needs the target: pass y="):
        Generalize(method="tree").apply(adult, ["age"])


def test_generalize_merges_rare_categories_and_keeps_missing(adult: pd.DataFrame) -> None:
    out = Generalize(min_share=0.05).apply(adult, ["occupation", "native_country"])
    for column in ("occupation", "native_country"):
        shares = adult[column].value_counts(normalize=True)
        rare = {str(c) for c in shares.index[(shares > 0) & (shares < 0.05)]}
        merged = out[column]
        assert "other" in merged.cat.categories and not rare & set(merged.cat.categories)
        original = adult[column].astype(object)
        assert (merged.isna() == original.isna()).all()
        was_rare = original.isin(rare)
        assert (merged[was_rare] == "other").all()
        kept = ~was_rare & original.notna()
        assert (merged[kept].astype(str) == original[kept].astype(str)).all()
    assert Generalize().applied_ is None


# -- local DP -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("epsilon", "k"), [(0.1, 2), (1.0, 5), (2.0, 16), (1.0, 41), (5.0, 3)])
def test_replace_probability_never_exceeds_epsilon(epsilon: float, k: int) -> None:
    r = replace_probability(epsilon, k)
    assert privacy_ratio(r, k) <= Fraction(math.exp(epsilon))
    assert realised_epsilon(r, k) == pytest.approx(epsilon, abs=1e-12)
    assert 1 - r + r / k == pytest.approx(keep_probability(epsilon, k), rel=1e-12)


def test_randomized_response_keeps_the_value_with_its_probability(
    adult_full: datasets.Dataset, schema: Schema
) -> None:
    """Exact OpenDP bits on every Adult row: keep rate e^eps / (e^eps + k - 1)."""
    race = adult_full.frame[["race"]]
    strategy = LocalDPNoise(1.0, schema=schema)
    out = strategy.apply(race, ["race"])
    k = len(schema.domain("race").categories)
    assert out["race"].dtype == race["race"].dtype
    kept = int((out["race"] == race["race"]).sum())
    interval = clopper_pearson(kept, len(race), 0.9995)
    assert interval.lower <= math.e / (math.e + k - 1) <= interval.upper
    white = race["race"] == "White"
    moved = int((out["race"][white] == "Black").sum())
    interval = clopper_pearson(moved, int(white.sum()), 0.9995)
    assert interval.lower <= 1 / (math.e + k - 1) <= interval.upper
    assert strategy.applied_ is not None and strategy.applied_.epsilon == 1.0


class _DoubledKeep(LocalDPNoise):
    """Broken on purpose: randomized response calibrated to 2 * epsilon."""

    def replace_probability(self, epsilon: float, k: int) -> float:
        return super().replace_probability(2 * epsilon, k)


class _HalfScale(LocalDPNoise):
    """Broken on purpose: Laplace scale for 2 * epsilon."""

    def laplace_scale(self, epsilon: float, lower: float, upper: float, slack: float) -> float:
        return super().laplace_scale(2 * epsilon, lower, upper, slack)


def _audit_rr(strategy: LocalDPNoise, schema: Schema) -> float:
    """Audit one record's race randomized from 'White' vs from 'Black' (exact OpenDP bits)."""
    categories = list(schema.domain("race").categories)

    def sampler_for(value: str) -> Any:
        def sample(n: int) -> np.ndarray:
            frame = pd.DataFrame({"race": pd.Categorical([value] * n, categories=categories)})
            return (strategy.apply(frame, ["race"])["race"] == "White").to_numpy(dtype=float)

        return sample

    return audit(sampler_for("White"), sampler_for("Black"), 20_000, confidence=0.999).epsilon_lower


def _audit_laplace(strategy: LocalDPNoise) -> float:
    """Audit one record's hours per week at the two ends of its public bounds (OpenDP noise)."""

    def sampler_for(value: int) -> Any:
        def sample(n: int) -> np.ndarray:
            frame = pd.DataFrame({"hours_per_week": np.full(n, value)})
            return strategy.apply(frame, ["hours_per_week"])["hours_per_week"].to_numpy()

        return sample

    return audit(sampler_for(1), sampler_for(99), 20_000, confidence=0.999).epsilon_lower


def test_audit_randomized_response_stays_under_epsilon(schema: Schema) -> None:
    assert _audit_rr(LocalDPNoise(1.0, schema=schema), schema) < 1.0


def test_audit_catches_randomized_response_with_doubled_epsilon(schema: Schema) -> None:
    assert _audit_rr(_DoubledKeep(1.0, schema=schema), schema) > 1.0


def test_audit_laplace_stays_under_epsilon_and_catches_half_scale() -> None:
    bounds = {"hours_per_week": (1.0, 99.0)}
    assert _audit_laplace(LocalDPNoise(1.0, bounds=bounds)) < 1.0
    assert _audit_laplace(_HalfScale(1.0, bounds=bounds)) > 1.0


def test_laplace_clips_to_bounds_and_records_its_scale(adult: pd.DataFrame) -> None:
    noise = SeededNumpyNoise(5)
    strategy = LocalDPNoise(0.5, bounds={"age": (20, 60)}, sampler=noise, allow_nonprivate=True)
    release = strategy.release(adult, ["age"])
    clipped = np.clip(adult["age"].to_numpy(dtype=float), 20, 60)
    expected = SeededNumpyNoise(5).laplace(clipped, 80.0)
    np.testing.assert_allclose(release.values["age"].to_numpy(), expected)
    plan = release.record.noise["per_feature"]["age"]
    assert plan["scale"] == 80.0 and release.record.sensitivity == {"age": 40.0}
    assert "noise sampler is not private" in release.record.assumptions


def test_ldp_record_composes_over_features_and_charges_before_noise(
    adult: pd.DataFrame, schema: Schema, tmp_path: Any
) -> None:
    ledger = BudgetLedger(tmp_path / "budget.ledger")
    ledger.set_budget(1.5, unit="dp/substitute:age,race")  # the other columns are released as is
    strategy = LocalDPNoise(0.5, schema=schema)
    release = strategy.release(adult, ["age", "race"], ledger=ledger, label="first")
    assert release.record.epsilon == 1.0 and release.record.definition == "dp"
    assert release.record.unit.key == "dp/substitute:age,race"
    assert isinstance(release.diagnostics, LocalDPDiagnostics)
    assert release.diagnostics.features["race"]["k"] == 5
    assert release.to_dict()["diagnostics"]["features"]["race"]["k"] == 5
    lines = release.diagnostics.summary_lines()
    assert lines[0].startswith("'age': Laplace noise of scale")
    assert lines[1].startswith("'race': randomized response over 5 values (schema)")

    class _Counting(OpenDPNoise):
        calls = 0

        def _sample(self, flat: np.ndarray, scale: float, kind: str, integer: bool) -> np.ndarray:
            _Counting.calls += 1
            return super()._sample(flat, scale, kind, integer)

    with pytest.raises(BudgetExceededError):
        LocalDPNoise(1.0, schema=schema, sampler=_Counting()).release(adult, ["age"], ledger=ledger)
    assert _Counting.calls == 0
    assert [e.label for e in ledger.entries()] == ["first"]


def test_ldp_calibrates_from_public_facts_only() -> None:
    facts = LocalFacts(
        ("age", "sex"),
        bounds={"age": (17.0, 90.0)},
        values={"sex": ("Female", "Male")},
        sources={"age": "bounds=", "sex": "domain="},
    )
    strategy = LocalDPNoise(0.5, sampler=SeededNumpyNoise(0), allow_nonprivate=True)
    plan = strategy.calibrate(facts)
    assert plan.epsilon == 1.0 and plan.features["age"]["scale"] == 73.0 / 0.5
    assert plan.features["sex"]["k"] == 2 and plan.features["sex"]["domain_source"] == "domain="
    with pytest.raises(InputError, match="needs its public facts"):
        strategy.calibrate()


def test_ldp_domains_declared_observed_and_missing(adult: pd.DataFrame, schema: Schema) -> None:
    with pytest.warns(PrivateDomainWarning, match="read from the data"):
        out = LocalDPNoise(2.0).apply(adult, ["race"])
    assert set(out["race"].dropna()) <= set(adult["race"].dropna())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        LocalDPNoise(1.0, schema=schema).apply(adult, ["workclass"])  # nullable: missing is a value
        LocalDPNoise(1.0, domain={"sex": ["Female", "Male", "Other"]}).apply(adult, ["sex"])
    education = LocalDPNoise(1.0, domain={"education_num": list(range(1, 17))}).apply(
        adult, ["education_num"]
    )["education_num"]
    assert education.dtype == adult["education_num"].dtype and education.between(1, 16).all()
    with pytest.raises(InputError, match="outside its declared domain"):
        LocalDPNoise(1.0, domain={"sex": ["Female"]}).apply(adult, ["sex"])
    with pytest.raises(InputError, match=r"bounds: numeric feature 'age' needs public bounds"):
        LocalDPNoise(1.0).apply(adult, ["age"])
    missing = adult[["age"]].astype(float)
    missing.iloc[0, 0] = np.nan
    with pytest.raises(InputError, match="missing values"):
        LocalDPNoise(1.0, bounds={"age": (17, 90)}).apply(missing, ["age"])


def test_ldp_refuses_nonprivate_noise_unless_asked(adult: pd.DataFrame, schema: Schema) -> None:
    with pytest.raises(InputError, match="not private"):
        LocalDPNoise(1.0, schema=schema, sampler=SeededNumpyNoise(0)).apply(adult, ["race"])
    first, second = (
        LocalDPNoise(1.0, schema=schema, sampler=SeededNumpyNoise(9), allow_nonprivate=True).apply(
            adult, ["race", "age"]
        )
        for _ in range(2)
    )
    pd.testing.assert_frame_equal(first, second)


@settings(max_examples=60, deadline=None)
@given(epsilon=st.one_of(st.floats(allow_nan=True), st.integers(-5, 5), st.none(), st.text()))
def test_any_epsilon_is_accepted_or_an_input_error(epsilon: Any) -> None:
    frame = pd.DataFrame({"sex": ["Female", "Male", "Male"]})
    strategy = LocalDPNoise(epsilon, domain={"sex": ["Female", "Male"]})
    try:
        out = strategy.apply(frame, ["sex"])
    except InputError as exc:
        assert "epsilon" in str(exc)
        return
    assert set(out["sex"]) <= {"Female", "Male"}


# -- synthetic replacement ----------------------------------------------------------------------


def test_synthetic_values_follow_the_feature_not_the_row(adult: pd.DataFrame) -> None:
    strategy = SyntheticReplacement(max_iter=30, n_threads=1)
    out = strategy.apply(adult, ["age", "workclass"], seed=2)
    again = SyntheticReplacement(max_iter=30, n_threads=1).apply(
        adult, ["age", "workclass"], seed=2
    )
    pd.testing.assert_frame_equal(out, again)
    age = out["age"]
    assert age.dtype == adult["age"].dtype
    assert age.between(adult["age"].min(), adult["age"].max()).all()
    assert (age == adult["age"]).mean() < 0.2  # a redraw, not a copy
    assert abs(age.mean() - adult["age"].mean()) < 2.0
    workclass = out["workclass"]
    assert (workclass.isna() == adult["workclass"].isna()).all()
    assert set(workclass.dropna()) <= set(adult["workclass"].dropna())
    params = strategy.applied_.params if strategy.applied_ else {}
    assert "age" in params["predictors"]["workclass"]  # the set keeps its correlations
    with pytest.raises(InputError, match="needs other columns"):
        SyntheticReplacement().apply(adult[["age"]], ["age"])


# -- encryption ---------------------------------------------------------------------------------


def test_encrypt_is_deterministic_reversible_and_keyed(adult: pd.DataFrame) -> None:
    key = bytes(range(64))
    strategy = Encrypt(key)
    out = strategy.apply(adult, ["sex", "age"])
    assert out["sex"].nunique() == adult["sex"].nunique()
    pairs = set(zip(adult["sex"].astype(str), out["sex"].astype(str), strict=True))
    assert len(pairs) == adult["sex"].nunique()  # same value, same token
    pd.testing.assert_frame_equal(out, Encrypt(key).apply(adult, ["sex", "age"]))
    back = strategy.decrypt(out, ["sex", "age"])
    assert (back["age"] == adult["age"].astype(str)).all()
    assert (back["sex"] == adult["sex"].astype(str)).all()
    other = Encrypt(bytes(64)).apply(adult, ["sex"])
    assert not set(other["sex"].astype(str)) & set(out["sex"].astype(str))
    text = json.dumps(strategy.applied_.to_dict() if strategy.applied_ else {}) + repr(strategy)
    assert key.hex() not in text and "hidden" in repr(strategy)
    with pytest.raises(InputError, match="not a token of this key"):
        Encrypt(bytes(64)).decrypt(out, ["sex"])


def test_encrypt_notes_a_numeric_feature_losing_its_order(adult: pd.DataFrame) -> None:
    """A lower score after encrypting a number is lost information, and the record says so."""
    strategy = Encrypt()
    strategy.apply(adult, ["sex", "age"])
    assert strategy.applied_ is not None
    note = strategy.applied_.params["note"]
    assert "['age']" in note and "unordered categories" in note and "sex" not in note
    strategy.apply(adult, ["sex"])
    assert strategy.applied_ is not None and "note" not in strategy.applied_.params


def test_encrypt_generates_one_key_and_binds_tokens_to_the_column() -> None:
    frame = pd.DataFrame({"a": ["x", "y", None], "b": ["x", "x", "y"]})
    strategy = Encrypt()
    out = strategy.apply(frame, ["a", "b"])
    assert strategy.export_key() == strategy.export_key() and len(strategy.export_key()) == 64
    assert out.loc[0, "a"] != out.loc[0, "b"] and pd.isna(out.loc[2, "a"])
    with pytest.raises(InputError, match="key must be"):
        Encrypt(b"short").apply(frame, ["a"])


# -- parameters and specs -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("strategy", "features", "message"),
    [
        (Generalize(bins=1), ["age"], "bins must be an integer >= 2"),
        (Generalize(method="kmeans"), ["age"], "method must be one of"),
        (Generalize(min_share=1.0), ["race"], r"min_share must be in \[0, 1\)"),
        (SyntheticReplacement(n_folds=1), ["age"], "n_folds must be an integer >= 2"),
        (LocalDPNoise(0.0, bounds={"age": (17, 90)}), ["age"], "epsilon must be > 0"),
        (LocalDPNoise(1e4, bounds={"age": (17, 90)}), ["age"], "epsilon must be at most 700"),
        (LocalDPNoise(1.0, bounds={"age": (90, 17)}), ["age"], "lower 90.0 is above upper"),
        (Drop(), ["height"], "features: unknown column 'height'"),
        (Drop(), [], "features must be a non-empty list"),
    ],
)
def test_bad_parameters_name_the_parameter(
    adult: pd.DataFrame, strategy: Strategy, features: list[str], message: str
) -> None:
    with pytest.raises(InputError, match=message):
        strategy.apply(adult, features)


@settings(max_examples=40, deadline=None)
@given(bins=st.integers(-3, 40), share=st.floats(-1, 2, allow_nan=False))
def test_generalize_parameters_give_ranges_or_an_input_error(bins: int, share: float) -> None:
    frame = pd.DataFrame({"n": np.arange(60) % 17, "c": list("aabbbcccccdddddddddd") * 3})
    try:
        out = Generalize(bins=bins, min_share=share).apply(frame, ["n", "c"])
    except InputError as exc:
        assert re.search(r"bins|min_share", str(exc))
        return
    assert len(out["n"].cat.categories) <= bins
    shares = frame["c"].value_counts(normalize=True)
    assert len(out["c"].cat.categories) == (shares >= share).sum() + int((shares < share).any())


def test_parse_strategy_forms(schema: Schema) -> None:
    assert isinstance(parse_strategy("drop"), Drop)
    generalize = parse_strategy("generalize:7:tree")
    assert isinstance(generalize, Generalize) and (generalize.bins, generalize.method) == (
        7,
        "tree",
    )
    ldp = parse_strategy(" LDP:0.5 ", schema=schema)
    assert isinstance(ldp, LocalDPNoise) and ldp.epsilon == 0.5 and ldp.schema is schema
    bare = parse_strategy(" ldp ", ldp_epsilon=2.0)  # --ldp-epsilon: no number round trip
    assert isinstance(bare, LocalDPNoise) and bare.epsilon == 2.0
    assert parse_strategy("ldp:0.5", ldp_epsilon=2.0).epsilon == 0.5  # its own EPSILON wins
    assert isinstance(parse_strategy("synthetic"), SyntheticReplacement)
    assert isinstance(parse_strategy("encrypt"), Encrypt)
    for bad, message in [
        ("ldp", "expected 'ldp:EPSILON'"),
        ("ldp:-1", "EPSILON must be a number > 0"),
        ("generalize:1", "BINS >= 2"),
        ("noise", "unknown strategy 'noise'"),
        ("drop:3", "takes no ':' arguments"),
    ]:
        with pytest.raises(InputError, match=message):
            parse_strategy(bad)


@settings(max_examples=200, deadline=None)
@given(spec=st.text(max_size=25))
def test_any_strategy_string_gives_a_strategy_or_an_input_error(spec: str) -> None:
    try:
        assert isinstance(parse_strategy(spec), Strategy)
    except InputError as exc:
        assert "\n" not in str(exc)
