"""Global decoupler benchmark: paper defaults vs tabular settings, and the ablation of eq. 5.

Run: ``/tmp/venv/bin/python benchmarks/decoupler.py [--rows 4000] [--epochs 15]``

Tabular fits use lr = 3e-3, hidden = 64, batch 128; images lr = 1e-3, hidden 128, batch 64.

Fits the GlobalDecoupler on auxiliary Adult rows (sex as y_S) and reports, on held-out private
rows: how well a fresh logistic regression (trained on the auxiliary encodings) recovers sex from
z_S and from z_NS, next to the prior; the reconstruction accuracy of the categorical columns and
the mean absolute error of the numeric columns (as a share of their public range); fit time.
The plain beta-VAE (alphas 1, 0, 0, 0) is the baseline of the ablation. Then the same on
MNIST-5k with the generated stroke-thickness attribute.
"""

from __future__ import annotations

import argparse
import resource
import time
from typing import Any

import numpy as np
import pandas as pd
import torch
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression

from attrpriv import datasets
from attrpriv.data.schema import Categorical
from attrpriv.sanitize.decoupler import GlobalDecoupler
from attrpriv.sanitize.images import mnist_images, thickness_labels
from attrpriv.sanitize.tradeoff import PIXEL_MODEL

CONFIGS: dict[str, dict[str, Any]] = {
    "paper defaults (beta 5; 1,1,100,1)": {"beta": 5.0, "alphas": (1.0, 1.0, 100.0, 1.0)},
    "tabular (beta 0.5; 1,10,100,1)": {"beta": 0.5, "alphas": (1.0, 10.0, 100.0, 1.0)},
    "  without aligner (a2=0)": {"beta": 0.5, "alphas": (1.0, 0.0, 100.0, 1.0)},
    "  without dcorr (a3=0)": {"beta": 0.5, "alphas": (1.0, 10.0, 0.0, 1.0)},
    "  without adversary (a4=0)": {"beta": 0.5, "alphas": (1.0, 10.0, 100.0, 0.0)},
    "  adversary x10 (a4=10)": {"beta": 0.5, "alphas": (1.0, 10.0, 100.0, 10.0)},
    "beta-VAE baseline (1,0,0,0)": {"beta": 0.5, "alphas": (1.0, 0.0, 0.0, 0.0)},
}


def probe(train: np.ndarray, y_train: Any, test: np.ndarray, y_test: Any) -> float:
    """Accuracy of a fresh logistic regression: the attacker of the latents."""
    return float(LogisticRegression(max_iter=2000).fit(train, y_train).score(test, y_test))


def reconstruction(model: GlobalDecoupler, priv: pd.DataFrame, schema: Any) -> tuple[float, float]:
    """(categorical exact-match accuracy, numeric MAE / public range) on the private rows."""
    out = model.decode(*model.encode(priv))
    assert isinstance(out, pd.DataFrame)
    cat, num = [], []
    for name in out.columns:
        domain = schema[name].domain
        if isinstance(domain, Categorical):
            cat.append(float((out[name].astype(str) == priv[name].astype(str)).mean()))
        else:
            err = np.abs(out[name].to_numpy(float) - priv[name].to_numpy(float))
            num.append(float(err.mean() / (domain.upper - domain.lower)))
    return float(np.mean(cat)), float(np.mean(num))


