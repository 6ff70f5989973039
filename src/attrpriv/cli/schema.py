"""``attrpriv schema``: draft a schema file for your own data (then edit it)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from attrpriv.cli._common import (
    DataArgument,
    console,
    examples,
    group,
    output_option,
    split_names,
    text_writer,
    warnings_printed,
    write_outputs,
)
from attrpriv.cli._outputs import Outputs
from attrpriv.errors import InputError

app = group("schema")

SCHEMA_SUFFIXES = (".yaml", ".yml", ".json")


@app.command(
    epilog=examples(
        "attrpriv schema draft survey.csv --out survey.yaml",
        "attrpriv schema draft survey.parquet --sensitive answer,religion --target vote "
        "--ignore weight --out survey.yaml",
        "attrpriv release histograms survey.csv --schema survey.yaml --epsilon 1",
    )
)
def draft(
    data: DataArgument,
    out: Annotated[
        Path | None,
        output_option("Write the draft here (.yaml, .yml or .json); default: print the YAML."),
    ] = None,
    target: Annotated[
        str | None, typer.Option(help="The column a model predicts (role 'target').")
    ] = None,
    sensitive: Annotated[
        str | None, typer.Option(help="Comma-separated columns to protect (role 'sensitive').")
    ] = None,
    ignore: Annotated[
        str | None,
        typer.Option(help="Comma-separated columns that are not attributes (role 'ignore')."),
    ] = None,
) -> None:
    """Draft a schema from a CSV/Parquet file: roles guessed, every domain read off the data.

    Every column is a feature unless named by --target, --sensitive or --ignore; a column of
    distinct integers or texts (an identifier) is ignored, without a domain. Every domain is
    read from the data, which makes it a release of that data: the draft lists those columns
    under 'inferred', and releases made with it say so. Replace each domain by its public one
    (a code book, a documented range) and delete the 'inferred' key before relying on it.
    """
    from attrpriv.data.draft import draft_schema
    from attrpriv.data.read import read_data

    if out is not None and out.suffix.lower() not in SCHEMA_SUFFIXES:
        raise InputError(f"--out {str(out)!r} must end in .yaml, .yml or .json")
    outputs = Outputs()
    outputs.add("--out", out)
    frame = read_data(data, require_schema=False, load=True).frame
    with warnings_printed():
        schema = draft_schema(
            frame,
            target=target,
            sensitive=split_names(sensitive) or (),
            ignore=split_names(ignore) or (),
            name=Path(data).stem,
        )
    text = schema.to_json() + "\n" if out is not None and out.suffix == ".json" else (
        schema.to_yaml())  # fmt: skip
    if out is None:
        console.print(text, markup=False, highlight=False, end="")
        return
    roles = {role: len(schema.with_role(role)) for role in ("sensitive", "target", "ignore")}
    write_outputs(outputs, {"--out": text_writer(text)})
    console.print(
        f"drafted {len(schema.columns)} columns ({roles['sensitive']} sensitive, "
        f"{roles['target']} target, {roles['ignore']} ignored); {len(schema.inferred)} domains "
        "read off the data: replace them with public ones, then delete 'inferred'",
        highlight=False,
    )
