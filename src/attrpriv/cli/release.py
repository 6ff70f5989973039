"""``attrpriv release``: publish statistics under formal privacy guarantees."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from attrpriv.cli._common import (
    DataArgument,
    HistogramsEpsilon,
    InferOption,
    LedgerOption,
    OutFile,
    SchemaOption,
    console,
    examples,
    group,
    split_names,
    warnings_printed,
    write_json,
)

app = group("release")


@app.command(
    epilog=examples(
        "attrpriv release histograms adult --columns race,sex,income --epsilon 1",
        "attrpriv release histograms survey.parquet --schema survey.yaml --epsilon 0.5 "
        "--ledger survey.ledger --out hist.json",
    )
)
def histograms(
    data: DataArgument,
    epsilon: HistogramsEpsilon,
    columns: Annotated[
        str | None, typer.Option(help="Comma-separated columns; default all categorical ones.")
    ] = None,
    neighbours: Annotated[
        str, typer.Option(help="'add-remove' (one row in or out) or 'substitute'.")
    ] = "add-remove",
    schema: SchemaOption = None,
    infer_schema: InferOption = False,
    ledger: LedgerOption = None,
    out: OutFile = None,
) -> None:
    """Row-level DP histograms (Laplace mechanism) over the schema's public domains."""
    from attrpriv.data.read import read_data
    from attrpriv.dp.ledger import BudgetLedger
    from attrpriv.release.laplace import LaplaceHistograms

    mechanism = LaplaceHistograms(epsilon, split_names(columns), neighbours=neighbours)
    book = BudgetLedger(ledger, create=False) if ledger is not None else None
    with warnings_printed():
        source = read_data(data, schema, infer_schema=infer_schema)
    result = mechanism.release(
        source.data, source.schema, ledger=book, label=f"histograms of {data}"
    )
    record = result.record
    for name, counts in result.values.items():
        table = Table(name, "noisy count")
        for value, count in counts.items():
            table.add_row(str(value), f"{int(count):,}")
        console.print(table)
    console.print(
        f"epsilon={record.epsilon:g} ({record.definition}), sensitivity={record.sensitivity:g}, "
        f"discrete Laplace scale={record.noise['scale']:g}; protects {record.protects}"
    )
    write_json(out, result.to_dict())
