"""``attrpriv sanitize resample``: the tabular sanitizer, in one step.

The default method, ``block``, fits a :class:`~attrpriv.sanitize.BlockResampler`: the
sensitive column and its proxies redrawn from DP counts of the private rows themselves, no
public rows needed (docs/sanitize/block.md). ``donor`` fits a
:class:`~attrpriv.sanitize.ProxyResampler` on public auxiliary rows: the proxies copied from
auxiliary donor rows (docs/sanitize/resample.md). Every other column is released as it was.
``sanitize fit`` / ``apply`` (the global decoupler) stay for images.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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
    epsilon_callback,
    examples,
    json_writer,
    split_names,
    table_writer,
    write_outputs,
)
from attrpriv.cli._outputs import Outputs
from attrpriv.cli.sanitize import app
from attrpriv.cli.sanitize._rows import RowRangeOption, WhereOption
from attrpriv.errors import InputError


@app.command(
    "resample",
    epilog=examples(
        "attrpriv sanitize resample adult --where split=test --sensitive sex --epsilon 1 "
        "--out sanitized.parquet --record record.json",
        "attrpriv sanitize resample private.parquet --method donor --aux public.parquet "
        "--schema s.yaml --sensitive race --proxies 5 --epsilon 1 --ledger budget.ledger "
        "--out released.csv",
    ),
)
def resample(
    data: Annotated[str, typer.Argument(help="Private data: bundled name or CSV/Parquet.")],
    sensitive: Annotated[str, typer.Option(help="The sensitive column (categorical).")],
    epsilon: Annotated[
        float, typer.Option(help="Privacy loss of the release.", callback=epsilon_callback)
    ],
    out: Annotated[
        Path,
        typer.Option(
            help="The released table, written atomically (.parquet/.csv): every private row, "
            "the sensitive column and its proxies redrawn, every other column as it was."
        ),
    ],
    method: Annotated[
        str,
        typer.Option(
            help="'block': the sensitive column and its proxies redrawn from noisy counts of "
            "the private rows (no public rows needed; the release keeps what the private rows "
            "know). 'donor': proxies copied from public --aux rows (needs a public table as "
            "large as the private one from the same population; the redrawn columns are then "
            "public rows)."
        ),
    ] = "block",
    aux: Annotated[
        str | None,
        typer.Option(
            help="Public auxiliary data (bundled name or CSV/Parquet), disjoint from the "
            "private rows. 'donor' ranks the proxies and fits their models on it; 'block' "
            "adds its counts to the noisy tables as a prior and places numeric bins with it."
        ),
    ] = None,
    proxies: Annotated[
        str,
        typer.Option(
            help="'auto': 'block' redraws every column whose association with the sensitive "
            "one its noisy counts cannot put below --association (on a few hundred rows: "
            "every column but the target); 'donor' as many as it takes for the rest "
            "to predict it with AUC at most --target-auc on the auxiliary data. A count (0: "
            "the column only) is for 'donor'."
        ),
    ] = "auto",
    proxy_columns: Annotated[
        str | None,
        typer.Option(
            help="Comma-separated proxies to redraw instead of choosing them (with 'block' "
            "they join the protected unit)."
        ),
    ] = None,
    keep: Annotated[
        str | None,
        typer.Option(help="Comma-separated columns never taken as proxies (the target always)."),
    ] = None,
    association: Annotated[
        float | None,
        typer.Option(
            help="'block': a column is released unchanged by '--proxies auto' only when its "
            "noisy counts show its association with the sensitive one (Cramer's V, in [0, 1]) "
            "is below this. Default 0.1."
        ),
    ] = None,
    delta: Annotated[
        float | None,
        typer.Option(help="'block': the delta of the (epsilon, delta) guarantee. Default 1e-6."),
    ] = None,
    bins: Annotated[
        int | None,
        typer.Option(help="'block': bins of a numeric column of more than 20 values. Default 10."),
    ] = None,
    target_auc: Annotated[
        float | None,
        typer.Option(
            help="'donor': the leakage floor '--proxies auto' aims at, in (0.5, 1]. Default 0.55."
        ),
    ] = None,
    task_weight: Annotated[
        float | None,
        typer.Option(
            help="'donor': how much a column's importance for the schema's target counts "
            "against ranking it as a proxy, >= 0. Default 3."
        ),
    ] = None,
    draw: Annotated[
        str | None,
        typer.Option(
            help="'donor': how each row's sensitive value is drawn: 'conditional' (given its "
            "released columns, re-weighed to the noisy marginal; the default) or 'marginal'."
        ),
    ] = None,
    conditional: Annotated[
        str | None,
        typer.Option(
            help="'donor': how the proxies are redrawn: 'donor' (copied together from an "
            "auxiliary row; the default) or 'hgb' (each from gradient boosting)."
        ),
    ] = None,
    donors: Annotated[
        int | None,
        typer.Option(help="'donor': how many nearest auxiliary rows a donor is picked among."),
    ] = None,
    schema: SchemaOption = None,
    infer_schema: Annotated[
        bool,
        typer.Option(
            "--infer-schema",
            help="'donor', without --schema: read the domains off the auxiliary (public) rows; "
            "the private rows are not read for them.",
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
    """Release a table with its sensitive column and its proxies redrawn under DP (the tabular
    sanitizer).

    With 'donor', a private table most of whose rows repeat the auxiliary rows (on the columns
    released unchanged, more than halfway from the share chance gives to all of them) is
    refused; with more repeats than chance would make, or columns that take too few values to
    tell, it is released with a warning.
    """
    from attrpriv.data.read import read_data
    from attrpriv.data.select import RowSelection
    from attrpriv.dp.ledger import BudgetLedger

    given = {"--association": association, "--delta": delta, "--bins": bins,
             "--target-auc": target_auc, "--task-weight": task_weight, "--draw": draw,
             "--conditional": conditional, "--donors": donors,
             "--infer-schema": infer_schema or None}  # fmt: skip
    _check_options(method, out, given, aux, (aux_row_range, aux_where))
    outputs = Outputs()
    outputs.add("--out", out)
    outputs.add("--record", record)
    # with --infer-schema and files, no schema: the resampler reads domains off the aux rows
    selection = RowSelection(row_range, where, rows, seed)
    private = read_data(data, schema, require_schema=not infer_schema, select=selection)
    check_reviewed(private.schema, schema, accept_inferred)
    frame = private.frame
    aux_frame = None
    if aux is not None:
        selection = RowSelection(aux_row_range, aux_where, rows, seed)
        public = read_data(
            aux, schema, require_schema=not infer_schema, what="aux", select=selection
        )
        aux_frame = public.frame
    chosen = split_names(proxy_columns)
    kept = split_names(keep) or ()
    options = (
        _set(association=association, delta=delta, bins=bins)
        if method == "block"
        else _set(target_auc=target_auc, task_weight=task_weight, conditional=conditional,
                  n_donors=donors, draw=draw)
    )  # fmt: skip
    resampler = _resampler(method, sensitive, proxies, chosen, kept, epsilon, seed, options)
    if method == "block":
        assert private.schema is not None  # read with require_schema
        resampler.fit(private.schema, aux_frame)
    else:
        assert aux_frame is not None
        resampler.fit(aux_frame, private.schema or public.schema)
    book = BudgetLedger(ledger, create=False) if ledger is not None else None
    result = resampler.release(frame, ledger=book, label=f"sanitize resample {data}")
    for line in result.diagnostics.summary_lines():
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    write_outputs(
        outputs,
        {
            "--out": table_writer(result.data, out),
            "--record": None if record is None else json_writer(result.to_dict()),
        },
    )


METHODS = {
    "block": ("--association", "--delta", "--bins"),
    "donor": ("--target-auc", "--task-weight", "--draw", "--conditional", "--donors",
              "--infer-schema"),
}  # fmt: skip
"""Each ``--method`` and the options only it takes."""


def _check_options(
    method: str,
    out: Path,
    given: Mapping[str, object],
    aux: str | None,
    aux_selection: tuple[str | None, ...],
) -> None:
    """Refuse a bad --method or --out, another method's option, and a missing --aux."""
    if method not in METHODS:
        raise InputError(f"--method must be one of {', '.join(METHODS)}, got {method!r}")
    if out.suffix.lower() not in TABLE_SUFFIXES:
        raise InputError(f"--out must end in {', '.join(TABLE_SUFFIXES)}, got {out.name!r}")
    for option, value in given.items():
        if value is not None and option not in METHODS[method]:
            other = next(m for m, names in METHODS.items() if option in names)
            raise InputError(f"{option} is an option of --method {other}, not {method}")
    if aux is None and (method == "donor" or any(aux_selection)):
        raise InputError(
            "--method donor needs --aux" if method == "donor" else "--aux-* options need --aux"
        )


