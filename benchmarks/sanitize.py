"""Sanitize benchmark: sampler audits, and the seed's E1 / E4 / E5 on Adult and MNIST-5k.

Run: ``/tmp/venv/bin/python benchmarks/sanitize.py [--parts audit,adult,mnist] [--rows 3000]``

``audit``: the DP samplers (exact OpenDP noise on a 2**-40 grid) on worst-case neighbours, and
their deliberately broken calibrations. ``adult`` / ``mnist``: fit the GlobalDecoupler and a plain
beta-VAE (alphas 1, 0, 0, 0) on auxiliary data (Adult train split, sensitive sex; MNIST-5k images
0-2999, sensitive stroke thickness), then sanitize auxiliary and private data (Adult test split;
MNIST images 3000-4999) with every method of the sweep:

- the decoupler with suppression, DP-obfuscation and DP-sampling over an epsilon grid,
- noise in input space (:class:`~attrpriv.sanitize.baselines.InputNoise`) over its scale,
- the beta-VAE latent interpolation of the seed's section 5
  (:class:`~attrpriv.sanitize.baselines.LatentInterpolation`) over its strength.

E1: leakage (adversary trained on sanitized auxiliary data with the true y_S, tested on the
sanitized private data, minus the prior) and utility (task accuracy: income / the digit, trained
on half of the sanitized private data, tested on the other half sanitized), area under each
family's Pareto front (leakage in [0, 0.5]). E4: the same task model tested on real data (CAS),
and the Pareto AUC on CAS. E5: a y_S model trained on the sanitized private half with the labels
the method releases (DP-sampling: its synthetic labels; the others: the true labels, which they
do not protect), tested on the real other half. Fit and sanitize times on the 2 shared cores.
"""

from __future__ import annotations

import argparse
import resource
import time
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd
import torch

from attrpriv import datasets
from attrpriv.dp import OpenDPNoise, audit
from attrpriv.sanitize import ron_gauss as rg
from attrpriv.sanitize.baselines import InputNoise, LatentInterpolation
from attrpriv.sanitize.decoupler import GlobalDecoupler
from attrpriv.sanitize.evaluate import pareto_auc, utility
from attrpriv.sanitize.images import mnist_images, thickness_labels
from attrpriv.sanitize.samplers import DPObfuscation, DPSampling, Suppression
from attrpriv.sanitize.tradeoff import (
    PIXEL_MODEL,
    KeepLatents,
    SweepResult,
    as_pipeline,
    sweep,
    sweep_images,
)

NOISE = OpenDPNoise(k=-40)


def audit_table(n_samples: int) -> None:
    """Audited lower bounds (99.9% confidence) vs the claimed epsilon = 1."""
    print(f"\n## Audits (epsilon claimed 1.0, {n_samples} samples per side, confidence 0.999)")
    print("| release | calibration | claimed | audited lower bound |")
    print("|---|---|---|---|")
    for name, width in (("dp-obfuscation (k=2)", 2.0), ("  broken: box width = bound", 1.0)):
        scale = width * 2 / 1.0  # l1 sensitivity width * k (k = 2), epsilon 1
        a, b = np.full(2, -1.0), np.full(2, 1.0)
        result = audit(
            lambda n, v=a, s=scale: NOISE.laplace(np.tile(v, (n, 1)), s),
            lambda n, v=b, s=scale: NOISE.laplace(np.tile(v, (n, 1)), s),
            n_samples,
            confidence=0.999,
            statistic=lambda o, s=scale, a=a, b=b: ((np.abs(o - b) - np.abs(o - a)) / s).sum(
                axis=1
            ),
        )
        print(f"| {name} | l1 = {scale:g} | 1.0 | {result.epsilon_lower:.3f} |")
    rng = np.random.default_rng(0)
    rows = rg.clip_rows(rng.standard_normal((40, 1)), 1.0)
    y = (rng.random(40) < 0.4).astype(int)
    classes = np.array([0, 1])
    dense = np.ones((1, 1))  # attains every sensitivity (p = 1: 6 released numbers)
    # substitution: one record moves from class 1 at -dense to class 0 at +dense
    stats_a = rg.class_statistics(np.vstack([rows, -dense]), np.append(y, 1), classes)
    stats_b = rg.class_statistics(np.vstack([rows, dense]), np.append(y, 0), classes)
    right = DPSampling(1.0, 1.0).calibrate(1, 2, NOISE).statistics
    broken = replace(
        right,
        sensitivity_count=right.sensitivity_count / 2,
        sensitivity_sum=right.sensitivity_sum / 2,
        sensitivity_scatter=right.sensitivity_scatter / 2,
    )
    rows_out = (("dp-sampling stats (p=1)", right), ("  broken: add/remove calibration", broken))
    for name, cal in rows_out:
        result = rg._audit_release(cal, stats_a, stats_b, NOISE, n_samples, confidence=0.999)
        sens = (
            f"count {cal.sensitivity_count:.3g}, sum {cal.sensitivity_sum:.3g}, "
            f"scatter {cal.sensitivity_scatter:.3g}"
        )
        print(f"| {name} | {sens} | 1.0 | {result.epsilon_lower:.3f} |")


