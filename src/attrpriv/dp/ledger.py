"""A privacy-budget ledger persisted in SQLite: one file per dataset or project.

Every release is charged to the ledger *before* its noise is drawn. Charges compose by basic
sequential composition (epsilons add up, deltas add up), and a charge that would exceed the
configured budget is refused. Each charge is one ``BEGIN IMMEDIATE`` transaction: concurrent
writers are serialised by SQLite's lock, and a crash mid-write rolls back to the last commit.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from attrpriv._checks import check_delta, check_epsilon, check_positive
from attrpriv.dp.record import PrivacyRecord
from attrpriv.errors import BudgetExceededError, LedgerError

_APPLICATION_ID = 0x41545052  # "ATPR": marks a SQLite file as an attrpriv ledger
_SCHEMA_VERSION = 1
_TOLERANCE = 1e-9  # relative slack so that 10 x 0.1 fits a budget of 1.0

_DDL = """
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


@dataclass(frozen=True)
class Budget:
    """A total (epsilon, delta) allowance, or what is left of it."""

    epsilon: float
    delta: float


@dataclass(frozen=True)
class LedgerEntry:
    """One charged release."""

    id: int
    created: str
    label: str
    record: PrivacyRecord


@dataclass(frozen=True)
class LedgerSummary:
    """Budget, spend (basic composition) and what remains."""

    path: str
    budget: Budget | None
    spent: Budget
    remaining: Budget | None
    n_releases: int

    def to_dict(self) -> dict[str, Any]:
        def pair(b: Budget | None) -> dict[str, float] | None:
            return None if b is None else {"epsilon": b.epsilon, "delta": b.delta}

        return {
            "path": self.path,
            "budget": pair(self.budget),
            "spent": pair(self.spent),
            "remaining": pair(self.remaining),
            "n_releases": self.n_releases,
            "composition": "basic sequential (sum of epsilons, sum of deltas)",
        }


