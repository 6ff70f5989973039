"""Sanitize benchmark: sampler audits, and the sweep under the evaluation that cannot flatter.

Run: ``/tmp/venv/bin/python benchmarks/sanitize.py [--parts audit,adult,german,census,mnist]
[--rows 3000] [--seeds 3]`` (one native thread: torch, OpenMP and BLAS are limited to 1).

``audit``: the DP samplers (exact OpenDP noise on a 2**-40 grid) on worst-case neighbours, and
their deliberately broken calibrations. ``adult`` (y_S sex, task income), ``german`` (y_S
personal_status_sex, four classes present, task credit_risk), ``census`` (census_kdd, y_S sex,
task income, 6% positive) and ``mnist`` (y_S stroke thickness, task digit): each split into
disjoint auxiliary (public) / private (released) / real test parts; the GlobalDecoupler (the
library's default settings) and a plain beta-VAE (alphas 1, 0, 0, 0) are fitted on the auxiliary
part, then every method is scored by :func:`attrpriv.sanitize.tradeoff.sweep`
(docs/sanitize/evaluation.md):

- the decoupler with suppression, DP-obfuscation and DP-sampling over an epsilon grid (DP bounds
  from the auxiliary latents' 95% quantiles, which are public),
- noise in input space (:class:`~attrpriv.sanitize.baselines.InputNoise`, sensitive column
  dropped) over its scale, and the beta-VAE latent interpolation of the seed's section 5,
- the three simple baselines (drop y_S; drop it and its top 3 proxies ranked on the auxiliary
  data; draw it from its marginal), always, and the reference rows.

Leakage: the stronger of two gradient-boosting adversaries (trained on the raw and on the
sanitized auxiliary data) predicting the true y_S of the released rows, AUC with its CI pooled
over seeds. Utility: a boosted task model trained on the release, AUC on the real test rows (the
target passed through unchanged). Pareto area on (AUC - 0.5, utility AUC) over [0, 0.5]. E5 (DP
labels): a y_S model trained on sanitized pairs of the release, tested on the real test rows.
"""

from __future__ import annotations

import argparse
import os
import resource
import time
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd
import torch
from threadpoolctl import threadpool_limits

