"""``BudgetLedger.check``: a plan of releases is admitted exactly as charging it in turn would be,
by the same composition (not a sum of epsilons), and the ledger file is left as it was."""

from __future__ import annotations

import hashlib
import math
import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_ledger import ATTRIBUTE, _gaussian, _record, budgets, charges

from attrpriv.dp import BudgetLedger, PrivacyRecord
from attrpriv.errors import BudgetExceededError, InputError


@pytest.fixture
def ledger(tmp_path: Path) -> BudgetLedger:
    """A new, empty ledger (importing test_ledger.py's fixture trips ruff's F401 and F811)."""
    return BudgetLedger(tmp_path / "ledger.db")


def _state(ledger: BudgetLedger) -> tuple[object, ...]:
    """Everything a read-only call must leave alone: entries, history and the file's bytes."""
    digest = hashlib.sha256(ledger.path.read_bytes()).hexdigest()
    return ledger.entries(), ledger.history(), digest


def _refusal(call: Callable[..., object], *args: object, **kwargs: object) -> str | None:
    """The message of the BudgetExceededError ``call(*args, **kwargs)`` raises, else None."""
    try:
        call(*args, **kwargs)
    except BudgetExceededError as exc:
        return str(exc)
    return None


def _charged_in_turn(
    ledger: BudgetLedger, plan: Sequence[PrivacyRecord], *, allow_unbudgeted: bool = False
) -> tuple[int, str]:
    """On a copy of ``ledger``: the index and message of the first charge of ``plan`` refused,
    or ``(len(plan), "")`` if all fit."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = BudgetLedger(shutil.copyfile(ledger.path, Path(tmp) / "copy.db"), create=False)
        for index, record in enumerate(plan):
            message = _refusal(copy.charge, record, allow_unbudgeted=allow_unbudgeted)
            if message is not None:
                return index, message
    return len(plan), ""


def _stated(unit: str, epsilon: float, delta: float, rho: float | None) -> PrivacyRecord:
    """A record with ``rho`` stated only where it is consistent with (epsilon, delta)."""
    implied = rho is not None and epsilon <= rho + 2 * math.sqrt(rho * math.log(1e7))
    return _record(epsilon, delta, unit=unit, rho=rho if delta and implied else None)


# -- (a) one record: check refuses iff charge would, whatever came before -----------------------
@settings(max_examples=30, deadline=None)
@given(
    budgets=budgets,
    steps=charges,
    commit=st.lists(st.booleans(), min_size=25, max_size=25),
    allow_unbudgeted=st.booleans(),
)
def test_check_refuses_a_record_iff_charging_it_would(
    budgets: dict[str, tuple[float, float]],
    steps: list[tuple[str, float, float, float | None]],
    commit: list[bool],
    allow_unbudgeted: bool,
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ledger = BudgetLedger(Path(tmp) / "l.db")
        for unit, (epsilon, delta) in budgets.items():
            ledger.set_budget(epsilon, delta, unit=unit)
        for (unit, epsilon, delta, rho), charge in zip(steps, commit, strict=False):
            record = _stated(unit, epsilon, delta, rho)
            checked = _refusal(ledger.check, [record], allow_unbudgeted=allow_unbudgeted)
            if charge:  # interleaved: the check's verdict is then acted on for real
                charged = _refusal(ledger.charge, record, allow_unbudgeted=allow_unbudgeted)
                assert checked == (None if charged is None else f"records[0]: {charged}")
            else:  # checked only: a copy says what charging would have done
                index, _ = _charged_in_turn(ledger, [record], allow_unbudgeted=allow_unbudgeted)
                assert (checked is None) == (index == 1)


# -- (b) check writes nothing -----------------------------------------------------------------
def test_check_leaves_entries_history_and_file_bytes_unchanged(ledger: BudgetLedger) -> None:
    ledger.set_budget(3.0, 1e-6)
    ledger.set_budget(8.0, 1e-5, unit="dp/substitute")
    ledger.charge(_record(0.3), "first")
    ledger.charge(_gaussian(0.01, 1e-7), "second")
    before = _state(ledger)
    ledger.check([])
    ledger.check([_record(0.1), _record(0.1)])  # fits
    ledger.check([_record(0.2, unit=ATTRIBUTE)], allow_unbudgeted=True)  # fits, unbudgeted
    assert _state(ledger) == before
    with pytest.raises(BudgetExceededError, match=r"^records\[1\]: .*budget of unit"):
        ledger.check([_record(0.1), _record(2.5)])
    with pytest.raises(BudgetExceededError, match=r"^records\[0\]: unit .* has no budget"):
        ledger.check([_record(0.1, unit=ATTRIBUTE)])
    with pytest.raises(InputError, match=r"records\[1\] must be a PrivacyRecord"):
        ledger.check([_record(0.1), "x"])  # type: ignore[list-item]
    assert _state(ledger) == before
    assert not Path(f"{ledger.path}-journal").exists()
    assert [e.label for e in ledger.entries()] == ["first", "second"]


# -- (c) several records compose in turn, by the ledger's own accounting ------------------------
def _pld_plan(ledger: BudgetLedger) -> list[PrivacyRecord]:
    """30 pure charges of 0.05 against (1, 1e-6): privacy-loss distributions admit 26 of them,
    a sum of epsilons only 20, and each alone fits."""
    ledger.set_budget(1.0, 1e-6)
    return [_record(0.05) for _ in range(30)]


def _converted_plan(ledger: BudgetLedger) -> list[PrivacyRecord]:
    """An add/remove release counts twice in a substitution budget: each alone fits 0.8, the
    second does not fit after the first (0.6 + 0.3)."""
    ledger.set_budget(0.8, unit="dp/substitute")
    return [_record(0.3), _record(0.3, unit="dp/substitute")]


def _spent_plan(ledger: BudgetLedger) -> list[PrivacyRecord]:
    """Earlier charges count too: 0.2 is spent, three releases of 0.3 fit one by one, not all."""
    ledger.set_budget(1.0)
    ledger.charge(_record(0.2))
    return [_record(0.3), _record(0.3), _record(0.3), _record(0.05)]


def _fitting_plan(ledger: BudgetLedger) -> list[PrivacyRecord]:
    """Gaussians whose epsilons sum past the budget but whose zCDP total fits it."""
    ledger.set_budget(3.0, 1e-5)
    plan = [_gaussian(0.01, 1e-7) for _ in range(20)]
    assert math.fsum(r.epsilon for r in plan) > 3.0
    return plan


@pytest.mark.parametrize(
    ("build", "refused_at"),
    [(_pld_plan, 26), (_converted_plan, 1), (_spent_plan, 2), (_fitting_plan, None)],
)
def test_a_plan_is_checked_as_if_charged_one_after_another(
    ledger: BudgetLedger,
    build: Callable[[BudgetLedger], list[PrivacyRecord]],
    refused_at: int | None,
) -> None:
    plan = build(ledger)
    index, message = _charged_in_turn(ledger, plan)
    assert index == (len(plan) if refused_at is None else refused_at)
    for record in plan:  # every record fits alone: only composing them in turn can refuse
        assert _refusal(ledger.check, [record]) is None
    before = _state(ledger)
    checked = _refusal(ledger.check, plan)
    if refused_at is None:
        assert checked is None
    else:
        assert checked is not None
        assert checked.startswith(f"records[{refused_at}]: {message}")
        assert _refusal(ledger.check, plan[:refused_at]) is None
    assert _state(ledger) == before


# -- (d) a unit with no budget --------------------------------------------------------------------
def test_a_record_no_budget_covers_is_refused_unless_allowed_like_charge(
    ledger: BudgetLedger,
) -> None:
    ledger.set_budget(1.0)
    plan = [_record(0.5), _record(0.5, unit=ATTRIBUTE)]
    with pytest.raises(BudgetExceededError) as charged:
        ledger.charge(plan[1])
    with pytest.raises(InputError) as checked:
        ledger.check(plan)
    assert isinstance(checked.value, BudgetExceededError)
    assert str(checked.value).startswith(f"records[1]: {charged.value}")
    ledger.check(plan, allow_unbudgeted=True)  # fits: no error
    assert ledger.entries() == []
    ledger.charge(plan[1], allow_unbudgeted=True)  # and charge agrees
    # budgets that cover a record are enforced even when unbudgeted ones are allowed
    with pytest.raises(BudgetExceededError, match=r"^records\[1\]: .*'dp/add-remove'"):
        ledger.check([_record(0.5), _record(0.6)], allow_unbudgeted=True)


# -- (e) bad arguments -------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("records", "message"),
    [
        (None, "records must be a sequence of PrivacyRecord, got NoneType"),
        ("plan", "records must be a sequence of PrivacyRecord, got str"),
        (iter([]), "records must be a sequence of PrivacyRecord, got list_iterator"),
        ([{"epsilon": 0.1}], r"records\[0\] must be a PrivacyRecord, got dict"),
        ((_record(0.1), _record(0.1), 0.1), r"records\[2\] must be a PrivacyRecord, got float"),
    ],
)
def test_bad_arguments_name_the_position(
    ledger: BudgetLedger, records: object, message: str
) -> None:
    ledger.set_budget(0.15)  # a plan that is refused by the budget is still refused as input first
    with pytest.raises(InputError, match=message) as info:
        ledger.check(records)  # type: ignore[arg-type]
    assert not isinstance(info.value, BudgetExceededError)


def test_bad_flag_and_single_record_are_input_errors(ledger: BudgetLedger) -> None:
    with pytest.raises(InputError, match="allow_unbudgeted must be True or False, got 'yes'"):
        ledger.check([], allow_unbudgeted="yes")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="got PrivacyRecord"):
        ledger.check(_record(0.1))  # type: ignore[arg-type]
    ledger.check([])  # an empty plan fits, even with no budget