def tabular(rows: int, epochs: int) -> None:
    ds = datasets.load("adult")
    frame = ds.frame.sample(rows, random_state=0).reset_index(drop=True)
    cut = int(0.75 * rows)
    aux, priv = frame.iloc[:cut], frame.iloc[cut:].reset_index(drop=True)
    ya, yp = aux["sex"].astype(str), priv["sex"].astype(str)
    prior = float(yp.value_counts(normalize=True).max())
    print(f"\n## Adult, y_S = sex: {cut} auxiliary / {rows - cut} private rows, {epochs} epochs")
    cats = [c for c in aux.columns if c in ds.schema and c not in ("sex", "split")
            and isinstance(ds.schema[c].domain, Categorical)]  # fmt: skip
    mode = np.mean([(priv[c].astype(str) == aux[c].astype(str).mode()[0]).mean() for c in cats])
    print(f"prior (majority share of the private rows) = {prior:.3f}; categorical accuracy of "
          f"always guessing the auxiliary mode = {mode:.3f}\n")  # fmt: skip
    print("| config | fit s | acc z_S | acc z_NS | gap | cat. recon acc | num. MAE/range |")
    print("|---|---|---|---|---|---|---|")
    for name, extra in CONFIGS.items():
        params = {"epochs": epochs, "hidden": 64, "batch_size": 128, "lr": 3e-3,
                  "progress": False} | extra  # fmt: skip
        start = time.perf_counter()
        model = GlobalDecoupler(**params).fit(aux, "sex", schema=ds.schema)
        seconds = time.perf_counter() - start
        (sa, na), (sp, np_) = model.encode(aux), model.encode(priv)
        acc_s, acc_ns = probe(sa, ya, sp, yp), probe(na, ya, np_, yp)
        cat, num = reconstruction(model, priv, ds.schema)
        print(f"| {name} | {seconds:.1f} | {acc_s:.3f} | {acc_ns:.3f} | {acc_s - acc_ns:+.3f} "
              f"| {cat:.3f} | {num:.4f} |")  # fmt: skip


IMAGE_CONFIGS: dict[str, tuple[float, float, float, float]] = {
    "decoupler (1,10,100,1)": (1.0, 10.0, 100.0, 1.0),
    "  without aligner (a2=0)": (1.0, 0.0, 100.0, 1.0),
    "  without dcorr (a3=0)": (1.0, 10.0, 0.0, 1.0),
    "  without adversary (a4=0)": (1.0, 10.0, 100.0, 0.0),
    "beta-VAE baseline (1,0,0,0)": (1.0, 0.0, 0.0, 0.0),
}


def images(epochs: int) -> None:
    """MNIST-5k (shuffled: the file is sorted by digit), y_S = stroke thickness."""
    x, digit = mnist_images(datasets.load("mnist_5k").frame)
    order = np.random.default_rng(0).permutation(len(x))
    x, digit = x[order], digit[order]
    y = thickness_labels(x)
    aux, priv = slice(0, 3000), slice(3000, 5000)
    prior = max(y[priv].mean(), 1 - y[priv].mean())
    print(f"\n## MNIST-5k, y_S = stroke thickness: 3000 aux / 2000 private, {epochs} epochs")
    print(f"prior = {prior:.3f}; 'suppressed' = a pixel adversary (logistic regression, C = 0.1) "
          "trained on aux images decoded with z_S = 0, tested on the private ones\n")  # fmt: skip
    print("| config | fit s | acc z_S | acc z_NS | gap | suppressed acc | BCE / image |")
    print("|---|---|---|---|---|---|---|")
    for name, alphas in IMAGE_CONFIGS.items():
        start = time.perf_counter()
        model = GlobalDecoupler(kind="image", epochs=epochs, hidden=128, batch_size=64, beta=1.0,
                                alphas=alphas, progress=False).fit(x[aux], y[aux])  # fmt: skip
        seconds = time.perf_counter() - start
        (sa, na), (sp, np_) = model.encode(x[aux]), model.encode(x[priv])
        acc_s, acc_ns = probe(sa, y[aux], sp, y[priv]), probe(na, y[aux], np_, y[priv])
        blank_a = np.asarray(model.decode(np.zeros_like(sa), na)).reshape(len(sa), -1)
        blank_p = np.asarray(model.decode(np.zeros_like(sp), np_)).reshape(len(sp), -1)
        suppressed = float(clone(PIXEL_MODEL).fit(blank_a, y[aux]).score(blank_p, y[priv]))
        recon = model.history_[-1]["reconstruction"]
        print(f"| {name} | {seconds:.1f} | {acc_s:.3f} | {acc_ns:.3f} | {acc_s - acc_ns:+.3f} "
              f"| {suppressed:.3f} | {recon:.1f} |")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=4000)
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--image-epochs", type=int, default=30)
    args = parser.parse_args()
    torch.set_num_threads(1)
    tabular(args.rows, args.epochs)
    images(args.image_epochs)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\npeak resident memory of the whole run: {peak:.0f} MiB")


if __name__ == "__main__":
    main()