from attrpriv import datasets
from attrpriv.data.schema import Role
from attrpriv.dp import OpenDPNoise, audit
from attrpriv.sanitize import ron_gauss as rg
from attrpriv.sanitize.baselines import InputNoise, LatentInterpolation
from attrpriv.sanitize.decoupler import GlobalDecoupler
from attrpriv.sanitize.evaluate import utility
from attrpriv.sanitize.images import mnist_images, thickness_labels
from attrpriv.sanitize.resample.evaluation import ResamplingSanitizer
from attrpriv.sanitize.samplers import DPObfuscation, DPSampling, SamplingFacts, Suppression
from attrpriv.sanitize.tradeoff import (
    KeepLatents,
    SweepResult,
    as_pipeline,
    evaluated_columns,
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
    right = DPSampling(1.0, 1.0).calibrate(SamplingFacts(1, 2), sampler=NOISE).statistics
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


IMAGE = {"kind": "image", "beta": 1.0, "lr": 1e-3, "hidden": 128, "batch_size": 64}
BETA_VAE = (1.0, 0.0, 0.0, 0.0)
EPSILONS = (0.5, 1.0, 2.0, 4.0, 8.0)
STRENGTHS = (0.25, 0.5, 1.0, 2.0, 4.0)
PROXY_COUNTS = (3, 8)
"""Proxy resampling with a fixed number of proxies (the CLI's default is "auto"), at epsilon 1."""


@dataclass(frozen=True)
class Task:
    """One experiment's data: disjoint auxiliary, private (released) and real test parts."""

    name: str
    aux: Any
    private: Any
    test: Any
    sensitive: str
    target: str
    schema: Any
    noise_scales: tuple[float, ...]
    epochs: int | None
    aux_labels: np.ndarray | None = None  # images: y_S of each part, and the digits
    private_labels: np.ndarray | None = None
    test_labels: np.ndarray | None = None
    private_target: np.ndarray | None = None
    test_target: np.ndarray | None = None

    @property
    def images(self) -> bool:
        return self.schema is None

    def y_aux(self) -> Any:
        return self.aux_labels if self.images else self.sensitive


def _table(
    name: str, frame: pd.DataFrame, schema: Any, sensitive: str, target: str, epochs: int | None
) -> Task:
    return Task(name, *_parts(frame), sensitive, target, schema, (0.05, 0.1, 0.2, 0.4, 0.8),
                epochs)  # fmt: skip


def _parts(frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Three disjoint parts of ``frame`` (already shuffled): 40% / 40% / 20%."""
    n = len(frame)
    a, b = int(0.4 * n), int(0.8 * n)
    return (frame.iloc[:a].reset_index(drop=True), frame.iloc[a:b].reset_index(drop=True),
            frame.iloc[b:].reset_index(drop=True))  # fmt: skip


def adult_task(rows: int, epochs: int | None) -> Task:
    """Adult: auxiliary rows from the train file, private and test rows from the test file."""
    dataset = datasets.load("adult")
    frame = dataset.frame
    aux = frame[frame["split"] == "train"].sample(rows, random_state=0)
    rest = frame[frame["split"] == "test"].sample(rows + rows // 2, random_state=1)
    whole = pd.concat([aux, rest], ignore_index=True)
    return _table("Adult (y_S sex, task income)", whole, dataset.schema, "sex", "income",
                  epochs)  # fmt: skip


def german_task(epochs: int | None) -> Task:
    dataset = datasets.load("german_credit")
    frame = dataset.frame.sample(frac=1.0, random_state=0)
    return _table("German credit (y_S personal_status_sex, task credit_risk)", frame,
                  dataset.schema, "personal_status_sex", "credit_risk", epochs)  # fmt: skip


def census_task(rows: int, epochs: int | None) -> Task:
    dataset = datasets.load("census_kdd")
    frame = dataset.frame
    aux = frame[frame["split"] == "train"].sample(rows, random_state=0)
    rest = frame[frame["split"] == "test"].sample(rows + rows // 2, random_state=1)
    whole = pd.concat([aux, rest], ignore_index=True)
    return _table("census_kdd (y_S sex, task income)", whole, dataset.schema, "sex", "income",
                  epochs)  # fmt: skip


def mnist_task(epochs: int) -> Task:
    x, digit = mnist_images(datasets.load("mnist_5k").frame)
    order = np.random.default_rng(0).permutation(len(x))  # the file is sorted by digit
    x, digit = x[order], digit[order]
    thick = thickness_labels(x)
    return Task("MNIST-5k (y_S stroke thickness, task digit)", x[:2000], x[2000:4000],
                x[4000:], "thickness", "digit", None, (0.1, 0.2, 0.4, 0.8, 1.6), epochs,
                thick[:2000], thick[2000:4000], thick[4000:], digit[2000:4000],
                digit[4000:])  # fmt: skip


def fit(
    task: Task, alphas: tuple[float, ...] | None = None
) -> tuple[GlobalDecoupler, tuple[float, float]]:
    """The decoupler at the library's defaults (or, with alphas 1, 0, 0, 0, the beta-VAE)."""
    settings: dict[str, Any] = dict(IMAGE) if task.images else {}
    if alphas is not None:
        settings["alphas"] = alphas
    model = GlobalDecoupler(epochs=task.epochs, progress=False, **settings)
    start, cpu = time.perf_counter(), time.process_time()
    if task.images:
        model.fit(task.aux, task.aux_labels)
    else:
        model.fit(task.aux, task.sensitive, schema=task.schema)
    return model, (time.perf_counter() - start, time.process_time() - cpu)


def methods(task: Task, decoupler: GlobalDecoupler, bvae: GlobalDecoupler) -> dict[str, Any]:
    """name -> (family, sampler or baseline); DP bounds from the auxiliary latents (public)."""
    z_aux, _ = decoupler.encode(task.aux)
    box = float(np.quantile(np.abs(z_aux), 0.95))
    ball = float(np.quantile(np.linalg.norm(z_aux, axis=1), 0.95))
    classes = [str(c) for c in decoupler.classes_] if not task.images else [0, 1]
    found: dict[str, Any] = {"suppression": ("suppression", Suppression())}
    for e in EPSILONS:
        found[f"dp-obfuscation eps={e:g}"] = ("dp-obfuscation", DPObfuscation(e, box))
    for e in EPSILONS:
        found[f"dp-sampling eps={e:g}"] = ("dp-sampling", DPSampling(e, ball, classes=classes))
    for scale in task.noise_scales:
        noise = InputNoise(scale, schema=task.schema, drop_sensitive=True)
        found[f"input noise {scale:g}"] = ("input-noise", noise)
    for t in STRENGTHS:
        interpolate = LatentInterpolation(bvae, t).fit(task.aux, task.y_aux())
        found[f"beta-VAE interpolation x{t:g}"] = ("beta-VAE interpolation", interpolate)
    if not task.images:  # the tabular method of issue 12, on the same plane
        columns = evaluated_columns(decoupler, task.aux, task.target)
        pair = ResamplingSanitizer.fitted(task.aux, task.private, task.sensitive,
                                          target=task.target, epsilon=EPSILONS[0],
                                          n_proxies="auto", columns=columns)  # fmt: skip
        for e in EPSILONS:  # the CLI's default: proxies until the floor is 0.55
            found[f"proxy-resampling eps={e:g}"] = ("proxy-resampling", pair.at(e))
        for n in PROXY_COUNTS:  # the method's own knob: fixed counts, at epsilon 1
            more = ResamplingSanitizer.fitted(task.aux, task.private, task.sensitive,
                                              target=task.target, epsilon=1.0, n_proxies=n,
                                              columns=columns)  # fmt: skip
            found[f"proxy-resampling {n} proxies eps=1"] = ("proxy-resampling", more.at(1.0))
    print(f"DP bounds from the auxiliary latents: box {box:.3g}, ball {ball:.3g}")
    return found


def run_sweep(task: Task, decoupler: GlobalDecoupler, found: dict[str, Any],
              seeds: int) -> SweepResult:  # fmt: skip
    if task.images:
        return sweep_images(decoupler, task.aux, task.aux_labels, task.private,
                            task.private_labels, task.private_target, found,
                            test_images=task.test, test_target=task.test_target,
                            seeds=seeds)  # fmt: skip
    return sweep(decoupler, task.aux, task.private, found, target=task.target, test=task.test,
                 seeds=seeds)  # fmt: skip


def e5(task: Task, decoupler: GlobalDecoupler, found: dict[str, Any]) -> None:
    """A y_S model trained on the sanitized release with the labels the method releases,
    tested on the real test rows."""
    if task.images:
        true, y_test = task.private_labels, task.test_labels
    else:
        true = task.private[task.sensitive].astype(str).to_numpy()
        y_test = task.test[task.sensitive].astype(str).to_numpy()
    print("\n#### E5: y_S model trained on sanitized pairs, tested on real records")
    print("| method | labels used | y_S AUC on real data | accuracy | over the majority |")
    print("|---|---|---|---|---|")
    chosen = {"reconstruction (z_S kept)": KeepLatents()} | {
        name: sampler for name, (family, sampler) in found.items()
        if family in ("suppression", "dp-obfuscation", "dp-sampling")}  # fmt: skip
    for name, sampler in chosen.items():
        out = as_pipeline(decoupler, sampler).sanitize(task.private, true)
        labels = np.asarray(true if out.y_s is None else out.y_s).astype(str)
        kind = "true" if out.y_s is None else "synthetic (DP)"
        if len(np.unique(labels)) < 2:
            print(f"| {name} | {kind} | (one class drawn) | - | - |")
            continue
        x_train, x_real = _features(task, out.data), _features(task, task.test)
        if isinstance(x_train, pd.DataFrame):
            x_real = x_real[list(x_train.columns)]
        score = utility(x_train, labels, x_real, np.asarray(y_test).astype(str), seeds=1)
        print(f"| {name} | {kind} | {score.auc.attack:.4f} | {score.accuracy.attack:.4f} "
              f"| {score.accuracy.difference:+.4f} |")  # fmt: skip


def _features(task: Task, data: Any) -> Any:
    """Pixels, or the modelled feature columns (not y_S, the target or ignored columns)."""
    if task.images:
        return np.asarray(data).reshape(len(data), -1)
    roles = {c.name: c.role for c in task.schema.columns}
    keep = [c for c in data.columns if roles.get(c) not in (None, Role.IGNORE)
            and c not in (task.sensitive, task.target)]  # fmt: skip
    return data[keep]


def experiment(task: Task, seeds: int) -> None:
    print(f"\n### {task.name}: {len(task.aux)} auxiliary + {len(task.private)} private "
          f"(released) + {len(task.test)} real test records")  # fmt: skip
    decoupler, fit_s = fit(task)
    bvae, bvae_s = fit(task, BETA_VAE)
    found = methods(task, decoupler, bvae)
    start, cpu = time.perf_counter(), time.process_time()
    result = run_sweep(task, decoupler, found, seeds)
    sweep_s = (time.perf_counter() - start, time.process_time() - cpu)
    points = (*result.points, *result.baselines)
    print(f"fit (wall / CPU s): decoupler {fit_s[0]:.1f} / {fit_s[1]:.1f}, beta-VAE "
          f"{bvae_s[0]:.1f} / {bvae_s[1]:.1f}; sweep of {len(points)} points "
          f"{sweep_s[0]:.1f} / {sweep_s[1]:.1f} ({seeds} seeds)")  # fmt: skip
    print("\n#### Leakage (strongest adversary) vs utility (trained on the release, real test)")
    print("| method | family | leakage AUC [95% CI] | adversary | raw-aux / sanitized-aux AUC "
          "| accuracy - prior | utility AUC [95% CI] | CAS |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|")
    for p in points:
        leak, use = p.leakage_result, p.utility_result
        assert leak is not None and use is not None
        each = " / ".join(f"{a.auc.attack:.3f}" for a in leak.adversaries)
        print(f"| {p.name} | {p.family} | {leak.auc:.3f} [{leak.auc_ci[0]:.3f}, "
              f"{leak.auc_ci[1]:.3f}] | {leak.strongest.name} | {each} | "
              f"{leak.accuracy.difference:+.3f} | {use.auc.attack:.3f} [{use.auc_ci[0]:.3f}, "
              f"{use.auc_ci[1]:.3f}] | {p.cas:.3f} |")  # fmt: skip
    print("\n| family or baseline | Pareto area (leakage AUC - 0.5 in [0, 0.5]) |")
    print("|---|---|")
    for family, auc in result.pareto_auc.items():
        print(f"| {family} | {auc:.4f} |")
    for name, auc in result.baseline_pareto_auc.items():
        print(f"| baseline: {name} | {auc:.4f} |")
    e5(task, decoupler, found)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--parts", default="audit,adult,german,census,mnist")
    parser.add_argument("--rows", type=int, default=3000, help="auxiliary rows (Adult, census)")
    parser.add_argument("--epochs", type=int, default=None, help="decoupler epochs (tables; "
                        "default: the library's)")  # fmt: skip
    parser.add_argument("--image-epochs", type=int, default=30, help="MNIST decoupler epochs")
    parser.add_argument("--seeds", type=int, default=3, help="seeds per model (pooled)")
    parser.add_argument("--image-seeds", type=int, default=1, help="seeds per model, MNIST")
    parser.add_argument("--audit-samples", type=int, default=30_000)
    args = parser.parse_args()
    parts = args.parts.split(",")
    torch.set_num_threads(1)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    with threadpool_limits(1):
        if "audit" in parts:
            audit_table(args.audit_samples)
        if "adult" in parts:
            experiment(adult_task(args.rows, args.epochs), args.seeds)
        if "german" in parts:
            experiment(german_task(args.epochs), args.seeds)
        if "census" in parts:
            experiment(census_task(args.rows, args.epochs), args.seeds)
        if "mnist" in parts:
            experiment(mnist_task(args.image_epochs), args.image_seeds)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\npeak resident memory: {peak:.0f} MiB")


if __name__ == "__main__":
    main()
