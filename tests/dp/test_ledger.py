"""Budget ledger: per-unit budgets and composition, conversions, zCDP, the budget history,
refusals, damaged and old files, concurrent writers and crashes mid-write."""

from __future__ import annotations

import json
import math
import multiprocessing
import os
import sqlite3
import tempfile
from contextlib import closing
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from closed_forms import kov_epsilon, renyi_epsilon
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import brentq

from attrpriv.cli import main
from attrpriv.dp import BudgetLedger, PrivacyRecord
from attrpriv.dp import ledger as ledger_module
from attrpriv.dp.units import PrivacyUnit, conversions
from attrpriv.errors import BudgetExceededError, InputError, LedgerError

# fork is quick (no re-import); spawn is the portable fallback. Children only use SQLite.
START = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
INSERT = (
    "INSERT INTO releases (created, label, unit, mechanism, definition, epsilon, delta, rho, "
    "budgeted, record) VALUES ('2000-01-01T00:00:00+00:00', ?, 'dp/add-remove', 'ghost', 'dp', "
    "?, 0.0, NULL, 1, ?)"
)
ATTRIBUTE = "attribute-privacy/mean(y)"
V1_DDL = """
CREATE TABLE budget (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    epsilon REAL NOT NULL CHECK (epsilon > 0),
    delta REAL NOT NULL CHECK (delta >= 0 AND delta < 1)
);
CREATE TABLE releases (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created TEXT NOT NULL,
    label TEXT NOT NULL,
    mechanism TEXT NOT NULL,
    definition TEXT NOT NULL,
    epsilon REAL NOT NULL CHECK (epsilon > 0),
    delta REAL NOT NULL CHECK (delta >= 0 AND delta < 1),
    record TEXT NOT NULL
);
"""


def _record(
    epsilon: float = 0.1,
    delta: float = 0.0,
    mechanism: str = "laplace",
    unit: str = "dp/add-remove",
    rho: float | None = None,
) -> PrivacyRecord:
    return PrivacyRecord(
        mechanism=mechanism,
        definition=unit.split("/", 1)[0],
        epsilon=epsilon,
        delta=delta,
        protects="whether one person is in the data",
        sensitivity=1.0,
        noise={"distribution": "laplace", "scale": 1.0 / epsilon},
        unit=unit,
        rho=rho,
    )


def _gaussian(rho: float, delta: float, unit: str = "dp/add-remove") -> PrivacyRecord:
    """A Gaussian release's record: rho-zCDP, stated as (epsilon, delta) by Proposition 1.3."""
    epsilon = rho + 2 * math.sqrt(rho * math.log(1 / delta))
    return _record(epsilon, delta, mechanism="gaussian", unit=unit, rho=rho)


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "budget" / "ledger.db"


@pytest.fixture
def ledger(path: Path) -> BudgetLedger:
    return BudgetLedger(path)


def _labels(ledger: BudgetLedger) -> list[str]:
    return [entry.label for entry in ledger.entries()]


def _spent(ledger: BudgetLedger, unit: str = "dp/add-remove") -> float:
    return ledger.summary().unit(unit).spent.epsilon


def _raw(path: Path) -> closing[sqlite3.Connection]:
    """A raw autocommit connection to a ledger file, closed on exit."""
    return closing(sqlite3.connect(path, isolation_level=None))


def _one_line_naming(exc: pytest.ExceptionInfo[Exception], path: Path) -> None:
    message = str(exc.value)
    assert str(path) in message
    assert "\n" not in message


# -- charging -----------------------------------------------------------------------------------
def test_new_ledger_is_empty(ledger: BudgetLedger, path: Path) -> None:
    summary = ledger.summary()
    assert path.exists()
    assert summary.units == () and summary.unbudgeted == () and summary.history == ()
    assert summary.n_releases == 0
    assert ledger.entries() == [] and ledger.budgets() == {}


def test_charge_without_budget_is_refused_with_the_command_to_fix_it(
    ledger: BudgetLedger, path: Path
) -> None:
    with pytest.raises(BudgetExceededError, match="unit 'dp/add-remove' has no budget") as info:
        ledger.charge(_record())
    _one_line_naming(info, path)
    assert f"attrpriv budget set --ledger {path} --unit dp/add-remove --epsilon E" in str(
        info.value
    )
    assert ledger.summary().n_releases == 0


def test_unbudgeted_unit_is_refused_or_recorded_as_unbudgeted(
    ledger: BudgetLedger, path: Path
) -> None:
    ledger.set_budget(1.0)  # dp/add-remove: says nothing about substitution or attributes
    with pytest.raises(BudgetExceededError, match="unit 'dp/substitute' has no budget") as info:
        ledger.charge(_record(0.5, unit="dp/substitute"))
    assert "nor any unit it implies (dependent-dp/answer)" in str(info.value)
    assert "--unit dp/substitute --epsilon E" in str(info.value)
    with pytest.raises(BudgetExceededError, match=r"unit 'attribute-privacy/mean\(y\)' has no"):
        ledger.charge(_record(0.5, unit=ATTRIBUTE))
    assert ledger.entries() == []

    entry = ledger.charge(_record(0.5, unit="dp/substitute"), "s", allow_unbudgeted=True)
    assert not entry.budgeted
    ledger.charge(_record(0.25), "a")
    summary = ledger.summary()
    assert summary.unbudgeted == ("dp/substitute",)
    row = summary.unit("dp/substitute")
    assert row.budget is None and row.remaining is None and row.covered_by == ()
    assert row.spent.epsilon == 1.0  # its own 0.5, and the add/remove 0.25 counted twice
    assert (row.n_direct, row.n_converted) == (1, 1)
    # a substitution guarantee implies nothing about add/remove: not counted there
    assert summary.unit("dp/add-remove").spent.epsilon == 0.25
    assert [e.budgeted for e in ledger.entries()] == [False, True]
    with pytest.raises(InputError, match="allow_unbudgeted must be True or False"):
        ledger.charge(_record(), allow_unbudgeted="yes")  # type: ignore[arg-type]


