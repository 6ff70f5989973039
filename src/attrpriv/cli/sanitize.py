"""``attrpriv sanitize``: train a global decoupler on public data, sanitize private data.

torch (the ``sanitize`` extra) is imported only when a command runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import pandas as pd
import typer

from attrpriv._io import atomic_path
from attrpriv.cli._common import OUT_HELP, console, examples, group, resolve_data, write_json
from attrpriv.errors import InputError

if TYPE_CHECKING:
    from attrpriv.sanitize.samplers import DPObfuscation, DPSampling, Suppression

app = group(
    "sanitize", "Share data with its sensitive attribute replaced by private synthetic values."
)

SchemaOption = Annotated[Path | None, typer.Option("--schema", help="Schema file for a data file.")]
SeedOption = Annotated[int, typer.Option(help="Seed of training / sampling.")]
MECHANISMS = ("suppression", "dp-obfuscation", "dp-sampling")


def _require_torch() -> None:
    """One-line error instead of a traceback when the ``sanitize`` extra is missing."""
    try:
        import torch  # noqa: F401
    except ImportError:
        raise InputError(
            "the sanitize commands need torch: pip install 'attrpriv[sanitize]'"
        ) from None


def _frame(data: str, schema_file: Path | None) -> tuple[pd.DataFrame, Any]:
    loaded, schema = resolve_data(data, schema_file)
    if isinstance(loaded, Path):
        suffix = loaded.suffix.lower()
        loaded = pd.read_parquet(loaded) if suffix in (".parquet", ".pq") else pd.read_csv(loaded)
    return loaded, schema


def _alphas(text: str) -> tuple[float, float, float, float]:
    try:
        values = tuple(float(v) for v in text.split(","))
    except ValueError:
        raise InputError(f"--alphas must be 4 comma-separated numbers, got {text!r}") from None
    if len(values) != 4:
        raise InputError(f"--alphas must be 4 comma-separated numbers, got {text!r}")
    return values[0], values[1], values[2], values[3]


@app.command(
    epilog=examples(
        "attrpriv sanitize fit adult --sensitive sex --rows 5000 --out adult-decoupler",
        "attrpriv sanitize fit aux.parquet --schema aux.yaml --sensitive race --epochs 30 "
        "--out dec",
    )
)
def fit(
    aux: Annotated[str, typer.Argument(help="Public auxiliary data: bundled name or CSV/Parquet.")],
    sensitive: Annotated[str, typer.Option(help="The sensitive column y_S.")],
    out: Annotated[Path, typer.Option(help="Directory for the decoupler (weights + JSON).")],
    schema: SchemaOption = None,
    rows: Annotated[
        int | None, typer.Option(help="Train on a seeded sample of this many rows.")
    ] = None,
    epochs: Annotated[int, typer.Option(help="Training epochs.")] = 15,
    latent_dim: Annotated[int, typer.Option(help="m, the latent dimension.")] = 32,
    sensitive_dim: Annotated[int, typer.Option(help="k, the dimension of z_S.")] = 8,
    beta: Annotated[float, typer.Option(help="beta of the beta-VAE (paper: 5, images).")] = 0.5,
    alphas: Annotated[str, typer.Option(help="alpha1..alpha4 of equation 5.")] = "1,10,100,1",
    hidden: Annotated[int, typer.Option(help="Hidden width of the networks.")] = 64,
    lr: Annotated[float, typer.Option(help="Adam learning rate.")] = 3e-3,
    seed: SeedOption = 0,
) -> None:
    """Train the global decoupler (tabular) on public auxiliary data and save it."""
    _require_torch()
    from attrpriv.sanitize.decoupler import GlobalDecoupler

    frame, data_schema = _frame(aux, schema)
    if rows is not None and rows < len(frame):
        frame = frame.sample(rows, random_state=seed)
    model = GlobalDecoupler(
        latent_dim=latent_dim, sensitive_dim=sensitive_dim, beta=beta, alphas=_alphas(alphas),
        hidden=hidden, epochs=epochs, lr=lr, seed=seed, batch_size=128,
    )  # fmt: skip
    model.fit(frame, sensitive, schema=data_schema)
    model.save(out)
    last = model.history_[-1]
    console.print(
        f"decoupler trained on {len(frame)} rows ({sensitive!r} as y_S): "
        + ", ".join(
            f"{key} {last[key]:.3g}" for key in ("reconstruction", "aligner", "dcorr", "adversary")
        )
    )
    console.print(f"[dim]wrote {out}[/dim]")


def _sampler(
    mechanism: str,
    epsilon: float | None,
    bound: float,
    projection_dim: int | None,
    seed: int,
    classes: list[Any],
) -> Suppression | DPObfuscation | DPSampling:
    from attrpriv.sanitize.samplers import DPObfuscation, DPSampling, Suppression

    if mechanism not in MECHANISMS:
        raise InputError(f"--mechanism must be one of {list(MECHANISMS)}, got {mechanism!r}")
    if mechanism == "suppression":
        return Suppression()
    if epsilon is None:
        raise InputError(f"--epsilon is required by mechanism {mechanism!r}")
    if mechanism == "dp-obfuscation":
        return DPObfuscation(epsilon, bound)
    return DPSampling(epsilon, bound, projection_dim=projection_dim, classes=classes, seed=seed)


@app.command(
    epilog=examples(
        "attrpriv sanitize apply private.parquet --schema s.yaml --decoupler dec "
        "--mechanism dp-sampling --epsilon 1 --out sanitized.parquet --record record.json",
    )
)
def apply(
    data: Annotated[str, typer.Argument(help="Private data: bundled name or CSV/Parquet.")],
    decoupler: Annotated[Path, typer.Option(help="Directory written by 'sanitize fit'.")],
    out: Annotated[Path, typer.Option(help="Sanitized data (Parquet), written atomically.")],
    mechanism: Annotated[
        str, typer.Option(help=f"One of {', '.join(MECHANISMS)}.")
    ] = "dp-sampling",
    epsilon: Annotated[float | None, typer.Option(help="Privacy loss of the sampler.")] = None,
    bound: Annotated[float, typer.Option(help="Public clipping bound of the latents.")] = 3.0,
    projection_dim: Annotated[int | None, typer.Option(help="RON-Gauss projection p.")] = None,
    schema: SchemaOption = None,
    rows: Annotated[
        int | None, typer.Option(help="Sanitize a seeded sample of this many rows.")
    ] = None,
    ledger: Annotated[Path | None, typer.Option(help="Charge the release to this ledger.")] = None,
    record: Annotated[Path | None, typer.Option("--record", help=OUT_HELP)] = None,
    seed: SeedOption = 0,
) -> None:
    """Replace every record's sensitive latent with the sampler's draws and decode."""
    _require_torch()
    from attrpriv.dp.ledger import BudgetLedger
    from attrpriv.sanitize.decoupler import GlobalDecoupler
    from attrpriv.sanitize.sanitizer import Sanitizer

    model = GlobalDecoupler.load(decoupler)
    frame, _ = _frame(data, schema)
    if rows is not None and rows < len(frame):
        frame = frame.sample(rows, random_state=seed)
    sampler = _sampler(mechanism, epsilon, bound, projection_dim, seed, list(model.classes_))
    book = BudgetLedger(ledger) if ledger is not None else None
    result = Sanitizer(model, sampler).sanitize(frame, ledger=book, label=f"sanitize {data}")
    assert isinstance(result.data, pd.DataFrame)
    with atomic_path(out) as tmp:
        result.data.to_parquet(tmp)
    claim = "no DP claim (nothing released about z_S)" if result.record is None else (
        f"epsilon={result.record.epsilon:g} ({result.record.definition})")  # fmt: skip
    console.print(f"sanitized {len(result.data)} rows with {mechanism}: {claim}")
    console.print(f"[dim]wrote {out}[/dim]")
    write_json(record, result.to_dict())


def _epsilons(text: str) -> list[float]:
    try:
        values = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise InputError(f"--epsilons must be comma-separated numbers, got {text!r}") from None
    if not values or any(not v > 0 for v in values):
        raise InputError(f"--epsilons must be positive numbers, got {text!r}")
    return values


@app.command(
    epilog=examples(
        "attrpriv sanitize evaluate adult adult --decoupler dec --target income --rows 2000 "
        "--epsilons 0.5,1,4 --out sweep.json --html sweep.html",
    )
)
def evaluate(
    aux: Annotated[str, typer.Argument(help="Public auxiliary data (the attacker's).")],
    private: Annotated[str, typer.Argument(help="Private data to sanitize.")],
    decoupler: Annotated[Path, typer.Option(help="Directory written by 'sanitize fit'.")],
    target: Annotated[str, typer.Option(help="Column of the utility task.")],
    epsilons: Annotated[str, typer.Option(help="Comma-separated epsilons of the sweep.")] = "1",
    bound: Annotated[float, typer.Option(help="Public clipping bound of the latents.")] = 3.0,
    schema: SchemaOption = None,
    rows: Annotated[int | None, typer.Option(help="Seeded sample of each data set.")] = None,
    out: Annotated[Path | None, typer.Option(help=OUT_HELP)] = None,
    html: Annotated[Path | None, typer.Option(help="Write an HTML page with the plot.")] = None,
    seed: SeedOption = 0,
) -> None:
    """Leakage vs utility of suppression, DP-obfuscation and DP-sampling over epsilons."""
    _require_torch()
    from attrpriv.sanitize.decoupler import GlobalDecoupler
    from attrpriv.sanitize.sweep import sweep

    model = GlobalDecoupler.load(decoupler)
    frames = []
    for offset, data in enumerate((aux, private)):
        frame, _ = _frame(data, schema)
        if rows is not None and rows < len(frame):
            frame = frame.sample(rows, random_state=seed + offset)
        frames.append(frame.reset_index(drop=True))
    classes = list(model.classes_)
    samplers: dict[str, tuple[str, Any]] = {"suppression": ("suppression", _sampler(
        "suppression", None, bound, None, seed, classes))}  # fmt: skip
    for eps in _epsilons(epsilons):
        for mech in ("dp-obfuscation", "dp-sampling"):
            samplers[f"{mech} eps={eps:g}"] = (
                mech,
                _sampler(mech, eps, bound, None, seed, classes),
            )
    result = sweep(model, frames[0], frames[1], samplers, target=target, seed=seed)
    for point in result.points:
        console.print(f"{point.name:28s} leakage {point.leakage:+.3f}  utility {point.utility:.3f}"
                      f"  CAS {point.cas:.3f}")  # fmt: skip
    console.print("Pareto AUC (leakage budget [0, 0.5]): " + ", ".join(
        f"{k} {v:.3f}" for k, v in result.pareto_auc.items()))  # fmt: skip
    write_json(out, result.to_dict())
    if html is not None:
        from attrpriv._io import atomic_write_text
        from attrpriv.cli._sanitize_html import sweep_html

        atomic_write_text(html, sweep_html(result, title=f"Sanitizer: {private} (y_S, {target})"))
        console.print(f"[dim]wrote {html}[/dim]")
