"""Tabular-DDP's structural tier: the loss of one answer, exactly, for every law in its class.

The class: the modules are independent of one another, any law inside each. For laws built as
hostile as possible inside it (every answer of a module copying one, a rare value that fixes
the rest, a parity, many weak links that add up), every output corner is enumerated
(``exact_loss``): the loss of each answer is at most epsilon, and at most the record's "any"
epsilon for laws outside the class (modules linked). A variant that scales each histogram as
if its question were alone (``2 / epsilon``) is caught. The scales are computed from public
inputs only: changing private rows changes no scale.
"""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from test_ddp_exact import exact_loss

from attrpriv import Column, Integer, Schema
from attrpriv.dp import ANY_LAW, BudgetLedger
from attrpriv.errors import InputError
from attrpriv.release.ddp import SurveyFacts
from attrpriv.release.ddp.modules import ModularDDP, ModulePlan, learn_modules
from attrpriv.release.graph.learning import column_levels, encode
from attrpriv.release.graph.network import DiscreteNetwork

FAIR = np.array([0.5, 0.5])


def _same(keep: float) -> np.ndarray:
    return np.array([[keep, 1 - keep], [1 - keep, keep]])


def product(*blocks: dict[str, object]) -> DiscreteNetwork:
    """Independent modules: each block gives its nodes' parents and CPDs (names distinct)."""
    parents: dict[str, tuple[str, ...]] = {}
    cpds: dict[str, np.ndarray] = {}
    for block in blocks:
        parents.update(block["parents"])  # type: ignore[arg-type]
        cpds.update(block["cpds"])  # type: ignore[arg-type]
    return DiscreteNetwork(dict.fromkeys(cpds, (0, 1)), parents, cpds)


def copies(names: list[str], keep: float = 0.9999) -> dict[str, object]:
    head, *rest = names
    return {
        "parents": {n: (head,) for n in rest},
        "cpds": {head: FAIR, **{n: _same(keep) for n in rest}},
    }


def rare(names: list[str]) -> dict[str, object]:
    head, *rest = names
    fixed = np.array([[0.5, 0.5], [0.0, 1.0]])
    return {"parents": {n: (head,) for n in rest},
            "cpds": {head: np.array([0.995, 0.005]), **{n: fixed for n in rest}}}  # fmt: skip


def parity3(names: list[str]) -> dict[str, object]:
    a, b, c = names
    table = np.zeros((2, 2, 2))
    for x, y in itertools.product((0, 1), repeat=2):
        table[x, y, x ^ y], table[x, y, 1 - (x ^ y)] = 0.99, 0.01
    return {"parents": {c: (a, b)}, "cpds": {a: FAIR, b: FAIR, c: table}}


def weak_chain(names: list[str], keep: float = 0.55) -> dict[str, object]:
    return {"parents": {names[k]: (names[k - 1],) for k in range(1, len(names))},
            "cpds": {names[0]: FAIR, **{n: _same(keep) for n in names[1:]}}}  # fmt: skip


LAWS = {
    "copies + parity": (product(copies(["a", "b", "c"]), parity3(["d", "e", "f"])),
                        [["a", "b", "c"], ["d", "e", "f"]]),
    "rare + weak chain": (product(rare(["a", "b", "c", "d"]), weak_chain(["e", "f", "g"])),
                          [["a", "b", "c", "d"], ["e", "f", "g"]]),
    "three modules": (product(copies(["a", "b"]), weak_chain(["c", "d", "e"]), rare(["f", "g"])),
                      [["a", "b"], ["c", "d", "e"], ["f", "g"]]),
}  # fmt: skip


def _plan(modules: list[list[str]], epsilon: float) -> ModulePlan:
    names = [c for m in modules for c in m]
    schema = Schema(tuple(Column(c, "feature", Integer(0, 1)) for c in names))
    return ModularDDP(epsilon, modules).calibrate(SurveyFacts(schema))


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 2.0])
@pytest.mark.parametrize("name", LAWS)
def test_every_answer_loses_at_most_epsilon_for_laws_in_the_class(
    name: str, epsilon: float
) -> None:
    network, modules = LAWS[name]
    scales = _plan(modules, epsilon).scales()
    for node in network.nodes:
        assert exact_loss(network, node, scales) <= epsilon + 1e-9


def test_a_module_of_copies_reaches_epsilon_and_per_question_scales_are_caught() -> None:
    network, modules = LAWS["copies + parity"]
    scales = _plan(modules, 1.0).scales()
    assert exact_loss(network, "a", scales) == pytest.approx(1.0, abs=1e-3)  # tight
    broken = dict.fromkeys(scales, 2.0 / 1.0)  # each question as if alone
    assert exact_loss(network, "a", broken) > 2.5