def test_allow_unbudgeted_does_not_bypass_a_budget_that_covers_the_unit(
    ledger: BudgetLedger,
) -> None:
    ledger.set_budget(1.0, unit="dp/substitute")
    ledger.charge(_record(0.4), allow_unbudgeted=True)  # counted as 0.8 in dp/substitute
    with pytest.raises(BudgetExceededError, match="would exceed the budget of unit"):
        ledger.charge(_record(0.2), allow_unbudgeted=True)
    assert ledger.summary().unbudgeted == ()  # covered by dp/substitute


def test_ten_tenths_fit_exactly_and_the_eleventh_is_refused(ledger: BudgetLedger) -> None:
    ledger.set_budget(1.0)
    for i in range(10):
        ledger.charge(_record(0.1), label=f"q{i}")
    with pytest.raises(
        BudgetExceededError,
        match=r"would exceed the budget of unit 'dp/add-remove': spent epsilon=1, delta=0 by "
        r"basic composition, of epsilon=1, delta=0",
    ):
        ledger.charge(_record(0.1), label="one too many")
    row = ledger.summary().unit("dp/add-remove")
    assert row.n_direct == 10 and row.n_converted == 0
    assert row.spent.epsilon == pytest.approx(1.0, abs=1e-12)
    assert row.remaining is not None and row.remaining.epsilon == pytest.approx(0, abs=1e-12)
    assert "one too many" not in _labels(ledger)
    # a refused charge leaves nothing behind, and a smaller one still does not fit
    with pytest.raises(BudgetExceededError):
        ledger.charge(_record(1e-6))


def test_delta_is_budgeted_too(ledger: BudgetLedger) -> None:
    ledger.set_budget(2.0, delta=1e-5)
    ledger.charge(_record(0.5, delta=1e-5))
    with pytest.raises(BudgetExceededError, match=r"delta=1e-05 by basic composition"):
        ledger.charge(_record(0.5, delta=1e-7))
    ledger.charge(_record(0.5, delta=0.0))  # pure epsilon still fits
    spent = ledger.summary().unit("dp/add-remove").spent
    assert (spent.epsilon, spent.delta) == (1.0, 1e-5)


def test_charge_needs_a_record(ledger: BudgetLedger) -> None:
    ledger.set_budget(1.0)
    with pytest.raises(LedgerError, match="can only charge a PrivacyRecord, got dict"):
        ledger.charge(_record().to_dict())  # type: ignore[arg-type]
    with pytest.raises(InputError, match="label must be a string"):
        ledger.charge(_record(), label=3)  # type: ignore[arg-type]


def test_entries_round_trip_and_persist(ledger: BudgetLedger, path: Path) -> None:
    ledger.set_budget(5.0, 1e-3)
    ledger.set_budget(1.0, unit=ATTRIBUTE)
    records = [
        _record(0.5, mechanism="a"),
        _record(1.0, 1e-4, mechanism="b", rho=0.1),
        _record(0.25, unit=ATTRIBUTE),
    ]
    charged = [ledger.charge(r, label=f"release {i}") for i, r in enumerate(records)]
    reopened = BudgetLedger(path, create=False)
    entries = reopened.entries()
    assert [e.record for e in entries] == records
    assert [e.record.unit.key for e in entries] == ["dp/add-remove", "dp/add-remove", ATTRIBUTE]
    assert [e.label for e in entries] == ["release 0", "release 1", "release 2"]
    assert entries[0].id < entries[1].id < entries[2].id
    assert entries == charged
    assert datetime.fromisoformat(entries[0].created).tzinfo is not None
    summary = reopened.summary()
    assert summary.unit("dp/add-remove").spent == ledger_module.Budget(1.5, 1e-4)
    assert summary.unit(PrivacyUnit.parse(ATTRIBUTE)).spent.epsilon == 0.25
    payload = json.loads(json.dumps(summary.to_dict()))
    assert payload["n_releases"] == 3
    assert [u["unit"] for u in payload["units"]] == ["dp/add-remove", ATTRIBUTE]
    with pytest.raises(InputError, match="unit 'dp/substitute' has neither a budget nor charges"):
        summary.unit("dp/substitute")


# -- units are composed separately, conversions are applied ---------------------------------------
def test_dp_and_attribute_privacy_are_reported_separately_and_never_summed(
    ledger: BudgetLedger,
) -> None:
    ledger.set_budget(1.0)
    ledger.set_budget(1.0, unit=ATTRIBUTE)
    ledger.charge(_record(0.8), "dp histogram")
    ledger.charge(_record(0.8, mechanism="attribute-private-gaussian", unit=ATTRIBUTE), "attr")
    # each fits its own budget although together they would exceed either
    summary = ledger.summary()
    dp, attribute = summary.unit("dp/add-remove"), summary.unit(ATTRIBUTE)
    assert (dp.spent.epsilon, dp.n_direct, dp.n_converted) == (0.8, 1, 0)
    assert (attribute.spent.epsilon, attribute.n_direct, attribute.n_converted) == (0.8, 1, 0)
    assert dp.converted_from == () and attribute.converted_from == ()
    assert dp.proven and dp.rule.startswith("basic sequential composition")
    assert not attribute.proven and "accounting convention" in attribute.rule
    assert "Kifer & Machanavajjhala 2014" in attribute.rule
    payload = summary.to_dict()
    assert "spent" not in payload and "budget" not in payload  # no ledger-wide total
    assert sorted(u["spent"]["epsilon"] for u in payload["units"]) == [0.8, 0.8]
    # spend in one unit does not use up the other
    with pytest.raises(BudgetExceededError, match="budget of unit 'dp/add-remove'"):
        ledger.charge(_record(0.3))
    ledger.charge(_record(0.2, unit=ATTRIBUTE))
    assert _spent(ledger, ATTRIBUTE) == pytest.approx(1.0) and _spent(ledger) == 0.8


