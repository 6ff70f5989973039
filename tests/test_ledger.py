"""Budget ledger: charging, refusals, damaged files, concurrent writers and crashes mid-write."""

from __future__ import annotations

import json
import multiprocessing
import os
import sqlite3
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from attrpriv.dp import BudgetLedger, PrivacyRecord
from attrpriv.dp import ledger as ledger_module
from attrpriv.errors import BudgetExceededError, InputError, LedgerError

# fork is quick (no re-import); spawn is the portable fallback. Children only use SQLite.
START = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
INSERT = (
    "INSERT INTO releases (created, label, mechanism, definition, epsilon, delta, record) "
    "VALUES ('2000-01-01T00:00:00+00:00', ?, 'ghost', 'dp', ?, 0.0, ?)"
)


def _record(epsilon: float = 0.1, delta: float = 0.0, mechanism: str = "laplace") -> PrivacyRecord:
    return PrivacyRecord(
        mechanism=mechanism,
        definition="dp",
        epsilon=epsilon,
        delta=delta,
        protects="whether one person is in the data",
        sensitivity=1.0,
        noise={"distribution": "laplace", "scale": 1.0 / epsilon},
    )


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "budget" / "ledger.db"


@pytest.fixture
def ledger(path: Path) -> BudgetLedger:
    return BudgetLedger(path)


def _labels(ledger: BudgetLedger) -> list[str]:
    return [entry.label for entry in ledger.entries()]


def _one_line_naming(exc: pytest.ExceptionInfo[Exception], path: Path) -> None:
    message = str(exc.value)
    assert str(path) in message
    assert "\n" not in message


# -- charging -----------------------------------------------------------------------------------
def test_new_ledger_is_empty(ledger: BudgetLedger, path: Path) -> None:
    summary = ledger.summary()
    assert path.exists()
    assert summary.budget is None and summary.remaining is None
    assert summary.n_releases == 0 and summary.spent.epsilon == 0.0
    assert ledger.entries() == []


def test_charge_without_budget_is_refused(ledger: BudgetLedger) -> None:
    with pytest.raises(BudgetExceededError, match="has no budget; set one first"):
        ledger.charge(_record())
    assert ledger.summary().n_releases == 0


def test_ten_tenths_fit_exactly_and_the_eleventh_is_refused(ledger: BudgetLedger) -> None:
    ledger.set_budget(1.0)
    for i in range(10):
        ledger.charge(_record(0.1), label=f"q{i}")
    with pytest.raises(BudgetExceededError, match=r"would exceed the budget: spent epsilon=1 of 1"):
        ledger.charge(_record(0.1), label="one too many")
    summary = ledger.summary()
    assert summary.n_releases == 10
    assert summary.spent.epsilon == pytest.approx(1.0, abs=1e-12)
    assert summary.remaining is not None and summary.remaining.epsilon == pytest.approx(
        0, abs=1e-12
    )
    assert "one too many" not in _labels(ledger)
    # a refused charge leaves nothing behind, and a smaller one still does not fit
    with pytest.raises(BudgetExceededError):
        ledger.charge(_record(1e-6))


def test_delta_is_budgeted_too(ledger: BudgetLedger) -> None:
    ledger.set_budget(2.0, delta=1e-5)
    ledger.charge(_record(0.5, delta=1e-5))
    with pytest.raises(BudgetExceededError, match=r"delta=1e-05 of 1e-05"):
        ledger.charge(_record(0.5, delta=1e-7))
    ledger.charge(_record(0.5, delta=0.0))  # pure epsilon still fits
    spent = ledger.summary().spent
    assert (spent.epsilon, spent.delta) == (1.0, 1e-5)


def test_budget_changes(ledger: BudgetLedger) -> None:
    ledger.set_budget(1.0)
    ledger.charge(_record(0.6))
    with pytest.raises(BudgetExceededError, match=r"is below what is already spent \(epsilon=0.6"):
        ledger.set_budget(0.5)
    assert ledger.summary().budget is not None
    assert ledger.summary().budget.epsilon == 1.0  # type: ignore[union-attr]
    ledger.set_budget(0.6)  # exactly the spend is allowed
    with pytest.raises(BudgetExceededError):
        ledger.charge(_record(0.01))
    ledger.set_budget(3.0)
    ledger.charge(_record(2.4))
    assert ledger.summary().remaining.epsilon == pytest.approx(0.0, abs=1e-12)  # type: ignore[union-attr]


