"""``attrpriv release``: publish statistics under formal privacy guarantees.

What every release command shares is here too: its outputs (``--out`` JSON, ``--html`` page)
are checked before any work and written all or nothing after the release, the page with the
ledger's state after the release when ``--ledger`` was given; for a release of counts,
``--counts`` chooses what the page and the terminal show (the JSON holds both).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from attrpriv.cli._common import (
    AcceptInferredOption,
    DataArgument,
    HistogramsEpsilon,
    InferOption,
    LedgerOption,
    OutFile,
    SchemaOption,
    check_reviewed,
    console,
    examples,
    group,
    html_option,
    json_writer,
    split_names,
    text_writer,
    warnings_printed,
    write_outputs,
)
from attrpriv.cli._outputs import Outputs
from attrpriv.errors import InputError

if TYPE_CHECKING:
    from collections.abc import Mapping

    from attrpriv.cli._outputs import Writer
    from attrpriv.data.schema import Schema
    from attrpriv.dp.ledger import BudgetLedger
    from attrpriv.dp.record import Release

app = group("release")

ReleaseHtml = Annotated[
    Path | None,
    html_option(
        "Write an HTML page of the release to this file (.html or .htm): the noisy values "
        "with their 95% noise intervals, what is protected, epsilon and delta, the privacy "
        "unit, the assumptions (and the ledger's state after it, with --ledger)."
    ),
]


def counts_callback(value: str) -> str:
    """Typer callback: check ``--counts`` while the command line is parsed."""
    from attrpriv.release.nonnegative import COUNTS

    if value not in COUNTS:
        raise InputError(f"--counts must be one of {', '.join(COUNTS)}, got {value!r}")
    return value


CountsOption = Annotated[
    str,
    typer.Option(
        "--counts",
        help="What the page and the terminal show of the noisy counts: 'non-negative' (each "
        "count as round(max(0, count)), post-processing at no privacy cost: never further from "
        "the true count, but for rounding by at most 0.5; each total grows by the amount "
        "clipped, which is stated) or 'raw' (unbiased, possibly below 0). The JSON output "
        "holds both.",
        callback=counts_callback,
    ),
]


def release_outputs(out: Path | None, html: Path | None) -> Outputs:
    """The outputs of a release command, checked before any work."""
    outputs = Outputs()
    outputs.add("--out", out)
    outputs.add("--html", html)
    return outputs


def open_ledger(ledger: Path | None) -> BudgetLedger | None:
    """The ledger to charge (it must exist: a budget is set first), or None."""
    if ledger is None:
        return None
    from attrpriv.dp.ledger import BudgetLedger

    return BudgetLedger(ledger, create=False)


def write_release(
    outputs: Outputs,
    result: Release,
    book: BudgetLedger | None,
    *,
    title: str,
    extra: Mapping[str, Writer | None] | None = None,
    counts: str | None = None,
) -> None:
    """Write the JSON, the page and the ``extra`` outputs that were asked for, all or none
    (after the release). ``counts`` (a release of counts): what the page shows of them; the
    JSON holds the raw ones and, under ``non_negative``, the non-negative ones."""
    page = None
    if "--html" in outputs.paths:
        from attrpriv.report.release import render_release_html

        summary = None if book is None else book.summary()
        page = render_release_html(result, ledger_summary=summary, title=title, counts=counts)
    payload = None
    if "--out" in outputs.paths:
        from attrpriv.release.nonnegative import non_negative_to_dict

        payload = result.to_dict()
        if counts is not None:
            payload["non_negative"] = non_negative_to_dict(result)
    write_outputs(
        outputs,
        {
            "--out": None if payload is None else json_writer(payload),
            "--html": None if page is None else text_writer(page),
            **(extra or {}),
        },
    )


def categorical_columns(schema: Schema) -> list[str]:
    """The columns ``release histograms`` counts without ``--columns``: every categorical one
    the schema does not ignore. The integer columns it leaves out are named in a one-line
    note (they may take thousands of values: name them with ``--columns`` to count them).

    Parameters
    ----------
    schema : Schema
        The data's schema.

    Returns
    -------
    list of str
        The categorical columns, in schema order.

    Raises
    ------
    InputError
        The schema has no categorical column to count.
    """
    from attrpriv.data.schema import Categorical, Integer, Role

    kept = [c for c in schema.columns if c.role is not Role.IGNORE]
    chosen = [c.name for c in kept if isinstance(c.domain, Categorical)]
    skipped = [c.name for c in kept if isinstance(c.domain, Integer)]
    if not chosen:
        hint = f": name integer ones with --columns ({', '.join(skipped)})" if skipped else ""
        raise InputError(f"the schema has no categorical column to count{hint}")
    if skipped:
        console.print(
            f"note: counting the categorical columns only; integer columns skipped: "
            f"{', '.join(skipped)} (name them in --columns to count them)",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    return chosen


@app.command(
    epilog=examples(
        "attrpriv release histograms adult --columns race,sex,income --epsilon 1",
        "attrpriv release histograms survey.parquet --schema survey.yaml --epsilon 0.5 "
        "--ledger survey.ledger --out hist.json --html hist.html",
    )
)
def histograms(
    data: DataArgument,
    epsilon: HistogramsEpsilon,
    columns: Annotated[
        str | None,
        typer.Option(
            help="Comma-separated categorical or integer columns; default every categorical "
            "one the schema does not ignore (integer columns only when named)."
        ),
    ] = None,
    neighbours: Annotated[
        str, typer.Option(help="'add-remove' (one row in or out) or 'substitute'.")
    ] = "add-remove",
    schema: SchemaOption = None,
    infer_schema: InferOption = False,
    accept_inferred: AcceptInferredOption = False,
    ledger: LedgerOption = None,
    out: OutFile = None,
    html: ReleaseHtml = None,
    counts: CountsOption = "non-negative",
) -> None:
    """Row-level DP histograms (Laplace mechanism) over the schema's public domains."""
    from attrpriv.data.read import read_data
    from attrpriv.release.laplace import LaplaceHistograms

    outputs = release_outputs(out, html)
    mechanism = LaplaceHistograms(epsilon, split_names(columns), neighbours=neighbours)
    book = open_ledger(ledger)
    with warnings_printed():
        # the number of rows is private under add/remove: an empty table is released too
        source = read_data(data, schema, infer_schema=infer_schema, allow_empty=True)
    check_reviewed(source.schema, schema, accept_inferred)
    if columns is None:
        mechanism.set_params(columns=categorical_columns(source.schema))
    result = mechanism.release(
        source.data, source.schema, ledger=book, label=f"histograms of {data}"
    )
    record = result.record
    print_counts(result, counts)
    print_summary(
        f"epsilon={record.epsilon:g} ({record.definition})", result, f"protects {record.protects}"
    )
    write_release(outputs, result, book, title=f"Laplace histograms of {data}", counts=counts)