def test_add_remove_counts_twice_in_a_substitution_budget(ledger: BudgetLedger) -> None:
    ledger.set_budget(1.0, 1e-5, unit="dp/substitute")
    ledger.charge(_record(0.25, 1e-6))  # dp/add-remove: (0.5, 1e-6 (1 + e^0.25)) in substitute
    ledger.charge(_record(0.5, unit="dp/substitute"))
    row = ledger.summary().unit("dp/substitute")
    assert row.spent.epsilon == 1.0
    assert row.spent.delta == 1e-6 * (1 + math.exp(0.25))
    assert (row.n_direct, row.n_converted, row.converted_from) == (1, 1, ("dp/add-remove",))
    # the add/remove charge is itself unbudgeted in its own unit, but covered by the conversion
    assert ledger.summary().unit("dp/add-remove").covered_by == ("dp/substitute",)
    assert ledger.summary().unbudgeted == ()
    with pytest.raises(
        BudgetExceededError,
        match=r"\(dp/add-remove, epsilon=0\.01, delta=0, counted there as epsilon=0\.02, "
        r"delta=0\) would exceed the budget of unit 'dp/substitute'",
    ):
        ledger.charge(_record(0.01))


def test_substitution_counts_once_per_answer_and_add_remove_twice(ledger: BudgetLedger) -> None:
    ledger.set_budget(2.0, unit="dependent-dp/answer")
    ledger.charge(_record(0.5, unit="dp/substitute"))
    ledger.charge(_record(0.25))  # add/remove: 0.5 per answer
    ledger.charge(_record(0.75, mechanism="tabular-ddp", unit="dependent-dp/answer"))
    row = ledger.summary().unit("dependent-dp/answer")
    assert row.spent.epsilon == 1.75
    assert (row.n_direct, row.n_converted) == (1, 2)
    assert row.converted_from == ("dp/add-remove", "dp/substitute")
    assert row.proven and "Liu, Chakraborty & Mittal" in row.rule
    with pytest.raises(BudgetExceededError, match=r"counted there as epsilon=0\.6"):
        ledger.charge(_record(0.3))
    ledger.charge(_record(0.25, unit="dp/substitute"))
    assert ledger.summary().unit("dependent-dp/answer").spent.epsilon == 2.0


def test_a_charge_must_fit_every_budget_it_counts_against(ledger: BudgetLedger) -> None:
    ledger.set_budget(1.0)
    ledger.set_budget(1.0, unit="dp/substitute")
    ledger.charge(_record(0.5))  # 0.5 of add/remove, 1.0 of substitution
    with pytest.raises(BudgetExceededError, match="budget of unit 'dp/substitute'"):
        ledger.charge(_record(0.1))  # would still fit dp/add-remove
    assert _spent(ledger) == 0.5
    assert ledger.summary().unit("dp/add-remove").covered_by == ("dp/add-remove", "dp/substitute")


def test_pufferfish_units_use_their_own_rule(ledger: BudgetLedger) -> None:
    quilt, other = "pufferfish/state at each time", "pufferfish/x"
    ledger.set_budget(2.0, unit=quilt)
    ledger.set_budget(2.0, unit=other)
    ledger.charge(_record(0.5, mechanism="markov-quilt-exact", unit=quilt))
    ledger.charge(_record(0.5, mechanism="markov-quilt-approx", unit=quilt))
    ledger.charge(_record(0.5, mechanism="markov-quilt-exact", unit=other))
    ledger.charge(_record(0.5, mechanism="attribute-markov-quilt", unit=other))
    summary = ledger.summary()
    assert summary.unit(quilt).proven and "Song & Chaudhuri" in summary.unit(quilt).rule
    assert not summary.unit(other).proven and "Bai, He, Gu, Kifer & Maeng 2026" in (
        summary.unit(other).rule
    )
    assert summary.unit(quilt).spent.epsilon == summary.unit(other).spent.epsilon == 1.0
    assert summary.unit(quilt).rho is None  # zCDP is only carried for row-level DP


# -- zCDP -----------------------------------------------------------------------------------
def _rho_budget(epsilon: float, delta: float) -> float:
    """The largest rho whose tight conversion (the Renyi closed form, minimised over every
    order) is <= epsilon at delta."""
    return float(brentq(lambda rho: renyi_epsilon(rho, delta) - epsilon, 1e-12, epsilon))


def test_zcdp_admits_many_small_gaussian_releases_that_basic_composition_refuses(
    tmp_path: Path,
) -> None:
    rho, delta, budget = 0.001, 1e-6, (3.0, 1e-5)
    gaussian = _gaussian(rho, delta)
    same_without_rho = _record(gaussian.epsilon, delta, "gaussian")  # no zCDP bound
    with_rho, without = BudgetLedger(tmp_path / "zcdp.db"), BudgetLedger(tmp_path / "basic.db")

    def fill(book: BudgetLedger, record: PrivacyRecord) -> int:
        book.set_budget(*budget)
        count = 0
        while True:
            try:
                book.charge(record)
            except BudgetExceededError:
                return count
            count += 1

    assert fill(without, same_without_rho) == 10  # ten deltas of 1e-6 fill the budget's 1e-5
    expected = math.floor(_rho_budget(*budget) / rho)
    # 224 by the tight conversion; Bun & Steinke's rho + 2 sqrt(rho ln 1/delta) stopped at 173
    assert expected == 224 and fill(with_rho, gaussian) == expected

    row = with_rho.summary().unit("dp/add-remove")
    total = math.fsum([rho] * expected)
    assert row.rho == total
    assert row.zcdp_epsilon == pytest.approx(renyi_epsilon(total, budget[1]), rel=1e-4)
    assert row.zcdp_epsilon < total + 2 * math.sqrt(total * math.log(1 / budget[1]))
    assert row.pld_epsilon is None  # 224 deltas of 1e-6 exceed the budget's delta
    assert row.accounting == "zcdp" and row.used == ledger_module.Budget(row.zcdp_epsilon, 1e-5)
    assert row.spent.epsilon == math.fsum([gaussian.epsilon] * expected)  # both shown
    assert row.spent.epsilon > 50 and row.spent.delta == pytest.approx(224e-6)
    assert row.remaining == ledger_module.Budget(3.0 - row.zcdp_epsilon, 0.0)
    assert "zCDP composition" in row.rule and "dp_accounting RDP" in row.rule
    assert without.summary().unit("dp/add-remove").rho is None  # no bound for delta > 0


