"""PrivacyRecord validation and round trips; Release.to_dict is plain JSON."""

from __future__ import annotations

import dataclasses
import json
import math
from typing import Any

import numpy as np
import pandas as pd
import pytest

from attrpriv.dp import DEFINITIONS, Diagnostics, PrivacyRecord, PrivacyUnit, Release
from attrpriv.errors import InputError


def _fields(**changes: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "mechanism": "tabular-ddp",
        "definition": "dependent-dp",
        "epsilon": 0.5,
        "delta": 1e-6,
        "protects": "whether any one respondent answered 'yes'",
        "sensitivity": {"age": 2.0, "income": np.float64(0.5)},
        "noise": {"distribution": "laplace", "scale": np.float64(4.0), "k": None},
        "unit": "dependent-dp/answer",
        "assumptions": ("network learned from public data",),
    }
    fields.update(changes)
    return fields


@pytest.fixture
def record() -> PrivacyRecord:
    return PrivacyRecord(**_fields())


def test_fields_are_normalised(record: PrivacyRecord) -> None:
    assert record.epsilon == 0.5 and type(record.epsilon) is float
    assert record.sensitivity == {"age": 2.0, "income": 0.5}
    assert record.assumptions == ("network learned from public data",)
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.epsilon = 2.0  # type: ignore[misc]


def test_record_copies_its_mappings() -> None:
    noise = {"distribution": "laplace", "scale": 1.0}
    record = PrivacyRecord(**_fields(noise=noise, assumptions=["a"]))
    noise["scale"] = 100.0
    assert record.noise["scale"] == 1.0
    assert record.assumptions == ("a",)


UNITS = {
    "dp": "dp/substitute",
    "dependent-dp": "dependent-dp/answer",
    "attribute-privacy": "attribute-privacy/mean(age)",
    "pufferfish": "pufferfish/chain-state",
}


@pytest.mark.parametrize("definition", DEFINITIONS)
def test_every_definition_is_accepted(definition: str) -> None:
    record = PrivacyRecord(**_fields(definition=definition, unit=UNITS[definition]))
    assert record.definition == definition
    assert record.unit == PrivacyUnit.parse(UNITS[definition])


@pytest.mark.parametrize(
    ("unit", "match"),
    [
        ("dp/substitute", "not a unit of its definition 'dependent-dp'"),
        ("dependent-dp/row", "a dependent-dp unit is one 'answer'"),
        ("answer", "written definition/scope"),
        ("dependent-dp/ ", "must name its secret"),
    ],
)
def test_a_record_names_a_unit_of_its_definition(unit: str, match: str) -> None:
    with pytest.raises(InputError, match=match):
        PrivacyRecord(**_fields(unit=unit))


def test_a_record_without_a_unit_is_not_read() -> None:
    """An old record (before privacy units) is refused, never guessed."""
    old = PrivacyRecord(**_fields()).to_dict()
    del old["unit"]
    with pytest.raises(InputError, match=r"not a privacy record.*unit"):
        PrivacyRecord.from_dict(old)


def test_rho_is_checked_and_kept() -> None:
    assert PrivacyRecord(**_fields(rho=0.125)).rho == 0.125
    with pytest.raises(InputError, match="rho must be >= 0"):
        PrivacyRecord(**_fields(rho=-1.0))


