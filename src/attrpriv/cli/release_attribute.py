"""``attrpriv release attribute SPEC.yaml``: the attribute-private Gaussian mechanism from a spec.

The YAML spec names the data, the statistics to release, the protected secrets with their
values, the model Theta of the data, and (epsilon, delta). Paths are relative to the spec file.
:data:`MINIMAL_SPEC` (shown by ``--help``) runs as it is; ``examples/attribute.yaml`` is the
README's quick start, on a CSV file with its schema.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, cast

import typer
from rich.markup import escape
from rich.table import Table

from attrpriv.cli._common import (
    LedgerOption,
    OutFile,
    console,
    err_console,
    examples,
)
from attrpriv.cli.release import ReleaseHtml, app, open_ledger, release_outputs, write_release
from attrpriv.errors import InputError

if TYPE_CHECKING:
    import pandas as pd

    from attrpriv.data.schema import Schema
    from attrpriv.dp.record import Release
    from attrpriv.release.gaussian.mechanism import AttributePrivateGaussian
    from attrpriv.release.gaussian.plan import GaussianDiagnostics
    from attrpriv.release.gaussian.query import Secret
    from attrpriv.release.gaussian.theta import ThetaModel

_KEYS = {
    "data",
    "schema",
    "statistics",
    "protect",
    "model",
    "epsilon",
    "delta",
    "variant",
    "calibration",
    "approximation",
    "eta",
    "smoothing",
    "n_eval",
}
_OPTIONAL = ("variant", "calibration", "approximation", "eta", "smoothing", "n_eval")
_MODEL_KEYS = {
    "resampling": {"type", "reference", "n", "draws", "seed"},
    "gaussian": {"type", "n", "variables", "mean", "cov", "reference", "force"},
}
_SECRET_KEYS = {"statistic", "values", "interval", "pairs", "name"}

MINIMAL_SPEC = """\
data: {dataset: adult, rows: 100, seed: 3}   # or a CSV/Parquet file
statistics: [count(sex=Female)]
protect:
  - statistic: share(income=>50K)
    values: [0.4, 0.6]                 # or interval: [lo, hi]
