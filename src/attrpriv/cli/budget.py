"""``attrpriv budget``: the privacy-budget ledger of a dataset or project, one budget per unit."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table
from rich.text import Text

from attrpriv.cli._common import (
    OutFile,
    check_ledger,
    console,
    examples,
    group,
    html_option,
    json_writer,
    split_names,
    text_writer,
    write_outputs,
)
from attrpriv.cli._outputs import Outputs, check_out_path
from attrpriv.errors import InputError

if TYPE_CHECKING:
    from attrpriv.dp.accounting import Budget
    from attrpriv.dp.ledger import LedgerEntry, LedgerSummary, UnitSpend
    from attrpriv.dp.units import PrivacyUnit

app = group("budget")

LedgerOption = Annotated[Path, typer.Option("--ledger", help="The ledger file (SQLite).")]
UNIT_HELP = (
    "The privacy unit the budget is for, written definition/scope: dp/add-remove (the "
    "default), dp/substitute, dependent-dp/answer, attribute-privacy/<secrets> or "
    "pufferfish/<secrets>. Spend is composed only within a unit."
)


@app.command(
    "set",
    epilog=examples(
        "attrpriv budget set --ledger survey.ledger --epsilon 3 --delta 1e-6",
        "attrpriv budget set --ledger adult.ledger --protect sex,race --epsilon 1",
        "attrpriv budget set --ledger survey.ledger --unit dependent-dp/answer --epsilon 2",
        "attrpriv budget set --ledger survey.ledger --epsilon 4 --allow-raise",
    ),
)
def set_(
    ledger: LedgerOption,
    epsilon: Annotated[float, typer.Option(help="Total epsilon of the unit (> 0).")],
    delta: Annotated[
        float | None,
        typer.Option(
            help="Total delta of the unit, in [0, 1). Without it, the unit keeps its current "
            "delta (0 for a new budget)."
        ),
    ] = None,
    unit: Annotated[str | None, typer.Option(help=UNIT_HELP)] = None,
    protect: Annotated[
        str | None,
        typer.Option(
            help="Columns to protect, comma-separated: one budget on each (unit "
            "dp/substitute:<column>), charged by every release that protects the column or "
            "the whole row, whatever else it protects. Instead of --unit."
        ),
    ] = None,
    allow_raise: Annotated[
        bool,
        typer.Option(
            "--allow-raise",
            help="Allow raising a budget that is partly spent (recorded in the history).",
        ),
    ] = False,
) -> None:
    """Create the ledger if needed and set the budget of one privacy unit (or of each column).

    A budget is never set below what its unit has spent; raising one that is partly spent
    needs --allow-raise. Every change is appended, with its time, to the budget history. A
    value not given (--delta) is kept as it is.
    """
    from attrpriv._checks import check_delta, check_epsilon
    from attrpriv.dp.ledger import BudgetLedger

    # everything is checked before the ledger file is created: bad input writes nothing
    checked = check_epsilon(epsilon, "--epsilon")
    if delta is not None:
        check_delta(delta, "--delta")
    targets = _targets(unit, protect)
    if ledger.exists():
        check_ledger(ledger)
    else:
        check_out_path(ledger, "--ledger")
    book = BudgetLedger(ledger)
    for target in targets:
        budget = book.set_budget(checked, delta, unit=target, allow_raise=allow_raise)
        note = book.history()[-1].note
        console.print(
            f"budget of {target.key} in {ledger}: epsilon={budget.epsilon:g}, "
            f"delta={budget.delta:g} ({note})",
            markup=False,
            highlight=False,
        )


def _targets(unit: str | None, protect: str | None) -> list[PrivacyUnit]:
    """The units of ``budget set``: ``--unit`` (default dp/add-remove), or one per column."""
    from attrpriv.dp.units import PART, PrivacyUnit

    if unit is not None and protect is not None:
        raise InputError("give --unit or --protect, not both")
    if protect is None:
        return [PrivacyUnit.coerce(unit or "dp/add-remove", "--unit")]
    columns = split_names(protect) or []
    for column in columns:
        if "@" in column:
            raise InputError(f"--protect: a column name cannot hold '@', got {column!r}")
    if len(set(columns)) != len(columns):
        raise InputError(f"--protect names a column twice: {columns}")
    return [PrivacyUnit("dp", PART + column) for column in columns]


@app.command(
    epilog=examples(
        "attrpriv budget show --ledger survey.ledger",
        "attrpriv budget show --ledger survey.ledger --out budget.json --html budget.html",
    )
)
def show(
    ledger: LedgerOption,
    out: OutFile = None,
    html: Annotated[
        Path | None,
        html_option(
            "Write an HTML page of the ledger to this file (.html or .htm): the spend per "
            "privacy unit, and over time from the releases and the budget history."
        ),
    ] = None,
) -> None:
    """Show, per privacy unit, the budget, the spend and its composition rule, and what remains.

    Units are never added together. For row-level DP units basic composition, zCDP and
    privacy-loss distributions are shown where they apply; the smallest valid one is used.
    Then, per protected column, everything charged against it; every release with its unit;
    and the budget history.
    """
    from attrpriv.dp.ledger import BudgetLedger

    outputs = Outputs()
    outputs.add("--out", out)
    outputs.add("--html", html)
    book = BudgetLedger(ledger, create=False)
    summary, entries = book.summary(), book.entries()
    for row in summary.units:
        console.print(_unit_table(row))
    if not summary.units:
        console.print("no budgets and no releases yet")
    if summary.columns:
        console.print(_columns_table(summary))
    if summary.unbudgeted:
        console.print(
            f"unbudgeted units (charged with allow_unbudgeted): {', '.join(summary.unbudgeted)}",
            markup=False,
            highlight=False,
        )
    console.print(_releases_table(entries) if entries else "no releases yet")
    console.print(_history_table(summary) if summary.history else "no budget set yet")
    payload = {
        **summary.to_dict(),
        "releases": [
            {
                "id": e.id,
                "created": e.created,
                "label": e.label,
                "unit": e.record.unit.key,
                "budgeted": e.budgeted,
                "record": e.record.to_dict(),
            }
            for e in entries
        ],
    }
    page = None
    if html is not None:
        from attrpriv.report.ledger import render_ledger_html

        page = render_ledger_html(summary, entries, title=f"Privacy budget ledger {ledger.name}")
    write_outputs(
        outputs,
        {
            "--out": None if out is None else json_writer(payload),
            "--html": None if page is None else text_writer(page),
        },
    )


def _unit_table(row: UnitSpend) -> Table:
    """One privacy unit: its budget, its spend under each accounting, and how it composes."""
    if row.zcdp_epsilon is not None and row.budget is not None:
        zcdp = f"epsilon={row.zcdp_epsilon:.6g} at delta={row.budget.delta:.6g} (rho={row.rho:.6g})"
    elif row.rho is not None:
        zcdp = f"rho={row.rho:.6g}; no epsilon without a budget delta > 0"
    else:
        zcdp = "not applicable"
    if row.pld_epsilon is not None and row.budget is not None:
        pld = f"epsilon={row.pld_epsilon:.6g} at delta={row.budget.delta:.6g}"
    else:
        pld = "not applicable"
    table = Table("", "", title=Text(f"unit {row.unit}"), title_justify="left", show_header=False)
    for name, value in (
        ("budget", _pair(row.budget)),
        ("spent, basic composition", _pair(row.spent)),
        ("spent, zCDP", zcdp),
        ("spent, privacy-loss distributions", pld),
        ("accounting used", row.accounting if row.budget is not None else "- (no budget)"),
        ("remaining", _pair(row.remaining)),
        ("charges", _charges(row)),
        ("counts against", ", ".join(row.covered_by) or "no budget: unbudgeted"),
        ("rule", row.rule),
        ("proven", "yes" if row.proven else "no: an accounting convention, not a guarantee"),
    ):
        table.add_row(name, Text(value))
    return table


def _columns_table(summary: LedgerSummary) -> Table:
    """Per protected column: its budget, and everything charged against it (every release
    that protects the column, or the whole row), composed."""
    table = Table(
        "column", "budget", "used", "releases", "charged by units", title="per protected column"
    )
    for row in summary.columns:
        units = [row.unit] if row.n_direct else []
        table.add_row(
            row.unit.split(":", 1)[1],
            _pair(row.budget),
            f"{_pair(row.used)} ({row.accounting})",
            str(row.n_direct + row.n_converted),
            Text(", ".join([*units, *row.converted_from]) or "-"),
        )
    return table


def _charges(row: UnitSpend) -> str:
    text = f"{row.n_direct} charged to this unit"
    if row.n_converted:
        text += f", {row.n_converted} converted from {', '.join(row.converted_from)}"
    return text


def _releases_table(entries: list[LedgerEntry]) -> Table:
    with_rho = any(e.record.rho is not None for e in entries)
    names = ["id", "when (UTC)", "label", "mechanism", "unit", "epsilon", "delta"]
    table = _folded(Table(*names, *(["rho"] if with_rho else []), title="releases"))
    for e in entries:
        rho = ["-" if e.record.rho is None else f"{e.record.rho:.4g}"] if with_rho else []
        table.add_row(
            str(e.id),
            _when(e.created),
            Text(e.label),
            Text(e.record.mechanism),
            Text(e.record.unit.key + ("" if e.budgeted else " (unbudgeted)")),
            f"{e.record.epsilon:.4g}",
            f"{e.record.delta:.3g}",
            *rho,
        )
    return table


def _history_table(summary: LedgerSummary) -> Table:
    names = ("id", "when (UTC)", "unit", "epsilon", "delta", "note")
    table = _folded(Table(*names, title="budget history"))
    for h in summary.history:
        table.add_row(
            str(h.id), _when(h.created), Text(h.unit), f"{h.epsilon:.4g}", f"{h.delta:.3g}",
            Text(h.note),
        )  # fmt: skip
    return table


def _folded(table: Table) -> Table:
    """Text columns fold onto more lines at 80 columns; ids, times and numbers never do."""
    for column in table.columns:
        kept = column.header in ("id", "when (UTC)", "epsilon", "delta", "rho")
        column.no_wrap, column.overflow = kept, "ellipsis" if kept else "fold"
    return table


def _when(created: str) -> str:
    """An ISO time stamp in UTC as ``2026-12-04 19:37`` (the header says UTC)."""
    return created.replace("T", " ")[:16]


def _pair(budget: Budget | None) -> str:
    return "-" if budget is None else f"epsilon={budget.epsilon:.6g}, delta={budget.delta:.6g}"
