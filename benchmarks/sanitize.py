"""Sanitize benchmark: audits of the local samplers, and the privacy-utility sweep on Adult.

Run: ``/tmp/venv/bin/python benchmarks/sanitize.py [--rows 3000] [--epochs 20]``

Part 1 audits the DP samplers (exact OpenDP noise on a 2**-40 grid) on worst-case neighbours and
their deliberately broken calibrations. Part 2 fits the GlobalDecoupler on auxiliary Adult rows
(train split), sanitizes auxiliary and private rows (test split) with each local sampler over an
epsilon grid, and reports leakage (adversary trained on sanitized auxiliary data, tested on the
sanitized private data, minus the prior), utility (income accuracy of a model trained on half of
the sanitized private data, tested on the other half sanitized, and on it real: CAS) and the area
under the Pareto front (attrpriv.sanitize.evaluate.pareto_auc, leakage budget [0, 0.5]).
"""

from __future__ import annotations

import argparse
import resource
import time
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd
from sklearn.decomposition import PCA
from sklearn.preprocessing import StandardScaler

from attrpriv import datasets
from attrpriv.dp import OpenDPNoise, audit
from attrpriv.sanitize import ron_gauss as rg
from attrpriv.sanitize.decoupler import GlobalDecoupler
from attrpriv.sanitize.evaluate import leakage, pareto_auc, utility
from attrpriv.sanitize.samplers import DPObfuscation, DPSampling, Suppression

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
    rows = rg.clip_rows(rng.standard_normal((40, 2)), 1.0)
    y = (rng.random(40) < 0.4).astype(int)
    classes = np.array([0, 1])
    stats_a = rg.class_statistics(rows, y, classes)
    extra = np.vstack([rows, np.full((1, 2), 1 / np.sqrt(2))])
    stats_b = rg.class_statistics(extra, np.append(y, 0), classes)
    right = DPSampling(1.0, 1.0).calibration(2, NOISE)
    broken = replace(
        right,
        sensitivity_sum=right.sensitivity_sum / 2,
        sensitivity_scatter=right.sensitivity_scatter / 4,
    )
    for name, cal in (("dp-sampling stats (p=2)", right), ("  broken: bound/2", broken)):
        result = rg.audit_release(cal, stats_a, stats_b, NOISE, n_samples, confidence=0.999)
        sens = f"sum {cal.sensitivity_sum:.3g}, scatter {cal.sensitivity_scatter:.3g}"
        print(f"| {name} | {sens} | 1.0 | {result.epsilon_lower:.3f} |")


def load_adult(rows: int) -> tuple[pd.DataFrame, pd.DataFrame, Any]:
    dataset = datasets.load("adult")
    frame = dataset.frame
    aux = frame[frame["split"] == "train"].sample(rows, random_state=0).reset_index(drop=True)
    private = frame[frame["split"] == "test"].sample(rows, random_state=1).reset_index(drop=True)
    return aux, private, dataset.schema


def mechanisms(bound_box: float, bound_ball: float) -> list[tuple[str, float, Any]]:
    grid = (0.5, 1.0, 2.0, 4.0, 8.0)
    found: list[tuple[str, float, Any]] = [("suppression", float("nan"), Suppression())]
    found += [("dp-obfuscation", e, DPObfuscation(e, bound_box)) for e in grid]
    found += [
        ("dp-sampling", e, DPSampling(e, bound_ball, classes=["Female", "Male"])) for e in grid
    ]
    return found


def evaluate_one(
    decoupler: GlobalDecoupler, sampler: Any, aux: pd.DataFrame, private: pd.DataFrame
) -> dict[str, float]:
    """Sanitize both datasets with ``sampler``; leakage on sex, utility on income."""
    sanitized = {}
    for name, frame in (("aux", aux), ("private", private)):
        z_s, z_ns = decoupler.encode(frame)
        replaced = z_s if sampler is None else sampler.sample(z_s, frame["sex"].to_numpy()).z_s
        sanitized[name] = decoupler.decode(replaced, z_ns)
    features = [c for c in sanitized["aux"].columns if c not in ("sex", "income")]
    leak = leakage(sanitized["aux"][features], aux["sex"], sanitized["private"][features],
                   private["sex"])  # fmt: skip
    half = len(private) // 2
    x, y = sanitized["private"][features], private["income"]
    task = utility(x.iloc[:half], y.iloc[:half], x.iloc[half:], y.iloc[half:],
                   x_real=private[features].iloc[half:], y_real=y.iloc[half:])  # fmt: skip
    assert task.on_real is not None
    return {"leakage": leak.difference, "accuracy": leak.accuracy,
            "utility": task.on_sanitized.attack, "cas": task.on_real.attack}  # fmt: skip


