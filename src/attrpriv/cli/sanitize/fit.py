"""``attrpriv sanitize fit``: train the global decoupler on public data and save it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from attrpriv.cli._common import (
    InferOption,
    RowsOption,
    SchemaOption,
    SeedOption,
    console,
    examples,
    warnings_printed,
    write_outputs,
)
from attrpriv.cli._outputs import Outputs
from attrpriv.cli.sanitize import app
from attrpriv.cli.sanitize._decoupler import _is_images, _label, _read_images, _require_torch
from attrpriv.cli.sanitize._rows import RowRangeOption, WhereOption
from attrpriv.errors import InputError
from attrpriv.sanitize.defaults import ALPHAS, KIND_DEFAULTS, LOSSES, MIN_BATCHES_PER_EPOCH

if TYPE_CHECKING:
    from attrpriv.sanitize.decoupler import GlobalDecoupler


def _default(setting: str) -> str:
    """The defaults of a training setting, for its help: ``default: 15 tables, 30 images``."""
    tabular, image = (KIND_DEFAULTS[kind][setting] for kind in ("tabular", "image"))
    return f"default: {tabular:g} tables, {image:g} images"


def _alphas(text: str) -> tuple[float, float, float, float]:
    try:
        values = tuple(float(v) for v in text.split(","))
    except ValueError:
        raise InputError(f"--alphas must be 4 comma-separated numbers, got {text!r}") from None
    if len(values) != 4:
        raise InputError(f"--alphas must be 4 comma-separated numbers, got {text!r}")
    return values[0], values[1], values[2], values[3]


def _fit_summary(model: GlobalDecoupler, frame: Any, sensitive: str) -> list[str]:
    """What ``fit`` says about a table's columns and its fingerprint, one line each."""
    modelled = set(model.codec_.columns)
    roles = model.schema_
    other = []
    for label in frame.columns:
        name = str(label)
        if name in modelled or name == sensitive:
            continue
        why = f"role {roles[name].role.value!r}" if name in roles else "not in the schema"
        other.append(f"{name} ({why})")
    lines = [f"modelled {len(modelled)} columns; not modelled: {', '.join(other) or 'none'}"]
    nullable = [b.name for b in model.codec_.blocks if b.missing]
    if nullable:
        lines.append(
            "nullable numeric columns imputed with their training median, with a missingness "
            f"indicator the networks see: {', '.join(nullable)}"
        )
    return lines


def _validation_lines(model: GlobalDecoupler) -> list[str]:
    """What ``fit`` found on its validation split: z_S's status, any retune, fidelity flags."""
    check = model.validation_
    if check["status"] == "unchecked" and "aligner_logloss" not in check:
        lines = [f"validation: unchecked ({check.get('reason', 'no validation split')})"]
    else:
        why = f" ({check['reason']})" if check.get("reason") else ""
        lines = [
            f"validation on {check['rows']} held-out rows: z_S {check['status']}{why}; "
            f"log-loss of y_S: aligner (z_S) {check['aligner_logloss']:.3g}, prior "
            f"{check['prior_logloss']:.3g}, columns {check['features_logloss']:.3g}"
        ]
    retuned = model.retuned_
    if retuned is not None:
        start = retuned["from"]
        was = f"beta {start['beta']:g}, alphas {','.join(f'{a:g}' for a in start['alphas'])}"
        if retuned["beta"] is None:
            lines.append(
                f"z_S collapsed with {was}; retuning tried {len(retuned['tried'])} settings, "
                "none worked: kept the collapsed model"
            )
        else:
            now = ",".join(f"{a:g}" for a in retuned["alphas"])
            lines.append(
                f"z_S collapsed with {was}: retuned to beta {retuned['beta']:g}, alphas {now} "
                f"(best of {len(retuned['tried'])} settings tried)"
            )
    refit = model.refit_
    if refit is not None:
        lines.append(f"then trained on all {refit['rows']} rows for {refit['epochs']} epochs")
    fidelity = model.fidelity_
    if fidelity is not None:
        where = check.get("fidelity_rows", "validation")
        for item in fidelity[fidelity["flag"] == "constant"].itertuples():
            lines.append(
                f"fidelity ({where} rows): {item.column} constant, decoded with "
                f"{item.decoded_distinct} distinct value(s) where the source has "
                f"{item.source_distinct}"
            )
        for item in fidelity[fidelity["flag"] == "marginal"].itertuples():
            lines.append(
                f"fidelity ({where} rows): {item.column} marginal, its decoded law "
                f"{item.score:+.3f} nats a row against the rows' own frequencies"
            )
    default_batch = int(KIND_DEFAULTS[model.kind]["batch_size"])
    if model.batch_size is None and model.batch_size_ < default_batch:
        lines.append(
            f"batch size {model.batch_size_} (cut from {default_batch} so that an epoch of "
            "this small table has enough steps)"
        )
    if model.latent_bound_ is not None:
        lines.append(model.latent_bound_.describe())
    return lines


def _fingerprint_line(model: GlobalDecoupler) -> str:
    fingerprint = model.fingerprint_
    assert fingerprint is not None
    over = f" over {len(fingerprint.columns)} columns" if fingerprint.columns else ""
    return (
        f"stored a keyed fingerprint of the {fingerprint.n_rows} training rows{over} (hashes, "
        "no values): 'sanitize apply' refuses those rows"
    )


