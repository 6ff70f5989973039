"""``attrpriv release ddp``: survey histograms under dependent differential privacy."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any

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
    split_names,
    warnings_printed,
)
from attrpriv.cli.release import ReleaseHtml, app, open_ledger, release_outputs, write_release

if TYPE_CHECKING:
    from attrpriv.release.ddp.mechanism import TabularDDP


@app.command(
    "ddp",
    epilog=examples(
        "attrpriv release ddp anes96 --epsilon 1 --chunk-size 6",
        "attrpriv release ddp survey.parquet --schema survey.yaml --epsilon 1 --chunk-size 10 "
        "--structure chow-liu --aux public_sample.csv --out hist.json --html hist.html",
    ),
)
def ddp(
    data: DataArgument,
    epsilon: HistogramsEpsilon,
    chunk_size: Annotated[int, typer.Option(help="k: the most columns per chunk.")] = 10,
    structure: Annotated[
        str, typer.Option(help="Network structure: 'hc', 'chow-liu' or 'exact' (k <= 4).")
    ] = "hc",
    method: Annotated[
        str, typer.Option(help="'quilt' (sound for any network) or 'pairwise' (Liu et al.).")
    ] = "quilt",
    grouping: Annotated[
        str, typer.Option(help="'order' (consecutive columns) or 'dependence'.")
    ] = "order",
    aux: Annotated[
        str | None,
        typer.Option(help="Public data (bundled name or file) to learn the networks from."),
    ] = None,
    columns: Annotated[
        str | None, typer.Option(help="Comma-separated columns; default every one with a domain.")
    ] = None,
    max_levels: Annotated[int, typer.Option(help="Bin finer domains into this many levels.")] = 10,
    max_learn_rows: Annotated[
        int, typer.Option(help="Rows sampled (DuckDB for files) to learn the networks from.")
    ] = 100_000,
    nonnegative: Annotated[
        bool, typer.Option("--nonnegative", help="Clip noisy counts at 0 (raw kept in JSON).")
    ] = False,
    seed: Annotated[int, typer.Option(help="Seed of the learning sample (not of the noise).")] = 0,
    schema: SchemaOption = None,
    infer_schema: InferOption = False,
    ledger: LedgerOption = None,
    out: OutFile = None,
    html: ReleaseHtml = None,
) -> None:
    """Histograms of every question, hiding any one answer even through correlated answers."""
    from attrpriv._progress import progress
    from attrpriv.data.read import read_data
    from attrpriv.release.ddp.mechanism import TabularDDP

    outputs = release_outputs(out, html)
    with warnings_printed():
        source = read_data(data, schema, infer_schema=infer_schema)
    # public data: a bundled dataset's frame, or a file path (sampled by DuckDB)
    public = None if aux is None else read_data(aux, require_schema=False, what="aux").data
    mechanism = TabularDDP(
        epsilon,
        chunk_size,
        split_names(columns),
        method=method,
        structure=structure,
        grouping=grouping,
        aux=public,
        max_levels=max_levels,
        max_learn_rows=max_learn_rows,
        seed=seed,
        nonnegative=nonnegative,
    )
    book = open_ledger(ledger)
    with progress("learning chunk networks") as advance:
        result = mechanism.release(
            source.data,
            source.schema,
            ledger=book,
            label=f"ddp histograms of {data}",
            progress=lambda done, total: advance(done=done, total=total),
        )
    _summary(mechanism, result.parts)
    write_release(outputs, result, book, title=f"Tabular-DDP histograms of {data}")


def _summary(mechanism: TabularDDP, parts: Mapping[str, Any]) -> None:
    table = Table("chunk", "columns", "DS", "noise scale", "E|error| per bin")
    for number, chunk in enumerate(parts["chunks"], start=1):
        names = ", ".join(chunk["columns"])
        table.add_row(
            str(number),
            names if len(names) <= 60 else names[:57] + "...",
            f"{chunk['dependent_sensitivity']:.3g} / {chunk['row_sensitivity']:.3g}",
            f"{chunk['scale']:.4g}",
            f"{chunk['expected_mae']:.4g}",
        )
    console.print(table)
    error = parts["expected_error"]
    where = (
        "public auxiliary data"
        if parts["learned_from"] == "auxiliary"
        else "the private data (not itself private)"
    )
    console.print(
        f"epsilon={mechanism.epsilon:g} (dependent-dp, {mechanism.method}), "
        f"{len(parts['chunks'])} chunks; expected |error| per bin {error['mae']:.4g} vs "
        f"{error['laplace_mae']:.4g} for the row-level Laplace baseline "
        f"({error['gain']:.2f}x more accurate)"
    )
    console.print(
        f"networks learned from {parts['n_learning_rows']:,} rows (a sample of at most "
        f"--max-learn-rows) of {where}; if answers in "
        f"different chunks are dependent the loss may reach "
        f"{parts['epsilon_if_chunks_dependent']:.3g}"
    )