def sweep(rows: int, epochs: int) -> None:
    aux, private, schema = load_adult(rows)
    start = time.perf_counter()
    decoupler = GlobalDecoupler(
        epochs=epochs,
        beta=0.5,
        alphas=(1.0, 10.0, 100.0, 1.0),
        lr=3e-3,
        hidden=64,
        batch_size=128,
        progress=False,
    ).fit(aux, aux["sex"], schema=schema)
    fit_s = time.perf_counter() - start
    z_aux, _ = decoupler.encode(aux)
    box = float(np.quantile(np.abs(z_aux), 0.95))  # public: from the auxiliary data
    ball = float(np.quantile(np.linalg.norm(z_aux, axis=1), 0.95))
    print(f"\n## Adult sweep ({rows} aux + {rows} private rows, decoupler {epochs} epochs, "
          f"fit {fit_s:.1f} s; bounds from aux: box {box:.3g}, ball {ball:.3g})")  # fmt: skip
    print(
        "| mechanism | epsilon | leakage (acc - prior) | adversary acc | utility | CAS | time s |"
    )
    print("|---|---|---|---|---|---|---|")
    points: dict[str, list[tuple[float, float]]] = {}
    ref = evaluate_one(decoupler, None, aux, private)
    _row("none (z_S kept)", float("nan"), ref, 0.0)
    for name, epsilon, sampler in mechanisms(box, ball):
        start = time.perf_counter()
        result = evaluate_one(decoupler, sampler, aux, private)
        _row(name, epsilon, result, time.perf_counter() - start)
        points.setdefault(name, []).append((result["leakage"], result["cas"]))
    print("\n| mechanism | Pareto AUC (CAS, leakage in [0, 0.5]) | ratio to dp-obfuscation |")
    print("|---|---|---|")
    base = pareto_auc(points["dp-obfuscation"], max_leakage=0.5)
    for name, pts in points.items():
        auc = pareto_auc(pts, max_leakage=0.5)
        print(f"| {name} | {auc:.4f} | {auc / base:.3f} |")


def latent_e5(rows: int) -> None:
    """The seed's E5 in a linear latent space: learn y_S from the sanitized labelled latents.

    z_S = the first 8 principal components of the one-hot / standardised Adult features, fitted on
    the auxiliary rows only (public). The private rows' z_S are sanitized; a classifier trained on
    the sanitized (z_S, label) pairs (DP-sampling: synthetic labels; the others: true labels) is
    tested on the real private z_S (CAS), and the same rows' sanitized z_S are attacked by a
    classifier trained on sanitized auxiliary latents (leakage).
    """
    aux, private, _ = load_adult(rows)
    features = [c for c in aux.columns if c not in ("sex", "split", "fnlwgt")]
    design = pd.get_dummies(pd.concat([aux[features], private[features]]), dtype=float)
    matrix = StandardScaler().fit(design.iloc[:rows]).transform(design)
    pca = PCA(8, random_state=0).fit(matrix[:rows])
    z_aux, z_private = pca.transform(matrix[:rows]), pca.transform(matrix[rows:])
    box = float(np.quantile(np.abs(z_aux), 0.95))
    ball = float(np.quantile(np.linalg.norm(z_aux, axis=1), 0.95))
    y_aux, y_private = aux["sex"].to_numpy(), private["sex"].to_numpy()
    print(f"\n## E5 in a PCA latent (k = 8; {rows} aux + {rows} private Adult rows; sensitive sex;"
          f" bounds from aux: box {box:.3g}, ball {ball:.3g})")  # fmt: skip
    print("| mechanism | epsilon | CAS: y_S model on sanitized pairs, tested on real z_S "
          "| leakage (acc - prior) | time s |")  # fmt: skip
    print("|---|---|---|---|---|")
    half = rows // 2
    for name, epsilon, sampler in [("none (z_S kept)", float("nan"), None), *mechanisms(box, ball)]:
        start = time.perf_counter()
        out = None if sampler is None else sampler.sample(z_private[:half], y_private[:half])
        z_train = z_private[:half] if out is None else out.z_s
        labels = y_private[:half] if out is None or out.y_s is None else out.y_s
        seconds = time.perf_counter() - start
        if len(np.unique(labels)) < 2 or not np.abs(z_train).sum():
            cas = float(np.mean(y_private[half:] == "Male"))  # constant features: the prior
        else:
            task = utility(z_train, labels, z_private[half:], y_private[half:])
            cas = task.on_sanitized.attack
        leak = leakage(_replace(sampler, z_aux, y_aux), y_aux,
                       _replace(sampler, z_private, y_private), y_private)  # fmt: skip
        eps = "-" if np.isnan(epsilon) else f"{epsilon:g}"
        print(f"| {name} | {eps} | {cas:.4f} | {leak.difference:+.4f} | {seconds:.1f} |")


def _replace(sampler: Any, z: np.ndarray, y: np.ndarray) -> np.ndarray:
    return z if sampler is None else np.asarray(sampler.sample(z, y).z_s)


def _row(name: str, epsilon: float, r: dict[str, float], seconds: float) -> None:
    eps = "-" if np.isnan(epsilon) else f"{epsilon:g}"
    print(f"| {name} | {eps} | {r['leakage']:+.4f} | {r['accuracy']:.4f} | {r['utility']:.4f} "
          f"| {r['cas']:.4f} | {seconds:.1f} |")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows", type=int, default=3000)
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--audit-samples", type=int, default=30_000)
    args = parser.parse_args()
    audit_table(args.audit_samples)
    latent_e5(args.rows)
    sweep(args.rows, args.epochs)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\npeak resident memory: {peak:.0f} MiB")


if __name__ == "__main__":
    main()
