"""``attrpriv sanitize apply``: sanitize private data with a saved decoupler and a sampler."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from attrpriv.cli._common import (
    TABLE_SUFFIXES,
    AcceptInferredOption,
    BoundOption,
    DecouplerOption,
    LedgerOption,
    OutFile,
    RowsOption,
    SeedOption,
    check_reviewed,
    console,
    err_console,
    examples,
    json_writer,
    table_writer,
    write_outputs,
)
from attrpriv.cli._outputs import Outputs, Writer
from attrpriv.cli.sanitize import app
from attrpriv.cli.sanitize._decoupler import (
    MECHANISMS,
    _check_kind,
    _is_images,
    _label,
    _read_images,
    _require_torch,
    _sampler,
)
from attrpriv.cli.sanitize._rows import RowRangeOption, WhereOption
from attrpriv.errors import InputError

if TYPE_CHECKING:
    from attrpriv.sanitize.decoupler import GlobalDecoupler


def _check_same_domains(model: Any, schema: Any) -> None:
    """A schema given with the data must agree with the decoupler's on every modelled column.

    Values inside the decoupler's domains are checked anyway; this catches the same column
    names with other public domains (another schema: its encodings would mean other things).
    """
    if schema is None:
        return
    stored = model.codec_.schema.to_dict()["columns"]
    given = schema.to_dict()["columns"]
    for column in model.codec_.columns:
        ours, theirs = stored[column].get("domain"), given.get(column, {}).get("domain")
        if theirs is not None and theirs != ours:
            raise InputError(
                f"column {column!r} has domain {theirs} in the given schema but {ours} in the "
                "decoupler's: was it trained on another schema?"
            )


def _check_out(out: Path, images: bool) -> None:
    """Images go to an .npz file, tables to Parquet or CSV."""
    suffix = out.suffix.lower()
    if images and suffix != ".npz":
        raise InputError(f"--out for image data must end in .npz, got {out.name!r}")
    if not images and suffix not in TABLE_SUFFIXES:
        raise InputError(
            f"--out for a table must end in {', '.join(TABLE_SUFFIXES)}, got {out.name!r}"
        )


@app.command(
    epilog=examples(
        "attrpriv sanitize apply adult --decoupler adult-decoupler --where split=test "
        "--mechanism dp-sampling --epsilon 1 --out sanitized.parquet --record record.json",
        "attrpriv sanitize apply private.parquet --schema s.yaml --decoupler dec "
        "--mechanism dp-sampling --epsilon 1 --out sanitized.parquet --record record.json",
        "attrpriv sanitize apply mnist_5k --decoupler mnist-decoupler --row-range 1::2 "
        "--rows 1000 --mechanism dp-sampling --epsilon 4 --out sanitized.npz",
    )
)
def apply(
    data: Annotated[
        str,
        typer.Argument(help="Private data: bundled name or CSV/Parquet, or mnist_5k / an .npz."),
    ],
    decoupler: DecouplerOption,
    out: Annotated[
        Path,
        typer.Option(
            help="Sanitized data, written atomically: a table to .parquet/.csv (every input "
            "column sanitized, passed through or listed as dropped); images to .npz "
            "('images', the synthetic sensitive labels of dp-sampling, the other label arrays)."
        ),
    ],
    mechanism: Annotated[
        str, typer.Option(help=f"One of {', '.join(MECHANISMS)}.")
    ] = "dp-sampling",
    epsilon: Annotated[float | None, typer.Option(help="Privacy loss of the sampler.")] = None,
    bound: BoundOption = None,
    projection_dim: Annotated[int | None, typer.Option(help="RON-Gauss projection p.")] = None,
    schema: Annotated[
        Path | None,
        typer.Option(
            "--schema",
            help="Schema file (.yaml/.json) for a data file; default: the decoupler's (the one "
            "it was trained with).",
        ),
    ] = None,
    accept_inferred: AcceptInferredOption = False,
    rows: RowsOption = None,
    row_range: RowRangeOption = None,
    where: WhereOption = None,
    allow_training_rows: Annotated[
        bool,
        typer.Option(
            "--allow-training-rows",
            help="Sanitize rows the decoupler was trained on anyway (warned): by default they "
            "are refused, as the decoupler must be trained on public data only.",
        ),
    ] = False,
    strict_domain: Annotated[
        bool,
        typer.Option(
            "--strict-domain",
            help="Refuse a value outside its public domain; by default it is clipped into it "
            "(a category: the training data's most frequent one) and counted.",
        ),
    ] = False,
    drop_ignored: Annotated[
        bool,
        typer.Option(
            "--drop-ignored",
            help="Drop the columns of role 'ignore' (by default: passed through unchanged).",
        ),
    ] = False,
    ledger: LedgerOption = None,
    record: OutFile = None,
    seed: SeedOption = 0,
) -> None:
    """Replace every record's sensitive latent with the sampler's draws and decode.

    A table that is mostly the decoupler's training rows is refused (--allow-training-rows
    overrides); one with more of them than natural duplicates would make gets a warning.
    """
    _require_torch()
    import numpy as np
    import pandas as pd

    from attrpriv.data.read import read_data
    from attrpriv.data.select import RowSelection
    from attrpriv.dp.ledger import BudgetLedger
    from attrpriv.sanitize.decoupler import GlobalDecoupler
    from attrpriv.sanitize.sanitizer import Sanitizer, SanitizerDiagnostics

    images = _is_images(data)
    _check_out(out, images)
    outputs = Outputs()
    outputs.add("--out", out)
    outputs.add("--record", record)
    model = GlobalDecoupler.load(decoupler)
    _check_kind(model, decoupler, data)
    sampler = _sampler(mechanism, epsilon, bound, projection_dim, seed, list(model.classes_), model)
    book = BudgetLedger(ledger, create=False) if ledger is not None else None
    label = f"sanitize {data}"
    selection = RowSelection(row_range, where, rows, seed)
    if images:
        pixels, labels = selection.images(*_read_images(data), data)
        trained = _training_rows(model, pixels, data, decoupler, allow_training_rows)
        sensitive = model.sensitive_column_
        y_s = _label(labels, sensitive, data)
        result = Sanitizer(model, sampler).sanitize(pixels, y_s, ledger=book, label=label)
        arrays: dict[str, Any] = {"images": np.asarray(result.data)[:, 0]}
        if result.y_s is not None:
            arrays[str(sensitive)] = np.asarray(result.y_s.tolist())  # plain dtype, no pickle
        arrays |= {name: values for name, values in labels.items() if name != sensitive}
        data_writer = _npz_writer(arrays)
        size = f"{len(pixels)} images"
    else:
        source = read_data(
            data, schema, require_schema=False, check=strict_domain, select=selection
        )
        check_reviewed(source.schema, schema, accept_inferred)
        _check_same_domains(model, source.schema)
        frame = source.frame
        trained = _training_rows(model, frame, data, decoupler, allow_training_rows)
        result = Sanitizer(model, sampler, seed=seed).sanitize(
            frame, ledger=book, label=label, schema=source.schema,
            out_of_domain="refuse" if strict_domain else "clip", keep_ignored=not drop_ignored,
        )  # fmt: skip
        assert isinstance(result.data, pd.DataFrame)
        data_writer = table_writer(result.data, out)
        size = f"{len(result.data)} rows"
    assert isinstance(result.diagnostics, SanitizerDiagnostics)
    diagnostics = replace(result.diagnostics, training_rows=trained,
                          training_rows_allowed=bool(trained))  # fmt: skip
    result = replace(result, diagnostics=diagnostics)
    claim = "no DP claim (nothing released about z_S)" if result.record is None else (
        f"epsilon={result.record.epsilon:g} ({result.record.definition})")  # fmt: skip
    console.print(f"sanitized {size} with {mechanism}: {claim}")
    lines = diagnostics.summary_lines()
    flat = model.uninformative_columns()
    if flat:  # read off the decoupler's public validation rows at fit, not the private ones
        lines.append(
            f"warning: the decoupler carries nothing of {', '.join(flat)} (its fit's fidelity "
            "check on public rows): those columns are drawn as noise; for a table, "
            "'sanitize resample' keeps them"
        )
    for line in lines:
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    write_outputs(
        outputs,
        {
            "--out": data_writer,
            "--record": None if record is None else json_writer(result.to_dict()),
        },
    )


def _training_rows(
    model: GlobalDecoupler, x: Any, data: str, decoupler: Path, allow: bool
) -> int | None:
    """Refuse rows the decoupler was trained on (exit 2), or warn with --allow-training-rows.

    Returns how many there were (None: not checked, for a decoupler saved without a
    fingerprint, or a table lacking a column the decoupler needs, which it refuses itself).
    """
    import numpy as np

    fingerprint = model.fingerprint_
    if fingerprint is None:
        err_console.print(
            f"warning: decoupler {str(decoupler)!r} has no fingerprint of its training rows "
            "(saved by an earlier attrpriv): cannot check that the data was not trained on; "
            "refit it",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
        return None
    where = ""
    if model.kind == "tabular":
        present = {str(c) for c in x.columns}
        if any(c not in present for c in fingerprint.core_columns):
            return None
        lacking = [c for c in fingerprint.columns if c not in present]
        if lacking:
            where = (
                f", compared on the modelled columns only: the data lacks {lacking}, which "
                "would tell identical records apart"
            )
    matched = int(np.count_nonzero(model.training_rows(x)))
    verdict = model.training_overlap(x) if matched else "disjoint"
    if verdict == "disjoint":  # natural duplicates of a coarse table are not training rows
        return matched
    what = f"{'images' if model.kind == 'image' else 'rows'} of {data!r}"
    compared = "" if model.kind == "image" else " (compared on every column but the sensitive one)"
    premise = (  # no count: how many private rows match is not for an error message
        f"{'most' if verdict == 'training rows' else 'more'} {what} equal rows the decoupler "
        f"{str(decoupler)!r} was trained on{compared}{where} than natural duplicates would make"
        + (" (too few distinct values to tell)" if verdict == "cannot tell" else "")
    )
    if verdict != "training rows":
        err_console.print(
            f"warning: {premise}: some may be training rows; the method's premise is a "
            "decoupler trained on public data only",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
        return matched
    if not allow:
        raise InputError(
            f"{premise}: a decoupler must be trained on public data only, so sanitize rows "
            "disjoint from its training rows (--row-range, --where), or pass "
            "--allow-training-rows to override"
        )
    err_console.print(
        f"warning: --allow-training-rows: {premise}; the sanitized release of those rows does "
        "not meet the method's premise (a decoupler trained on public data only)",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    return matched


def _npz_writer(arrays: dict[str, Any]) -> Writer:
    """Write ``arrays`` as a compressed ``.npz`` (plain arrays: loadable without pickle)."""
    import numpy as np

    def write(tmp: Path) -> None:
        with tmp.open("wb") as handle:
            np.savez_compressed(handle, **arrays)

    return write
