"""A privacy-budget ledger persisted in SQLite: one file per dataset or project.

Every release is charged to the ledger *before* its noise is drawn. Each charge states its
privacy unit (:mod:`attrpriv.dp.units`): whose secret, under which definition. Spend is composed
only within a unit, by sequential composition (and, for row-level DP, zCDP where that is
tighter); a charge also counts, converted, in every unit its guarantee provably implies
(:func:`~attrpriv.dp.units.conversions`), and nothing is ever added across units that no
theorem connects. A budget is set per unit, and a charge must fit every budget it counts
against; a charge that no budget covers is refused unless it is explicitly allowed.

Each charge is one ``BEGIN IMMEDIATE`` transaction: concurrent writers are serialised by
SQLite's lock, and a crash mid-write rolls back to the last commit. Budgets are kept as an
append-only history: the current budget of a unit is its latest row.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import sqlite3
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from attrpriv._checks import check_delta, check_epsilon, check_positive
from attrpriv._display import html_grid
from attrpriv.dp.accounting import (
    PLD,
    ZCDP,
    Budget,
    Charge,
    compose,
    convert,
    counted_in,
    describe,
)
from attrpriv.dp.record import PrivacyRecord
from attrpriv.dp.units import (
    ADD_REMOVE,
    DEFINITIONS,
    PART,
    PLD_RULE,
    ZCDP_RULE,
    Conversion,
    PrivacyUnit,
    charged,
    composition_rule,
    conversions,
    overlap,
)
from attrpriv.errors import BudgetExceededError, InputError, LedgerError

if TYPE_CHECKING:
    import pandas as pd

_FRAME_COLUMNS = [
    "unit", "budget_epsilon", "budget_delta", "spent_epsilon", "spent_delta", "rho",
    "zcdp_epsilon", "pld_epsilon", "accounting", "used_epsilon", "used_delta", "remaining_epsilon",
    "remaining_delta", "charges", "converted_charges", "proven",
]  # fmt: skip
_APPLICATION_ID = 0x41545052  # "ATPR": marks a SQLite file as an attrpriv ledger
_SCHEMA_VERSION = 2


_DDL = """
CREATE TABLE budgets (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created TEXT NOT NULL,
    unit TEXT NOT NULL,
    epsilon REAL NOT NULL CHECK (epsilon > 0),
    delta REAL NOT NULL CHECK (delta >= 0 AND delta < 1),
    note TEXT NOT NULL
);
CREATE INDEX budgets_by_unit ON budgets (unit, id);
CREATE TABLE releases (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created TEXT NOT NULL,
    label TEXT NOT NULL,
    unit TEXT NOT NULL,
    mechanism TEXT NOT NULL,
    definition TEXT NOT NULL,
    epsilon REAL NOT NULL CHECK (epsilon > 0),
    delta REAL NOT NULL CHECK (delta >= 0 AND delta < 1),
    rho REAL CHECK (rho IS NULL OR rho >= 0),
    budgeted INTEGER NOT NULL CHECK (budgeted IN (0, 1)),
    record TEXT NOT NULL
);
CREATE TRIGGER budgets_no_update BEFORE UPDATE ON budgets
BEGIN SELECT RAISE(ABORT, 'the budget history is append-only'); END;
CREATE TRIGGER budgets_no_delete BEFORE DELETE ON budgets
BEGIN SELECT RAISE(ABORT, 'the budget history is append-only'); END;
CREATE TRIGGER releases_no_update BEFORE UPDATE ON releases
BEGIN SELECT RAISE(ABORT, 'charged releases are append-only'); END;
CREATE TRIGGER releases_no_delete BEFORE DELETE ON releases
BEGIN SELECT RAISE(ABORT, 'charged releases are append-only'); END;
"""


@dataclass(frozen=True)
class BudgetChange:
    """One row of a ledger's append-only budget history.

    Parameters
    ----------
    id : int
        The row's id in the ledger (increasing with time).
    created : str
        When the budget was set: an ISO 8601 UTC timestamp, to the second.
    unit : str
        The privacy unit's key, ``definition/scope``.
    epsilon : float
        The unit's epsilon allowance from then on.
    delta : float
        The unit's delta allowance from then on.
    note : str
        What the change was: ``"set"``, ``"raised"``, ``"raised with allow_raise"``,
        ``"lowered"`` or ``"set again (unchanged)"``.
    """

    id: int
    created: str
    unit: str
    epsilon: float
    delta: float
    note: str

    def to_dict(self) -> dict[str, Any]:
        """The row as a JSON-ready dict.

        Returns
        -------
        dict of str to Any
            The fields by name.
        """
        return {
            "id": self.id,
            "created": self.created,
            "unit": self.unit,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "note": self.note,
        }


@dataclass(frozen=True)
class LedgerEntry:
    """One charged release; ``budgeted`` is False if it was let in with no covering budget.

    Parameters
    ----------
    id : int
        The release's id in the ledger (increasing with time).
    created : str
        When it was charged: an ISO 8601 UTC timestamp, to the second.
    label : str
        The free-text name given when it was charged.
    record : PrivacyRecord
        The release's guarantee.
    budgeted : bool, default True
        Whether a budget covered its unit when it was charged.
    """

    id: int
    created: str
    label: str
    record: PrivacyRecord
    budgeted: bool = True


@dataclass(frozen=True)
class UnitSpend:
    """What one privacy unit has spent, how it was composed, and what is left.

    ``spent`` is basic sequential composition of every charge that counts in the unit (its own
    and converted ones); ``rho`` the zCDP total where every such charge has a zCDP bound (row
    DP units only), and ``zcdp_epsilon`` that rho as epsilon at the budget's delta;
    ``pld_epsilon`` the charges composed as privacy-loss distributions at that delta.
    ``accounting`` is the one used (``"basic"``, ``"zcdp"`` or ``"pld"``: the smallest epsilon
    that fits),
    ``used`` its (epsilon, delta). ``converted_from`` lists the units whose charges count here
    through a conversion; ``covered_by`` the budgeted units that this unit's own charges count
    against. ``rule`` and ``proven`` say how the spend composes and whether that is a theorem.

    Parameters
    ----------
    unit : str
        The privacy unit's key, ``definition/scope``.
    budget : Budget or None
        The unit's current budget (None: it has none).
    spent : Budget
        Basic sequential composition of every charge that counts in the unit.
    rho : float or None
        The zCDP total, where every counted charge has a zCDP bound (row DP units only).
    zcdp_epsilon : float or None
        ``rho`` as epsilon at the budget's delta (None without a rho, a budget, or a budget
        delta > 0).
    pld_epsilon : float or None
        The counted charges composed as privacy-loss distributions, as epsilon at the budget's
        delta (row DP units with a budget delta > 0 and two charges or more; None otherwise).
    accounting : str
        The accounting used: ``"basic"``, ``"zcdp"`` or ``"pld"``.
    used : Budget
        The (epsilon, delta) of that accounting.
    remaining : Budget or None
        ``budget - used``, each floored at 0 (None without a budget).
    n_direct : int
        The number of charges made in this unit itself.
    n_converted : int
        The number of charges that count here through a conversion.
    converted_from : tuple of str
        The keys of the units whose charges count here through a conversion.
    covered_by : tuple of str
        The keys of the budgeted units that this unit's own charges count against (the unit
        itself among them if it has a budget).
    overlaps : tuple of str
        The keys of the budgeted units that this unit's own charges also count against because
        they protect columns in common (:func:`~attrpriv.dp.units.overlap`), with no implication.
    covers : tuple of str or None
        None when the spend is a guarantee for all of the unit; else the only columns it is a
        guarantee for (some charges counted here protect only the columns they share with it).
    rule : str
        How spend in the unit composes, in words, with its reference.
    proven : bool
        Whether that rule is a theorem (True) or an accounting convention (False).
    """

    unit: str
    budget: Budget | None
    spent: Budget
    rho: float | None
    zcdp_epsilon: float | None
    pld_epsilon: float | None
    accounting: str
    used: Budget
    remaining: Budget | None
    n_direct: int
    n_converted: int
    converted_from: tuple[str, ...]
    covered_by: tuple[str, ...]
    overlaps: tuple[str, ...]
    covers: tuple[str, ...] | None
    rule: str
    proven: bool

    def describe(self) -> str:
        """The unit's state in a few words: ``dp/add-remove 1.5 of epsilon 3 used``.

        Returns
        -------
        str
            ``"<unit> epsilon <used> of epsilon <budget> used"``, or
            ``"<unit> epsilon <used> spent, no budget"`` without a budget; the used delta
            follows the used epsilon when it is not 0.
        """
        used = f"epsilon {self.used.epsilon:.4g}"
        if self.used.delta:
            used += f", delta {self.used.delta:.3g}"
        if self.budget is None:
            return f"{self.unit} {used} spent, no budget"
        return f"{self.unit} {used} of epsilon {self.budget.epsilon:.4g} used"

    def __repr__(self) -> str:
        return f"UnitSpend({self.describe()})"

    def to_dict(self) -> dict[str, Any]:
        """The unit's spend as a JSON-ready dict.

        Returns
        -------
        dict of str to Any
            The fields by name; budgets as their ``to_dict()`` (or None), tuples as lists.
        """
        return {
            "unit": self.unit,
            "budget": None if self.budget is None else self.budget.to_dict(),
            "spent": self.spent.to_dict(),
            "rho": self.rho,
            "zcdp_epsilon": self.zcdp_epsilon,
            "pld_epsilon": self.pld_epsilon,
            "accounting": self.accounting,
            "used": self.used.to_dict(),
            "remaining": None if self.remaining is None else self.remaining.to_dict(),
            "n_direct": self.n_direct,
            "n_converted": self.n_converted,
            "converted_from": list(self.converted_from),
            "covered_by": list(self.covered_by),
            "overlaps": list(self.overlaps),
            "covers": None if self.covers is None else list(self.covers),
            "rule": self.rule,
            "proven": self.proven,
        }


@dataclass(frozen=True)
class LedgerSummary:
    """Spend per privacy unit, the units that no budget covers, and the budget history.

    Units are reported side by side and never added up: there is no ledger-wide total.

    Parameters
    ----------
    path : str
        The ledger file.
    units : tuple of UnitSpend
        One row per unit that has a budget or charges of its own, row-level DP units first.
    unbudgeted : tuple of str
        The keys of the units with charges of their own that no budget covers.
    history : tuple of BudgetChange
        Every budget ever set, oldest first.
    n_releases : int
        The number of charged releases.
    columns : tuple of UnitSpend, default ()
        One row per column that a budget or a release protects by name (``dp/substitute:`` units
        of part of a row): the spend of ``dp/substitute:<column>``, every release whose
        guarantee protects that column (the whole row, or a part holding it), whether or not
        the column has a budget of its own. Sorted by column.
    """

    path: str
    units: tuple[UnitSpend, ...]
    unbudgeted: tuple[str, ...]
    history: tuple[BudgetChange, ...]
    n_releases: int
    columns: tuple[UnitSpend, ...] = ()

    def unit(self, unit: PrivacyUnit | str) -> UnitSpend:
        """The row of ``unit`` (a :class:`PrivacyUnit` or its key).

        Parameters
        ----------
        unit : PrivacyUnit or str
            The privacy unit, or its ``definition/scope`` key.

        Returns
        -------
        UnitSpend
            The unit's row.

        Raises
        ------
        InputError
            If ``unit`` is not a valid unit, or the ledger has neither a budget nor charges of
            its own for it.
        """
        key = PrivacyUnit.coerce(unit).key
        for row in self.units:
            if row.unit == key:
                return row
        raise InputError(
            f"unit {key!r} has neither a budget nor charges in this ledger "
            f"(units: {', '.join(r.unit for r in self.units) or 'none'})"
        )

    def __repr__(self) -> str:
        units = "; ".join(u.describe() for u in self.units) or "no budgets, no releases"
        return f"LedgerSummary({self.path!r}: {units}; {self.n_releases} releases)"

    def to_frame(self) -> pd.DataFrame:
        """One row per privacy unit: its budget, the spend under each accounting, the one used,
        what remains, the charges counted and whether its composition rule is proven.

        Returns
        -------
        pandas.DataFrame
            Indexed by ``unit``, with the columns ``budget_epsilon``, ``budget_delta``,
            ``spent_epsilon``, ``spent_delta``, ``rho``, ``zcdp_epsilon``, ``accounting``,
            ``used_epsilon``, ``used_delta``, ``remaining_epsilon``, ``remaining_delta``,
            ``charges``, ``converted_charges`` and ``proven``.
        """
        import pandas as pd

        def part(budget: Budget | None, key: str) -> float | None:
            return None if budget is None else float(getattr(budget, key))

        rows = [
            {
                "unit": u.unit,
                "budget_epsilon": part(u.budget, "epsilon"),
                "budget_delta": part(u.budget, "delta"),
                "spent_epsilon": u.spent.epsilon,
                "spent_delta": u.spent.delta,
                "rho": u.rho,
                "zcdp_epsilon": u.zcdp_epsilon,
                "pld_epsilon": u.pld_epsilon,
                "accounting": u.accounting,
                "used_epsilon": u.used.epsilon,
                "used_delta": u.used.delta,
                "remaining_epsilon": part(u.remaining, "epsilon"),
                "remaining_delta": part(u.remaining, "delta"),
                "charges": u.n_direct,
                "converted_charges": u.n_converted,
                "proven": u.proven,
            }
            for u in self.units
        ]
        return pd.DataFrame(rows, columns=_FRAME_COLUMNS).set_index("unit")

    def _repr_html_(self) -> str:
        rows = [
            (
                u.unit,
                "-" if u.budget is None else f"{u.budget.epsilon:.4g} / {u.budget.delta:.3g}",
                f"{u.used.epsilon:.4g} / {u.used.delta:.3g} ({u.accounting})",
                "-" if u.remaining is None else f"{u.remaining.epsilon:.4g}",
                str(u.n_direct + u.n_converted),
                "yes" if u.proven else "no",
            )
            for u in self.units
        ]
        return html_grid(
            ["unit", "budget (epsilon / delta)", "used", "epsilon left", "charges", "proven"],
            rows,
            title=f"Ledger {self.path}: {self.n_releases} releases",
            note="Each unit's spend counts its own releases and those whose guarantee implies "
            "it or that share its columns (charges); there is no total over all units.",
        )

    def to_dict(self) -> dict[str, Any]:
        """The summary as a JSON-ready dict.

        Returns
        -------
        dict of str to Any
            ``path``, a ``composition`` sentence, ``units``, ``unbudgeted``, ``history`` (as
            lists, each row its ``to_dict()``), ``n_releases`` and ``columns`` (a list, each
            row its ``to_dict()``).
        """
        return {
            "path": self.path,
            "composition": (
                "per privacy unit: sequential composition within a unit (zCDP where tighter for "
                "row-level DP), proven conversions between units, never a sum across units"
            ),
            "units": [u.to_dict() for u in self.units],
            "unbudgeted": list(self.unbudgeted),
            "history": [h.to_dict() for h in self.history],
            "n_releases": self.n_releases,
            "columns": [c.to_dict() for c in self.columns],
        }


class BudgetLedger:
    """Records releases against per-unit budgets in the SQLite file at ``path``.

    Parameters
    ----------
    path : str or pathlib.Path
        The ledger file.
    create : bool, optional
        Make a new ledger if the file does not exist (else :class:`LedgerError`). An existing
        file must be an intact attrpriv ledger of this version (checked on open).
    timeout : float, optional
        Seconds to wait for another writer's lock before giving up.

    Raises
    ------
    LedgerError
        The file does not exist and ``create`` is False, or it is not an intact attrpriv ledger
        of this version.
    InputError
        ``timeout`` is not a positive number.
    """

    def __init__(self, path: str | Path, *, create: bool = True, timeout: float = 30.0) -> None:
        self.path = Path(path)
        self.timeout = check_positive(timeout, "timeout")
        if not self.path.exists():
            if not create:
                raise LedgerError(
                    f"ledger file {str(self.path)!r} does not exist; set its budget first "
                    "(attrpriv budget set, or BudgetLedger(path).set_budget)"
                )
            self._create()
        self._check(self._header())

    # -- public API -----------------------------------------------------------------------
    def set_budget(
        self,
        epsilon: float,
        delta: float | None = None,
        *,
        unit: PrivacyUnit | str = ADD_REMOVE,
        allow_raise: bool = False,
    ) -> Budget:
        """Set the budget of one privacy unit, appending it to the budget history.

        Parameters
        ----------
        epsilon : float
            The unit's total privacy loss allowance (epsilon > 0).
        delta : float or None, optional
            The unit's total delta allowance (in [0, 1)); None keeps the unit's current delta
            (0 for a unit with no budget yet), so that changing epsilon never changes delta.
        unit : PrivacyUnit or str, optional
            The privacy unit (:class:`PrivacyUnit` or its ``definition/scope`` key); default
            ``dp/add-remove``.
        allow_raise : bool, optional
            Permit raising a budget that is partly spent. Raising after releases were made is a
            decision to give away more than was planned, so it must be explicit; it is recorded
            with its time in the history either way.

        Returns
        -------
        Budget
            The new budget of the unit.

        Raises
        ------
        BudgetExceededError
            The budget is below what the unit has already spent, or it raises a partly spent
            budget without ``allow_raise``.
        InputError
            ``epsilon``, ``delta``, ``unit`` or ``allow_raise`` is invalid.
        """
        checked_epsilon = check_epsilon(epsilon)
        checked_delta = None if delta is None else check_delta(delta)
        target = PrivacyUnit.coerce(unit)
        if not isinstance(allow_raise, bool):
            raise InputError(f"allow_raise must be True or False, got {allow_raise!r}")
        created = _now()
        with self._transaction() as conn:
            current = _budgets(conn, self.path).get(target.key)
            if checked_delta is None:
                checked_delta = 0.0 if current is None else current.delta
            budget = Budget(checked_epsilon, checked_delta)
            counted = counted_in(target, _charges(conn, self.path))
            spend = compose(target, [c for c, _ in counted], budget)
            if not spend.fits:
                raise BudgetExceededError(
                    f"budget of unit {target.key!r} (epsilon={budget.epsilon:g}, "
                    f"delta={budget.delta:g}) is below what is already spent there "
                    f"({describe(spend)})"
                )
            raised = current is not None and _raises(current, budget)
            if current is not None and raised and counted and not allow_raise:
                raise BudgetExceededError(
                    f"raising the budget of unit {target.key!r} from (epsilon="
                    f"{current.epsilon:g}, delta={current.delta:g}) to (epsilon="
                    f"{budget.epsilon:g}, delta={budget.delta:g}) after {len(counted)} "
                    f"release(s) spent {describe(spend)} needs allow_raise=True "
                    "(attrpriv budget set --allow-raise); the raise is then kept in the history"
                )
            note = _note(current, budget, raised=raised, spent=bool(counted))
            conn.execute(
                "INSERT INTO budgets (created, unit, epsilon, delta, note) VALUES (?, ?, ?, ?, ?)",
                (created, target.key, budget.epsilon, budget.delta, note),
            )
        return budget

    def charge(
        self, record: PrivacyRecord, label: str = "", *, allow_unbudgeted: bool = False
    ) -> LedgerEntry:
        """Record ``record`` if it fits every budget it counts against.

        Parameters
        ----------
        record : PrivacyRecord
            The release's guarantee; its ``unit`` says which budgets it counts against: every
            budgeted unit in ``conversions(record.unit)``, at its converted (epsilon, delta).
        label : str, optional
            A free-text name for the release.
        allow_unbudgeted : bool, optional
            Record the release even if no budget covers its unit (it is then shown as
            unbudgeted). Budgets that do cover it are enforced regardless.

        Returns
        -------
        LedgerEntry
            The stored entry.

        Raises
        ------
        BudgetExceededError
            No budget covers the unit (and ``allow_unbudgeted`` is False), or the release would
            exceed one of the budgets that do.
        LedgerError
            ``record`` is not a :class:`PrivacyRecord`.
        InputError
            ``label`` is not a string or ``allow_unbudgeted`` is not a bool.
        """
        if not isinstance(record, PrivacyRecord):
            raise LedgerError(f"can only charge a PrivacyRecord, got {type(record).__name__}")
        if not isinstance(label, str):
            raise InputError(f"label must be a string, got {type(label).__name__}")
        if not isinstance(allow_unbudgeted, bool):
            raise InputError(f"allow_unbudgeted must be True or False, got {allow_unbudgeted!r}")
        new = Charge(record.unit, record.mechanism, record.epsilon, record.delta, record.rho)
        created = _now()
        with self._transaction() as conn:
            budgets = _budgets(conn, self.path)
            budgeted = [PrivacyUnit.parse(key) for key in budgets]
            covering = [c for c in conversions(record.unit, budgeted) if c.target.key in budgets]
            if not covering and not allow_unbudgeted:
                raise BudgetExceededError(self._unbudgeted_message(record.unit))
            charges = _charges(conn, self.path)
            touched = [c for b in budgeted if (c := charged(record.unit, b)) is not None]
            for conversion in touched:
                target, budget = conversion.target, budgets[conversion.target.key]
                before = [c for c, _ in counted_in(target, charges)]
                _check_fits(record, conversion, budget, before, [*before, convert(new, conversion)])
            cursor = conn.execute(
                "INSERT INTO releases (created, label, unit, mechanism, definition, epsilon, "
                "delta, rho, budgeted, record) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    created,
                    label,
                    record.unit.key,
                    record.mechanism,
                    record.definition,
                    record.epsilon,
                    record.delta,
                    record.rho,
                    int(bool(covering)),
                    json.dumps(record.to_dict()),
                ),
            )
            entry_id = int(cursor.lastrowid or 0)
        return LedgerEntry(entry_id, created, label, record, bool(covering))

    def budgets(self) -> dict[str, Budget]:
        """The current budget of every unit that has one, by unit key.

        Returns
        -------
        dict of str to Budget
            The latest budget of each unit, by ``definition/scope`` key.

        Raises
        ------
        LedgerError
            If the ledger file is unusable or corrupt.
        """
        with self._transaction(write=False) as conn:
            return _budgets(conn, self.path)

    def history(self) -> list[BudgetChange]:
        """Every budget ever set, oldest first (the history is append-only).

        Returns
        -------
        list of BudgetChange
            One row per budget set, oldest first.

        Raises
        ------
        LedgerError
            If the ledger file is unusable or corrupt.
        """
        with self._transaction(write=False) as conn:
            return _history(conn, self.path)

    def summary(self) -> LedgerSummary:
        """Spend per unit, unbudgeted units and the budget history, in one snapshot.

        Returns
        -------
        LedgerSummary
            The ledger's state when it was read.

        Raises
        ------
        LedgerError
            If the ledger file is unusable or corrupt.
        """
        with self._transaction(write=False) as conn:
            history = _history(conn, self.path)
            charges = _charges(conn, self.path)
        budgets = {h.unit: Budget(h.epsilon, h.delta) for h in history}
        keys = set(budgets) | {c.unit.key for c in charges}
        units = sorted((PrivacyUnit.parse(k) for k in keys), key=_unit_order)
        rows = tuple(_unit_spend(u, budgets, charges) for u in units)
        unbudgeted = tuple(r.unit for r in rows if r.n_direct and not r.covered_by)
        named = sorted({c for u in units if u.scope.startswith(PART) for c in u.parts})
        columns = tuple(_unit_spend(PrivacyUnit("dp", PART + c), budgets, charges) for c in named)
        return LedgerSummary(
            str(self.path), rows, unbudgeted, tuple(history), len(charges), columns
        )

    def entries(self) -> list[LedgerEntry]:
        """Every charged release, oldest first.

        Returns
        -------
        list of LedgerEntry
            One entry per charge, oldest first.

        Raises
        ------
        LedgerError
            If the ledger file is unusable or corrupt (a stored record is unreadable or does
            not match the unit it is stored under).
        """
        with self._transaction(write=False) as conn:
            rows = conn.execute(
                "SELECT id, created, label, unit, budgeted, record FROM releases ORDER BY id"
            ).fetchall()
        entries = []
        for entry_id, created, label, unit, budgeted, text in rows:
            record = self._record(entry_id, text)
            if record.unit.key != unit:
                raise LedgerError(
                    f"ledger file {str(self.path)!r} is corrupt: release {entry_id} is stored "
                    f"under unit {unit!r} but its record says {record.unit.key!r}"
                )
            entries.append(LedgerEntry(int(entry_id), created, label, record, bool(budgeted)))
        return entries

    def _record(self, entry_id: int, text: Any) -> PrivacyRecord:
        """Parse a stored record; a garbled one is a corrupt ledger, not a bad argument."""
        try:
            return PrivacyRecord.from_dict(json.loads(text))
        except (ValueError, TypeError) as exc:  # JSONDecodeError and InputError are ValueErrors
            raise LedgerError(
                f"ledger file {str(self.path)!r} is corrupt: release {entry_id} has an "
                f"unreadable record ({exc})"
            ) from None

    def _unbudgeted_message(self, unit: PrivacyUnit) -> str:
        reach = [c.target.key for c in conversions(unit)]
        command = (
            f"attrpriv budget set --ledger {shlex.quote(str(self.path))} "
            f"--unit {shlex.quote(unit.key)} --epsilon E"
        )
        implied = f" nor any unit it implies ({', '.join(reach[1:])})" if len(reach) > 1 else ""
        return (
            f"unit {unit.key!r} has no budget in ledger {str(self.path)!r}{implied}; set one "
            f"first ({command}), or (in Python) charge with allow_unbudgeted=True to record it "
            "unbudgeted"
        )

    def __repr__(self) -> str:
        try:
            units = "; ".join(u.describe() for u in self.summary().units) or "empty"
        except LedgerError as exc:  # a repr never raises: say why the state is unknown
            units = f"unreadable: {exc}"
        return f"BudgetLedger({str(self.path)!r}: {units})"

    def _repr_html_(self) -> str:
        return self.summary()._repr_html_()

    # -- internals ------------------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=self.timeout, isolation_level=None)
        conn.execute("PRAGMA synchronous = FULL")
        return conn

    @contextmanager
    def _transaction(self, *, write: bool = True) -> Iterator[sqlite3.Connection]:
        """One transaction: committed if the block finishes, rolled back if it raises."""
        try:
            with closing(self._connect()) as conn:
                conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
                try:
                    yield conn
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
                conn.execute("COMMIT")
        except sqlite3.DatabaseError as exc:
            raise LedgerError(f"ledger file {str(self.path)!r} is unusable: {exc}") from None

    def _header(self) -> tuple[int, int, int]:
        """(application id, schema version, number of schema objects) of the file."""
        with self._transaction(write=False) as conn:
            return _header_of(conn)

    def _create(self) -> None:
        """Initialise a ledger in a temporary file, then link it into place.

        The ledger file therefore only ever appears complete, so an empty or truncated file at
        ``path`` is always an error, never mistaken for a new ledger. A concurrent creator that
        links first wins; the other's link fails and it uses the winner's file.
        """
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(
            prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent
        )
        os.close(fd)
        tmp = Path(name)
        try:
            with closing(sqlite3.connect(tmp, isolation_level=None)) as conn:
                conn.execute(f"PRAGMA application_id = {_APPLICATION_ID}")
                conn.execute(f"PRAGMA user_version = {_SCHEMA_VERSION}")
                conn.executescript(_DDL)
            with contextlib.suppress(FileExistsError):
                os.link(tmp, self.path)
        finally:
            tmp.unlink(missing_ok=True)

    def _check(self, header: tuple[int, int, int]) -> None:
        """Refuse files that are not intact attrpriv ledgers of this version."""
        where = f"ledger file {str(self.path)!r}"
        app, version, _ = header
        if _is_empty(header):
            raise LedgerError(f"{where} is empty: not an attrpriv ledger (truncated?)")
        if app != _APPLICATION_ID:
            raise LedgerError(f"{where} is a SQLite database but not an attrpriv ledger")
        if version == 1:
            raise LedgerError(
                f"{where} is a version-1 ledger, which sums the epsilons of every privacy "
                "definition into one total and cannot be read per privacy unit; start a new "
                "ledger file (attrpriv budget set --ledger NEW --unit KEY --epsilon E) and keep "
                "this one, unchanged, as the record of its releases"
            )
        if version != _SCHEMA_VERSION:
            raise LedgerError(f"{where} has schema version {version}; expected {_SCHEMA_VERSION}")
        with self._transaction(write=False) as conn:
            status = conn.execute("PRAGMA quick_check").fetchone()[0]
        if status != "ok":
            raise LedgerError(f"{where} is corrupt: {status}")


# -- reading the file -------------------------------------------------------------------------
def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _header_of(conn: sqlite3.Connection) -> tuple[int, int, int]:
    app = conn.execute("PRAGMA application_id").fetchone()[0]
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    objects = conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()[0]
    return int(app), int(version), int(objects)


def _is_empty(header: tuple[int, int, int]) -> bool:
    app, _, objects = header
    return app == 0 and objects == 0


def _stored_unit(text: Any, what: str, path: Path) -> PrivacyUnit:
    try:
        return PrivacyUnit.parse(text)
    except InputError as exc:
        raise LedgerError(
            f"ledger file {str(path)!r} is corrupt: {what} has an unreadable unit ({exc})"
        ) from None


def _history(conn: sqlite3.Connection, path: Path) -> list[BudgetChange]:
    rows = conn.execute(
        "SELECT id, created, unit, epsilon, delta, note FROM budgets ORDER BY id"
    ).fetchall()
    history = []
    for row_id, created, unit, epsilon, delta, note in rows:
        key = _stored_unit(unit, f"budget {row_id}", path).key
        history.append(BudgetChange(int(row_id), created, key, float(epsilon), float(delta), note))
    return history


def _budgets(conn: sqlite3.Connection, path: Path) -> dict[str, Budget]:
    """The current budget of each unit: its latest history row."""
    return {h.unit: Budget(h.epsilon, h.delta) for h in _history(conn, path)}


def _charges(conn: sqlite3.Connection, path: Path) -> list[Charge]:
    rows = conn.execute(
        "SELECT id, unit, mechanism, epsilon, delta, rho FROM releases ORDER BY id"
    ).fetchall()
    return [
        Charge(
            _stored_unit(unit, f"release {row_id}", path),
            mechanism,
            float(epsilon),
            float(delta),
            None if rho is None else float(rho),
        )
        for row_id, unit, mechanism, epsilon, delta, rho in rows
    ]


def _check_fits(
    record: PrivacyRecord,
    conversion: Conversion,
    budget: Budget,
    before: Sequence[Charge],
    after: Sequence[Charge],
) -> None:
    """Refuse ``record`` unless the charges of ``conversion.target`` with it fit ``budget``."""
    target = conversion.target
    if compose(target, after, budget, tightest=False).fits:
        return
    epsilon, delta = conversion.convert(record.epsilon, record.delta)
    if conversion.covers is not None:
        counted = (
            f", counted there for the columns it shares: {', '.join(sorted(conversion.covers))}"
        )
    elif conversion.source == target:
        counted = ""
    else:
        counted = f", counted there as epsilon={epsilon:g}, delta={delta:g}"
    raise BudgetExceededError(
        f"release '{record.mechanism}' ({record.unit.key}, epsilon={record.epsilon:g}, "
        f"delta={record.delta:g}{counted}) would exceed the budget of unit {target.key!r}: "
        f"spent {describe(compose(target, before, budget))}, of epsilon="
        f"{budget.epsilon:g}, delta={budget.delta:g}"
    )


def _raises(current: Budget, budget: Budget) -> bool:
    return budget.epsilon > current.epsilon or budget.delta > current.delta


def _note(current: Budget | None, budget: Budget, *, raised: bool, spent: bool) -> str:
    if current is None:
        return "set"
    if raised:
        return "raised with allow_raise" if spent else "raised"
    if budget == current:
        return "set again (unchanged)"
    return "lowered"


def _unit_order(unit: PrivacyUnit) -> tuple[int, int, str]:
    scopes = ("add-remove", "substitute")
    rank = scopes.index(unit.scope) if unit.scope in scopes else len(scopes)
    return DEFINITIONS.index(unit.definition), rank, unit.scope


def _unit_spend(
    unit: PrivacyUnit, budgets: dict[str, Budget], charges: Sequence[Charge]
) -> UnitSpend:
    budget = budgets.get(unit.key)
    counted = counted_in(unit, charges)
    converted = [c for c, conv in counted if conv.source != unit]
    spend = compose(unit, [c for c, _ in counted], budget)
    rule, proven = composition_rule(
        unit,
        frozenset(conv.source for _, conv in counted),
        frozenset(c.mechanism for c, _ in counted),
    )
    if spend.accounting == ZCDP:
        rule = ZCDP_RULE
    elif spend.accounting == PLD:
        rule = PLD_RULE
    partial = [conv for _, conv in counted if conv.covers is not None]
    covers = None
    if partial:
        covers = tuple(sorted(frozenset.intersection(*(c.covers or frozenset() for c in partial))))
        held = ", ".join(covers) if covers else "no column"
        rule += (
            f"; a guarantee for changes to {held} only: {len(partial)} release(s) counted here "
            "protect only the columns they share with this unit"
        )
        proven = False
    remaining = None
    if budget is not None:
        remaining = Budget(
            max(budget.epsilon - spend.used.epsilon, 0.0), max(budget.delta - spend.used.delta, 0.0)
        )
    sources = sorted({conv.source for _, conv in counted if conv.source != unit}, key=_unit_order)
    budgeted = [PrivacyUnit.parse(key) for key in budgets]
    covered = [c.target for c in conversions(unit, budgeted) if c.target.key in budgets]
    overlapping = [b for b in budgeted if overlap(unit, b) is not None]
    return UnitSpend(
        unit=unit.key,
        budget=budget,
        spent=spend.basic,
        rho=spend.rho,
        zcdp_epsilon=spend.zcdp_epsilon,
        pld_epsilon=spend.pld_epsilon,
        accounting=spend.accounting,
        used=spend.used,
        remaining=remaining,
        n_direct=len(counted) - len(converted),
        n_converted=len(converted),
        converted_from=tuple(s.key for s in sources),
        covered_by=tuple(c.key for c in sorted(covered, key=_unit_order)),
        overlaps=tuple(b.key for b in sorted(overlapping, key=_unit_order)),
        covers=covers,
        rule=rule,
        proven=proven,
    )
