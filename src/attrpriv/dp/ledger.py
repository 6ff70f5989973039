"""A privacy-budget ledger in SQLite. A release is charged *before* its noise is drawn, to its unit,
every unit its guarantee provably implies and every budget sharing its columns (never across
unrelated units); it must fit every budget it counts against. See ``docs/ledger-and-audit.md``."""

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

from attrpriv._checks import check_delta, check_epsilon, check_flag, check_positive
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
    created, unit, note : str
        When the budget was set (ISO 8601 UTC, to the second), the unit's ``definition/scope`` key,
        and what the change was, e.g. ``"set"``, ``"raised"`` or ``"lowered"``.
    epsilon, delta : float
        The unit's allowance from then on.
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
    created, label : str
        When it was charged (ISO 8601 UTC, to the second), and the free-text name it was given.
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

    ``used`` is the tightest accounting that applies (``docs/ledger-and-audit.md``).

    Parameters
    ----------
    unit : str
        The privacy unit's key, ``definition/scope``.
    budget, remaining : Budget or None
        The unit's current budget, and ``budget - used`` floored at 0 (None without a budget).
    spent, used : Budget
        The basic sequential composition of every counted charge, and the (epsilon, delta) used.
    rho, zcdp_epsilon, pld_epsilon : float or None
        The zCDP total (row DP units, every counted charge with a zCDP bound), it as epsilon, and
        the charges composed as privacy-loss distributions as epsilon, at the budget's delta.
    accounting : str
        The accounting used: ``"basic"``, ``"zcdp"`` or ``"pld"``.
    n_direct, n_converted : int
        The numbers of charges made in the unit itself and counting here through a conversion.
    converted_from, covered_by, overlaps : tuple of str
        The units whose charges count here through a conversion; the budgeted units its own charges
        count against; those charged too because they protect columns in common (no implication).
    covers : tuple of str or None
        None for a guarantee on all of the unit; else the only columns it is a guarantee for.
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
        """The unit's state in a few words: ``dp/add-remove epsilon 1.5 of epsilon 3 used``.

        Returns
        -------
        str
            The used epsilon (and delta if not 0) against the budget, or ``"... spent, no budget"``.
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
    units, columns : tuple of UnitSpend
        One row per unit with a budget or charges of its own (row-level DP units first), and one
        per ``dp/substitute:<column>`` that a budget or release protects by name (default ()).
    unbudgeted : tuple of str
        The units with charges of their own that no budget covers.
    history : tuple of BudgetChange
        Every budget ever set, oldest first.
    n_releases : int
        The number of charged releases.
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
        """One row per privacy unit: budget, spend under each accounting, what remains, charges.

        Returns
        -------
        pandas.DataFrame
            Indexed by ``unit``; the columns mirror the fields of :class:`UnitSpend`.
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
            The fields by name plus a ``composition`` sentence; rows as their ``to_dict()``.
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

    Each charge is one ``BEGIN IMMEDIATE`` transaction, so concurrent writers are serialised. Every
    method raises :class:`LedgerError` on a corrupt or unusable file.

    Parameters
    ----------
    path : str or pathlib.Path
        The ledger file.
    create : bool, optional
        Make a new ledger if the file does not exist (else :class:`LedgerError`).
    timeout : float, optional
        Seconds to wait for another writer's lock before giving up.

    Raises
    ------
    LedgerError
        The file is missing (and ``create`` is False) or is not an intact ledger of this version.
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
            The unit's total epsilon allowance (> 0).
        delta : float or None, optional
            The unit's total delta allowance, in [0, 1); None keeps the current delta (0 if none).
        unit : PrivacyUnit or str, optional
            The privacy unit or its ``definition/scope`` key; default ``dp/add-remove``.
        allow_raise : bool, optional
            Permit raising a budget that is partly spent (recorded in the history either way).

        Returns
        -------
        Budget
            The new budget of the unit.

        Raises
        ------
        BudgetExceededError
            The budget is below the unit's spend, or raises a spent budget without ``allow_raise``.
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

        It counts, converted, in every budgeted unit of ``conversions(record.unit)``.

        Parameters
        ----------
        record : PrivacyRecord
            The release's guarantee.
        label : str, optional
            A free-text name for the release.
        allow_unbudgeted : bool, optional
            Record it even if no budget covers its unit; budgets that do are enforced regardless.

        Returns
        -------
        LedgerEntry
            The stored entry.

        Raises
        ------
        BudgetExceededError
            No budget covers the unit (unless allowed), or the release would exceed one that does.
        LedgerError
            ``record`` is not a :class:`PrivacyRecord`.
        """
        if not isinstance(record, PrivacyRecord):
            raise LedgerError(f"can only charge a PrivacyRecord, got {type(record).__name__}")
        if not isinstance(label, str):
            raise InputError(f"label must be a string, got {type(label).__name__}")
        allow_unbudgeted = check_flag(allow_unbudgeted, "allow_unbudgeted")
        created = _now()
        with self._transaction() as conn:
            budgets, charges = _budgets(conn, self.path), _charges(conn, self.path)
            covered = self._admit(record, budgets, charges, allow_unbudgeted=allow_unbudgeted)
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
                    int(covered),
                    json.dumps(record.to_dict()),
                ),
            )
            entry_id = int(cursor.lastrowid or 0)
        return LedgerEntry(entry_id, created, label, record, covered)

    def check(self, records: Sequence[PrivacyRecord], *, allow_unbudgeted: bool = False) -> None:
        """Refuse ``records`` unless charging them in order would fit; writes nothing.

        Each record is admitted as :meth:`charge` would admit it after the ledger's charges and
        the records before it in the list, so a plan can be refused before any data is read.

        Parameters
        ----------
        records : sequence of PrivacyRecord
            The planned releases' guarantees, in the order they would be charged.
        allow_unbudgeted : bool, optional
            Admit records that no budget covers; budgets that do are enforced regardless.

        Raises
        ------
        BudgetExceededError
            A record's unit has no budget (unless allowed), or it would exceed one; the message
            names the first such record, ``records[i]``.
        InputError
            ``records`` is not a sequence of :class:`PrivacyRecord`, or ``allow_unbudgeted`` is
            not True or False.
        """
        if isinstance(records, str | bytes) or not isinstance(records, Sequence):
            raise InputError(
                f"records must be a sequence of PrivacyRecord, got {type(records).__name__}"
            )
        for index, record in enumerate(records):
            if not isinstance(record, PrivacyRecord):
                raise InputError(
                    f"records[{index}] must be a PrivacyRecord, got {type(record).__name__}"
                )
        allow_unbudgeted = check_flag(allow_unbudgeted, "allow_unbudgeted")
        with self._transaction(write=False) as conn:
            budgets, charges = _budgets(conn, self.path), _charges(conn, self.path)
        for index, record in enumerate(records):
            try:
                self._admit(record, budgets, charges, allow_unbudgeted=allow_unbudgeted)
            except BudgetExceededError as exc:
                earlier = f" (spent includes records[:{index}])" if index else ""
                raise BudgetExceededError(f"records[{index}]: {exc}{earlier}") from None
            charges.append(_charge_of(record))

    def budgets(self) -> dict[str, Budget]:
        """The current budget of every unit that has one.

        Returns
        -------
        dict of str to Budget
            The latest budget of each unit, by ``definition/scope`` key.
        """
        with self._transaction(write=False) as conn:
            return _budgets(conn, self.path)

    def history(self) -> list[BudgetChange]:
        """Every budget ever set, oldest first (the history is append-only).

        Returns
        -------
        list of BudgetChange
            One row per budget set.
        """
        with self._transaction(write=False) as conn:
            return _history(conn, self.path)

    def summary(self) -> LedgerSummary:
        """Spend per unit, unbudgeted units and the budget history, in one snapshot.

        Returns
        -------
        LedgerSummary
            The ledger's state when it was read.
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
            One entry per charge.
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

    def _admit(
        self,
        record: PrivacyRecord,
        budgets: dict[str, Budget],
        charges: Sequence[Charge],
        *,
        allow_unbudgeted: bool,
    ) -> bool:
        """Refuse ``record`` unless it fits every budget it counts against after ``charges``.

        Returns whether a budget covers its unit. Shared by :meth:`charge` and :meth:`check`.
        """
        budgeted = [PrivacyUnit.parse(key) for key in budgets]
        covering = [c for c in conversions(record.unit, budgeted) if c.target.key in budgets]
        if not covering and not allow_unbudgeted:
            raise BudgetExceededError(self._unbudgeted_message(record.unit))
        new = _charge_of(record)
        touched = [c for b in budgeted if (c := charged(record.unit, b)) is not None]
        for conversion in touched:
            target, budget = conversion.target, budgets[conversion.target.key]
            before = [c for c, _ in counted_in(target, charges)]
            _check_fits(record, conversion, budget, before, [*before, convert(new, conversion)])
        return bool(covering)

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
        """Build the ledger in a temporary file, then link it in place (the first link wins)."""
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