def test_pure_epsilon_charges_compose_optimally(ledger: BudgetLedger) -> None:
    """Pure charges of 0.05 against (1, 1e-6): basic composition stops at 20, zCDP (each
    epsilon^2/2) at 19, privacy-loss distributions at the exact optimum of Kairouz, Oh &
    Viswanath's closed form (26)."""
    ledger.set_budget(1.0, 1e-6)
    count = 0
    with pytest.raises(BudgetExceededError, match="by privacy-loss distributions"):
        while True:
            ledger.charge(_record(0.05))
            count += 1
    optimum = max(k for k in range(1, 200) if kov_epsilon(k, 0.05, 1e-6) <= 1.0)
    assert math.floor(_rho_budget(1.0, 1e-6) / (0.05**2 / 2)) == 19
    assert count == optimum == 26
    row = ledger.summary().unit("dp/add-remove")
    assert row.rho == pytest.approx(count * 0.05**2 / 2) and row.accounting == "pld"
    assert row.pld_epsilon == pytest.approx(kov_epsilon(count, 0.05, 1e-6), abs=2e-3)
    assert row.spent.epsilon == pytest.approx(count * 0.05)
    assert "Kairouz, Oh & Viswanath" in row.rule


def test_basic_is_used_while_it_is_smaller_and_zcdp_needs_a_budget_delta(
    ledger: BudgetLedger,
) -> None:
    ledger.set_budget(10.0, 1e-6)
    ledger.charge(_record(1.0))
    row = ledger.summary().unit("dp/add-remove")
    assert row.rho == 0.5 and row.zcdp_epsilon == pytest.approx(renyi_epsilon(0.5, 1e-6), 1e-4)
    assert row.accounting == "basic" and row.used == ledger_module.Budget(1.0, 0.0)
    ledger.set_budget(10.0, unit="dp/substitute")  # delta 0: zCDP gives no epsilon
    sub = ledger.summary().unit("dp/substitute")
    assert sub.rho == 2.0 and sub.zcdp_epsilon is None and sub.accounting == "basic"


def test_one_charge_without_a_zcdp_bound_turns_zcdp_off(ledger: BudgetLedger) -> None:
    ledger.set_budget(3.0, 1e-5)
    ledger.charge(_gaussian(0.01, 1e-7))
    assert ledger.summary().unit("dp/add-remove").rho == 0.01
    ledger.charge(_record(0.1, 1e-7))  # approximate DP with no rho: no zCDP bound
    row = ledger.summary().unit("dp/add-remove")
    assert row.rho is None and row.zcdp_epsilon is None
    # the privacy-loss distributions of the two stated guarantees still compose, tighter
    assert row.pld_epsilon is not None and row.pld_epsilon < row.spent.epsilon
    assert row.accounting == "pld" and row.used.delta == 1e-5


def test_zcdp_converts_by_group_size_squared(ledger: BudgetLedger) -> None:
    ledger.set_budget(5.0, 1e-5, unit="dp/substitute")
    ledger.set_budget(5.0, 1e-5, unit="dependent-dp/answer")
    ledger.charge(_gaussian(0.01, 1e-7))
    summary = ledger.summary()
    assert summary.unit("dp/substitute").rho == 0.04  # Bun & Steinke Proposition 1.9, k = 2
    assert summary.unit("dependent-dp/answer").rho is None  # zCDP not carried out of row DP
    assert summary.unit("dp/add-remove").rho == 0.01


# -- budgets and their history --------------------------------------------------------------------
def test_budget_cannot_go_below_the_spend(ledger: BudgetLedger) -> None:
    ledger.set_budget(1.0)
    ledger.charge(_record(0.6))
    with pytest.raises(
        BudgetExceededError, match=r"is below what is already spent there \(epsilon=0.6"
    ):
        ledger.set_budget(0.5)
    assert ledger.budgets()["dp/add-remove"].epsilon == 1.0
    ledger.set_budget(0.6)  # exactly the spend is allowed
    with pytest.raises(BudgetExceededError):
        ledger.charge(_record(0.01))
    assert [h.note for h in ledger.history()] == ["set", "lowered"]


def test_raising_a_spent_budget_needs_allow_raise_and_is_recorded(ledger: BudgetLedger) -> None:
    ledger.set_budget(1.0, unit="dp/substitute")
    ledger.set_budget(2.0, unit="dp/substitute")  # nothing spent yet: fine
    ledger.charge(_record(0.5))  # counts in dp/substitute through the conversion
    with pytest.raises(BudgetExceededError, match="needs allow_raise=True") as info:
        ledger.set_budget(3.0, unit="dp/substitute")
    assert "unit 'dp/substitute' from (epsilon=2, delta=0) to (epsilon=3, delta=0)" in str(
        info.value
    )
    with pytest.raises(BudgetExceededError, match="needs allow_raise"):
        ledger.set_budget(2.0, 1e-6, unit="dp/substitute")  # raising delta is raising too
    ledger.set_budget(1.5, unit="dp/substitute")  # lowering, still above the spend
    ledger.set_budget(3.0, unit="dp/substitute", allow_raise=True)
    ledger.set_budget(4.0, unit="attribute-privacy/x")  # other units are unaffected
    history = ledger.summary().history
    assert [(h.unit, h.epsilon, h.note) for h in history] == [
        ("dp/substitute", 1.0, "set"),
        ("dp/substitute", 2.0, "raised"),
        ("dp/substitute", 1.5, "lowered"),
        ("dp/substitute", 3.0, "raised with allow_raise"),
        ("attribute-privacy/x", 4.0, "set"),
    ]
    assert all(datetime.fromisoformat(h.created).tzinfo is not None for h in history)
    assert [h.id for h in history] == sorted(h.id for h in history)
    assert ledger.budgets() == {
        "dp/substitute": ledger_module.Budget(3.0, 0.0),
        "attribute-privacy/x": ledger_module.Budget(4.0, 0.0),
    }
    payload = json.loads(json.dumps(ledger.summary().to_dict()))
    assert [h["note"] for h in payload["history"]][-2:] == ["raised with allow_raise", "set"]
    ledger.charge(_record(1.0, unit="dp/substitute"))
    assert ledger.summary().unit("dp/substitute").spent.epsilon == 2.0


