"""``attrpriv sanitize synthesize``: a whole synthetic table under row-level DP.

Fits a :class:`~attrpriv.sanitize.DPSynthesizer` on the schema and releases a synthetic table
drawn by OpenDP's AIM or MST from the private rows (docs/sanitize/synthesize.md): every column
private, no row of it a private row. ``sanitize resample`` is the row-aligned release instead.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from attrpriv.cli._common import (
    TABLE_SUFFIXES,
    AcceptInferredOption,
    LedgerOption,
    SchemaOption,
    check_reviewed,
    console,
    epsilon_callback,
    examples,
    json_writer,
    output_option,
    split_names,
    table_writer,
    write_outputs,
)
from attrpriv.cli._outputs import Outputs
from attrpriv.cli.sanitize import app
from attrpriv.cli.sanitize._rows import RowRangeOption, WhereOption
from attrpriv.errors import InputError


@app.command(
    "synthesize",
    epilog=examples(
        "attrpriv sanitize synthesize adult --where split=train --method mst --epsilon 1 "
        "--out synthetic.parquet --record record.json",
        "attrpriv sanitize synthesize private.csv --schema s.yaml --method aim --epsilon 1 "
        "--delta 1e-7 --ledger budget.ledger --out synthetic.csv",
    ),
)
def synthesize(
    data: Annotated[str, typer.Argument(help="Private data: bundled name or CSV/Parquet.")],
    method: Annotated[
        str,
        typer.Option(
            help="'aim': AIM, adaptive (marginals of up to three columns, chosen round after "
            "round): the more accurate and much the slower (on Adult's 14 columns, 19,536 "
            "rows: about 43 CPU minutes). 'mst': MST, a spanning tree of two-way marginals "
            "(about 1 CPU minute there)."
        ),
    ],
    epsilon: Annotated[
        float, typer.Option(help="Privacy loss of the release.", callback=epsilon_callback)
    ],
    out: Annotated[
        Path,
        typer.Option(
            help="The synthetic table, written atomically (.parquet/.csv): the schema's "
            "columns and types, rows drawn from the DP model (none is a private row)."
        ),
    ],
    delta: Annotated[
        float, typer.Option(help="The delta of the (epsilon, delta) guarantee.")
    ] = 1e-6,
    bins: Annotated[
        int, typer.Option(help="Bins of a numeric column of more than 20 values.")
    ] = 10,
    workload: Annotated[
        int,
        typer.Option(
            help="AIM only: the marginals AIM is scored against and chooses among, every one "
            "of this many columns: 3 (AIM's own) or 2 (several times faster; on German "
            "credit's 400 rows 141 CPU seconds)."
        ),
    ] = 3,
    rows: Annotated[
        int | None,
        typer.Option(
            help="Rows of the synthetic table (default: the model's noisy count of the private "
            "rows). Not a sample of the input: --row-range and --where select private rows."
        ),
    ] = None,
    columns: Annotated[
        str | None,
        typer.Option(
            help="Comma-separated columns to synthesize (default: every column of the schema "
            "with a domain, but those of role 'ignore')."
        ),
    ] = None,
    schema: SchemaOption = None,
    accept_inferred: AcceptInferredOption = False,
    row_range: RowRangeOption = None,
    where: WhereOption = None,
    ledger: LedgerOption = None,
    record: Annotated[
        Path | None,
        output_option(
            "Write the release's privacy record and diagnostics (the marginals measured, the "
            "one-way noisy counts) as JSON; the table itself is --out."
        ),
    ] = None,
    seed: Annotated[
        int, typer.Option("--seed", help="Seed of drawing the synthetic rows from the model.")
    ] = 0,
) -> None:
    """Release a synthetic table under row-level DP: OpenDP's AIM or MST on the private rows.

    Which to choose: 'sanitize synthesize' for analysis-only sharing: every column is private
    (one whole row added or removed, dp/add-remove) and nobody's row is released, but the rows
    are new ones, drawn from a model of a few noisy marginals, so relations the marginals miss
    are weakened. 'sanitize resample' for a row-aligned release: every private row, each
    column released as it is except the sensitive one and its proxies, which alone are
    private (dp/substitute:<those columns>).
    """
    from attrpriv.data.read import read_data
    from attrpriv.data.select import RowSelection
    from attrpriv.dp.ledger import BudgetLedger
    from attrpriv.sanitize.synthesize import METHODS, DPSynthesizer

    if method not in METHODS:
        raise InputError(f"--method must be one of {', '.join(METHODS)}, got {method!r}")
    if out.suffix.lower() not in TABLE_SUFFIXES:
        raise InputError(f"--out must end in {', '.join(TABLE_SUFFIXES)}, got {out.name!r}")
    synthesizer = DPSynthesizer(method, epsilon=epsilon, delta=delta, bins=bins,
                                workload=workload, rows=rows, columns=split_names(columns),
                                seed=seed)  # fmt: skip
    outputs = Outputs()
    outputs.add("--out", out)
    outputs.add("--record", record)
    private = read_data(data, schema, select=RowSelection(row_range, where, None, seed))
    check_reviewed(private.schema, schema, accept_inferred)
    frame = private.frame
    synthesizer.fit(private.schema)
    book = BudgetLedger(ledger, create=False) if ledger is not None else None
    result = synthesizer.release(frame, ledger=book, label=f"sanitize synthesize {data}")
    for line in result.diagnostics.summary_lines():
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    payload = {key: value for key, value in result.to_dict().items() if key != "values"}
    write_outputs(
        outputs,
        {
            "--out": table_writer(result.data, out),
            "--record": None if record is None else json_writer(payload),
        },
    )