def _charge_of(record: PrivacyRecord) -> Charge:
    """The charge ``record`` adds, as :func:`_charges` reads it back once stored."""
    return Charge(record.unit, record.mechanism, record.epsilon, record.delta, record.rho)


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


def _spend_rule(
    unit: PrivacyUnit, counted: Sequence[tuple[Charge, Conversion]], accounting: str
) -> tuple[str, bool, tuple[str, ...] | None]:
    """The rule composing ``counted`` in ``unit``, whether it is proven, the columns it holds."""
    rule, proven = composition_rule(
        unit,
        frozenset(conv.source for _, conv in counted),
        frozenset(c.mechanism for c, _ in counted),
    )
    if accounting == ZCDP:
        rule = ZCDP_RULE
    elif accounting == PLD:
        rule = PLD_RULE
    partial = [conv for _, conv in counted if conv.covers is not None]
    if not partial:
        return rule, proven, None
    covers = tuple(sorted(frozenset.intersection(*(c.covers or frozenset() for c in partial))))
    held = ", ".join(covers) if covers else "no column"
    rule += (
        f"; a guarantee for changes to {held} only: {len(partial)} release(s) counted here "
        "protect only the columns they share with this unit"
    )
    return rule, False, covers


def _remaining(budget: Budget, used: Budget) -> Budget:
    """What is left of ``budget`` after ``used``, never below zero."""
    return Budget(max(budget.epsilon - used.epsilon, 0.0), max(budget.delta - used.delta, 0.0))


def _unit_spend(
    unit: PrivacyUnit, budgets: dict[str, Budget], charges: Sequence[Charge]
) -> UnitSpend:
    budget = budgets.get(unit.key)
    counted = counted_in(unit, charges)
    converted = [c for c, conv in counted if conv.source != unit]
    spend = compose(unit, [c for c, _ in counted], budget)
    rule, proven, covers = _spend_rule(unit, counted, spend.accounting)
    remaining = None if budget is None else _remaining(budget, spend.used)
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