@pytest.mark.parametrize(
    ("changes", "match"),
    [
        ({"definition": "renyi-dp"}, "definition must be one of"),
        ({"definition": "DP"}, "definition must be one of"),
        ({"epsilon": 0.0}, r"^epsilon must be > 0"),
        ({"epsilon": -1.0}, r"^epsilon must be > 0"),
        ({"epsilon": math.inf}, r"^epsilon must be a finite number"),
        ({"epsilon": math.nan}, r"^epsilon must be a finite number"),
        ({"epsilon": "1"}, r"^epsilon must be a finite number"),
        ({"delta": 1.0}, r"^delta must be in \[0, 1\)"),
        ({"delta": -1e-9}, r"^delta must be in \[0, 1\)"),
        ({"protects": ""}, "'protects' must say"),
        ({"protects": None}, "'protects' must say"),
        ({"mechanism": ""}, "mechanism must be a non-empty name"),
        ({"mechanism": 3}, "mechanism must be a non-empty name"),
        ({"sensitivity": -1.0}, r"^sensitivity must be >= 0"),
        ({"sensitivity": {"age": -0.1}}, r"^sensitivity\['age'\] must be >= 0"),
        ({"assumptions": "one sentence"}, "assumptions must be a sequence of strings"),
    ],
)
def test_bad_records_refused(changes: dict[str, Any], match: str) -> None:
    with pytest.raises(InputError, match=match):
        PrivacyRecord(**_fields(**changes))


def test_dict_round_trip_through_json(record: PrivacyRecord) -> None:
    as_dict = record.to_dict()
    text = json.dumps(as_dict)  # plain JSON: numpy scalars are gone
    assert PrivacyRecord.from_dict(json.loads(text)) == record
    assert PrivacyRecord.from_dict(as_dict) == record
    assert as_dict["assumptions"] == ["network learned from public data"]


def test_scalar_sensitivity_round_trip() -> None:
    record = PrivacyRecord(**_fields(sensitivity=1, assumptions=()))
    assert record.sensitivity == 1.0
    assert PrivacyRecord.from_dict(json.loads(json.dumps(record.to_dict()))) == record


@pytest.mark.parametrize(
    ("spec", "match"),
    [
        ({"mechanism": "x"}, "not a privacy record"),
        ({**_fields(), "colour": "red"}, "not a privacy record"),
        ({**_fields(), "epsilon": 0}, "epsilon must be > 0"),
        ({**_fields(), "assumptions": 3}, "not a privacy record"),
        (["mechanism", "x"], "must be a mapping, got list"),
    ],
)
def test_from_dict_refuses_bad_specs(spec: Any, match: str) -> None:
    with pytest.raises(InputError, match=match):
        PrivacyRecord.from_dict(spec)


@dataclasses.dataclass(frozen=True)
class _Facts(Diagnostics):
    scale: Any
    chunks: Any
    ok: Any
    hidden: Any = dataclasses.field(default=None, repr=False)


def test_release_to_dict_is_plain_json(record: PrivacyRecord) -> None:
    histogram = pd.Series(np.array([3, 5, 0], dtype=np.int64), index=["a", "b", "c"])
    release = Release(
        values={
            "means": np.array([1.5, np.float32(2.5)]),
            "counts": histogram,
            "matrix": np.eye(2),
            "by_code": pd.Series([0.25, 0.75], index=np.array([10, 20])),
            "table": pd.DataFrame({"x": np.arange(2), "y": [0.5, 1.5]}),
        },
        record=record,
        diagnostics=_Facts(np.float64(4.0), (np.int64(2), np.int64(3)), np.bool_(True)),
    )
    out = json.loads(json.dumps(release.to_dict(), allow_nan=False))
    assert out["values"]["means"] == [1.5, 2.5]
    assert out["values"]["counts"] == {"a": 3, "b": 5, "c": 0}
    assert out["values"]["matrix"] == [[1.0, 0.0], [0.0, 1.0]]
    assert out["values"]["by_code"] == {"10": 0.25, "20": 0.75}
    assert out["values"]["table"]["data"] == [[0, 0.5], [1, 1.5]]
    assert out["diagnostics"] == {"scale": 4.0, "chunks": [2, 3], "ok": True}
    assert PrivacyRecord.from_dict(out["record"]) == record


def test_release_of_a_bare_array() -> None:
    record = PrivacyRecord(**_fields())
    out = Release(np.arange(3) * 0.5, record).to_dict()
    assert json.loads(json.dumps(out))["values"] == [0.0, 0.5, 1.0]
    assert out["diagnostics"] == {}