def test_linked_modules_are_outside_the_class_and_the_any_law_bound_still_holds() -> None:
    linked = DiscreteNetwork(
        dict.fromkeys("abcd", (0, 1)),
        {"b": ("a",), "c": ("b",), "d": ("c",)},  # the modules {a, b} and {c, d} are linked
        {"a": FAIR, "b": _same(0.999), "c": _same(0.999), "d": _same(0.999)},
    )
    plan = _plan([["a", "b"], ["c", "d"]], 1.0)
    scales = plan.scales()
    record = ModularDDP(1.0, [["a", "b"], ["c", "d"]]).record(plan)
    unconditional = record.guarantees[1]
    assert unconditional.laws == ANY_LAW and unconditional.epsilon == pytest.approx(2.0)
    loss = exact_loss(linked, "a", scales)
    assert 1.0 < loss <= unconditional.epsilon + 1e-9  # the class's claim fails, the other holds


def _survey(n: int, seed: int) -> tuple[pd.DataFrame, Schema]:
    network, _ = LAWS["three modules"]
    rows = network.sample(n, np.random.default_rng(seed))
    schema = Schema(tuple(Column(c, "feature", Integer(0, 1)) for c in network.nodes))
    return pd.DataFrame(rows), schema


def test_the_scales_come_from_public_inputs_only() -> None:
    """A release of other private rows (or one row changed) has the same modules and scales;
    the record states both guarantees and the unit names the modules."""
    frame, schema = _survey(400, 1)
    mechanism = ModularDDP(1.0, [["a", "b"], ["c", "d", "e"]])
    first = mechanism.release(frame, schema)
    changed = frame.copy()
    changed.loc[0] = 1 - changed.loc[0]
    second = mechanism.release(changed, schema)
    assert first.diagnostics.scales == second.diagnostics.scales == {
        "a": 4.0, "b": 4.0, "c": 6.0, "d": 6.0, "e": 6.0, "f": 4.0, "g": 4.0
    }  # fmt: skip
    assert first.diagnostics.modules == (("a", "b"), ("c", "d", "e"), ("f", "g"))  # the rest
    assert first.record.unit == second.record.unit and first.record.unit.model
    assert [g.epsilon for g in first.record.guarantees] == [1.0, pytest.approx(3.0)]
    assert first.diagnostics.gain == pytest.approx((2 * 7) / (34 / 7))  # Laplace 2m/eps vs mean


def test_modules_learned_from_public_rows_find_the_planted_ones_but_not_a_rare_link() -> None:
    """2,000 public rows find the modules {a, b} and {c, d, e}; the link of g to a value of f
    held by 0.5% of rows (about 10 rows) is not detected, so f and g come out as modules of
    their own: the record's class of laws then says so, and its "any" guarantee is the one that
    covers the rare link (no finite sample can certify such a dependence absent)."""
    aux, schema = _survey(2000, 2)
    levels = column_levels(schema, list(aux.columns))
    found = learn_modules(encode(aux, levels), levels, 0.05)
    assert found == (("a", "b"), ("c", "d", "e"), ("f",), ("g",))
    private, _ = _survey(300, 3)
    result = ModularDDP(1.0, "aux", aux=aux).release(private, schema)
    assert result.diagnostics.modules == (("a", "b"), ("c", "d", "e"), ("f",), ("g",))
    assert result.diagnostics.modules_from == "auxiliary rows (2,000)"
    conditional, unconditional = result.record.guarantees
    assert "{f}; {g} are independent of one another" in conditional.laws
    network, _ = LAWS["three modules"]
    assert exact_loss(network, "f", result.diagnostics.scales) <= unconditional.epsilon


@pytest.mark.parametrize(
    ("modules", "aux", "message"),
    [
        ([["a", "a"]], None, "repeated"),
        ([["a"], ["zz"]], None, "'zz', which is not a released column"),
        ("magic", None, "modules must be lists of columns or 'aux'"),
        ("aux", None, "learns the modules from aux="),
    ],
)
def test_bad_modules_are_refused(modules: object, aux: object, message: str) -> None:
    frame, schema = _survey(50, 4)
    with pytest.raises(InputError, match=message):
        ModularDDP(1.0, modules, aux=aux).release(frame, schema)  # type: ignore[arg-type]


def test_the_release_is_charged_as_one_answer_under_its_modules(tmp_path) -> None:
    frame, schema = _survey(200, 5)
    ledger = BudgetLedger(tmp_path / "m.ledger")
    ledger.set_budget(1.5, unit="dependent-dp/answer")
    mechanism = ModularDDP(1.0, [["a", "b"]])
    mechanism.release(frame, schema, ledger=ledger)
    with pytest.raises(InputError, match="would exceed the budget"):
        mechanism.release(frame, schema, ledger=ledger)
    assert len(ledger.entries()) == 1


def test_no_modules_is_row_level_laplace_with_one_guarantee_for_any_law() -> None:
    """The default with only the data: one module, the substitution Laplace scale, and a
    record that names no class (its one guarantee holds for any law), checked exactly on a
    law where every answer copies one."""
    data, schema = _survey(400, 2)
    result = ModularDDP(1.0, []).release(data, schema)
    record, m = result.record, len(schema.names)
    assert [g.laws for g in record.guarantees] == [ANY_LAW]
    assert set(record.noise["scale"].values()) == {2.0 * m / 1.0}
    assert result.diagnostics.gain == pytest.approx(1.0)
    network = product(copies([f"x{k}" for k in range(4)]))
    assert max(exact_loss(network, c, 2.0 * 4) for c in network.nodes) <= 1.0 + 1e-9
