"""``attrpriv release ddp``: survey histograms under dependent differential privacy."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any

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
    split_names,
    warnings_printed,
)
from attrpriv.cli.release import ReleaseHtml, app, open_ledger, release_outputs, write_release
from attrpriv.errors import InputError

if TYPE_CHECKING:
    from pathlib import Path

    from attrpriv.cli._outputs import Outputs
    from attrpriv.release.ddp.mechanism import TabularDDP


@app.command(
    "ddp",
    epilog=examples(
        "attrpriv release ddp anes96 --epsilon 1 --chunk-size 6",
        "attrpriv release ddp anes96 --epsilon 1 --modules 'popul,tv_news;self_lr,clin_lr,dole_lr'",
        "attrpriv release ddp survey.parquet --schema survey.yaml --epsilon 1 --chunk-size 10 "
        "--structure chow-liu --aux public_sample.csv --out hist.json --html hist.html",
    ),
)
def ddp(
    data: DataArgument,
    epsilon: HistogramsEpsilon,
    chunk_size: Annotated[
        int, typer.Option(help="k: the most columns per chunk before merging (a compute bound).")
    ] = 10,
    structure: Annotated[
        str, typer.Option(help="Network structure: 'hc', 'chow-liu' or 'exact' (k <= 4).")
    ] = "hc",
    method: Annotated[
        str,
        typer.Option(
            help="'quilt' (checked bound, sound whatever network is learned) or 'pairwise' "
            "(the paper's Liu et al. coefficients, for comparison: not sound in general)."
        ),
    ] = "quilt",
    composition: Annotated[
        str,
        typer.Option(
            help="'survey' (every answer against the full epsilon, chunks screened by tested "
            "rings), 'chunks' (the paper's epsilon * k / m per chunk, chunks assumed "
            "independent) or 'auto' (survey for quilt, chunks for pairwise)."
        ),
    ] = "auto",
    grouping: Annotated[
        str, typer.Option(help="'dependence' (dependent columns together) or 'order'.")
    ] = "dependence",
    aux: Annotated[
        str | None,
        typer.Option(help="Public data (bundled name or file) to learn the networks from."),
    ] = None,
    columns: Annotated[
        str | None, typer.Option(help="Comma-separated columns; default every one with a domain.")
    ] = None,
    modules: Annotated[
        str | None,
        typer.Option(
            help="The structural tier: modules of questions independent of one another, "
            "'a,b,c;d,e' (the columns no module names form one more), or 'aux' to learn them "
            "from --aux. Each answer gets epsilon for any adversary who believes the modules "
            "independent (any law inside each); no network is learned, nothing but counts is "
            "read from the private rows."
        ),
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
    accept_inferred: AcceptInferredOption = False,
    ledger: LedgerOption = None,
    out: OutFile = None,
    html: ReleaseHtml = None,
) -> None:
    """Histograms of every question; protects any one answer of any respondent, also through
    the answers that depend on it."""
    from attrpriv._progress import progress
    from attrpriv.data.read import read_data
    from attrpriv.release.ddp.mechanism import TabularDDP

    outputs = release_outputs(out, html)
    with warnings_printed():
        source = read_data(data, schema, infer_schema=infer_schema)
    check_reviewed(source.schema, schema, accept_inferred)
    if modules is not None:
        _modules(data, source, modules, aux, epsilon, columns, max_levels, seed, ledger, outputs)
        return
    # public data: a bundled dataset's frame, or a file path (sampled by DuckDB)
    public = None if aux is None else read_data(aux, require_schema=False, what="aux").data
    mechanism = TabularDDP(
        epsilon,
        chunk_size,
        split_names(columns),
        method=method,
        composition=composition,
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
    for guarantee in result.record.guarantees:  # the conditional one, then the one for any law
        console.print(f"guarantee: {guarantee.describe()}", markup=False, highlight=False)
    write_release(outputs, result, book, title=f"Tabular-DDP histograms of {data}")


def _modules(
    data: str,
    source: Any,
    modules: str,
    aux: str | None,
    epsilon: float,
    columns: str | None,
    max_levels: int,
    seed: int,
    ledger: Path | None,
    outputs: Outputs,
) -> None:
    """``--modules``: the structural tier (:class:`ModularDDP`)."""
    from attrpriv.data.read import read_data
    from attrpriv.release.ddp.answers import AUX
    from attrpriv.release.ddp.modules import ModularDDP

    if modules.strip() == AUX and aux is None:
        raise InputError("--modules aux learns the modules from --aux: give public rows")
    declared: str | list[list[str]] = AUX
    if modules.strip() != AUX:
        declared = [split_names(part) or [] for part in modules.split(";") if part.strip()]
        if not declared:
            raise InputError(f"--modules must be 'a,b;c,d' or 'aux', got {modules!r}")
    public = None if aux is None else read_data(aux, require_schema=False, what="aux").data
    mechanism = ModularDDP(
        epsilon, declared, aux=public, columns=split_names(columns), max_levels=max_levels,
        seed=seed,
    )  # fmt: skip
    book = open_ledger(ledger)
    result = mechanism.release(source.data, source.schema, ledger=book, label=f"ddp {data}")
    parts = result.parts
    console.print(
        f"{len(parts['modules'])} modules ({parts['modules_from']}); noise scale 2|M|/epsilon "
        f"per module, {parts['gain']:.2f}x smaller on average than the row-level Laplace "
        f"scale {parts['laplace_scale']:.4g}",
        markup=False,
        highlight=False,
    )
    for guarantee in result.record.guarantees:
        console.print(f"guarantee: {guarantee.describe()}", markup=False, highlight=False)
    write_release(outputs, result, book, title=f"Tabular-DDP (modules) histograms of {data}")


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
    claims = (
        "if a chunk's ring does not screen it from the rest"
        if parts["composition"] == "survey"
        else "if answers in different chunks are dependent"
    )
    console.print(
        f"networks learned from {parts['n_learning_rows']:,} rows (a sample of at most "
        f"--max-learn-rows) of {where}; {claims} the loss may reach "
        f"{parts['epsilon_if_chunks_dependent']:.3g}"
    )
    if parts["fallback"]:
        console.print(f"row-level Laplace noise everywhere: {parts['fallback']}")