@pytest.mark.parametrize(("epsilon", "delta"), [(0.0, 0.0), (-1.0, 0.0), (1.0, 1.0), (True, 0.0)])
def test_bad_budgets_refused(ledger: BudgetLedger, epsilon: Any, delta: Any) -> None:
    with pytest.raises(InputError):
        ledger.set_budget(epsilon, delta)
    assert ledger.summary().budget is None


def test_charge_needs_a_record(ledger: BudgetLedger) -> None:
    ledger.set_budget(1.0)
    with pytest.raises(LedgerError, match="can only charge a PrivacyRecord, got dict"):
        ledger.charge(_record().to_dict())  # type: ignore[arg-type]


def test_entries_round_trip_and_persist(ledger: BudgetLedger, path: Path) -> None:
    ledger.set_budget(5.0, 1e-3)
    records = [_record(0.5, mechanism="a"), _record(1.0, 1e-4, mechanism="b"), _record(0.25)]
    charged = [ledger.charge(r, label=f"release {i}") for i, r in enumerate(records)]
    reopened = BudgetLedger(path, create=False)
    entries = reopened.entries()
    assert [e.record for e in entries] == records
    assert [e.label for e in entries] == ["release 0", "release 1", "release 2"]
    assert [e.id for e in entries] == [c.id for c in charged]
    assert entries[0].id < entries[1].id < entries[2].id
    assert entries == charged
    assert datetime.fromisoformat(entries[0].created).tzinfo is not None
    summary = reopened.summary()
    assert summary.spent.epsilon == 1.75 and summary.spent.delta == 1e-4
    assert json.loads(json.dumps(summary.to_dict()))["n_releases"] == 3


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
    with sqlite3.connect(target) as conn:
        conn.execute("CREATE TABLE releases (id INTEGER PRIMARY KEY, name TEXT)")
        conn.execute("INSERT INTO releases (name) VALUES ('v1.0')")
    conn.close()
    with pytest.raises(
        LedgerError, match="is a SQLite database but not an attrpriv ledger"
    ) as info:
        BudgetLedger(target)
    _one_line_naming(info, target)


def test_unknown_schema_version_is_refused(ledger: BudgetLedger, path: Path) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA user_version = 99")
    conn.close()
    with pytest.raises(LedgerError, match="schema version 99; expected 1") as info:
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
    with sqlite3.connect(path) as conn:
        conn.execute(
            """UPDATE releases SET record = '{"mechanism": "lap' WHERE label = 'damaged'"""
        )
    conn.close()
    reopened = BudgetLedger(path)  # structurally sound: it opens, and sums still work
    assert reopened.summary().n_releases == 2
    with pytest.raises(LedgerError, match="is corrupt: release 2 has an unreadable record") as info:
        reopened.entries()
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

    def interleave(record: PrivacyRecord, spent: Any, budget: Any) -> None:
        check_fits(record, spent, budget)
        if not attempts:
            attempts.append("tried")
            with pytest.raises(LedgerError, match="database is locked"):
                other.charge(_record(0.5), label="sneaked in")

    monkeypatch.setattr(ledger_module, "_check_fits", interleave)
    ledger.charge(_record(0.5), label="second")
    assert attempts == ["tried"]
    assert _labels(ledger) == ["first", "second"]
    assert ledger.summary().spent.epsilon == 1.0


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
    assert ledger.summary().spent.epsilon == pytest.approx(1.0, abs=1e-9)


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
    assert reopened.summary().spent.epsilon == 0.25
    if spilled:
        assert not journal.exists()  # the hot journal was played back
        assert path.read_bytes() == committed  # byte for byte the last commit
    reopened.charge(_record(0.75), label="after")
    with pytest.raises(BudgetExceededError):
        reopened.charge(_record(0.01))
    assert _labels(reopened) == ["before", "after"]
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()


def test_an_existing_empty_file_is_not_mistaken_for_a_new_ledger(tmp_path: Path) -> None:
    path = tmp_path / "truncated.ledger"
    path.write_bytes(b"")
    with pytest.raises(LedgerError, match="is empty"):
        BudgetLedger(path)
    assert path.read_bytes() == b""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["truncated.ledger"]  # no temp left