def test_the_history_is_append_only_in_the_file(ledger: BudgetLedger, path: Path) -> None:
    ledger.set_budget(1.0)
    ledger.charge(_record(0.5))
    with _raw(path) as conn:
        for sql in (
            "UPDATE budgets SET epsilon = 100",
            "DELETE FROM budgets",
            "UPDATE releases SET epsilon = 1e-9",
            "DELETE FROM releases",
        ):
            with pytest.raises(sqlite3.DatabaseError, match="append-only"):
                conn.execute(sql)
    assert ledger.budgets()["dp/add-remove"].epsilon == 1.0 and _spent(ledger) == 0.5


@pytest.mark.parametrize(
    ("epsilon", "delta", "unit", "message"),
    [
        (0.0, 0.0, "dp/add-remove", "epsilon must be > 0"),
        (-1.0, 0.0, "dp/add-remove", "epsilon must be > 0"),
        (1.0, 1.0, "dp/add-remove", r"delta must be in \[0, 1\)"),
        (True, 0.0, "dp/add-remove", "epsilon must be a finite number"),
        (1.0, 0.0, "dp/everyone", "a dp unit is one row under add-remove or substitute"),
        (1.0, 0.0, "dp", "unit is written definition/scope"),
        (1.0, 0.0, "renyi/x", "privacy definition must be one of"),
        (1.0, 0.0, "dependent-dp/row", "a dependent-dp unit is one 'answer'"),
        (1.0, 0.0, "pufferfish/ ", "must name its secret"),
        (1.0, 0.0, 3, "unit is written definition/scope"),
    ],
)
def test_bad_budgets_refused(
    ledger: BudgetLedger, epsilon: Any, delta: Any, unit: Any, message: str
) -> None:
    with pytest.raises(InputError, match=message) as info:
        ledger.set_budget(epsilon, delta, unit=unit)
    assert "\n" not in str(info.value)
    assert ledger.history() == []


def test_allow_raise_must_be_a_flag(ledger: BudgetLedger) -> None:
    with pytest.raises(InputError, match="allow_raise must be True or False"):
        ledger.set_budget(1.0, allow_raise=1)  # type: ignore[arg-type]


# -- the budget never overspends, whatever the sequence ---------------------------------------
UNITS = ["dp/add-remove", "dp/substitute", "dependent-dp/answer", ATTRIBUTE, "pufferfish/x"]
charges = st.lists(
    st.tuples(
        st.sampled_from(UNITS),
        st.floats(0.01, 0.8),
        st.sampled_from([0.0, 1e-7]),
        st.sampled_from([None, 0.002, 0.05]),
    ),
    min_size=1,
    max_size=25,
)
budgets = st.dictionaries(
    st.sampled_from(UNITS), st.tuples(st.floats(0.5, 4.0), st.sampled_from([0.0, 1e-6])), min_size=1
)


