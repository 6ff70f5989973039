"""Mitigation strategies on UCI Adult: audits, randomizer speed, and the utility each one costs.

    python benchmarks/mitigation.py              # full run (a few minutes on 2 cores)
    python benchmarks/mitigation.py --quick      # 5,000 rows, fewer audit samples

Prints three Markdown tables:

1. the empirical audit (attrpriv.dp.audit, confidence 0.999) of LocalDPNoise's randomizers at
   epsilon = 1, and of deliberately broken variants calibrated to 2 * epsilon;
2. k-ary randomized response on Adult's race column (48,842 rows): our exact bits (OpenDP's
   RAPPOR bit-vector randomizer, one call) against OpenDP's per-value make_randomized_response
   (the straightforward exact alternative) and numpy (not private);
3. per strategy and feature set: seconds and tracemalloc peak MiB to apply, and the test accuracy
   of the built-in HGB model retrained on the mitigated data, against no mitigation (ratio).
OpenMP is limited to one thread so that the shared cores are not oversubscribed.
"""

from __future__ import annotations

import argparse
import math
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split
from threadpoolctl import threadpool_limits

from attrpriv import datasets
from attrpriv.assess.mitigation import (
    Drop,
    Encrypt,
    Generalize,
    LocalDPNoise,
    Strategy,
    SyntheticReplacement,
)
from attrpriv.assess.mitigation.randomizers import _BitSource, _randomized_response
from attrpriv.assess.models import make_model
from attrpriv.data.schema import Schema
from attrpriv.dp import OpenDPNoise, SeededNumpyNoise, audit

SETS = (("age",), ("occupation",), ("age", "education", "occupation", "relationship"))


class _DoubledKeep(LocalDPNoise):
    def replace_probability(self, epsilon: float, k: int) -> float:
        return super().replace_probability(2 * epsilon, k)


class _HalfScale(LocalDPNoise):
    def laplace_scale(self, epsilon: float, lower: float, upper: float, slack: float) -> float:
        return super().laplace_scale(2 * epsilon, lower, upper, slack)


def _rr_sampler(strategy: LocalDPNoise, value: str, schema: Schema) -> Callable[[int], Any]:
    categories = list(schema.domain("race").categories)

    def sample(n: int) -> np.ndarray:
        frame = pd.DataFrame({"race": pd.Categorical([value] * n, categories=categories)})
        return (strategy.apply(frame, ["race"])["race"] == "White").to_numpy(dtype=float)

    return sample


def _laplace_sampler(strategy: LocalDPNoise, value: int) -> Callable[[int], Any]:
    def sample(n: int) -> np.ndarray:
        frame = pd.DataFrame({"hours_per_week": np.full(n, value)})
        return strategy.apply(frame, ["hours_per_week"])["hours_per_week"].to_numpy()

    return sample


def audit_table(schema: Schema, sizes: tuple[int, ...]) -> None:
    print(
        "| randomizer | variant | samples per side | claimed eps | audited lower bound | estimate |"
    )
    print("|---|---|---:|---:|---:|---:|")
    bounds = {"hours_per_week": (1.0, 99.0)}
    cases = [
        ("RR race White vs Black (k=5)", "correct", LocalDPNoise(1.0, schema=schema)),
        ("RR race White vs Black (k=5)", "broken (2 eps)", _DoubledKeep(1.0, schema=schema)),
        ("Laplace hours 1 vs 99, [1, 99]", "correct", LocalDPNoise(1.0, bounds=bounds)),
        ("Laplace hours 1 vs 99, [1, 99]", "broken (2 eps)", _HalfScale(1.0, bounds=bounds)),
    ]
    for n in sizes:
        for label, variant, strategy in cases:
            if label.startswith("RR"):
                a, b = (
                    _rr_sampler(strategy, "White", schema),
                    _rr_sampler(strategy, "Black", schema),
                )
            else:
                a, b = _laplace_sampler(strategy, 1), _laplace_sampler(strategy, 99)
            result = audit(a, b, n, confidence=0.999)
            print(
                f"| {label} | {variant} | {n:,} | 1.0 | {result.epsilon_lower:.3f} | "
                f"{result.epsilon_estimate:.3f} |"
            )