model: {type: resampling, reference: adult, n: 100}
epsilon: 1
delta: 1e-3
"""
"""A complete spec that runs as it is (``--help`` shows it; lines fit 80 columns)."""

_SPEC_HELP = (
    "[bold]Minimal spec[/bold] (save as spec.yaml; paths in a spec are relative to it)\n\n"
    + "\n".join(f"  {escape(line)}" for line in MINIMAL_SPEC.splitlines())
    + "\n\nStatistics: mean(col), sum(col), share(col=value), count(col=value). A data file "
    "needs 'schema: FILE'. A secret takes values, an interval or pairs. Models: "
    + escape("{type: resampling, reference, n, draws, seed}; {type: gaussian, n, variables, ")
    + escape("mean, cov} or {type: gaussian, n, reference, variables, force}")
    + " (force: accept category or integer variables, which understate delta). Optional: "
    "variant (isotropic | directional), calibration (analytic | classic), approximation "
    "(auto | exact | bound | assume-gaussian), eta, smoothing, n_eval.\n\n"
)


@app.command(
    "attribute",
    epilog=_SPEC_HELP
    + examples(
        "attrpriv release attribute examples/attribute.yaml --out release.json",
        "attrpriv release attribute spec.yaml --ledger adult.ledger --out release.json "
        "--html release.html",
    ),
)
def attribute(
    spec: Annotated[Path, typer.Argument(help="YAML spec: data, statistics, protect, model, ...")],
    ledger: LedgerOption = None,
    out: OutFile = None,
    html: ReleaseHtml = None,
) -> None:
    """Release statistics while hiding whole-dataset secrets (attribute-private Gaussian).

    The release states the (epsilon, delta) asked for, or is refused with what can be given.
    """
    from attrpriv.release.gaussian.checks import ModelWarning

    outputs = release_outputs(out, html)
    settings = load_spec(spec)
    mechanism, data, schema = build(settings, spec.resolve().parent)
    mechanism.set_params(progress=True)  # Algorithm 2's search can take a minute
    book = open_ledger(ledger)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ModelWarning)  # printed below, from the release
        label = f"attribute release ({spec.name})"
        result = mechanism.release(data, schema, ledger=book, label=label)
    diagnostics = _summary(result)
    for text in diagnostics.warnings:
        err_console.print(f"warning: {text}", markup=False, highlight=False, soft_wrap=True)
    write_release(outputs, result, book, title=f"Attribute-private release ({spec.name})")


def load_spec(path: Path) -> dict[str, Any]:
    """Read a YAML (1.2 booleans) spec and check its top-level keys."""
    import yaml

    from attrpriv._yaml import load_yaml

    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read spec file {str(path)!r}: {exc.strerror}") from None
    try:
        spec = load_yaml(text)
    except yaml.YAMLError as exc:
        first = str(exc).splitlines()[0]
        raise InputError(f"spec file {str(path)!r} is not valid YAML: {first}") from None
    if not isinstance(spec, Mapping):
        raise InputError(f"spec file {str(path)!r} must hold a mapping of settings")
    _check_keys(spec, _KEYS, "spec", required={"data", "statistics", "protect", "model"})
    for key in ("epsilon", "delta"):
        if key not in spec:
            raise InputError(f"spec needs {key!r}")
    return dict(spec)


def build(
    spec: Mapping[str, Any], base: Path
) -> tuple[AttributePrivateGaussian, pd.DataFrame | Path, Schema]:
    """The mechanism, the private data and its schema described by a checked spec."""
    from attrpriv.release.gaussian.mechanism import AttributePrivateGaussian

    schema_file = _path(spec["schema"], base) if spec.get("schema") is not None else None
    data, schema = _data(spec["data"], schema_file, base)
    model = _model(spec["model"], schema, base)
    protect = spec["protect"]
    if not isinstance(protect, list) or not protect:
        raise InputError("spec 'protect' must be a non-empty list of secrets")
    secrets = [_secret(item) for item in protect]
    statistics = spec["statistics"]
    if not isinstance(statistics, list):
        raise InputError("spec 'statistics' must be a list like [mean(age), count(sex=Female)]")
    options = {key: spec[key] for key in _OPTIONAL if key in spec}
    mechanism = AttributePrivateGaussian(
        statistics, secrets, model, spec["epsilon"], spec["delta"], **options
    )
    return mechanism, data, schema


def _data(data: Any, schema_file: Path | None, base: Path) -> tuple[pd.DataFrame | Path, Schema]:
    """A bundled name, a file, or ``{dataset, rows, seed}``: a random subset of one of them."""
    from attrpriv.data.read import read_data
    from attrpriv.data.select import RowSelection

    where = "spec 'data'"
    if isinstance(data, str):
        source = read_data(_source(data, base, where), schema_file, what=where)
        return source.data, source.schema
    if not isinstance(data, Mapping):
        raise InputError("spec 'data' must be a dataset name, a file, or {dataset, rows, seed}")
    _check_keys(data, {"dataset", "rows", "seed"}, where, required={"dataset", "rows"})
    dataset = _source(data["dataset"], base, "spec data 'dataset'")
    rows, seed = data["rows"], data.get("seed", 0)
    if isinstance(rows, bool) or not isinstance(rows, int) or rows < 1:
        raise InputError(f"spec data rows must be an integer >= 1, got {rows!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InputError(f"spec data seed must be an integer >= 0, got {seed!r}")
    select = RowSelection(rows=rows, seed=seed)
    source = read_data(dataset, schema_file, load=True, what=where, select=select)
    if len(source.frame) < rows:
        raise InputError(
            f"spec data rows must be an integer in [1, {len(source.frame)}], got {rows!r}"
        )
    return source.frame.reset_index(drop=True), source.schema


def _model(spec: Any, schema: Schema, base: Path) -> ThetaModel:
    from attrpriv.release.gaussian.resampling import ResamplingModel
    from attrpriv.release.gaussian.theta import GaussianModel

    if not isinstance(spec, Mapping) or spec.get("type") not in _MODEL_KEYS:
        raise InputError(f"spec 'model' must be a mapping with type one of {sorted(_MODEL_KEYS)}")
    kind = str(spec["type"])
    _check_keys(spec, _MODEL_KEYS[kind], f"{kind} model", required={"type", "n"})
    if kind == "resampling":
        if "reference" not in spec:
            raise InputError("resampling model needs 'reference' (public data)")
        reference = _reference(spec["reference"], base)
        options = {key: spec[key] for key in ("draws", "seed") if key in spec}
        return ResamplingModel(reference, schema, spec["n"], **options)
    if "reference" in spec:
        if "variables" not in spec:
            raise InputError("gaussian model from reference data needs 'variables'")
        reference = _reference(spec["reference"], base)
        return GaussianModel.from_data(
            reference, schema, spec["variables"], spec["n"], force=spec.get("force", False)
        )
    for key in ("variables", "mean", "cov"):
        if key not in spec:
            raise InputError(f"gaussian model needs {key!r} (or 'reference' and 'variables')")
    force = spec.get("force", False)
    return GaussianModel(spec["variables"], spec["mean"], spec["cov"], spec["n"], force=force)


def _reference(source: Any, base: Path) -> pd.DataFrame:
    """Public reference data: a bundled name or a CSV/Parquet file read into memory."""
    from attrpriv.data.read import read_data

    where = "model 'reference'"
    path = _source(source, base, where)
    return read_data(path, load=True, require_schema=False, what=where).frame


def _source(value: Any, base: Path, key: str) -> str:
    """A bundled dataset name as it is, a file path relative to the spec's folder resolved."""
    from attrpriv.data import datasets as bundled

    if not isinstance(value, str):
        raise InputError(f"{key} must be a bundled dataset name or a file path, got {value!r}")
    return value if value in bundled.names() else str(_path(value, base))