class BudgetLedger:
    """Records releases against a budget in the SQLite file at ``path``.

    ``create=True`` makes a new ledger if the file does not exist; an existing file must be an
    attrpriv ledger (checked on open), else :class:`LedgerError`.
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
    def set_budget(self, epsilon: float, delta: float = 0.0) -> Budget:
        """Set the total budget; refused if it is below what is already spent."""
        budget = Budget(check_epsilon(epsilon), check_delta(delta))
        with self._transaction() as conn:
            spent = _spent(conn)
            if not _fits(spent.epsilon, budget.epsilon) or not _fits(spent.delta, budget.delta):
                raise BudgetExceededError(
                    f"budget (epsilon={budget.epsilon:g}, delta={budget.delta:g}) is below what "
                    f"is already spent (epsilon={spent.epsilon:g}, delta={spent.delta:g})"
                )
            conn.execute(
                "INSERT INTO budget (id, epsilon, delta) VALUES (1, ?, ?) "
                "ON CONFLICT(id) DO UPDATE SET epsilon = excluded.epsilon, delta = excluded.delta",
                (budget.epsilon, budget.delta),
            )
        return budget

    def charge(self, record: PrivacyRecord, label: str = "") -> LedgerEntry:
        """Record ``record`` if it fits the remaining budget, else raise BudgetExceededError."""
        if not isinstance(record, PrivacyRecord):
            raise LedgerError(f"can only charge a PrivacyRecord, got {type(record).__name__}")
        created = datetime.now(UTC).isoformat(timespec="seconds")
        with self._transaction() as conn:
            budget = _budget(conn)
            if budget is None:
                raise BudgetExceededError(
                    f"ledger {str(self.path)!r} has no budget; set one first "
                    "(attrpriv budget set --ledger FILE --epsilon E --delta D)"
                )
            spent = _spent(conn)
            _check_fits(record, spent, budget)
            cursor = conn.execute(
                "INSERT INTO releases (created, label, mechanism, definition, epsilon, delta, "
                "record) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    created,
                    label,
                    record.mechanism,
                    record.definition,
                    record.epsilon,
                    record.delta,
                    json.dumps(record.to_dict()),
                ),
            )
            entry_id = int(cursor.lastrowid or 0)
        return LedgerEntry(entry_id, created, label, record)

    def summary(self) -> LedgerSummary:
        """Budget, spend and remaining budget, read in one consistent snapshot."""
        with self._transaction(write=False) as conn:
            budget, spent = _budget(conn), _spent(conn)
            count = int(conn.execute("SELECT COUNT(*) FROM releases").fetchone()[0])
        remaining = None
        if budget is not None:
            remaining = Budget(
                max(budget.epsilon - spent.epsilon, 0.0), max(budget.delta - spent.delta, 0.0)
            )
        return LedgerSummary(str(self.path), budget, spent, remaining, count)

    def entries(self) -> list[LedgerEntry]:
        """Every charged release, oldest first."""
        with self._transaction(write=False) as conn:
            rows = conn.execute("SELECT id, created, label, record FROM releases ORDER BY id")
            return [LedgerEntry(int(i), c, lab, self._record(i, r)) for i, c, lab, r in rows]

    def _record(self, entry_id: int, text: Any) -> PrivacyRecord:
        """Parse a stored record; a garbled one is a corrupt ledger, not a bad argument."""
        try:
            return PrivacyRecord.from_dict(json.loads(text))
        except (ValueError, TypeError) as exc:  # JSONDecodeError and InputError are ValueErrors
            raise LedgerError(
                f"ledger file {str(self.path)!r} is corrupt: release {entry_id} has an "
                f"unreadable record ({exc})"
            ) from None

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
        """Refuse files that are not intact attrpriv ledgers of a known version."""
        where = f"ledger file {str(self.path)!r}"
        app, version, _ = header
        if _is_empty(header):
            raise LedgerError(f"{where} is empty: not an attrpriv ledger (truncated?)")
        if app != _APPLICATION_ID:
            raise LedgerError(f"{where} is a SQLite database but not an attrpriv ledger")
        if version != _SCHEMA_VERSION:
            raise LedgerError(f"{where} has schema version {version}; expected {_SCHEMA_VERSION}")
        with self._transaction(write=False) as conn:
            status = conn.execute("PRAGMA quick_check").fetchone()[0]
        if status != "ok":
            raise LedgerError(f"{where} is corrupt: {status}")


def _header_of(conn: sqlite3.Connection) -> tuple[int, int, int]:
    app = conn.execute("PRAGMA application_id").fetchone()[0]
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    objects = conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()[0]
    return int(app), int(version), int(objects)


def _is_empty(header: tuple[int, int, int]) -> bool:
    app, _, objects = header
    return app == 0 and objects == 0


def _budget(conn: sqlite3.Connection) -> Budget | None:
    row = conn.execute("SELECT epsilon, delta FROM budget WHERE id = 1").fetchone()
    return None if row is None else Budget(float(row[0]), float(row[1]))


def _spent(conn: sqlite3.Connection) -> Budget:
    rows = conn.execute("SELECT epsilon, delta FROM releases").fetchall()
    return Budget(math.fsum(r[0] for r in rows), math.fsum(r[1] for r in rows))


def _fits(total: float, limit: float) -> bool:
    return total <= limit * (1.0 + _TOLERANCE) + 1e-15


def _check_fits(record: PrivacyRecord, spent: Budget, budget: Budget) -> None:
    eps_after, delta_after = spent.epsilon + record.epsilon, spent.delta + record.delta
    if not _fits(eps_after, budget.epsilon) or not _fits(delta_after, budget.delta):
        raise BudgetExceededError(
            f"release '{record.mechanism}' (epsilon={record.epsilon:g}, delta={record.delta:g}) "
            f"would exceed the budget: spent epsilon={spent.epsilon:g} of {budget.epsilon:g}, "
            f"delta={spent.delta:g} of {budget.delta:g}"
        )
