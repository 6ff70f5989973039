"""``attrpriv sanitize``: train a global decoupler on public data, sanitize private data.

torch (the ``sanitize`` extra) is imported only when a command runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from attrpriv.cli._common import (
    TABLE_SUFFIXES,
    AcceptInferredOption,
    BoundOption,
    DecouplerOption,
    HtmlFile,
    InferOption,
    LedgerOption,
    OutFile,
    RowsOption,
    SchemaOption,
    SeedOption,
    check_reviewed,
    console,
    err_console,
    examples,
    group,
    json_writer,
    table_writer,
    text_writer,
    warnings_printed,
    write_outputs,
)
from attrpriv.cli._outputs import Outputs, Writer
from attrpriv.errors import InputError
from attrpriv.sanitize.defaults import ALPHAS, KIND_DEFAULTS, LOSSES

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from attrpriv.sanitize.decoupler import GlobalDecoupler
    from attrpriv.sanitize.samplers import DPObfuscation, DPSampling, Suppression

app = group("sanitize")

MECHANISMS = ("suppression", "dp-obfuscation", "dp-sampling")


def _default(setting: str) -> str:
    """The defaults of a training setting, for its help: ``default: 15 tables, 30 images``."""
    tabular, image = (KIND_DEFAULTS[kind][setting] for kind in ("tabular", "image"))
    return f"default: {tabular:g} tables, {image:g} images"


def _require_torch() -> None:
    """One-line error instead of a traceback when the ``sanitize`` extra is missing."""
    try:
        import torch  # noqa: F401
    except ImportError:
        raise InputError(
            "the sanitize commands need torch: pip install 'attrpriv[sanitize]'"
        ) from None


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


def _read_images(data: str) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """:func:`attrpriv.sanitize.images.read_images`, imported when a command runs (torch)."""
    from attrpriv.sanitize.images import read_images

    return read_images(data)


def _is_images(data: str) -> bool:
    """Image data: the bundled MNIST-5k or an ``.npz`` file; anything else is a table."""
    from attrpriv.sanitize.images import BUNDLED  # the sanitize commands need torch anyway

    return data == BUNDLED or data.lower().endswith(".npz")


def _take(
    images: np.ndarray, labels: dict[str, np.ndarray], rows: int | None, seed: int
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """A seeded sample of ``rows`` images and their labels (all of them without ``rows``)."""
    if rows is None or rows >= len(images):
        return images, labels
    import numpy as np

    index = np.random.default_rng(seed).choice(len(images), size=rows, replace=False)
    return images[index], {name: values[index] for name, values in labels.items()}


def _label(labels: dict[str, np.ndarray], name: str | None, data: str) -> np.ndarray:
    """The label array ``name`` of image data ``data``; the error lists the arrays present."""
    if name is None:
        raise InputError("the decoupler names no sensitive label array: fit it with 'sanitize fit'")
    if name not in labels:
        raise InputError(
            f"image data {data!r} has no label array {name!r}; it has {sorted(labels)}"
        )
    return labels[name]


def _check_kind(model: GlobalDecoupler, decoupler: Path, data: str) -> None:
    """The decoupler and the data must both be tables or both be images."""
    kind = "image" if _is_images(data) else "tabular"
    if model.kind != kind:
        raise InputError(
            f"decoupler {str(decoupler)!r} was trained on {model.kind} data, "
            f"but {data!r} is {kind} data"
        )


def _alphas(text: str) -> tuple[float, float, float, float]:
    try:
        values = tuple(float(v) for v in text.split(","))
    except ValueError:
        raise InputError(f"--alphas must be 4 comma-separated numbers, got {text!r}") from None
    if len(values) != 4:
        raise InputError(f"--alphas must be 4 comma-separated numbers, got {text!r}")
    return values[0], values[1], values[2], values[3]


RowRangeOption = Annotated[
    str | None,
    typer.Option(
        "--row-range",
        help="Use only rows START:STOP[:STEP] of the data as read (0-based, STOP excluded: "
        "':4000' the first 4000, '4000:' the rest, '::2' the even rows, '1::2' the odd ones), "
        "before --where and --rows. Train and sanitize disjoint rows.",
    ),
]
WhereOption = Annotated[
    str | None,
    typer.Option(
        "--where",
        help="Use only the rows whose COLUMN (or label array) reads VALUE, compared as text: "
        "COLUMN=VALUE (e.g. split=train; applied after --row-range, before --rows).",
    ),
]


def _row_slice(text: str, n: int, data: str) -> slice:
    """``--row-range START:STOP[:STEP]`` as a slice of ``n`` rows; it must select one or more."""
    parts = text.split(":")
    try:
        if len(parts) not in (2, 3):
            raise ValueError
        numbers = [int(part) if part.strip() else None for part in parts]
    except ValueError:
        raise InputError(
            "--row-range must be START:STOP or START:STOP:STEP (0-based row numbers, any may "
            f"be left out), got {text!r}"
        ) from None
    start, stop = numbers[0] or 0, n if numbers[1] is None else numbers[1]
    step = numbers[2] if len(numbers) == 3 and numbers[2] is not None else 1
    if start < 0 or stop < 0 or step < 1:
        raise InputError(f"--row-range takes row numbers >= 0 and a STEP >= 1, got {text!r}")
    if min(stop, n) <= start:
        raise InputError(f"--row-range {text} selects no row of {data!r} ({n} rows)")
    return slice(start, stop, step)


def _where(text: str) -> tuple[str, str]:
    """``--where COLUMN=VALUE`` as (column, value)."""
    column, sep, value = text.partition("=")
    if not sep or not column.strip():
        raise InputError(f"--where must be COLUMN=VALUE (e.g. split=train), got {text!r}")
    return column.strip(), value


def _table_rows(
    frame: Any, row_range: str | None, where: str | None, rows: int | None, seed: int, data: str
) -> Any:
    """The rows of a table that ``--row-range``, ``--where`` and ``--rows`` select, in order."""
    if row_range is not None:
        frame = frame.iloc[_row_slice(row_range, len(frame), data)]
    if where is not None:
        column, value = _where(where)
        if column not in frame.columns:
            raise InputError(f"--where column {column!r} is not a column of {data!r}")
        frame = frame[(frame[column].astype(str) == value).to_numpy()]
        if len(frame) == 0:
            raise InputError(f"--where {where} selects no row of {data!r}")
    if rows is not None and rows < len(frame):
        frame = frame.sample(rows, random_state=seed)
    return frame


def _image_rows(
    images: np.ndarray,
    labels: dict[str, np.ndarray],
    row_range: str | None,
    where: str | None,
    rows: int | None,
    seed: int,
    data: str,
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The images (and labels) that ``--row-range``, ``--where`` and ``--rows`` select."""
    import numpy as np

    index = np.arange(len(images))
    if row_range is not None:
        index = index[_row_slice(row_range, len(images), data)]
    if where is not None:
        name, value = _where(where)
        if name not in labels:
            raise InputError(
                f"--where label array {name!r} is not one of {data!r}: it has {sorted(labels)}"
            )
        index = index[np.asarray(labels[name][index]).astype(str) == value]
        if len(index) == 0:
            raise InputError(f"--where {where} selects no image of {data!r}")
    chosen = {name: values[index] for name, values in labels.items()}
    return _take(images[index], chosen, rows, seed)


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
        for item in fidelity[fidelity["flag"] != ""].itertuples():
            lines.append(
                f"fidelity ({where} rows): {item.column} {item.flag}, decoded with "
                f"{item.decoded_distinct} distinct value(s) where the source has "
                f"{item.source_distinct}"
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
        int | None, typer.Option(help=f"Batch size ({_default('batch_size')}).")
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
    from attrpriv.sanitize.decoupler import GlobalDecoupler

    kind = "image" if _is_images(aux) else "tabular"
    model = GlobalDecoupler(
        kind=kind, latent_dim=latent_dim, sensitive_dim=sensitive_dim, alphas=_alphas(alphas),
        seed=seed, epochs=epochs, beta=beta, lr=lr, batch_size=batch_size, hidden=hidden,
    )  # fmt: skip
    notes: list[str] = []
    if kind == "image":
        if schema is not None or infer_schema:
            option = "--schema" if schema is not None else "--infer-schema"
            raise InputError(f"{option} describes a table; image data takes no schema")
        images, labels = _image_rows(*_read_images(aux), row_range, where, rows, seed, aux)
        model.fit(images, _label(labels, sensitive, aux))
        model.sensitive_column_ = sensitive  # the label array's name, for 'apply' and 'evaluate'
        size = f"{len(images)} images"
    else:
        with warnings_printed():
            source = read_data(aux, schema, infer_schema=infer_schema, load=True, what="aux")
        frame = _table_rows(source.frame, row_range, where, rows, seed, aux)
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


def _sampler(
    mechanism: str,
    epsilon: float | None,
    bound: float | None,
    projection_dim: int | None,
    seed: int,
    classes: list[Any],
    model: GlobalDecoupler | None = None,
) -> Suppression | DPObfuscation | DPSampling:
    """The sampler of ``--mechanism``; ``bound`` ``None``: the decoupler's learned bound."""
    from attrpriv._checks import check_epsilon
    from attrpriv.sanitize.samplers import (
        DPObfuscation,
        DPSampling,
        Suppression,
        with_latent_bound,
    )

    if mechanism not in MECHANISMS:
        raise InputError(f"--mechanism must be one of {list(MECHANISMS)}, got {mechanism!r}")
    if mechanism == "suppression":
        return Suppression()
    if epsilon is None:
        raise InputError(f"--epsilon is required by mechanism {mechanism!r}")
    check_epsilon(epsilon, "--epsilon")
    sampler: DPObfuscation | DPSampling
    if mechanism == "dp-obfuscation":
        sampler = DPObfuscation(epsilon, bound)
    else:
        sampler = DPSampling(
            epsilon, bound, projection_dim=projection_dim, classes=classes, seed=seed
        )
    filled: DPObfuscation | DPSampling = with_latent_bound(sampler, model)
    if filled.bound is None:
        raise InputError(
            "the decoupler has no learned latent bound (saved by an earlier attrpriv): pass "
            "--bound (a public number) or refit it"
        )
    return filled


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
    from attrpriv.dp.ledger import BudgetLedger
    from attrpriv.sanitize.decoupler import GlobalDecoupler
    from attrpriv.sanitize.sanitizer import Sanitizer

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
    notes: list[str] = []
    if images:
        pixels, labels = _image_rows(*_read_images(data), row_range, where, rows, seed, data)
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
        source = read_data(data, schema, require_schema=False, load=True, check=strict_domain)
        check_reviewed(source.schema, schema, accept_inferred)
        _check_same_domains(model, source.schema)
        frame = _table_rows(source.frame, row_range, where, rows, seed, data)
        trained = _training_rows(model, frame, data, decoupler, allow_training_rows)
        result = Sanitizer(model, sampler, seed=seed).sanitize(
            frame, ledger=book, label=label, schema=source.schema,
            out_of_domain="refuse" if strict_domain else "clip", keep_ignored=not drop_ignored,
        )  # fmt: skip
        assert isinstance(result.data, pd.DataFrame)
        data_writer = table_writer(result.data, out)
        size = f"{len(result.data)} rows"
        notes = _apply_summary(result.parts)
    result.parts["training_rows"] = trained
    if trained:
        result.parts["training_rows_allowed"] = True
    claim = "no DP claim (nothing released about z_S)" if result.record is None else (
        f"epsilon={result.record.epsilon:g} ({result.record.definition})")  # fmt: skip
    console.print(f"sanitized {size} with {mechanism}: {claim}")
    for line in notes:
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


def _apply_summary(parts: dict[str, Any]) -> list[str]:
    """What became of every input column, and the values clipped into their domains."""
    columns = parts["columns"]
    said = [f"{len(columns['sanitized'])} sanitized (decoded)"]
    if columns["synthetic"]:
        said.append(f"{', '.join(columns['synthetic'])} synthetic (the sampler's labels)")
    if columns["passed_through"]:
        said.append(
            f"{len(columns['passed_through'])} passed through unchanged (role 'ignore': "
            f"{', '.join(columns['passed_through'])})"
        )
    dropped = "; ".join(f"{name} ({why})" for name, why in columns["dropped"].items())
    said.append(f"{len(columns['dropped'])} dropped" + (f": {dropped}" if dropped else ""))
    clipped = parts["clipped"]
    if clipped:
        values = ", ".join(f"{name} {count}" for name, count in clipped.items())
        domain = (
            f"clipped {sum(clipped.values())} values outside their public domain into it: "
            f"{values} (--strict-domain refuses them)"
        )
    else:
        domain = "no value outside its public domain"
    return ["columns: " + ", ".join(said), domain]


def _npz_writer(arrays: dict[str, Any]) -> Writer:
    """Write ``arrays`` as a compressed ``.npz`` (plain arrays: loadable without pickle)."""
    import numpy as np

    def write(tmp: Path) -> None:
        with tmp.open("wb") as handle:
            np.savez_compressed(handle, **arrays)

    return write


def _interpolations(
    model: GlobalDecoupler, aux: Any, y_aux: Any, strengths: list[float], seed: int
) -> dict[str, tuple[str, Any]]:
    """The seed's section-5 baseline: a plain beta-VAE (alphas 1, 0, 0, 0) with the decoupler's
    other settings, trained on the auxiliary data, interpolating at each strength."""
    if not strengths:
        return {}
    from attrpriv.sanitize.baselines import LatentInterpolation
    from attrpriv.sanitize.decoupler import GlobalDecoupler

    params = model.get_params(deep=False) | {"alphas": (1.0, 0.0, 0.0, 0.0), "progress": False}
    schema = None if model.kind == "image" else model.codec_.schema
    console.print("training the plain beta-VAE of the interpolation baseline on the aux data")
    bvae = GlobalDecoupler(**params).fit(aux, y_aux, schema=schema)
    return {
        f"beta-VAE interpolation x{t:g}": (
            "beta-VAE interpolation",
            LatentInterpolation(bvae, t, seed=seed).fit(aux, y_aux),
        )
        for t in strengths
    }


def _positives(text: str, option: str) -> list[float]:
    """Comma-separated positive finite numbers of ``option``."""
    try:
        values = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise InputError(f"{option} must be comma-separated numbers, got {text!r}") from None
    if not values or any(not 0 < v < float("inf") for v in values):
        raise InputError(f"{option} must be positive numbers, got {text!r}")
    return values


@app.command(
    epilog=examples(
        "attrpriv sanitize evaluate aux.parquet private.parquet --test test.parquet "
        "--schema s.yaml --decoupler dec --target income --epsilons 0.5,1,4 --out sweep.json "
        "--html sweep.html",
        "attrpriv sanitize evaluate mnist_5k digits.npz --decoupler mnist-decoupler "
        "--target label --rows 1000 --epsilons 1,4 --out sweep.json",
    )
)
def evaluate(
    aux: Annotated[
        str, typer.Argument(help="Public auxiliary data (the attacker's): a table or images.")
    ],
    private: Annotated[
        str, typer.Argument(help="Private data to sanitize and release, of the same kind.")
    ],
    decoupler: DecouplerOption,
    target: Annotated[
        str,
        typer.Option(
            help="Column (or label array: 'label', the digit, for mnist_5k) of the utility task."
        ),
    ],
    epsilons: Annotated[str, typer.Option(help="Comma-separated epsilons of the sweep.")] = "1",
    bound: BoundOption = None,
    schema: SchemaOption = None,
    rows: RowsOption = None,
    test: Annotated[
        str | None,
        typer.Option(
            help="Real held-out rows (or images) for the utility test, disjoint from AUX and "
            "PRIVATE; without it --test-share of PRIVATE is held out (not released)."
        ),
    ] = None,
    test_share: Annotated[
        float, typer.Option(help="Share of PRIVATE held out as real test rows without --test.")
    ] = 0.3,
    seeds: Annotated[
        int, typer.Option(help="Seeds each adversary and task model is fitted with (pooled).")
    ] = 3,
    proxies: Annotated[
        int, typer.Option(help="Proxies the 'drop sensitive + top k proxies' baseline drops.")
    ] = 3,
    decoded_target: Annotated[
        bool,
        typer.Option(
            "--decoded-target",
            help="Release the decoder's own target column instead of passing the real one "
            "through (the task is still tested on real rows).",
        ),
    ] = False,
    noise_scales: Annotated[
        str | None,
        typer.Option(
            help="Also sweep the input-noise baseline (no decoupler, no guarantee) over these "
            "comma-separated scales: pixel std for images, share of the public range for tables."
        ),
    ] = None,
    interpolation_strengths: Annotated[
        str | None,
        typer.Option(
            help="Also sweep the beta-VAE latent-interpolation baseline (no guarantee) over "
            "these comma-separated strengths; its beta-VAE is trained on AUX first."
        ),
    ] = None,
    out: OutFile = None,
    html: HtmlFile = None,
    seed: SeedOption = 0,
) -> None:
    """Leakage (strongest boosted adversary, AUC) vs utility (task AUC on real held-out rows)
    of suppression, DP-obfuscation and DP-sampling over epsilons, and of the simple baselines."""
    outputs = Outputs()
    outputs.add("--out", out)
    outputs.add("--html", html)
    _require_torch()
    from attrpriv._checks import check_positive_int, check_probability
    from attrpriv.data.read import read_data
    from attrpriv.report.sanitize import render_sweep_html
    from attrpriv.sanitize.decoupler import GlobalDecoupler
    from attrpriv.sanitize.tradeoff import sweep, sweep_images

    n_seeds = check_positive_int(seeds, "--seeds")
    k = check_positive_int(proxies, "--proxies", minimum=0)
    share = check_probability(test_share, "--test-share")
    model = GlobalDecoupler.load(decoupler)
    sources = (aux, private) if test is None else (aux, private, test)
    for data in sources:
        _check_kind(model, decoupler, data)
    if target == model.sensitive_column_:
        raise InputError(
            f"--target {target!r} is the sensitive column: pick another column as the utility task"
        )
    strengths = (
        _positives(interpolation_strengths, "--interpolation-strengths")
        if interpolation_strengths is not None
        else []
    )
    classes = list(model.classes_)
    samplers: dict[str, tuple[str, Any]] = {"suppression": ("suppression", _sampler(
        "suppression", None, bound, None, seed, classes, model))}  # fmt: skip
    for eps in _positives(epsilons, "--epsilons"):
        for mech in ("dp-obfuscation", "dp-sampling"):
            samplers[f"{mech} eps={eps:g}"] = (
                mech,
                _sampler(mech, eps, bound, None, seed, classes, model),
            )
    if noise_scales is not None:
        from attrpriv.sanitize.baselines import InputNoise

        public = None if model.kind == "image" else model.codec_.schema
        for scale in _positives(noise_scales, "--noise-scales"):
            samplers[f"input noise {scale:g}"] = (
                "input-noise",
                InputNoise(scale, schema=public, seed=seed, drop_sensitive=True),
            )
    if model.kind == "image":
        parts = [_take(*_read_images(data), rows, seed + offset)
                 for offset, data in enumerate(sources)]  # fmt: skip
        sensitive = model.sensitive_column_
        (aux_x, aux_y), (priv_x, priv_y) = parts[0], parts[1]
        y_aux = _label(aux_y, sensitive, aux)
        samplers |= _interpolations(model, aux_x, y_aux, strengths, seed)
        test_x, test_y = (None, None) if test is None else (
            parts[2][0], _label(parts[2][1], target, str(test)))  # fmt: skip
        result = sweep_images(
            model, aux_x, y_aux, priv_x, _label(priv_y, sensitive, private),
            _label(priv_y, target, private), samplers, test_images=test_x, test_target=test_y,
            test_share=share, seed=seed, seeds=n_seeds, progress=True,
        )  # fmt: skip
    else:
        frames = []
        for offset, data in enumerate(sources):
            frame = read_data(data, schema, load=True).frame
            if rows is not None and rows < len(frame):
                frame = frame.sample(rows, random_state=seed + offset)
            frames.append(frame.reset_index(drop=True))
        samplers |= _interpolations(model, frames[0], model.sensitive_column_, strengths, seed)
        samplers |= _resampling(model, frames[0], frames[1], target,
                                _positives(epsilons, "--epsilons"), k, seed)  # fmt: skip
        result = sweep(
            model, frames[0], frames[1], samplers, target=target,
            test=frames[2] if test is not None else None, test_share=share, seed=seed,
            seeds=n_seeds, proxies=k, decoded_target=decoded_target, progress=True,
        )  # fmt: skip
    _print_sweep(result)
    page = None
    if html is not None:
        y_s = str(model.sensitive_column_)
        page = render_sweep_html(result, title=f"Sanitizer sweep: {private} (y_S {y_s}, task "
                                 f"{target})", sensitive=y_s, target=target)  # fmt: skip
    write_outputs(
        outputs,
        {
            "--out": None if out is None else json_writer(result.to_dict()),
            "--html": None if page is None else text_writer(page),
        },
    )


def _resampling(
    decoupler: GlobalDecoupler,
    aux: pd.DataFrame,
    private: pd.DataFrame,
    target: str,
    epsilons: list[float],
    proxies: int,
    seed: int,
) -> dict[str, tuple[str, Any]]:
    """Proxy resampling at each epsilon, on the same plane (tables only)."""
    from attrpriv.sanitize.resample.evaluation import ResamplingSanitizer
    from attrpriv.sanitize.tradeoff import evaluated_columns

    pair = ResamplingSanitizer.fitted(
        aux, private, str(decoupler.sensitive_column_), target=target, epsilon=epsilons[0],
        n_proxies=proxies, columns=evaluated_columns(decoupler, aux, target), seed=seed,
    )  # fmt: skip
    return {f"proxy-resampling eps={e:g}": ("proxy-resampling", pair.at(e)) for e in epsilons}


def _print_sweep(result: Any) -> None:
    """One line per method: leakage AUC [CI] (which adversary), utility AUC [CI], CAS."""
    lines = [f"{'method':40s} {'leakage AUC [95% CI]':22s} {'adversary':13s} "
             f"{'utility AUC [95% CI]':22s} CAS"]  # fmt: skip
    for point in (*result.points, *result.baselines):
        leak, use = point.leakage_result, point.utility_result
        name = point.name if point.family != "baseline" else f"baseline: {point.name}"
        lines.append(
            f"{name:40s} {leak.auc:.3f} [{leak.auc_ci[0]:.3f}, {leak.auc_ci[1]:.3f}]  "
            f"{leak.strongest.name:13s} {use.auc.attack:.3f} [{use.auc_ci[0]:.3f}, "
            f"{use.auc_ci[1]:.3f}]  {point.cas:.3f}"
        )  # fmt: skip
    areas = {**result.pareto_auc, **{f"baseline: {k}": v
                                     for k, v in result.baseline_pareto_auc.items()}}  # fmt: skip
    lines.append("Pareto AUC (leakage AUC - 0.5 in [0, 0.5]): " + ", ".join(
        f"{k} {v:.3f}" for k, v in areas.items()))  # fmt: skip
    public = result.public_only
    if public is not None:
        best = max((*result.points, *result.baselines), key=lambda p: result.retained(p))
        lines.append(
            f"the public rows alone (no release): utility AUC {public.auc.attack:.3f} "
            f"[{public.auc_ci[0]:.3f}, {public.auc_ci[1]:.3f}]; retained private information "
            f"(utility minus that) is at most {result.retained(best):+.3f} ({best.name})"
        )
    for line in lines:
        console.print(line, markup=False, highlight=False, soft_wrap=True)
