"""``attrpriv budget``: the privacy-budget ledger of a dataset or project."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from attrpriv.cli._common import OutFile, console, examples, group, write_json
from attrpriv.dp.ledger import Budget, BudgetLedger

app = group("budget", "The privacy-budget ledger (a SQLite file): set the budget, show the spend.")

LedgerOption = Annotated[Path, typer.Option("--ledger", help="The ledger file (SQLite).")]


@app.command(
    "set", epilog=examples("attrpriv budget set --ledger survey.ledger --epsilon 3 --delta 1e-6")
)
def set_(
    ledger: LedgerOption,
    epsilon: Annotated[float, typer.Option(help="Total epsilon for all releases (> 0).")],
    delta: Annotated[float, typer.Option(help="Total delta for all releases, in [0, 1).")] = 0.0,
) -> None:
    """Create the ledger if needed and set its total budget (never below what is spent)."""
    budget = BudgetLedger(ledger).set_budget(epsilon, delta)
    console.print(f"budget of {ledger}: epsilon={budget.epsilon:g}, delta={budget.delta:g}")


@app.command(
    epilog=examples(
        "attrpriv budget show --ledger survey.ledger",
        "attrpriv budget show --ledger survey.ledger --out budget.json",
    )
)
def show(
    ledger: LedgerOption,
    out: OutFile = None,
) -> None:
    """Show the budget, what the releases spent (basic composition) and what remains."""
    book = BudgetLedger(ledger, create=False)
    summary, entries = book.summary(), book.entries()
    table = Table("", "epsilon", "delta")
    for label, pair in (
        ("budget", summary.budget),
        ("spent", summary.spent),
        ("remaining", summary.remaining),
    ):
        table.add_row(label, *_pair(pair))
    console.print(table)
    releases = Table("id", "when (UTC)", "label", "mechanism", "definition", "epsilon", "delta")
    for e in entries:
        releases.add_row(
            str(e.id),
            e.created,
            e.label,
            e.record.mechanism,
            e.record.definition,
            f"{e.record.epsilon:g}",
            f"{e.record.delta:g}",
        )
    console.print(releases if entries else "no releases yet")
    write_json(
        out,
        {
            **summary.to_dict(),
            "releases": [
                {"id": e.id, "created": e.created, "label": e.label, "record": e.record.to_dict()}
                for e in entries
            ],
        },
    )


def _pair(budget: Budget | None) -> tuple[str, str]:
    return ("-", "-") if budget is None else (f"{budget.epsilon:g}", f"{budget.delta:g}")