def print_summary(first: str, result: Release, *last: str) -> None:
    """One line: ``first``, the release's ``diagnostics.summary_lines()`` and ``last``, joined
    by semicolons (printed as they are, no markup)."""
    parts = [first, *result.diagnostics.summary_lines(), *last]
    console.print("; ".join(parts), markup=False, highlight=False)


def print_counts(result: Release, counts: str, title: str = "count") -> None:
    """One table per histogram of the release (a release of one histogram titled ``title``):
    its noisy counts, raw or non-negative, and what clipping added to each total."""
    from attrpriv.release.nonnegative import non_negative_counts

    frame = non_negative_counts(result)
    column = "non_negative" if counts == "non-negative" else "value"
    for histogram, part in frame.groupby("histogram", sort=False):
        table = Table(str(histogram) or title, f"noisy count ({counts})")
        levels = part["level"] if histogram else part["name"]
        for level, value in zip(levels, part[column], strict=True):
            table.add_row(str(level), f"{value:,.0f}")
        console.print(table)
    clipped = frame.groupby("histogram", sort=False)["clipped"].sum()
    if counts == "non-negative" and clipped.any():
        added = ", ".join(f"{name or title} +{amount:,.6g}" for name, amount in clipped.items()
                          if amount)  # fmt: skip
        console.print(
            f"negative noisy counts shown as 0 (post-processing, no privacy cost); totals "
            f"raised by the amount clipped: {added}; raw counts: --counts raw or --out",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
