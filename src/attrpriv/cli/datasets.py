"""``attrpriv datasets``: list, inspect and export the bundled datasets."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from attrpriv.cli._common import (
    DatasetArgument,
    OutFile,
    console,
    examples,
    group,
    text_writer,
    write_json,
    write_outputs,
)
from attrpriv.cli._outputs import Outputs
from attrpriv.errors import InputError

if TYPE_CHECKING:
    import pandas as pd

app = group("datasets")


@app.command("list", epilog=examples("attrpriv datasets list"))
def list_() -> None:
    """List the bundled datasets with their roles and licences."""
    from attrpriv.data import datasets as bundled

    table = Table("name", "columns", "sensitive", "target", "licence")
    for name in bundled.names():
        schema = bundled.info(name)
        sensitive = ", ".join(schema.sensitive) or "-"
        table.add_row(
            name, str(len(schema.columns)), sensitive, schema.target or "-", schema.licence
        )
    console.print(table)


@app.command(
    epilog=examples(
        "attrpriv datasets show adult", "attrpriv datasets show german_credit --out german.json"
    )
)
def show(
    name: DatasetArgument,
    out: OutFile = None,
) -> None:
    """Show a dataset's size, source, licence and the role and public domain of every column."""
    from attrpriv.data import datasets as bundled

    data = bundled.load(name)
    schema = data.schema
    rows, cols = data.frame.shape
    console.print(f"[bold]{name}[/bold]: {rows:,} rows x {cols} columns. {schema.description}")
    console.print(f"source: {schema.source}\nlicence: {schema.licence}")
    table = Table("column", "role", "domain", "missing")
    for column in schema.columns:
        domain = column.domain.describe() if column.domain is not None else "-"
        missing = int(data.frame[column.name].isna().sum())
        table.add_row(column.name, column.role.value, domain, f"{missing:,}" if missing else "")
    console.print(table)
    write_json(out, {"name": name, "rows": rows, "columns": cols, "schema": schema.to_dict()})


@app.command(
    epilog=examples(
        "attrpriv datasets export adult adult.parquet",
        "attrpriv datasets export anes96 anes.csv --schema-out anes.yaml",
    )
)
def export(
    name: DatasetArgument,
    path: Annotated[Path, typer.Argument(help="Output file: .csv, .csv.gz or .parquet.")],
    schema_out: Annotated[
        Path | None, typer.Option(help="Also write the schema here (.yaml, .yml or .json).")
    ] = None,
) -> None:
    """Write a bundled dataset (and optionally its schema) to files: both or neither."""
    from attrpriv.data import datasets as bundled

    writer = _writer_for(path)
    if schema_out is not None and schema_out.suffix.lower() not in (".yaml", ".yml", ".json"):
        raise InputError(f"schema file {str(schema_out)!r} must end in .yaml, .yml or .json")
    outputs = Outputs()
    outputs.add("PATH", path)
    outputs.add("--schema-out", schema_out)
    data = bundled.load(name)
    schema_text = None
    if schema_out is not None:
        as_json = schema_out.suffix.lower() == ".json"
        schema_text = data.schema.to_json() if as_json else data.schema.to_yaml()
    frame = data.frame
    write_outputs(
        outputs,
        {
            "PATH": lambda tmp: writer(frame, tmp),
            "--schema-out": None if schema_text is None else text_writer(schema_text),
        },
    )
    console.print(f"exported {len(frame):,} rows of {name}")


def _writer_for(path: Path) -> Callable[[pd.DataFrame, Path], None]:
    """Pick a writer from the file name, before anything is computed."""
    lowered = path.name.lower()
    if lowered.endswith((".csv", ".csv.gz")):
        gz = lowered.endswith(".gz")
        return lambda frame, tmp: frame.to_csv(tmp, index=False, compression="gzip" if gz else None)
    if lowered.endswith((".parquet", ".pq")):
        return lambda frame, tmp: frame.to_parquet(tmp, index=False)
    raise InputError(f"output file {str(path)!r} must end in .csv, .csv.gz or .parquet")