@app.command(
    epilog=examples(
        "attrpriv sanitize fit adult --sensitive sex --where split=train --rows 5000 "
        "--out adult-decoupler",
        "attrpriv sanitize fit aux.parquet --schema aux.yaml --sensitive race --epochs 30 "
        "--out dec",
        "attrpriv sanitize fit aux.csv --infer-schema --sensitive race --out dec",
        "attrpriv sanitize fit mnist_5k --sensitive thickness --row-range ::2 "
        "--out mnist-decoupler",
        "attrpriv sanitize fit digits.npz --sensitive writer --out dec",
    )
)
def fit(
    aux: Annotated[
        str,
        typer.Argument(
            help="Public auxiliary data: bundled name or CSV/Parquet (a table), or images: "
            "mnist_5k (labels 'thickness', generated, and 'label', the digit) or an .npz file "
            "with an 'images' array (n, h, w) in [0, 1] and 1-D label arrays."
        ),
    ],
    sensitive: Annotated[str, typer.Option(help="The sensitive column (or label array) y_S.")],
    out: Annotated[Path, typer.Option(help="Directory for the decoupler (weights + JSON).")],
    schema: SchemaOption = None,
    infer_schema: InferOption = False,
    rows: RowsOption = None,
    row_range: RowRangeOption = None,
    where: WhereOption = None,
    epochs: Annotated[
        int | None, typer.Option(help=f"Training epochs ({_default('epochs')}).")
    ] = None,
    latent_dim: Annotated[int, typer.Option(help="m, the latent dimension.")] = 32,
    sensitive_dim: Annotated[int, typer.Option(help="k, the dimension of z_S (k < m).")] = 8,
    beta: Annotated[
        float | None,
        typer.Option(help=f"beta of the beta-VAE ({_default('beta')}; the paper's: 5)."),
    ] = None,
    alphas: Annotated[
        str, typer.Option(help="alpha1..alpha4 of equation 5 (the paper's: 1,1,100,1).")
    ] = ",".join(f"{a:g}" for a in ALPHAS),
    hidden: Annotated[
        int | None, typer.Option(help=f"Hidden width of the networks ({_default('hidden')}).")
    ] = None,
    lr: Annotated[
        float | None, typer.Option(help=f"Adam learning rate ({_default('lr')}).")
    ] = None,
    batch_size: Annotated[
        int | None,
        typer.Option(
            help=f"Batch size ({_default('batch_size')}; cut so an epoch has "
            f"{MIN_BATCHES_PER_EPOCH} steps at least)."
        ),
    ] = None,
    seed: SeedOption = 0,
) -> None:
    """Train the global decoupler on public auxiliary data (a table or images) and save it.

    It keeps a keyed fingerprint of its training rows: 'sanitize apply' refuses them.
    """
    outputs = Outputs()
    outputs.add("--out", out, folder=True)  # before training: a file there is refused now
    _require_torch()
    from attrpriv.data.read import read_data
    from attrpriv.data.select import RowSelection
    from attrpriv.sanitize.decoupler import GlobalDecoupler

    kind = "image" if _is_images(aux) else "tabular"
    model = GlobalDecoupler(
        kind=kind, latent_dim=latent_dim, sensitive_dim=sensitive_dim, alphas=_alphas(alphas),
        seed=seed, epochs=epochs, beta=beta, lr=lr, batch_size=batch_size, hidden=hidden,
    )  # fmt: skip
    notes: list[str] = []
    selection = RowSelection(row_range, where, rows, seed)
    if kind == "image":
        if schema is not None or infer_schema:
            option = "--schema" if schema is not None else "--infer-schema"
            raise InputError(f"{option} describes a table; image data takes no schema")
        images, labels = selection.images(*_read_images(aux), aux)
        model.fit(images, _label(labels, sensitive, aux))
        model.sensitive_column_ = sensitive  # the label array's name, for 'apply' and 'evaluate'
        size = f"{len(images)} images"
    else:
        with warnings_printed():
            source = read_data(aux, schema, infer_schema=infer_schema, what="aux", select=selection)
        frame = source.frame
        model.fit(frame, sensitive, schema=source.schema)
        size = f"{len(frame)} rows"
        notes = _fit_summary(model, frame, sensitive)
        if source.schema.inferred:
            notes.append(
                f"domains of {len(source.schema.inferred)} columns read off {aux!r} "
                "(--infer-schema), every column a feature: declare roles ('ignore' for ids) "
                "and public domains in a schema file instead (attrpriv schema draft)"
            )
    best = min(max(int(model.best_epoch_), 1), len(model.history_))
    row = model.history_[best - 1]
    console.print(
        f"decoupler trained on {size} ({sensitive!r} as y_S), best epoch {best} of "
        f"{len(model.history_)}: " + ", ".join(f"{key} {row[key]:.3g}" for key in LOSSES)
    )
    for line in [*_validation_lines(model), *notes, _fingerprint_line(model)]:
        console.print(line, markup=False, highlight=False, soft_wrap=True)

    def save(folder: Path) -> None:
        model.save(folder)

    write_outputs(outputs, {"--out": save})
