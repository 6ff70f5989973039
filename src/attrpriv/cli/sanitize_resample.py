"""``attrpriv sanitize resample``: the tabular sanitizer (proxy resampling), in one step.

Fits a :class:`~attrpriv.sanitize.ProxyResampler` on public auxiliary rows and releases the
private rows with it: the sensitive column drawn given the released columns and its DP marginal,
its proxies copied from auxiliary donor rows (or redrawn from auxiliary-data models), every
other column as it was
(docs/sanitize/resample.md). It is the default for tables; ``sanitize fit`` / ``apply`` (the
global decoupler) stay for images.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from attrpriv.cli._common import (
    TABLE_SUFFIXES,
    AcceptInferredOption,
    LedgerOption,
    OutFile,
    RowsOption,
    SchemaOption,
    SeedOption,
    check_reviewed,
    console,
    examples,
    json_writer,
    split_names,
    table_writer,
    write_outputs,
)
from attrpriv.cli._outputs import Outputs
from attrpriv.cli.sanitize import RowRangeOption, WhereOption, _table_rows, app
from attrpriv.errors import InputError


@app.command(
    "resample",
    epilog=examples(
        "attrpriv sanitize resample adult --aux adult --aux-where split=train --where split=test "
        "--sensitive sex --epsilon 1 --out sanitized.parquet --record record.json",
        "attrpriv sanitize resample private.parquet --aux public.parquet --schema s.yaml "
        "--sensitive race --proxies 5 --epsilon 1 --ledger budget.ledger --out released.csv",
    ),
)
def resample(
    data: Annotated[str, typer.Argument(help="Private data: bundled name or CSV/Parquet.")],
    aux: Annotated[
        str,
        typer.Option(
            help="Public auxiliary data (bundled name or CSV/Parquet), disjoint from the "
            "private rows: the proxies are ranked and their models fitted on it."
        ),
    ],
    sensitive: Annotated[str, typer.Option(help="The sensitive column (categorical).")],
    epsilon: Annotated[float, typer.Option(help="Privacy loss of the release.")],
    out: Annotated[
        Path,
        typer.Option(
            help="The released table, written atomically (.parquet/.csv): every private row, "
            "the sensitive column and its proxies redrawn, every other column as it was."
        ),
    ],
    proxies: Annotated[
        str,
        typer.Option(
            help="How many proxies to rank and redraw (0: the column only), or 'auto': as many "
            "as it takes for the rest to predict the sensitive column with AUC at most "
            "--target-auc on the auxiliary data."
        ),
    ] = "auto",
    target_auc: Annotated[
        float, typer.Option(help="The leakage floor '--proxies auto' aims at, in (0.5, 1].")
    ] = 0.55,
    task_weight: Annotated[
        float,
        typer.Option(
            help="How much a column's importance for the schema's target counts against "
            "ranking it as a proxy, >= 0 (0: the sensitive column alone ranks)."
        ),
    ] = 3.0,
    proxy_columns: Annotated[
        str | None,
        typer.Option(help="Comma-separated proxies to redraw (in this order) instead of ranking."),
    ] = None,
    keep: Annotated[
        str | None,
        typer.Option(help="Comma-separated columns never taken as proxies (the target always)."),
    ] = None,
    draw: Annotated[
        str,
        typer.Option(
            help="How each row's sensitive value is drawn: 'conditional' (given its released "
            "columns, re-weighed to the noisy marginal) or 'marginal' (independently of the row)."
        ),
    ] = "conditional",
    conditional: Annotated[
        str,
        typer.Option(
            help="How the proxies are redrawn: 'donor' (copied together from an auxiliary row "
            "with the same drawn value and target level, near on the other columns) or 'hgb' "
            "(each from gradient boosting given the ones before it)."
        ),
    ] = "donor",
    donors: Annotated[
        int, typer.Option(help="How many nearest auxiliary rows a donor is picked among, >= 1.")
    ] = 200,
    schema: SchemaOption = None,
    infer_schema: Annotated[
        bool,
        typer.Option(
            "--infer-schema",
            help="Without --schema, read the domains off the auxiliary (public) rows; the "
            "private rows are not read for them.",
        ),
    ] = False,
    accept_inferred: AcceptInferredOption = False,
    rows: RowsOption = None,
    row_range: RowRangeOption = None,
    where: WhereOption = None,
    aux_row_range: Annotated[
        str | None, typer.Option(help="--row-range for the auxiliary data.")
    ] = None,
    aux_where: Annotated[str | None, typer.Option(help="--where for the auxiliary data.")] = None,
    ledger: LedgerOption = None,
    record: OutFile = None,
    seed: SeedOption = 0,
) -> None:
    """Release a table with its sensitive column resampled under epsilon-DP and its proxies
    redrawn from public models (the tabular sanitizer).

    A private table most of whose rows repeat the auxiliary rows (on the columns released
    unchanged, more than halfway from the share chance gives to all of them) is refused; with
    more repeats than chance would make, or columns that take too few values to tell, it is
    released with a warning.
    """
    from attrpriv.data.read import read_data
    from attrpriv.dp.ledger import BudgetLedger
    from attrpriv.sanitize import ProxyResampler

    if out.suffix.lower() not in TABLE_SUFFIXES:
        raise InputError(f"--out must end in {', '.join(TABLE_SUFFIXES)}, got {out.name!r}")
    outputs = Outputs()
    outputs.add("--out", out)
    outputs.add("--record", record)
    # with --infer-schema and files, no schema: the resampler reads domains off the aux rows
    private = read_data(data, schema, require_schema=not infer_schema, load=True)
    public = read_data(aux, schema, require_schema=not infer_schema, load=True, what="aux")
    check_reviewed(private.schema, schema, accept_inferred)
    aux_frame = _table_rows(public.frame, aux_row_range, aux_where, rows, seed, aux)
    frame = _table_rows(private.frame, row_range, where, rows, seed, data)
    chosen = split_names(proxy_columns)
    resampler = ProxyResampler(
        sensitive, proxies="auto" if chosen is None else chosen, n_proxies=_count(proxies),
        target_auc=target_auc, task_weight=task_weight, epsilon=epsilon,
        conditional=conditional, n_donors=donors, draw=draw, keep=split_names(keep) or (),
        seed=seed,
    )  # fmt: skip
    resampler.fit(aux_frame, private.schema or public.schema)
    book = BudgetLedger(ledger, create=False) if ledger is not None else None
    result = resampler.release(frame, ledger=book, label=f"sanitize resample {data}")
    for line in _summary(resampler, result.parts, len(aux_frame), len(frame)):
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    write_outputs(
        outputs,
        {
            "--out": table_writer(result.data, out),
            "--record": None if record is None else json_writer(result.to_dict()),
        },
    )


def _count(text: str) -> int | str:
    """``--proxies``: ``auto`` or a count."""
    if text.strip() == "auto":
        return "auto"
    try:
        return int(text)
    except ValueError:
        raise InputError(f"--proxies must be a count or 'auto', got {text!r}") from None


def _summary(resampler: Any, parts: dict[str, Any], n_aux: int, n_private: int) -> list[str]:
    """What was resampled, what passed through, and what the release cannot hide."""
    marginal = ", ".join(f"{k} {v:.3f}" for k, v in parts["marginal"].items())
    redraw = (
        "copied from donors among"
        if resampler.conditional == "donor"
        else "redrawn from models fitted on"
    )
    how = (
        "drawn given each row's released columns, re-weighed to its noisy marginal"
        if resampler.draw == "conditional"
        else "drawn from its noisy marginal"
    )
    passed = parts["passed_through"]
    lines = [
        f"released {n_private} rows at epsilon={resampler.epsilon:g} (dp, the sensitive column "
        f"and its proxies of one row): {parts['sensitive']!r} {how} "
        f"({marginal}); proxies {redraw} {n_aux} auxiliary rows: "
        f"{', '.join(parts['proxies']) or 'none'}",
        f"where each column comes from: from the private rows, unchanged: "
        f"{', '.join(passed) or 'none'}; from the public (auxiliary) rows: "
        f"{', '.join(parts['proxies']) or 'none'}; drawn from the noisy marginal: "
        f"{parts['sensitive']!r}",
    ]
    kept = [c for c in passed if c in resampler.keep]
    if len(kept) == len(passed):
        lines.append(
            "every column of this release but the kept ones ("
            f"{', '.join(kept) or 'none'}) came from the public rows or the noisy marginal: "
            "beside the public rows it adds only those; 'attrpriv sanitize evaluate' shows the "
            "utility of the public rows alone beside it"
        )
    lines.append(
        f"not hidden: the other columns predict {parts['sensitive']!r} with AUC "
        f"{parts['leakage_floor_aux']:.3f} on the auxiliary data (more --proxies or a lower "
        "--target-auc lowers it; 'attrpriv sanitize evaluate' measures leakage and utility)"
    )
    return lines