def _secret(item: Any) -> Secret:
    from attrpriv.release.gaussian.query import Secret

    if not isinstance(item, Mapping):
        raise InputError("each protected secret must be a mapping with 'statistic' and values")
    _check_keys(item, _SECRET_KEYS, "protected secret", required={"statistic"})
    for key in ("values", "interval", "pairs"):
        if key in item and not isinstance(item[key], list):
            raise InputError(f"secret {item['statistic']}: {key!r} must be a list")
    pairs = tuple(tuple(p) if isinstance(p, list) else p for p in item.get("pairs", ()))
    return Secret(
        item["statistic"],
        values=tuple(item.get("values", ())),
        interval=item.get("interval"),  # a list [lo, hi]; Secret checks and converts it
        pairs=pairs,
        name=str(item.get("name", "")),
    )


def _check_keys(spec: Mapping[Any, Any], allowed: set[str], where: str, required: set[str]) -> None:
    unknown = set(spec) - allowed
    if unknown:
        raise InputError(
            f"{where} has unknown keys {sorted(unknown, key=str)}; expected {sorted(allowed)}"
        )
    missing = required - set(spec)
    if missing:
        raise InputError(f"{where} needs {sorted(missing)}")


def _path(value: Any, base: Path) -> Path:
    if not isinstance(value, str) or not value:
        raise InputError(f"expected a file path, got {value!r}")
    path = Path(value)
    return path if path.is_absolute() else base / path


def _summary(result: Release) -> GaussianDiagnostics:
    """Noisy answers and noise scales, then the guarantee (never the true answers)."""
    record, diagnostics = result.record, cast("GaussianDiagnostics", result.diagnostics)
    table = Table("statistic", "released value", "noise std")
    for (name, value), std in zip(result.values.items(), diagnostics.std, strict=True):
        table.add_row(str(name), f"{value:.6g}", f"{std:.4g}")
    console.print(table)
    for line in diagnostics.summary_lines():
        console.print(line, markup=False, highlight=False)
    guarantee = f"({record.epsilon:.4g}, {record.delta:.3g})-{record.definition}"
    console.print(
        f"{guarantee} [{diagnostics.how}]; sensitivity {_sensitivity(record.sensitivity)}; "
        f"protects {record.protects}",
        markup=False,
        highlight=False,
    )
    for assumption in record.assumptions:
        if not assumption.startswith("warning: "):  # warnings go to stderr
            console.print(f"assumes: {assumption}", markup=False, highlight=False)
    return diagnostics


def _sensitivity(value: Any) -> str:
    """A sensitivity in 4 significant figures: one number, or ``name value`` pairs."""
    from attrpriv._display import number

    if isinstance(value, Mapping):
        return ", ".join(f"{name} {number(v)}" for name, v in value.items())
    return number(value)