def speed_table(race: pd.Series, k: int) -> None:
    import opendp.prelude as dp

    dp.enable_features("contrib")
    codes = race.cat.codes.to_numpy().astype(np.int64)
    r = LocalDPNoise(1.0).replace_probability(1.0, k)
    keep = 1.0 - r + r / k
    per_value = dp.m.make_randomized_response(list(range(k)), keep * (1 - 1e-12), T="i32")
    runs = {
        "ours: OpenDP bit-vector bits, one call": lambda: _randomized_response(
            codes, k, r, _BitSource(OpenDPNoise())
        ),
        "OpenDP make_randomized_response per value": lambda: np.array(
            [per_value(int(c)) for c in codes]
        ),
        "numpy (seeded, NOT private)": lambda: _randomized_response(
            codes, k, r, _BitSource(SeededNumpyNoise(0))
        ),
    }
    times = {}
    for label, run in runs.items():
        start = time.perf_counter()
        out = run()
        times[label] = time.perf_counter() - start
        times[label + " keep"] = float(np.mean(out == codes))
    base = times["OpenDP make_randomized_response per value"]
    print(f"| method ({len(codes):,} values, k={k}, eps=1) | seconds | keep rate | speed-up |")
    print("|---|---:|---:|---:|")
    for label in runs:
        print(
            f"| {label} | {times[label]:.3f} | {times[label + ' keep']:.4f} | "
            f"{base / times[label]:.1f}x |"
        )
    print(f"\nexpected keep rate e/(e+{k - 1}) = {math.e / (math.e + k - 1):.4f}")


def _accuracy(X: pd.DataFrame, y: pd.Series) -> float:
    train_x, test_x, train_y, test_y = train_test_split(
        X, y, test_size=0.3, random_state=0, stratify=y
    )
    model = make_model("hgb", seed=0).fit(train_x, train_y)
    return float(model.score(test_x, test_y))


def utility_table(X: pd.DataFrame, y: pd.Series, schema: Schema) -> None:
    strategies: list[Strategy] = [
        Drop(),
        Generalize(bins=5),
        Generalize(bins=5, method="tree"),
        LocalDPNoise(1.0, schema=schema),
        LocalDPNoise(4.0, schema=schema),
        SyntheticReplacement(n_threads=1),
        Encrypt(),
    ]
    base = _accuracy(X, y)
    print(f"no mitigation: HGB test accuracy {base:.4f} ({len(X):,} rows, 30% test)\n")
    print("| feature set | strategy | apply s | apply peak MiB | accuracy | vs none |")
    print("|---|---|---:|---:|---:|---:|")
    for features in SETS:
        for strategy in strategies:
            tracemalloc.start()
            start = time.perf_counter()
            mitigated = strategy.apply(X, list(features), seed=0, y=y)
            seconds = time.perf_counter() - start
            peak = tracemalloc.get_traced_memory()[1] / 2**20
            tracemalloc.stop()
            accuracy = _accuracy(mitigated, y)
            print(
                f"| {', '.join(features)} | {strategy!r} | {seconds:.2f} | {peak:.1f} | "
                f"{accuracy:.4f} | {accuracy / base:.4f} |"
            )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5,000 rows, fewer audit samples")
    args = parser.parse_args(argv)
    adult = datasets.load("adult")
    frame = adult.frame
    if args.quick:
        frame = frame.sample(5000, random_state=0)
    X = frame.drop(columns=["income", "split", "fnlwgt"])
    y = frame["income"]
    with threadpool_limits(limits=1, user_api="openmp"):
        print("## LocalDPNoise audit (epsilon = 1, confidence 0.999)\n")
        audit_table(adult.schema, (20_000,) if args.quick else (20_000, 200_000))
        print("\n## Randomized response speed\n")
        speed_table(adult.frame["race"], len(adult.schema.domain("race").categories))
        print("\n## Utility of the retrained model after each mitigation\n")
        utility_table(X, y, adult.schema)


if __name__ == "__main__":
    main()
