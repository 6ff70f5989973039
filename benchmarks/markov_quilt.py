"""Benchmark the Markov quilt mechanism: noise and error vs correlation, chain length, method.

Tables printed:

1. Two-state chains P = [[p, 1-p], [1-p, p]] started in their stationary distribution:
   Laplace scale sigma_max of MQMExact and MQMApprox, of group DP (T L / epsilon, the trivial
   quilt) and of plain DP (L / epsilon, which does NOT protect under correlation); calibration
   time and peak memory; measured L1 error of the released histogram (mean over releases).
2. The same chains started in state 0 (time-dependent marginals; exact only).
3. Adult (real data): a Bayesian network learned with pgmpy (hill climbing, BIC) on the public
   ``test`` split, histograms of the ``train`` split released while protecting ``sex``, against
   row-level DP histograms (LaplaceHistograms, substitute neighbours: the row-level guarantee
   that also covers changing one attribute of one record).

Run:  /tmp/venv/bin/python benchmarks/markov_quilt.py          (full, a few minutes)
      /tmp/venv/bin/python benchmarks/markov_quilt.py --quick  (small grid)
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from attrpriv.data import datasets
from attrpriv.dp import OpenDPNoise
from attrpriv.release.graph.network import DiscreteNetwork
from attrpriv.release.laplace import LaplaceHistograms
from attrpriv.release.markov_quilt import AttributeMarkovQuilt, MarkovQuiltMechanism
from attrpriv.release.markov_quilt.chain_calibration import calibrate_chain
from attrpriv.release.markov_quilt.chain_model import MarkovChainModel

LIPSCHITZ = 2.0  # histogram of counts: one changed state moves one count


def measured(fn: Callable[[], Any], *, memory: bool = True) -> tuple[Any, float, float]:
    """Result, seconds (a plain run) and peak MiB (a second run under tracemalloc) of a call."""
    start = time.perf_counter()
    result = fn()
    seconds = time.perf_counter() - start
    if not memory:
        return result, seconds, float("nan")
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return result, seconds, peak


def l1_error(true: np.ndarray, scale: float, repeats: int, noise: OpenDPNoise) -> float:
    """Mean over ``repeats`` releases of sum |noisy - true| (OpenDP discrete Laplace)."""
    if scale == 0.0:
        return 0.0
    noisy = noise.discrete_laplace(np.tile(true, (repeats, 1)), scale)
    return float(np.abs(noisy - true).sum(axis=1).mean())


def chain_rows(
    ps: Sequence[float], lengths: Sequence[int], epsilon: float, repeats: int, start: str
) -> list[dict[str, Any]]:
    noise, rng, rows = OpenDPNoise(), np.random.default_rng(0), []
    for length in lengths:
        for p in ps:
            transition = np.array([[p, 1 - p], [1 - p, p]])
            model = (
                MarkovChainModel.stationary(transition)
                if start == "stationary"
                else MarkovChainModel([1.0, 0.0], transition)
            )
            chain = model.sample(1, length, rng)[0]
            true = np.bincount(chain, minlength=2)
            row: dict[str, Any] = {"p": p, "T": length}
            methods = ("exact", "approx") if start == "stationary" else ("exact",)
            for method in methods:
                cal, secs, peak = measured(
                    lambda m=model, n=length, k=method: calibrate_chain(
                        [m], n, epsilon, LIPSCHITZ, method=k
                    ),
                    memory=start == "stationary",
                )
                row[f"{method}_scale"] = cal.sigma_max
                row[f"{method}_s"] = secs
                row[f"{method}_MiB"] = peak
                row[f"{method}_L1"] = l1_error(true, cal.sigma_max, repeats, noise)
                row[f"{method}_N"] = cal.worst.nearby[1] - cal.worst.nearby[0]
            released = MarkovQuiltMechanism(model, epsilon).release(chain)
            assert released.record.noise["scale"] == row["exact_scale"]
            row["group_scale"] = length * LIPSCHITZ / epsilon
            row["group_L1"] = l1_error(true, row["group_scale"], repeats, noise)
            row["dp_scale"] = LIPSCHITZ / epsilon
            rows.append(row)
    return rows


def learned_adult_network(columns: Sequence[str]) -> tuple[DiscreteNetwork, Any, Any]:
    """Structure (hill climbing, BIC) and BDeu parameters learned on the public test split."""
    from pgmpy.causal_discovery import HillClimbSearch
    from pgmpy.models import DiscreteBayesianNetwork
    from pgmpy.parameter_estimator import DiscreteBayesianEstimator

    adult = datasets.load("adult")
    public = adult.frame.loc[adult.frame["split"] == "test", list(columns)]
    search = HillClimbSearch(
        scoring_method="bic-d", return_type="dag", max_indegree=2, show_progress=False
    )
    edges = list(search.fit(public).causal_graph_.edges())
    model = DiscreteBayesianNetwork(edges)
    model.add_nodes_from(columns)
    domains = {c: list(adult.schema.domain(c).categories) for c in columns}
    model.add_cpds(*DiscreteBayesianEstimator(state_names=domains).fit(model, public).parameters_)
    private = adult.frame[adult.frame["split"] == "train"]
    return DiscreteNetwork.from_pgmpy(model), private, adult.schema


def adult_rows(epsilons: Sequence[float], repeats: int) -> tuple[list[dict[str, Any]], str]:
    columns = ["sex", "race", "marital_status", "relationship", "education", "income"]
    network, private, _ = learned_adult_network(columns)
    edges = ", ".join(f"{p}->{c}" for c in network.nodes for p in network.parents[c])
    noise, rows = OpenDPNoise(), []
    released_sets = [
        ["income"],
        ["education", "income"],
        ["race", "education", "income"],
        ["marital_status", "income"],
        ["relationship", "income"],
        ["race", "marital_status", "relationship", "education", "income"],
    ]
    for epsilon in epsilons:
        for released in released_sets:
            mechanism = AttributeMarkovQuilt(network, epsilon, "sex", released)
            calibration, secs, _ = measured(mechanism.calibrate)
            true = np.concatenate([private[c].value_counts().to_numpy() for c in released])
            dp = LaplaceHistograms(epsilon, released, neighbours="substitute")
            dp_scale = dp.calibrate(sampler=noise).scale
            quilt = calibration.quilts["sex"]
            rows.append(
                {
                    "eps": epsilon,
                    "released": ",".join(released),
                    "quilt": ",".join(quilt.quilt) or "{}",
                    "influence": quilt.influence,
                    "quilt_scale": calibration.sigma_max,
                    "rowdp_scale": dp_scale,
                    "quilt_L1": l1_error(true, calibration.sigma_max, repeats, noise),
                    "rowdp_L1": l1_error(true, dp_scale, repeats, noise),
                    "calib_s": secs,
                }
            )
    return rows, edges


def print_table(rows: list[dict[str, Any]], columns: list[tuple[str, str, str]]) -> None:
    """Markdown table: (key or callable name, header, format)."""
    print("| " + " | ".join(h for _, h, _ in columns) + " |")
    print("|" + "|".join("---:" for _ in columns) + "|")
    for row in rows:
        cells = [format(row[k], f) if f else str(row[k]) for k, _, f in columns]
        print("| " + " | ".join(cells) + " |")
    print()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a small grid")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore", FutureWarning)
    ps = [0.5, 0.7, 0.9, 0.99] if args.quick else [0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99]
    lengths = [100, 1000] if args.quick else [100, 1000, 10_000]
    repeats, epsilon = (50, 1.0) if args.quick else (200, 1.0)

    rows = chain_rows(ps, lengths, epsilon, repeats, "stationary")
    for r in rows:
        r["approx/exact"] = r["approx_scale"] / r["exact_scale"]
        r["group/exact"] = r["group_scale"] / r["exact_scale"]
        r["exact/dp"] = r["exact_scale"] / r["dp_scale"]
        r["time approx/exact"] = r["approx_s"] / r["exact_s"]
    print(f"## Chains started in the stationary distribution (epsilon={epsilon}, histogram)\n")
    print_table(
        rows,
        [
            ("p", "p", ".2f"), ("T", "T", "d"),
            ("exact_scale", "MQMExact scale", ".2f"), ("exact_N", "nodes in N", "d"),
            ("approx_scale", "MQMApprox scale", ".2f"), ("group_scale", "group DP", ".0f"),
            ("dp_scale", "DP (unsafe)", ".1f"), ("approx/exact", "approx/exact", ".2f"),
            ("group/exact", "group/exact", ".1f"), ("exact/dp", "exact/DP", ".1f"),
            ("exact_L1", "L1 exact", ".1f"), ("approx_L1", "L1 approx", ".1f"),
            ("group_L1", "L1 group", ".0f"),
            ("exact_s", "exact s", ".3f"), ("approx_s", "approx s", ".3f"),
            ("exact_MiB", "exact MiB", ".1f"),
        ],
    )  # fmt: skip

    lengths_ns = [100, 1000]
    rows_ns = chain_rows(ps, lengths_ns, epsilon, repeats, "state0")
    print(f"## Chains started in state 0 (time-dependent marginals), exact (epsilon={epsilon})\n")
    print_table(
        rows_ns,
        [
            ("p", "p", ".2f"), ("T", "T", "d"), ("exact_scale", "MQMExact scale", ".2f"),
            ("exact_N", "nodes in N", "d"), ("group_scale", "group DP", ".0f"),
            ("exact_L1", "L1 exact", ".1f"), ("exact_s", "exact s", ".3f"),
        ],
    )  # fmt: skip

    adult, edges = adult_rows([0.5, 1.0, 2.0] if not args.quick else [1.0], repeats)
    for r in adult:
        r["rowdp/quilt"] = r["rowdp_scale"] / r["quilt_scale"] if r["quilt_scale"] else float("inf")
    print("## Adult: protect `sex`, release histograms (network learned on the test split)\n")
    print(f"learned network: {edges}\n")
    print_table(
        adult,
        [
            ("eps", "eps", ".1f"), ("released", "released columns", ""), ("quilt", "quilt", ""),
            ("influence", "influence", ".3f"), ("quilt_scale", "quilt scale", ".2f"),
            ("rowdp_scale", "row-DP scale", ".1f"), ("rowdp/quilt", "row-DP/quilt", ".1f"),
            ("quilt_L1", "L1 quilt", ".1f"), ("rowdp_L1", "L1 row-DP", ".1f"),
            ("calib_s", "calib s", ".3f"),
        ],
    )  # fmt: skip


if __name__ == "__main__":
    main()
