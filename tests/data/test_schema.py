"""Schema: parsing (property-based), serialisation round trips, validation against data, infer()."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attrpriv.data.schema import (
    Categorical,
    Column,
    Integer,
    Numeric,
    PrivateDomainWarning,
    Role,
    Schema,
)
from attrpriv.errors import SchemaError, showing_private_values

# -- strategies ---------------------------------------------------------------------------------
# Printable text; YAML must round-trip it (quotes, colons, hashes, non-breaking spaces included).
text = st.text(
    alphabet=st.characters(categories=("L", "N", "P", "S", "Zs"), exclude_characters="\x85"),
    max_size=8,
)
names = text.filter(bool)
category_values = st.one_of(
    st.integers(), st.booleans(), st.floats(allow_nan=False), text
)  # no NaN: it never equals itself, so no domain could round-trip it


@st.composite
def domains(draw: st.DrawFn) -> Categorical | Numeric | Integer:
    kind = draw(st.sampled_from(["categorical", "numeric", "integer"]))
    if kind == "categorical":
        return Categorical(
            tuple(draw(st.lists(category_values, min_size=1, max_size=6, unique=True)))
        )
    if kind == "numeric":
        bound = st.floats(allow_nan=False, allow_infinity=False) | st.integers(-(10**9), 10**9)
        lower, upper = sorted([draw(bound), draw(bound)])
        return Numeric(lower, upper)
    lower, upper = sorted(draw(st.lists(st.integers(-(10**12), 10**12), min_size=2, max_size=2)))
    return Integer(lower, upper)


@st.composite
def schemas(draw: st.DrawFn) -> Schema:
    col_names = draw(st.lists(names, min_size=1, max_size=5, unique=True))
    columns = []
    for name in col_names:
        role = draw(st.sampled_from(list(Role)))
        no_domain = role is Role.IGNORE and draw(st.booleans())
        domain = None if no_domain else draw(domains())
        columns.append(Column(name, role, domain, draw(st.booleans()), draw(text)))
    return Schema(tuple(columns), draw(text), draw(text), draw(text), draw(text))


json_like = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(max_size=6) | st.integers(), inner, max_size=3)
    ),
    max_leaves=8,
)
nasty = st.sampled_from(
    [
        None,
        True,
        0,
        -1,
        1.5,
        math.nan,
        math.inf,
        10**400,
        "",
        "x",
        "3",
        [],
        [1],
        [[1]],
        {},
        {"a": 1},
    ]
)
# deep copies: a shared [] or {} from sampled_from could otherwise end up inside itself
junk = (nasty | json_like).map(copy.deepcopy)
keys = st.sampled_from(["type", "role", "domain", "columns", "lower", "categories", "nullable"])


def _slots(node: Any) -> list[tuple[Any, Any]]:
    """Every (container, key) pair in a nested spec of dicts and lists."""
    if isinstance(node, dict):
        items = list(node.items())
    elif isinstance(node, list):
        items = list(enumerate(node))
    else:
        return []
    out = [(node, key) for key, _ in items]
    for _, child in items:
        out += _slots(child)
    return out


@st.composite
def malformed_specs(draw: st.DrawFn) -> Any:
    """A valid spec with a few random edits (replace / delete / add), or random junk."""
    if draw(st.integers(0, 9)) == 0:
        return draw(junk)
    spec = copy.deepcopy(draw(schemas()).to_dict())
    for _ in range(draw(st.integers(1, 3))):
        container, key = draw(st.sampled_from(_slots(spec)))
        action = draw(st.sampled_from(["replace", "delete", "add"]))
        if action == "replace":
            container[key] = draw(junk)
        elif action == "delete":
            del container[key]
        elif isinstance(container, dict):
            container[draw(keys | st.text(max_size=4) | st.integers())] = draw(junk)
        else:
            container.append(draw(junk))
        if not _slots(spec):
            break
    return spec


# -- parsing ------------------------------------------------------------------------------------
@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(spec=malformed_specs())
def test_from_dict_raises_only_schema_error(spec: Any) -> None:
    try:
        schema = Schema.from_dict(spec)
    except SchemaError as exc:
        assert "\n" not in str(exc)
    else:  # the edits happened to leave a valid spec: it must then round-trip
        assert Schema.from_dict(schema.to_dict()) == schema


@pytest.mark.parametrize(
    ("domain", "match"),
    [
        ({"type": ["categorical"]}, "domain type must be one of"),
        ({"type": "integer", "lower": "x", "upper": 3}, "bounds must be numbers"),
        ({"type": "integer", "lower": "1", "upper": 3}, "bounds must be numbers"),
        ({"type": "integer", "lower": 0.5, "upper": 3}, "must be integers"),
        ({"type": "numeric", "lower": 10**400, "upper": 10**401}, "must be finite"),
        ({"type": "numeric", "lower": 2, "upper": 1}, "above its upper bound"),
        ({"type": "numeric", "lower": True, "upper": 1}, "must be numbers"),
        ({"type": "numeric", "lower": 0, "upper": 1, 7: 1}, r"needs keys \['lower', 'upper'\]"),
        ({"type": "categorical", "categories": "ab"}, "must be a list"),
        ({"type": "categorical", "categories": [[1]]}, "unhashable"),
        ({"type": "categorical", "categories": ["a", "a"]}, "duplicate"),
        ({"type": "categorical", "categories": []}, "at least one category"),
    ],
)
def test_bad_domains_name_the_column(domain: dict[str, Any], match: str) -> None:
    spec = {"columns": {"age": {"role": "feature", "domain": domain}}}
    with pytest.raises(SchemaError, match=match) as info:
        Schema.from_dict(spec)
    assert "column 'age'" in str(info.value)


def test_mixed_type_unknown_keys_are_reported() -> None:
    with pytest.raises(SchemaError, match=r"unknown schema keys \[1, 'x'\]"):
        Schema.from_dict({"columns": {"a": {"role": "ignore"}}, 1: 2, "x": 3})
    with pytest.raises(SchemaError, match=r"column 'a': unknown keys \[2, 'y'\]"):
        Schema.from_dict({"columns": {"a": {"role": "ignore", 2: 0, "y": 0}}})


@given(schema=schemas())
def test_dict_round_trip(schema: Schema) -> None:
    assert Schema.from_dict(schema.to_dict()) == schema
    assert Schema.from_dict(json.loads(schema.to_json())) == schema


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(schema=schemas(), suffix=st.sampled_from([".yaml", ".yml", ".json"]))
def test_file_round_trip(
    tmp_path_factory: pytest.TempPathFactory, schema: Schema, suffix: str
) -> None:
    path = tmp_path_factory.getbasetemp() / f"random-schema{suffix}"
    assert schema.save(path) == path
    assert Schema.load(path) == schema
    assert [p.name for p in path.parent.glob(".random-schema*")] == []  # no temporary left over


@pytest.fixture
def spec() -> dict[str, Any]:
    return {
        "name": "people",
        "source": "made up",
        "columns": {
            "sex": {
                "role": "sensitive",
                "domain": {"type": "categorical", "categories": ["f", "m"]},
            },
            "age": {
                "role": "quasi_identifier",
                "domain": {"type": "integer", "lower": 17, "upper": 90},
            },
            "income": {
                "role": "feature",
                "nullable": True,
                "domain": {"type": "numeric", "lower": 0, "upper": 1e6},
                "description": "yearly, USD",
            },
            "label": {"role": "target", "domain": {"type": "categorical", "categories": [0, 1]}},
            "notes": {"role": "ignore"},
        },
    }


@pytest.fixture
def schema(spec: dict[str, Any]) -> Schema:
    return Schema.from_dict(spec)


@pytest.fixture
def frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "sex": ["f", "m", "f"],
            "age": [17, 45, 90],
            "income": [0.0, np.nan, 1e6],
            "label": [0, 1, 1],
            "notes": ["x", None, "z"],
        }
    )


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_save_load(tmp_path: Path, schema: Schema, spec: dict[str, Any], suffix: str) -> None:
    path = schema.save(tmp_path / "sub" / f"people{suffix}")
    loaded = Schema.load(path)
    assert loaded == schema
    assert loaded.to_dict() == spec
    assert loaded.domain("sex") == Categorical(("f", "m"))


@pytest.mark.parametrize(
    ("name", "content", "match"),
    [
        ("bad.yaml", "columns: [unclosed\n", "is not valid yaml"),
        ("bad.yml", "columns:\n  a: {role: feature\n", "is not valid yaml"),
        ("bad.json", '{"columns": ', "is not valid json"),
        ("list.yaml", "- a\n- b\n", "a schema must be a mapping"),
        ("col.yaml", "columns:\n  a: {role: feature, domain: {type: numeric}}\n", "column 'a'"),
        ("binary.yaml", b"\xff\xfe\x00garbage", "not UTF-8"),
        ("schema.txt", "columns: {}", r"must end in \.yaml"),
    ],
)
def test_load_malformed_file_names_it(
    tmp_path: Path, name: str, content: str | bytes, match: str
) -> None:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    with pytest.raises(SchemaError, match=match) as info:
        Schema.load(path)
    assert str(path) in str(info.value)
    assert "\n" not in str(info.value)


def test_load_missing_file(tmp_path: Path) -> None:
    with pytest.raises(SchemaError, match="cannot read schema file") as info:
        Schema.load(tmp_path / "nope.yaml")
    assert "nope.yaml" in str(info.value)


def test_yaml_keeps_yes_no_as_text(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(
        "columns:\n  a: {role: feature, domain: {type: categorical, categories: [yes, no, true]}}\n"
    )
    assert Schema.load(path).domain("a") == Categorical(("yes", "no", True))


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("s.yaml", "columns:\n  a: {role: feature}\n  a: {role: sensitive}\n"),
        ("s.yaml", "columns:\n  a: {role: feature, role: sensitive}\n"),
        ("s.json", '{"columns": {"a": {"role": "feature"}, "a": {"role": "sensitive"}}}'),
    ],
)
def test_a_repeated_key_is_refused_naming_it(tmp_path: Path, name: str, text: str) -> None:
    """YAML and JSON loaders keep the last of repeated keys: a schema that says a column is a
    feature and, further down, sensitive must not be read silently as either."""
    path = tmp_path / name
    path.write_text(text)
    key = "role" if "feature, role" in text else "a"
    with pytest.raises(SchemaError, match=f"repeated key '{key}'"):
        Schema.load(path)


# -- validation ---------------------------------------------------------------------------------
def test_valid_frame_passes_untouched(schema: Schema, frame: pd.DataFrame) -> None:
    before = frame.copy(deep=True)
    schema.validate(frame)
    pd.testing.assert_frame_equal(frame, before)


def _drop_age(df: pd.DataFrame) -> None:
    del df["age"]


def _add_zip(df: pd.DataFrame) -> None:
    df["zip"] = [1, 2, 3]


def _set(column: str, values: list[Any]) -> Any:
    def edit(df: pd.DataFrame) -> None:
        df[column] = values

    return edit


BAD_FRAMES = [
    (_drop_age, r"column 'age' is in the schema but not in the data"),
    (_add_zip, r"column 'zip' is in the data but not in the schema"),
    (_set("age", [17.0, np.nan, 30.0]), r"column 'age' has missing values \(first at row 1\)"),
    (
        _set("sex", ["f", "x", "m"]),
        r"column 'sex' has a value 'x' at row 1 outside its domain: "
        r"expected one of \['f', 'm'\]",
    ),
    (
        _set("label", [0, 2, 2]),
        r"column 'label' has 2 values, the first 2 at row 1, outside.*\[0, 1\]",
    ),
    (
        _set("income", [-5.0, 1.0, 2e6]),
        r"column 'income' has 2 values, the first -5.0 at row 0, .*a number in \[0, 1e\+06\]",
    ),
    (
        _set("age", [17.0, 30.5, 40.0]),
        r"column 'age' has a value 30.5 at row 1 .*an integer in \[17, 90\]",
    ),
    (_set("age", [16, 30, 40]), r"column 'age' has a value 16 at row 0 .*an integer in \[17, 90\]"),
    (_set("age", ["17", "30", "40"]), r"column 'age' must be numeric .* got dtype"),
    (_set("income", [True, False, True]), r"column 'income' must be numeric .* got dtype bool"),
]


@pytest.mark.parametrize(("edit", "match"), BAD_FRAMES)
def test_invalid_frames(schema: Schema, frame: pd.DataFrame, edit: Any, match: str) -> None:
    edit(frame)
    before = copy.deepcopy(frame)
    with showing_private_values(), pytest.raises(SchemaError, match=match) as info:
        schema.validate(frame)  # the values are named only when asked for (--debug)
    assert "\n" not in str(info.value)
    pd.testing.assert_frame_equal(frame, before)


def test_invalid_values_are_not_named_by_default(schema: Schema, frame: pd.DataFrame) -> None:
    """A value outside its domain may be private: the message says where, not what."""
    frame["age"] = [17, 30, 123456]
    with pytest.raises(SchemaError) as info:
        schema.validate(frame)
    message = str(info.value)
    assert "123456" not in message and "at row 2 (value hidden: --debug shows it)" in message
    frame.index = pd.Index(["alice", "bob", "carol"])  # a label that is data is not shown
    with showing_private_values(), pytest.raises(SchemaError, match="123456 at row 2") as info:
        schema.validate(frame)
    assert "carol" not in str(info.value)


def test_allow_extra(schema: Schema, frame: pd.DataFrame) -> None:
    frame["zip"] = [1, 2, 3]
    schema.validate(frame, allow_extra=True)


def test_empty_and_non_frames(schema: Schema, frame: pd.DataFrame) -> None:
    with pytest.raises(SchemaError, match="data has no rows"):
        schema.validate(frame.iloc[:0])
    with pytest.raises(SchemaError, match="must be a pandas DataFrame, got ndarray"):
        schema.validate(frame.to_numpy())  # type: ignore[arg-type]


def test_duplicate_data_columns(schema: Schema, frame: pd.DataFrame) -> None:
    doubled = pd.concat([frame, frame[["age"]]], axis=1)
    with pytest.raises(SchemaError, match="column 'age' appears twice in the data"):
        schema.validate(doubled)


def test_nullable_integer_accepts_missing_values() -> None:
    schema = Schema((Column("n", Role.FEATURE, Integer(0, 5), nullable=True),))
    schema.validate(pd.DataFrame({"n": [1.0, np.nan, 5.0]}))
    schema.validate(pd.DataFrame({"n": pd.array([1, None, 5], dtype="Int64")}))
    with showing_private_values(), pytest.raises(SchemaError, match=r"value 2\.5"):
        schema.validate(pd.DataFrame({"n": [np.nan, 2.5]}))


@given(
    values=st.lists(
        st.floats(allow_infinity=True, allow_nan=True, width=64), min_size=1, max_size=20
    )
)
def test_numeric_validation_matches_bounds(values: list[float]) -> None:
    schema = Schema((Column("x", Role.FEATURE, Numeric(-1.0, 1.0)),))
    data = pd.DataFrame({"x": values})
    ok = all(-1.0 <= v <= 1.0 for v in values)  # False for NaN as well
    if ok:
        schema.validate(data)
    else:
        with pytest.raises(SchemaError, match="column 'x'"):
            schema.validate(data)


# -- infer and access ---------------------------------------------------------------------------
def test_infer_warns_and_reads_domains() -> None:
    data = pd.DataFrame(
        {
            "a": [3, 1, 2],
            "b": [0.5, np.nan, 2.0],
            "c": ["z", "x", "z"],
            "d": [True, False, True],
        }
    )
    before = data.copy(deep=True)
    with pytest.warns(PrivateDomainWarning, match="release"):
        schema = Schema.infer(data, roles={"c": "sensitive"})
    pd.testing.assert_frame_equal(data, before)
    assert schema.domain("a") == Integer(1, 3)
    assert schema.domain("b") == Numeric(0.5, 2.0)
    assert schema["b"].nullable and not schema["a"].nullable
    assert schema.domain("c") == Categorical(("x", "z"))
    assert schema.domain("d") == Categorical((False, True))
    assert schema.sensitive == ("c",)
    assert schema.features == ("a", "b", "d")
    schema.validate(data)


def test_infer_reads_a_whole_number_column_with_missing_values_as_integers() -> None:
    """pandas reads whole numbers with an empty cell as floats; they are still integers."""
    data = pd.DataFrame({"visits": [2.0, np.nan, 14.0, 0.0], "dose": [2.0, np.nan, 1.5, 0.0]})
    with pytest.warns(PrivateDomainWarning):
        schema = Schema.infer(data)
    assert schema.domain("visits") == Integer(0, 14) and schema["visits"].nullable
    assert schema.domain("dose") == Numeric(0.0, 2.0)
    schema.validate(data)


def test_infer_then_validate_with_integer_labels() -> None:
    data = pd.DataFrame(np.arange(6).reshape(3, 2))
    with pytest.warns(PrivateDomainWarning):
        schema = Schema.infer(data)
    assert schema.names == ("0", "1")
    schema.validate(data)


def test_infer_refuses_unknown_roles_and_empty_columns() -> None:
    with pytest.warns(PrivateDomainWarning), pytest.raises(SchemaError, match="'zz'"):
        Schema.infer(pd.DataFrame({"a": [1]}), roles={"zz": "target"})
    with pytest.warns(PrivateDomainWarning), pytest.raises(SchemaError, match="only missing"):
        Schema.infer(pd.DataFrame({"a": [np.nan, np.nan]}))


def test_access(schema: Schema) -> None:
    assert schema.names == ("sex", "age", "income", "label", "notes")
    assert schema.target == "label"
    assert schema.with_role("ignore") == ("notes",)
    assert "age" in schema and "zip" not in schema
    assert schema.select(["label", "sex"]).names == ("label", "sex")
    with pytest.raises(SchemaError, match="column 'zip' is not in the schema"):
        schema["zip"]
    with pytest.raises(SchemaError, match="no domain"):
        schema.domain("notes")


def test_constructors_refuse_bad_parts() -> None:
    with pytest.raises(SchemaError, match="needs a domain"):
        Column("a", "feature")
    with pytest.raises(SchemaError, match="role must be one of"):
        Column("a", "secret", Integer(0, 1))
    with pytest.raises(SchemaError, match="appears twice"):
        Schema((Column("a", "ignore"), Column("a", "ignore")))
    with pytest.raises(SchemaError, match="at least one column"):
        Schema(())
    with pytest.raises(SchemaError, match="must be finite"):
        Numeric(0, math.inf)


def test_yaml_reads_exponent_numbers_and_keeps_yes_no_as_text(tmp_path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(
        "columns:\n"
        "  income: {role: feature, domain: {type: numeric, lower: 0, upper: 1e6}}\n"
        "  answer: {role: sensitive, domain: {type: categorical, categories: [yes, no, on]}}\n"
    )
    schema = Schema.load(path)
    assert schema["income"].domain.upper == 1e6
    assert schema["answer"].domain.categories == ("yes", "no", "on")


def test_a_schema_shows_itself_in_one_line_and_as_a_table() -> None:
    """In a notebook: a short repr (not the dataclass's thousands of characters) and an HTML
    table of every column, marking domains read off the data."""
    from attrpriv import datasets

    schema = datasets.load("adult").schema
    text = repr(schema)
    assert (
        text
        == "Schema(adult: 16 columns; sensitive race, sex; target income; ignore fnlwgt, split)"
    )
    page = schema._repr_html_()
    assert page.count("<tr>") == 1 + len(schema.columns) and "one of [" in page
    assert "read off the data" not in page
    with pytest.warns(PrivateDomainWarning):
        inferred = Schema.infer(pd.DataFrame({"a": [1, 2], "b": ["x", "y"]}))
    assert "2 domains read off data" in repr(inferred)
    assert "review them" in inferred._repr_html_()