TABULAR = {"beta": 0.5, "lr": 3e-3, "hidden": 64, "batch_size": 128}
IMAGE = {"kind": "image", "beta": 1.0, "lr": 1e-3, "hidden": 128, "batch_size": 64}
DECOUPLER, BETA_VAE = (1.0, 10.0, 100.0, 1.0), (1.0, 0.0, 0.0, 0.0)
EPSILONS = (0.5, 1.0, 2.0, 4.0, 8.0)
STRENGTHS = (0.25, 0.5, 1.0, 2.0, 4.0)


@dataclass(frozen=True)
class Task:
    """One experiment's data: auxiliary and private inputs with their labels."""

    name: str
    aux: Any
    private: Any
    aux_sensitive: np.ndarray
    private_sensitive: np.ndarray
    private_target: np.ndarray
    schema: Any
    noise_scales: tuple[float, ...]
    settings: dict[str, Any]
    epochs: int

    @property
    def images(self) -> bool:
        return self.schema is None

    def features(self, data: Any) -> Any:
        """What the attackers and task models see: pixels, or the columns but y_S and the task."""
        if self.images:
            return np.asarray(data).reshape(len(data), -1)
        return data.drop(columns=[c for c in ("sex", "income") if c in data.columns])


def adult_task(rows: int, epochs: int) -> Task:
    dataset = datasets.load("adult")
    frame = dataset.frame
    aux = frame[frame["split"] == "train"].sample(rows, random_state=0).reset_index(drop=True)
    private = frame[frame["split"] == "test"].sample(rows, random_state=1).reset_index(drop=True)
    return Task("Adult (y_S sex, task income)", aux, private, aux["sex"].astype(str).to_numpy(),
                private["sex"].astype(str).to_numpy(), private["income"].astype(str).to_numpy(),
                dataset.schema, (0.05, 0.1, 0.2, 0.4, 0.8), TABULAR, epochs)  # fmt: skip


def mnist_task(epochs: int) -> Task:
    x, digit = mnist_images(datasets.load("mnist_5k").frame)
    order = np.random.default_rng(0).permutation(len(x))  # the file is sorted by digit
    x, digit = x[order], digit[order]
    thick = thickness_labels(x)
    return Task("MNIST-5k (y_S stroke thickness, task digit)", x[:3000], x[3000:], thick[:3000],
                thick[3000:], digit[3000:], None, (0.1, 0.2, 0.4, 0.8, 1.6), IMAGE,
                epochs)  # fmt: skip


def fit(task: Task, alphas: tuple[float, ...]) -> tuple[GlobalDecoupler, float]:
    """A decoupler (or, with alphas 1, 0, 0, 0, the plain beta-VAE) on the auxiliary data."""
    model = GlobalDecoupler(epochs=task.epochs, alphas=alphas, progress=False, **task.settings)
    start = time.perf_counter()
    if task.images:
        model.fit(task.aux, task.aux_sensitive)
    else:
        model.fit(task.aux, "sex", schema=task.schema)
    return model, time.perf_counter() - start


def methods(task: Task, decoupler: GlobalDecoupler, bvae: GlobalDecoupler) -> dict[str, Any]:
    """name -> (family, sampler or baseline); DP bounds from the auxiliary latents (public)."""
    z_aux, _ = decoupler.encode(task.aux)
    box = float(np.quantile(np.abs(z_aux), 0.95))
    ball = float(np.quantile(np.linalg.norm(z_aux, axis=1), 0.95))
    classes = sorted(np.unique(task.aux_sensitive).tolist())
    found: dict[str, Any] = {"suppression": ("suppression", Suppression())}
    for e in EPSILONS:
        found[f"dp-obfuscation eps={e:g}"] = ("dp-obfuscation", DPObfuscation(e, box))
    for e in EPSILONS:
        found[f"dp-sampling eps={e:g}"] = ("dp-sampling", DPSampling(e, ball, classes=classes))
    for scale in task.noise_scales:
        found[f"input noise {scale:g}"] = ("input-noise", InputNoise(scale, schema=task.schema))
    y_aux = task.aux_sensitive if task.images else "sex"
    for t in STRENGTHS:
        interpolate = LatentInterpolation(bvae, t).fit(task.aux, y_aux)
        found[f"beta-VAE interpolation x{t:g}"] = ("beta-VAE interpolation", interpolate)
    print(f"DP bounds from the auxiliary latents: box {box:.3g}, ball {ball:.3g}")
    return found