@settings(max_examples=40, deadline=None)
@given(budgets=budgets, charges=charges)
def test_no_budget_is_ever_exceeded_and_units_never_mix(
    budgets: dict[str, tuple[float, float]], charges: list[tuple[str, float, float, float | None]]
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ledger = BudgetLedger(Path(tmp) / "l.db")
        for unit, (epsilon, delta) in budgets.items():
            ledger.set_budget(epsilon, delta, unit=unit)
        for unit, epsilon, delta, rho in charges:
            before = ledger.entries()
            try:
                # a rho is only stated where it is consistent with (epsilon, delta)
                implied = rho is not None and epsilon <= rho + 2 * math.sqrt(rho * math.log(1e7))
                stated = rho if delta and implied else None
                ledger.charge(_record(epsilon, delta, unit=unit, rho=stated))
            except BudgetExceededError:
                assert ledger.entries() == before  # a refusal leaves nothing behind
        summary, entries = ledger.summary(), ledger.entries()
    for row in summary.units:
        target = PrivacyUnit.parse(row.unit)
        counted = [
            c.convert(e.record.epsilon, e.record.delta)
            for e in entries
            for c in conversions(e.record.unit, [target])
            if c.target == target
        ]
        # spend is exactly the (converted) charges of this unit, nothing from other units
        assert row.spent.epsilon == math.fsum(eps for eps, _ in counted)
        assert row.spent.delta == math.fsum(d for _, d in counted)
        assert row.n_direct + row.n_converted == len(counted)
        if row.budget is not None:
            assert row.used.epsilon <= row.budget.epsilon * (1 + 1e-9) + 1e-15
            assert row.used.delta <= row.budget.delta * (1 + 1e-9) + 1e-15
            assert row.accounting in ("basic", "zcdp", "pld")
            if row.accounting == "basic":
                assert row.used == row.spent
    # every charge was covered by a budget: nothing is unbudgeted
    assert summary.unbudgeted == () and all(e.budgeted for e in entries)


# -- files that are not (intact) ledgers --------------------------------------------------------
def test_missing_file_with_create_false(tmp_path: Path) -> None:
    target = tmp_path / "nope.db"
    with pytest.raises(LedgerError, match="does not exist") as info:
        BudgetLedger(target, create=False)
    _one_line_naming(info, target)
    assert not target.exists()


def test_text_file_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "notes.db"
    target.write_text("these are my notes, not a database\n" * 200)
    with pytest.raises(LedgerError, match="file is not a database") as info:
        BudgetLedger(target)
    _one_line_naming(info, target)
    assert target.read_text().startswith("these are my notes")  # left alone


def test_other_apps_database_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "app.db"
    with _raw(target) as conn:
        conn.execute("CREATE TABLE releases (id INTEGER PRIMARY KEY, name TEXT)")
        conn.execute("INSERT INTO releases (name) VALUES ('v1.0')")
    with pytest.raises(
        LedgerError, match="is a SQLite database but not an attrpriv ledger"
    ) as info:
        BudgetLedger(target)
    _one_line_naming(info, target)


def test_version_1_ledger_is_refused_not_misread(tmp_path: Path) -> None:
    """A ledger written by the old code (one budget, one total over every definition)."""
    target = tmp_path / "old.ledger"
    with _raw(target) as conn:
        conn.execute(f"PRAGMA application_id = {0x41545052}")
        conn.execute("PRAGMA user_version = 1")
        conn.executescript(V1_DDL)
        conn.execute("INSERT INTO budget (id, epsilon, delta) VALUES (1, 2.0, 0.0)")
        conn.execute(
            "INSERT INTO releases (created, label, mechanism, definition, epsilon, delta, record) "
            "VALUES ('2024-01-01T00:00:00+00:00', 'old', 'laplace', 'dp', 0.5, 0.0, '{}')"
        )
    before = target.read_bytes()
    for create in (True, False):
        with pytest.raises(LedgerError, match="is a version-1 ledger") as info:
            BudgetLedger(target, create=create)
        _one_line_naming(info, target)
        message = str(info.value)
        assert "sums the epsilons of every privacy definition into one total" in message
        assert "cannot be read per privacy unit" in message
        assert "start a new ledger file" in message and "record of its releases" in message
    code = main(["budget", "show", "--ledger", str(target)])
    assert code == 2
    assert target.read_bytes() == before  # left exactly as it was


def test_unknown_schema_version_is_refused(ledger: BudgetLedger, path: Path) -> None:
    with _raw(path) as conn:
        conn.execute("PRAGMA user_version = 99")
    with pytest.raises(LedgerError, match="schema version 99; expected 2") as info:
        BudgetLedger(path)
    _one_line_naming(info, path)


@pytest.fixture
def full_ledger(ledger: BudgetLedger, path: Path) -> bytes:
    """A ledger spread over a dozen pages; returns its bytes."""
    ledger.set_budget(10.0)
    for i in range(24):
        ledger.charge(_record(0.1), label=f"{i:03d}-" + "x" * 2000)
    return path.read_bytes()


@pytest.mark.parametrize("keep", [0.5, 0.9, 100 / 4096])
def test_truncated_ledger_is_refused(full_ledger: bytes, path: Path, keep: float) -> None:
    assert len(full_ledger) >= 12 * 4096
    path.write_bytes(full_ledger[: int(len(full_ledger) * keep) // 4096 * 4096 or 100])
    with pytest.raises(LedgerError, match=r"(is unusable|is corrupt)") as info:
        BudgetLedger(path)
    _one_line_naming(info, path)


@pytest.mark.parametrize("page", [2, 3, 6])
def test_garbled_page_is_refused(full_ledger: bytes, path: Path, page: int) -> None:
    damaged = bytearray(full_ledger)
    start = (page - 1) * 4096
    damaged[start : start + 1024] = bytes((i * 37 + 11) % 256 for i in range(1024))
    path.write_bytes(bytes(damaged))
    with pytest.raises(LedgerError, match=r"(is unusable|is corrupt)") as info:
        BudgetLedger(path)
    _one_line_naming(info, path)


def test_garbled_record_is_a_ledger_error(ledger: BudgetLedger, path: Path) -> None:
    ledger.set_budget(1.0)
    ledger.charge(_record(), "fine")
    ledger.charge(_record(), "damaged")
    with _raw(path) as conn:  # damage from outside: the append-only trigger is gone
        conn.execute("DROP TRIGGER releases_no_update")
        conn.execute(
            """UPDATE releases SET record = '{"mechanism": "lap' WHERE label = 'damaged'"""
        )
    reopened = BudgetLedger(path)  # structurally sound: it opens, and sums still work
    assert reopened.summary().n_releases == 2
    with pytest.raises(LedgerError, match="is corrupt: release 2 has an unreadable record") as info:
        reopened.entries()
    _one_line_naming(info, path)


def test_unit_column_and_record_must_agree(ledger: BudgetLedger, path: Path) -> None:
    ledger.set_budget(1.0)
    record = json.dumps(_record(0.1, unit="dp/substitute").to_dict())
    with _raw(path) as conn:
        conn.execute(INSERT, ("mislabelled", 0.1, record))
        conn.execute(INSERT.replace("'dp/add-remove'", "'nonsense'"), ("no unit", 0.1, record))
    with pytest.raises(LedgerError, match="release 1 is stored under unit 'dp/add-remove' but"):
        ledger.entries()
    with pytest.raises(LedgerError, match="is corrupt: release 2 has an unreadable unit") as info:
        ledger.summary()
    _one_line_naming(info, path)


# -- the check and the insert are one locked transaction ---------------------------------------
def test_no_other_writer_between_check_and_insert(
    ledger: BudgetLedger, path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second writer that tries to charge while the first is between its budget check and its
    insert is kept out by the lock (here: fails after a short lock timeout) - deterministic."""
    ledger.set_budget(1.0)
    ledger.charge(_record(0.5), label="first")
    other = BudgetLedger(path, timeout=0.05)
    check_fits = ledger_module._check_fits
    attempts: list[str] = []

    def interleave(*args: Any) -> None:
        check_fits(*args)
        if not attempts:
            attempts.append("tried")
            with pytest.raises(LedgerError, match="database is locked"):
                other.charge(_record(0.5), label="sneaked in")
            with pytest.raises(LedgerError, match="database is locked"):
                other.set_budget(5.0, allow_raise=True)

    monkeypatch.setattr(ledger_module, "_check_fits", interleave)
    ledger.charge(_record(0.5), label="second")
    assert attempts == ["tried"]
    assert _labels(ledger) == ["first", "second"]
    assert _spent(ledger) == 1.0 and ledger.budgets()["dp/add-remove"].epsilon == 1.0


# -- concurrent writers -------------------------------------------------------------------------
def _charge_loop(
    path: str, worker: int, attempts: int, barrier: Any, results: Any
) -> None:  # pragma: no cover - runs in a child process
    succeeded = refused = 0
    try:
        ledger = BudgetLedger(path, create=False)
        barrier.wait(timeout=60)
        for i in range(attempts):
            try:
                ledger.charge(_record(0.01), label=f"w{worker}-{i}")
                succeeded += 1
            except BudgetExceededError:
                refused += 1
    except Exception as exc:  # reported, so that the parent fails fast with the reason
        results.put((worker, succeeded, refused, repr(exc)))
    else:
        results.put((worker, succeeded, refused, None))


def test_two_concurrent_writers_lose_nothing_and_never_overspend(
    ledger: BudgetLedger, path: Path
) -> None:
    ledger.set_budget(1.0)
    ctx = multiprocessing.get_context(START)
    barrier, results = ctx.Barrier(2), ctx.Queue()
    workers = [
        ctx.Process(target=_charge_loop, args=(str(path), w, 60, barrier, results)) for w in (0, 1)
    ]
    for proc in workers:
        proc.start()
    outcome = sorted(results.get(timeout=120) for _ in workers)
    for proc in workers:
        proc.join(timeout=60)
        assert proc.exitcode == 0
    assert [error for *_, error in outcome] == [None, None]
    assert sum(ok for _, ok, _, _ in outcome) == 100
    assert sum(refused for _, _, refused, _ in outcome) == 20
    labels = _labels(ledger)
    assert len(labels) == len(set(labels)) == 100
    for worker, ok, _, _ in outcome:  # each worker's successes are exactly its rows
        assert sum(label.startswith(f"w{worker}-") for label in labels) == ok
    assert _spent(ledger) == pytest.approx(1.0, abs=1e-9)


# -- crash in the middle of a write -------------------------------------------------------------
class _DieAfterInsert:
    """A connection that kills its process as soon as a release row is inserted (no COMMIT)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:
        cursor = self._conn.execute(sql, *args)
        if sql.startswith("INSERT INTO releases"):
            os._exit(3)
        return cursor

    def close(self) -> None:
        self._conn.close()


def _crash_in_charge(path: str) -> None:  # pragma: no cover - runs in a child process
    ledger = BudgetLedger(path, create=False)
    connect = ledger._connect
    ledger._connect = lambda: _DieAfterInsert(connect())  # type: ignore[method-assign,assignment,return-value]
    ledger.charge(_record(0.5), label="ghost")
    os._exit(0)  # not reached


def _crash_with_spilled_pages(path: str) -> None:  # pragma: no cover - runs in a child process
    """Raw SQLite: enough uncommitted rows that they spill into the file, then die."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA cache_size = 1")
    conn.execute("BEGIN IMMEDIATE")
    record = json.dumps(_record(0.5).to_dict())
    for i in range(300):
        conn.execute(INSERT, (f"ghost {i} " + "x" * 200, 0.5, record))
    os._exit(4)


@pytest.mark.parametrize(("child", "code"), [(_crash_in_charge, 3), (_crash_with_spilled_pages, 4)])
def test_crash_before_commit_leaves_a_consistent_ledger(
    ledger: BudgetLedger, path: Path, child: Any, code: int
) -> None:
    ledger.set_budget(1.0)
    ledger.charge(_record(0.25), label="before")
    committed = path.read_bytes()
    proc = multiprocessing.get_context(START).Process(target=child, args=(str(path),))
    proc.start()
    proc.join(timeout=60)
    assert proc.exitcode == code
    journal = Path(f"{path}-journal")
    assert journal.exists()  # the child died inside its write transaction
    spilled = child is _crash_with_spilled_pages
    if spilled:
        assert path.read_bytes() != committed  # uncommitted pages reached the file

    reopened = BudgetLedger(path, create=False)  # opens and passes its integrity check
    assert _labels(reopened) == ["before"]
    assert _spent(reopened) == 0.25
    if spilled:
        assert not journal.exists()  # the hot journal was played back
        assert path.read_bytes() == committed  # byte for byte the last commit
    reopened.charge(_record(0.75), label="after")
    with pytest.raises(BudgetExceededError):
        reopened.charge(_record(0.01))
    assert _labels(reopened) == ["before", "after"]
    with _raw(path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_an_existing_empty_file_is_not_mistaken_for_a_new_ledger(tmp_path: Path) -> None:
    path = tmp_path / "truncated.ledger"
    path.write_bytes(b"")
    with pytest.raises(LedgerError, match="is empty"):
        BudgetLedger(path)
    assert path.read_bytes() == b""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["truncated.ledger"]  # no temp left


# -- the command line ---------------------------------------------------------------------------
def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--epsilon", "0"], "--epsilon must be > 0"),
        (["--epsilon", "nan"], "--epsilon must be a finite number"),
        (["--epsilon", "1", "--delta", "1"], "--delta must be in [0, 1)"),
        (["--epsilon", "1", "--unit", "dp/everyone"], "--unit 'dp/everyone'"),
        (["--epsilon", "1", "--unit", "attribute-privacy"], "--unit is written definition/scope"),
    ],
)
def test_budget_set_bad_input_writes_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, args: list[str], message: str
) -> None:
    target = tmp_path / "new" / "project.ledger"
    code, _, err = _cli(capsys, "budget", "set", "--ledger", str(target), *args)
    assert code == 2 and message in err and err.strip().count("\n") == 0
    assert not target.exists() and list(tmp_path.iterdir()) == []


def test_budget_set_and_show_per_unit(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    target, out = tmp_path / "project.ledger", tmp_path / "budget.json"
    code, text, _ = _cli(capsys, "budget", "set", "--ledger", str(target), "--epsilon", "1")
    assert code == 0 and "budget of dp/add-remove" in text and "(set)" in text
    args = ("budget", "set", "--ledger", str(target), "--unit", ATTRIBUTE, "--epsilon", "2")
    assert _cli(capsys, *args)[0] == 0
    book = BudgetLedger(target, create=False)
    book.charge(_record(0.5), "dp release")
    book.charge(_record(0.75, unit=ATTRIBUTE), "attribute release")
    book.charge(_record(0.25, unit="pufferfish/x"), "loose", allow_unbudgeted=True)

    code, _, err = _cli(capsys, "budget", "set", "--ledger", str(target), "--epsilon", "3")
    assert code == 2 and "needs allow_raise=True" in err and err.strip().count("\n") == 0
    code, text, _ = _cli(
        capsys, "budget", "set", "--ledger", str(target), "--epsilon", "3", "--allow-raise"
    )
    assert code == 0 and "raised with allow_raise" in text
    code, _, err = _cli(capsys, "budget", "set", "--ledger", str(target), "--epsilon", "0.4")
    assert code == 2 and "is below what is already spent" in err

    code, text, _ = _cli(capsys, "budget", "show", "--ledger", str(target), "--out", str(out))
    assert code == 0
    for shown in ("unit dp/add-remove", "unit attribute-privacy/mean(y)", "unit pufferfish/x"):
        assert shown in text
    assert "unbudgeted units (charged with allow_unbudgeted): pufferfish/x" in text
    assert "budget history" in text and "accounting convention" in text
    payload = json.loads(out.read_text())
    rows = {u["unit"]: u for u in payload["units"]}
    assert rows["dp/add-remove"]["spent"]["epsilon"] == 0.5
    assert rows["dp/add-remove"]["budget"] == {"epsilon": 3.0, "delta": 0.0}
    assert rows[ATTRIBUTE]["spent"]["epsilon"] == 0.75 and not rows[ATTRIBUTE]["proven"]
    assert rows["pufferfish/x"]["budget"] is None and payload["unbudgeted"] == ["pufferfish/x"]
    assert [(r["unit"], r["budgeted"]) for r in payload["releases"]] == [
        ("dp/add-remove", True),
        (ATTRIBUTE, True),
        ("pufferfish/x", False),
    ]
    assert [h["note"] for h in payload["history"]] == ["set", "set", "raised with allow_raise"]


# -- part-of-a-row units and model fingerprints ---------------------------------------------------
def test_a_release_of_part_of_each_row_needs_a_budget_it_protects(tmp_path: Path) -> None:
    """Obfuscating z_S and passing the rest of the row through protects z_S only: whole-row and
    answer budgets do not cover it (it is refused with them alone), a budget on that part (or
    less) does; once admitted it also counts in the whole-row budget, whose spend is then a
    guarantee for changes to the part only."""
    ledger = BudgetLedger(tmp_path / "part.db")
    ledger.set_budget(1.0, unit="dp/substitute")
    ledger.set_budget(1.0, unit="dependent-dp/answer")
    with pytest.raises(BudgetExceededError, match="'dp/substitute:z_S' has no budget"):
        ledger.charge(_record(0.5, unit="dp/substitute:z_S"))
    ledger.set_budget(1.0, unit="dp/substitute:z_S")
    ledger.charge(_record(0.5, unit="dp/substitute:z_S,y_S"))  # protects z_S too
    ledger.charge(_record(0.25, unit="dp/substitute"))  # a whole row protects every part
    summary = ledger.summary()
    part = summary.unit("dp/substitute:z_S")
    assert part.spent.epsilon == 0.75 and part.proven and part.covers is None
    row = summary.unit("dp/substitute")
    assert row.spent.epsilon == 0.75 and row.covers == ("y_S", "z_S") and not row.proven
    assert "for changes to y_S, z_S only" in row.rule
    assert summary.unit("dependent-dp/answer").spent.epsilon == 0.25  # other definitions apart
    assert summary.unit("dp/substitute:z_S,y_S").overlaps == ("dp/substitute",)
    assert summary.unit("dp/substitute:z_S,y_S").covered_by == ("dp/substitute:z_S",)
    with pytest.raises(BudgetExceededError, match="for the columns it shares: y_S, z_S"):
        ledger.charge(_record(0.3, unit="dp/substitute:z_S,y_S"))  # the row budget is full


def test_two_releases_of_one_column_with_different_proxies_share_its_budget(
    tmp_path: Path,
) -> None:
    """The issue's case: two resamples of sex with different proxies at 0.8 against a budget
    of 1 on sex, set before the first release: the second is refused (1.6 would be spent on a
    neighbour that changes only one row's sex)."""
    ledger = BudgetLedger(tmp_path / "sex.db")
    ledger.set_budget(1.0, unit="dp/substitute:sex")
    ledger.charge(_record(0.8, unit="dp/substitute:sex,occupation"))
    with pytest.raises(BudgetExceededError, match="'dp/substitute:sex'"):
        ledger.charge(_record(0.8, unit="dp/substitute:sex,education"))
    assert ledger.summary().unit("dp/substitute:sex").spent.epsilon == 0.8
    # budgets named after each release's own unit overlap on sex: the same refusal
    other = BudgetLedger(tmp_path / "named.db")
    other.set_budget(1.0, unit="dp/substitute:sex,occupation")
    other.set_budget(1.0, unit="dp/substitute:sex,education")
    other.charge(_record(0.8, unit="dp/substitute:sex,occupation"))
    row = other.summary().unit("dp/substitute:sex,education")
    assert row.spent.epsilon == 0.8 and row.covers == ("sex",)
    with pytest.raises(BudgetExceededError, match="counted there for the columns it shares: sex"):
        other.charge(_record(0.8, unit="dp/substitute:sex,education"))
    # columns in common with nothing: never counted
    other.set_budget(1.0, unit="dp/substitute:race")
    other.charge(_record(0.9, unit="dp/substitute:race"))
    assert other.summary().unit("dp/substitute:sex,education").spent.epsilon == 0.8


def test_answer_budgets_are_proven_only_for_one_dependence_model(tmp_path: Path) -> None:
    ledger = BudgetLedger(tmp_path / "models.db")
    ledger.set_budget(2.0, unit="dependent-dp/answer")
    ddp = {"mechanism": "tabular-ddp"}
    ledger.charge(_record(0.5, unit="dependent-dp/answer@aaaa1111", **ddp))
    ledger.charge(_record(0.5, unit="dependent-dp/answer@aaaa1111", **ddp))
    row = ledger.summary().unit("dependent-dp/answer")
    assert row.proven and row.spent.epsilon == 1.0 and row.n_converted == 2
    ledger.charge(_record(0.5, unit="dependent-dp/answer@bbbb2222", **ddp))
    row = ledger.summary().unit("dependent-dp/answer")
    assert not row.proven and "2 different dependence models" in row.rule
    assert ledger.summary().unit("dependent-dp/answer@aaaa1111").proven  # one model: proven


def test_a_rho_weaker_than_the_stated_guarantee_is_refused() -> None:
    with pytest.raises(InputError, match="the two guarantees disagree"):
        _record(50.0, 0.5, rho=0.0)
    assert _record(1.0, 1e-5, rho=0.05).rho == 0.05  # 0.05 + 2 sqrt(0.05 ln 1e5) = 1.12 >= 1