def _resampler(
    method: str,
    sensitive: str,
    proxies: str,
    chosen: list[str] | None,
    kept: Sequence[str],
    epsilon: float,
    seed: int,
    options: Mapping[str, Any],
) -> Any:
    """The unfitted resampler of ``--method`` (``options``: the method's options given)."""
    if method == "donor":
        from attrpriv.sanitize import ProxyResampler

        return ProxyResampler(
            sensitive, proxies="auto" if chosen is None else chosen, n_proxies=_count(proxies),
            epsilon=epsilon, keep=kept, seed=seed, **options,
        )  # fmt: skip
    from attrpriv.sanitize import BlockResampler

    if _count(proxies) != "auto":
        raise InputError("--proxies takes a count with --method donor only: use "
                         "--proxy-columns to name the proxies, or 'auto'")  # fmt: skip
    return BlockResampler(
        sensitive, proxies="auto" if chosen is None else chosen, keep=kept,
        epsilon=epsilon, seed=seed, **options,
    )  # fmt: skip


def _set(**values: Any) -> dict[str, Any]:
    """The options given on the command line (the estimator's defaults stand for the rest)."""
    return {k: v for k, v in values.items() if v is not None}


def _count(text: str) -> int | str:
    """``--proxies``: ``auto`` or a count."""
    if text.strip() == "auto":
        return "auto"
    try:
        return int(text)
    except ValueError:
        raise InputError(f"--proxies must be a count or 'auto', got {text!r}") from None