def run_sweep(task: Task, decoupler: GlobalDecoupler, found: dict[str, Any]) -> SweepResult:
    if task.images:
        return sweep_images(decoupler, task.aux, task.aux_sensitive, task.private,
                            task.private_sensitive, task.private_target, found)  # fmt: skip
    return sweep(decoupler, task.aux, task.private, found, target="income")


def e5(task: Task, decoupler: GlobalDecoupler, found: dict[str, Any]) -> None:
    """A y_S model trained on sanitized pairs of one private half, tested on the real other."""
    half = len(task.private) // 2
    first = task.private[:half] if task.images else task.private.iloc[:half]
    real = task.private[half:] if task.images else task.private.iloc[half:]
    y_train, y_test = task.private_sensitive[:half], task.private_sensitive[half:]
    print("\n#### E5: y_S model trained on sanitized pairs, tested on real records")
    prior = pd.Series(y_test).value_counts(normalize=True).max()
    print(f"prior (majority class of the test half): {prior:.4f}")
    print("| method | labels used | y_S accuracy on real data (CAS) | over the prior |")
    print("|---|---|---|---|")
    chosen = {"reconstruction (z_S kept)": KeepLatents()} | {
        name: sampler for name, (family, sampler) in found.items()
        if family in ("suppression", "dp-obfuscation", "dp-sampling")}  # fmt: skip
    for name, sampler in chosen.items():
        pipeline = as_pipeline(decoupler, sampler)
        out = pipeline.sanitize(first, y_train if task.images else "sex")
        labels = y_train if out.y_s is None else np.asarray(out.y_s).astype(str)
        kind = "true" if out.y_s is None else "synthetic (DP)"
        x_train = task.features(out.data)
        if len(np.unique(labels)) < 2:
            print(f"| {name} | {kind} | (one class drawn) | - |")
            continue
        x_real = task.features(real)
        if not task.images:
            x_real = x_real[list(x_train.columns)]
        model = PIXEL_MODEL if task.images else None
        score = utility(
            x_train, labels.astype(str), x_real, y_test.astype(str), model=model
        ).on_sanitized
        print(f"| {name} | {kind} | {score.attack:.4f} | {score.difference:+.4f} |")


def experiment(task: Task) -> None:
    print(f"\n### {task.name}: {len(task.aux)} auxiliary + {len(task.private)} private records")
    decoupler, fit_s = fit(task, DECOUPLER)
    bvae, bvae_s = fit(task, BETA_VAE)
    found = methods(task, decoupler, bvae)
    start = time.perf_counter()
    result = run_sweep(task, decoupler, found)
    sweep_s = time.perf_counter() - start
    print(f"fit: decoupler {fit_s:.1f} s, beta-VAE {bvae_s:.1f} s ({task.epochs} epochs each); "
          f"sweep of {len(result.points)} points {sweep_s:.1f} s")  # fmt: skip
    print("\n#### E1 / E4: leakage vs utility")
    print("| method | family | leakage (acc - prior) | adversary acc | utility | CAS |")
    print("|---|---|---|---|---|---|")
    for p in result.points:
        acc = p.parts["leakage_parts"]["accuracy"]
        print(f"| {p.name} | {p.family} | {p.leakage:+.4f} | {acc:.4f} | {p.utility:.4f} "
              f"| {p.cas:.4f} |")  # fmt: skip
    print("\n| family | Pareto AUC (utility) | Pareto AUC (CAS) |")
    print("|---|---|---|")
    for family, auc in result.pareto_auc.items():
        pts = [(p.leakage, p.cas) for p in result.points if p.family == family]
        print(f"| {family} | {auc:.4f} | {pareto_auc(pts, max_leakage=0.5):.4f} |")
    e5(task, decoupler, found)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--parts", default="audit,adult,mnist")
    parser.add_argument("--rows", type=int, default=3000, help="Adult auxiliary/private rows")
    parser.add_argument("--epochs", type=int, default=20, help="Adult decoupler epochs")
    parser.add_argument("--image-epochs", type=int, default=30, help="MNIST decoupler epochs")
    parser.add_argument("--audit-samples", type=int, default=30_000)
    args = parser.parse_args()
    parts = args.parts.split(",")
    torch.set_num_threads(1)
    if "audit" in parts:
        audit_table(args.audit_samples)
    if "adult" in parts:
        experiment(adult_task(args.rows, args.epochs))
    if "mnist" in parts:
        experiment(mnist_task(args.image_epochs))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\npeak resident memory: {peak:.0f} MiB")


if __name__ == "__main__":
    main()
