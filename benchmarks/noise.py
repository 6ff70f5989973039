"""Noise throughput: OpenDP's exact samplers against the (non-private) numpy anchor.

    python benchmarks/noise.py                 # 1M values per row (about two minutes)
    python benchmarks/noise.py --size 100000   # quicker; times are still given per 1M values

Prints a Markdown table: values per second, seconds per 1M values, and how many times slower
than numpy drawing the same distribution. docs/noise.md quotes its output.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from collections.abc import Callable
from importlib.metadata import version

import numpy as np

from attrpriv.dp import NoiseSampler, OpenDPNoise, SeededNumpyNoise

METHODS = (
    ("laplace", "float64"),
    ("gaussian", "float64"),
    ("discrete_laplace", "int64"),
    ("discrete_gaussian", "int64"),
)


def _samplers() -> list[tuple[str, NoiseSampler, tuple[str, ...]]]:
    """(label, sampler, methods it is run with); k only matters for float inputs."""
    floats = ("laplace", "gaussian")
    return [
        ("numpy (seeded, NOT private)", SeededNumpyNoise(seed=0), tuple(m for m, _ in METHODS)),
        ("OpenDP k=None (exact, default)", OpenDPNoise(), tuple(m for m, _ in METHODS)),
        ("OpenDP k=-40", OpenDPNoise(k=-40), floats),
        ("OpenDP k=-20", OpenDPNoise(k=-20), floats),
    ]


def _inputs(size: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {
        "float64": rng.uniform(0.0, 1000.0, size),
        "int64": rng.integers(0, 10_000, size, dtype=np.int64),
    }


def _best_time(run: Callable[[], np.ndarray], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1_000_000, help="values per timed call")
    parser.add_argument("--repeat", type=int, default=1, help="timed calls per row (best kept)")
    parser.add_argument("--scale", type=float, default=10.0, help="noise scale")
    args = parser.parse_args(argv)
    if args.size < 1 or args.repeat < 1 or not args.scale > 0:
        parser.error("--size and --repeat must be >= 1 and --scale > 0")

    inputs = _inputs(args.size, np.random.default_rng(0))
    dtype_of = dict(METHODS)
    print(
        f"# noise throughput: {args.size:,} values per call, best of {args.repeat}, "
        f"scale {args.scale:g}\n# opendp {version('opendp')}, numpy {np.__version__}, "
        f"python {platform.python_version()}, {platform.machine()}, {os.cpu_count()} CPUs\n"
    )
    print("| sampler | noise | input | values/s | s per 1M values | slower than numpy |")
    print("|---|---|---|---:|---:|---:|")
    numpy_rate: dict[str, float] = {}
    for label, sampler, methods in _samplers():
        for method in methods:
            values = inputs[dtype_of[method]]
            draw = getattr(sampler, method)
            draw(values[:100], args.scale)  # warm up (imports, OpenDP setup)
            seconds = _best_time(
                lambda draw=draw, values=values: draw(values, args.scale), args.repeat
            )
            rate = args.size / seconds
            numpy_rate.setdefault(method, rate)
            ratio = numpy_rate[method] / rate
            print(
                f"| {label} | {method} | {dtype_of[method]} | {rate:,.0f} | "
                f"{1e6 / rate:.2f} | {ratio:,.0f}x |",
                flush=True,
            )


if __name__ == "__main__":
    main()
