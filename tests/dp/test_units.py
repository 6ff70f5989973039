"""Privacy units: parsing, the proven conversions between them, and the composition rules."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from attrpriv.dp import PrivacyRecord
from attrpriv.dp.units import (
    ADD_REMOVE,
    BASIC_RULE,
    ONE_ANSWER,
    SUBSTITUTE,
    PrivacyUnit,
    charged,
    composition_rule,
    conversion,
    conversions,
    overlap,
)
from attrpriv.errors import InputError


# -- units --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "key",
    [
        "dp/add-remove",
        "dp/substitute",
        "dependent-dp/answer",
        "attribute-privacy/mean(y), var(y)",
        "pufferfish/state at each time",
    ],
)
def test_key_round_trips(key: str) -> None:
    unit = PrivacyUnit.parse(key)
    assert unit.key == str(unit) == key
    assert PrivacyUnit.coerce(key) == PrivacyUnit.coerce(unit) == unit
    assert PrivacyUnit.parse(key.replace("/", " / ", 1)) == unit  # surrounding spaces dropped


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("dp", "is written definition/scope"),
        ("", "is written definition/scope"),
        (None, "is written definition/scope"),
        ("renyi/row", "privacy definition must be one of"),
        ("dp/row", "a dp unit is one row under add-remove or substitute neighbours"),
        ("dependent-dp/row", "a dependent-dp unit is one 'answer'"),
        ("attribute-privacy/", "must name its secret"),
        ("pufferfish/  ", "must name its secret"),
    ],
)
def test_bad_units_are_refused_in_one_line_naming_the_parameter(text: Any, message: str) -> None:
    with pytest.raises(InputError, match=message) as info:
        PrivacyUnit.coerce(text, "--unit")
    assert str(info.value).startswith("--unit") and "\n" not in str(info.value)


def test_the_record_carries_its_unit() -> None:
    base: dict[str, Any] = {
        "mechanism": "m",
        "definition": "dp",
        "epsilon": 1.0,
        "delta": 0.0,
        "protects": "x",
        "sensitivity": 1.0,
        "noise": {},
    }
    record = PrivacyRecord(**base, unit="dp/substitute", rho=0.5)
    assert record.unit == SUBSTITUTE and record.to_dict()["unit"] == "dp/substitute"
    assert PrivacyRecord.from_dict(record.to_dict()) == record
    with pytest.raises(InputError, match="is not a unit of its definition 'dp'"):
        PrivacyRecord(**base, unit="dependent-dp/answer")


# -- conversions --------------------------------------------------------------------------------
def test_conversions_are_exactly_the_proven_ones() -> None:
    def targets(unit: PrivacyUnit) -> list[tuple[str, int]]:
        return [(c.target.key, c.group) for c in conversions(unit)]

    assert targets(ADD_REMOVE) == [
        ("dp/add-remove", 1),
        ("dp/substitute", 2),
        ("dependent-dp/answer", 2),
    ]
    assert targets(SUBSTITUTE) == [("dp/substitute", 1), ("dependent-dp/answer", 1)]
    assert targets(ONE_ANSWER) == [("dependent-dp/answer", 1)]
    for other in ("attribute-privacy/mean(y)", "pufferfish/x"):
        assert targets(PrivacyUnit.parse(other)) == [(other, 1)]
    # nothing converts back into add/remove or across to attribute privacy
    for unit in (SUBSTITUTE, ONE_ANSWER, PrivacyUnit.parse("pufferfish/x")):
        assert ADD_REMOVE not in {c.target for c in conversions(unit)}
    assert all(c.reference for unit in (ADD_REMOVE, SUBSTITUTE) for c in conversions(unit))


def test_group_conversion_numbers() -> None:
    to_substitute, to_answer = conversions(ADD_REMOVE)[1:]
    assert to_substitute.convert(0.5, 1e-6) == (1.0, 1e-6 * (1 + math.exp(0.5)))
    assert to_answer.convert(0.5, 0.0) == (1.0, 0.0)
    assert conversions(SUBSTITUTE)[1].convert(0.5, 1e-6) == (0.5, 1e-6)
    assert to_substitute.convert(800.0, 0.0) == (1600.0, 0.0)  # pure stays pure
    assert to_substitute.convert(800.0, 1e-9) == (1600.0, math.inf)  # vacuous, never admitted


def test_zcdp_is_carried_only_between_row_dp_units() -> None:
    own, to_substitute, to_answer = conversions(ADD_REMOVE)
    assert own.convert_rho(0.1) == 0.1
    assert to_substitute.convert_rho(0.1) == pytest.approx(0.4)  # k^2 rho, k = 2
    assert to_answer.convert_rho(0.1) is None
    assert conversions(SUBSTITUTE)[1].convert_rho(0.1) is None


@given(
    epsilon=st.floats(0.01, 5.0),
    delta=st.floats(0.0, 1e-3),
    p=st.floats(0.0, 1.0),
)
def test_group_bound_is_two_add_remove_steps(epsilon: float, delta: float, p: float) -> None:
    """Chaining P[M(x) in S] <= e^eps P[M(y) in S] + delta twice gives the converted bound."""
    eps2, delta2 = conversions(ADD_REMOVE)[1].convert(epsilon, delta)
    two_steps = math.exp(epsilon) * (math.exp(epsilon) * p + delta) + delta
    assert two_steps == pytest.approx(math.exp(eps2) * p + delta2, rel=1e-12, abs=1e-300)


@given(epsilon=st.floats(0.05, 3.0), first=st.integers(1, 20), second=st.integers(0, 20))
def test_substitution_costs_a_laplace_histogram_exactly_twice(
    epsilon: float, first: int, second: int
) -> None:
    """The conversion is tight for histograms: a substitution moves one count out of a bin and
    into another (adding or removing a row moves only one), so the worst privacy loss of
    Laplace(1/epsilon) noise on the counts is 2 epsilon. Other bins cancel out of the ratio."""
    x, y = np.array([first, second], float), np.array([first - 1, second + 1], float)
    grid = np.linspace(-10.0, 40.0, 501)
    z = np.stack(np.meshgrid(grid, grid), axis=-1)  # outputs of the two changed bins
    loss = epsilon * (np.abs(z - y).sum(axis=-1) - np.abs(z - x).sum(axis=-1))  # ln p(z|x)/p(z|y)
    assert loss.max() == pytest.approx(2 * epsilon)
    assert conversions(ADD_REMOVE)[1].convert(epsilon, 0.0)[0] == 2 * epsilon


def test_part_of_a_row_is_its_own_unit_implied_by_the_whole_row() -> None:
    """A release that changes only part of each record (the rest released as it is) protects
    that part only: whole-row guarantees imply it, it implies nothing about whole rows."""
    part = PrivacyUnit.parse("dp/substitute:z_S,y_S")
    assert part.parts == {"z_S", "y_S"}
    assert conversion(SUBSTITUTE, part) is not None and conversion(SUBSTITUTE, part).group == 1
    assert conversion(ADD_REMOVE, part) is not None and conversion(ADD_REMOVE, part).group == 2
    smaller = PrivacyUnit.parse("dp/substitute:z_S")
    assert conversion(part, smaller) is not None and conversion(smaller, part) is None
    for whole in (SUBSTITUTE, ADD_REMOVE, ONE_ANSWER):
        assert conversion(part, whole) is None
    with pytest.raises(InputError, match="substitute:<columns>"):
        PrivacyUnit.parse("dp/substitute:")


def test_units_that_share_columns_overlap_on_exactly_those() -> None:
    """A neighbour that changes only the shared columns of one row is a neighbour of both
    units: the charge counts in the other unit, guaranteeing those columns only."""
    sex_occ = PrivacyUnit.parse("dp/substitute:sex,occupation")
    sex_edu = PrivacyUnit.parse("dp/substitute:sex,education")
    found = overlap(sex_occ, sex_edu)
    assert found is not None and found.covers == {"sex"} and not found.proven
    assert found.group == 1 and found.convert(0.8, 1e-6) == (0.8, 1e-6)
    assert overlap(sex_occ, PrivacyUnit.parse("dp/substitute:race")) is None  # disjoint
    for whole in (SUBSTITUTE, ADD_REMOVE):  # the whole row holds every column
        into_row = overlap(sex_occ, whole)
        assert into_row is not None and into_row.covers == {"sex", "occupation"}
        assert overlap(whole, sex_occ) is None  # that is a proven conversion instead
        assert charged(whole, sex_occ) == conversion(whole, sex_occ)
    assert overlap(SUBSTITUTE, ADD_REMOVE) is None and overlap(ADD_REMOVE, SUBSTITUTE) is None
    sex = PrivacyUnit.parse("dp/substitute:sex")
    assert overlap(sex_occ, sex) is None and charged(sex_occ, sex) == conversion(sex_occ, sex)
    found_back = overlap(sex, sex_occ)  # a smaller part into a larger one: an overlap
    assert found_back is not None and found_back.covers == {"sex"}
    assert overlap(sex_occ, ONE_ANSWER) is None  # other definitions stay apart
    record = PrivacyUnit.parse("pufferfish/record:sex,race")
    assert overlap(record, PrivacyUnit.parse("pufferfish/record:sex,age")) is None
    assert conversion(sex_occ, sex_edu) is None and conversion(sex_occ, sex).proven


def test_a_model_fingerprint_and_a_subset_of_secrets_convert_to_the_collecting_unit() -> None:
    ddp = PrivacyUnit.parse("dependent-dp/answer@3f2a9c1d")
    assert ddp.base == "answer" and ddp.model == "3f2a9c1d"
    assert conversion(ddp, ONE_ANSWER) is not None and conversion(ONE_ANSWER, ddp) is None
    assert conversion(SUBSTITUTE, ddp) is not None  # row DP holds whatever the model
    both = PrivacyUnit.parse("attribute-privacy/mean(x),share(y=1)")
    one = PrivacyUnit.parse("attribute-privacy/mean(x)")
    assert conversion(both, one) is not None and conversion(one, both) is None
    record = PrivacyUnit.parse("pufferfish/record:sex,race")
    assert conversion(record, PrivacyUnit.parse("pufferfish/record:sex")) is not None
    assert conversion(record, PrivacyUnit.parse("pufferfish/sex")) is None


# -- composition rules --------------------------------------------------------------------------
def test_composition_rules_say_what_is_proven() -> None:
    assert composition_rule(ADD_REMOVE, frozenset({ADD_REMOVE}), frozenset({"laplace"})) == (
        BASIC_RULE,
        True,
    )
    one = frozenset({PrivacyUnit.parse("dependent-dp/answer@aaaa"), SUBSTITUTE})
    rule, proven = composition_rule(ONE_ANSWER, one, frozenset({"tabular-ddp"}))
    assert proven and "Liu, Chakraborty & Mittal, NDSS 2016" in rule
    two = one | {PrivacyUnit.parse("dependent-dp/answer@bbbb")}
    rule, proven = composition_rule(ONE_ANSWER, two, frozenset({"tabular-ddp"}))
    assert not proven and "2 different dependence models" in rule
    quilt = PrivacyUnit.parse("pufferfish/state at each time")
    mqm = frozenset({"markov-quilt-exact", "markov-quilt-approx"})
    rule, proven = composition_rule(quilt, frozenset({quilt}), mqm)
    assert proven and "Song & Chaudhuri" in rule
    thetas = frozenset(
        {
            PrivacyUnit.parse("pufferfish/chain-state@1"),
            PrivacyUnit.parse("pufferfish/chain-state@2"),
        }
    )
    assert not composition_rule(PrivacyUnit.parse("pufferfish/chain-state"), thetas, mqm)[1]
    for unit, mechanisms in (
        (quilt, frozenset({"markov-quilt-exact", "attribute-markov-quilt"})),
        (quilt, frozenset()),
        (PrivacyUnit.parse("attribute-privacy/mean(y)"), frozenset({"attribute-gaussian"})),
    ):
        rule, proven = composition_rule(unit, frozenset({unit}), mechanisms)
        assert not proven and "accounting convention" in rule
        assert "Kifer & Machanavajjhala 2014" in rule and "Bai, He, Gu, Kifer & Maeng 2026" in rule
