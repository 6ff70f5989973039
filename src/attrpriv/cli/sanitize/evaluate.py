"""``attrpriv sanitize evaluate``: the sanitizers' leakage against utility, over epsilons.

Suppression, DP-obfuscation, DP-sampling and the simple baselines on one plane.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from attrpriv.cli._common import (
    BoundOption,
    DecouplerOption,
    HtmlFile,
    OutFile,
    RowsOption,
    SchemaOption,
    SeedOption,
    console,
    examples,
    json_writer,
    text_writer,
    write_outputs,
)
from attrpriv.cli._outputs import Outputs
from attrpriv.cli.sanitize import app
from attrpriv.cli.sanitize._decoupler import (
    _check_kind,
    _label,
    _read_images,
    _require_torch,
    _sampler,
)
from attrpriv.errors import InputError

if TYPE_CHECKING:
    import pandas as pd

    from attrpriv.sanitize.decoupler import GlobalDecoupler


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
    from attrpriv.data.select import RowSelection
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
        parts = [RowSelection(rows=rows, seed=seed + offset).images(*_read_images(data), data)
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
            select = RowSelection(rows=rows, seed=seed + offset)
            frame = read_data(data, schema, load=True, select=select).frame
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
