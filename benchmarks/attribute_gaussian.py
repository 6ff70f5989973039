"""Benchmark the attribute-private Gaussian mechanism in the Adult setting of Chen & Ohrimenko
(AISTATS 2023): subsets of n = 100 records, five statistics (mean age, mean education_num,
number never married, number female, mean hours_per_week); the secret is the share of
income > 50K in the subset, 0.45 vs 0.55; delta = 0.001; epsilon in {0.2, 1, 5}.

The model Theta is the resampling model over the whole Adult file (the subset is n i.i.d. draws
from it). Tables printed:

1. Utility and attack. For each epsilon: (a) Algorithm 1, isotropic noise; (b) the directional
   variant; (c) group DP (the Gaussian mechanism protecting all n records at once: l2
   sensitivity from the statistics' public bounds, analytic calibration); and no defence. Noise
   on the Gaussian approximations of F given the secret (``approximation="assume-gaussian"``,
   the paper's practice). Columns: RMSE = sqrt(E||Z||^2) (exact), mean ||Z|| over the test
   releases, ratio to group DP, calibration time and tracemalloc peak, and the accuracy of the
   best of two attackers (logistic regression, QDA) trained on simulated releases under each
   secret and tested on held-out ones, with its 95% Clopper-Pearson upper bound, against what
   (epsilon, delta) allows a balanced two-secret test: e^eps / (1 + e^eps) + delta.
2. Algorithm 2 (``approximation="bound"``): lambda_eta (Monte Carlo estimate for the vector
   query) and the resulting (eps + 2 lambda, delta'), with the noise floor it needs.
3. Each statistic released alone: exact-pmf Algorithm 2, certified numerically.

Run: /tmp/venv/bin/python benchmarks/attribute_gaussian.py            (~6 min on 2 cores)
     /tmp/venv/bin/python benchmarks/attribute_gaussian.py --quick    (smaller samples)
"""

from __future__ import annotations

import argparse
import math
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special
from sklearn.discriminant_analysis import QuadraticDiscriminantAnalysis
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from attrpriv import datasets
from attrpriv.dp import OpenDPNoise, clopper_pearson
from attrpriv.errors import InputError
from attrpriv.release.gaussian.calibration import calibrate
from attrpriv.release.gaussian.mechanism import AttributePrivateGaussian
from attrpriv.release.gaussian.query import Query, Secret, variable_bounds
from attrpriv.release.gaussian.resampling import ResamplingModel

STATISTICS = [
    "mean(age)",
    "mean(education_num)",
    "count(marital_status=Never-married)",
    "count(sex=Female)",
    "mean(hours_per_week)",
]
SECRET = Secret("share(income=>50K)", values=(0.45, 0.55))
N, DELTA, EPSILONS = 100, 1e-3, (0.2, 1.0, 5.0)
NOISE = OpenDPNoise(k=-40)
FLOOR = 0.25  # smoothing (x conditional sd) so that Algorithm 2 can bound a free statistic


@dataclass(frozen=True)
class Row:
    """One mechanism at one epsilon."""

    name: str
    rmse: float
    noise_norm: float
    seconds: float
    mib: float
    attack: float
    attack_upper: float
    epsilon: float
    delta: float


def measured(build: Callable[[], Any]) -> tuple[Any, float, float]:
    """Run ``build`` with wall time and tracemalloc peak (MiB)."""
    tracemalloc.start()
    start = time.perf_counter()
    result = build()
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return result, seconds, peak


def attack(train: tuple[np.ndarray, np.ndarray], test: tuple[np.ndarray, np.ndarray]) -> tuple:
    """Best test accuracy of logistic regression and QDA, and its 95% upper bound."""
    x_train = np.vstack(train)
    y_train = np.repeat([0, 1], [train[0].shape[0], train[1].shape[0]])
    x_test = np.vstack(test)
    y_test = np.repeat([0, 1], [test[0].shape[0], test[1].shape[0]])
    best = 0
    for model in (LogisticRegression(max_iter=1000), QuadraticDiscriminantAnalysis()):
        pipeline = make_pipeline(StandardScaler(), model).fit(x_train, y_train)
        best = max(best, int((pipeline.predict(x_test) == y_test).sum()))
    interval = clopper_pearson(best, y_test.size, 0.95)
    return interval.value, interval.upper


def group_dp_sigma(epsilon: float) -> float:
    """Gaussian mechanism when any dataset of n records may become any other: each statistic
    moves by its whole public range (a mean by upper - lower, a count by n)."""
    adult = datasets.load("adult")
    ranges = []
    for stat in Query.of(STATISTICS).statistics:
        lower, upper = variable_bounds(adult.schema, stat)
        ranges.append((upper - lower) * (1 if stat.is_mean else N))
    return float(np.linalg.norm(ranges)) / calibrate(epsilon, DELTA).max_shift


def chi_mean(sigma: float, k: int) -> float:
    """E||Z|| for Z ~ N(0, sigma^2 I_k)."""
    return sigma * math.sqrt(2) * math.exp(special.gammaln((k + 1) / 2) - special.gammaln(k / 2))


def utility_table(model: ResamplingModel, draws: dict[str, np.ndarray]) -> list[Row]:
    """Table 1: every mechanism at every epsilon, with its attacker."""
    rows: list[Row] = []
    half = {k: v.shape[0] // 2 for k, v in draws.items()}
    split = {k: (v[: half[k]], v[half[k] :]) for k, v in draws.items()}
    acc, upper = attack((split["a"][0], split["b"][0]), (split["a"][1], split["b"][1]))
    rows.append(Row("no defence", 0.0, 0.0, 0.0, 0.0, acc, upper, math.inf, 0.0))
    for eps in EPSILONS:
        for variant in ("isotropic", "directional"):
            mech = AttributePrivateGaussian(
                STATISTICS,
                SECRET,
                model,
                eps,
                DELTA,
                variant=variant,
                approximation="assume-gaussian",
            )
            plan, seconds, mib = measured(lambda m=mech: m.calibrate(NOISE))
            # many releases of the attack study, drawn with the plan's (uncharged) noise
            noisy = {k: mech._perturb(v, plan) for k, v in draws.items()}
            rows.append(
                _row(
                    f"({'a' if variant == 'isotropic' else 'b'}) {variant}",
                    eps,
                    np.sqrt(np.trace(plan.covariance)),
                    noisy,
                    draws,
                    seconds,
                    mib,
                )
            )
        sigma, seconds, mib = measured(lambda e=eps: group_dp_sigma(e))
        noisy = {k: NOISE.gaussian(v, sigma) for k, v in draws.items()}
        k = len(STATISTICS)
        rows.append(_row("(c) group DP", eps, sigma * math.sqrt(k), noisy, draws, seconds, mib))
    return rows


def _row(
    name: str, eps: float, rmse: float, noisy: dict, draws: dict, seconds: float, mib: float
) -> Row:
    half = {k: v.shape[0] // 2 for k, v in noisy.items()}
    acc, upper = attack(
        (noisy["a"][: half["a"]], noisy["b"][: half["b"]]),
        (noisy["a"][half["a"] :], noisy["b"][half["b"] :]),
    )
    norm = float(np.mean(np.linalg.norm(noisy["a"] - draws["a"], axis=1)))
    return Row(name, rmse, norm, seconds, mib, acc, upper, eps, DELTA)


def print_utility(rows: list[Row]) -> None:
    group = {r.epsilon: r.rmse for r in rows if r.name == "(c) group DP"}
    print("\n#### Utility and attack (Gaussian approximations; epsilon-delta as claimed)\n")
    print(
        "| epsilon | mechanism | RMSE | mean ‖Z‖ | RMSE / group DP | calibrate s | MiB | "
        "attack acc | 95% upper | allowed | margin |"
    )
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        if math.isinf(r.epsilon):
            print(
                f"| - | no defence | 0 | 0 | - | - | - | {r.attack:.4f} | {r.attack_upper:.4f} "
                "| - | - |"
            )
            continue
        allowed = math.exp(r.epsilon) / (1 + math.exp(r.epsilon)) + r.delta
        ratio = r.rmse / group[r.epsilon]
        print(
            f"| {r.epsilon:g} | {r.name} | {r.rmse:.4g} | {r.noise_norm:.4g} | {ratio:.2e} | "
            f"{r.seconds:.3f} | {r.mib:.1f} | {r.attack:.4f} | {r.attack_upper:.4f} | "
            f"{allowed:.4f} | {allowed - r.attack_upper:+.4f} |"
        )


def algorithm2_table(model: ResamplingModel, n_eval: int) -> None:
    """Table 2: what Algorithm 2 certifies for the vector query (Monte Carlo lambda_eta)."""
    print("\n#### Algorithm 2 on the vector query (lambda_eta: Monte Carlo estimate)\n")
    print("| epsilon | variant | smoothing | RMSE | lambda_eta | epsilon' | delta' | seconds |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|")
    for eps in EPSILONS:
        for variant in ("isotropic", "directional"):
            for floor in (0.0, 1.0):
                mech = AttributePrivateGaussian(
                    STATISTICS,
                    SECRET,
                    model,
                    eps,
                    DELTA,
                    variant=variant,
                    smoothing=floor,
                    n_eval=n_eval,
                    eta=DELTA,
                )
                start = time.perf_counter()
                try:
                    plan = mech.calibrate()
                except InputError as exc:
                    reason = str(exc).split(":")[0]
                    print(f"| {eps:g} | {variant} | {floor:g} | - | no bound: {reason} | | | |")
                    continue
                print(
                    f"| {eps:g} | {variant} | {floor:g} | {np.sqrt(np.trace(plan.covariance)):.4g}"
                    f" | {plan.lam:.4g} | {plan.epsilon:.4g} | {plan.delta:.3g} | "
                    f"{time.perf_counter() - start:.1f} |"
                )


def scalar_table(model: ResamplingModel) -> None:
    """Table 3: each statistic alone, Algorithm 2 with the exact pmf (numerical, certified)."""
    print("\n#### Each statistic alone (Algorithm 2, exact pmf)\n")
    print(
        "| statistic | epsilon | cond. sd | shift | noise sd | free | lambda_eta | epsilon' "
        "| delta' |"
    )
    print("|---|---:|---:|---:|---:|---|---:|---:|---:|")
    for stat in STATISTICS:
        for eps in EPSILONS:
            mech = AttributePrivateGaussian(stat, SECRET, model, eps, DELTA, smoothing=FLOOR)
            try:
                plan = mech.calibrate()
            except InputError as exc:
                print(f"| {stat} | {eps:g} | | | | | no bound: {str(exc).split(':')[0]} | | |")
                continue
            (c,) = plan.constraints
            free = "yes" if plan.covariance[0, 0] <= FLOOR**2 * c.cov[0, 0] * (1 + 1e-9) else "no"
            print(
                f"| {stat} | {eps:g} | {math.sqrt(c.cov[0, 0]):.4g} | {abs(c.shift[0]):.4g} | "
                f"{math.sqrt(plan.covariance[0, 0]):.4g} | {free} | {plan.lam:.4g} | "
                f"{plan.epsilon:.4g} | {plan.delta:.3g} |"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller samples")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    releases = 4_000 if args.quick else 40_000  # per secret; half train, half test
    draws_per_value = 2_000 if args.quick else 5_000
    n_eval = 20_000
    adult = datasets.load("adult")
    start = time.perf_counter()
    model = ResamplingModel(adult.frame, adult.schema, N, draws=draws_per_value, seed=args.seed)
    rng = np.random.default_rng(args.seed + 1)
    query = Query.of(STATISTICS)
    draws = {
        "a": model.sample(query, SECRET, 0.45, releases, rng),
        "b": model.sample(query, SECRET, 0.55, releases, rng),
    }
    check = model.moment_check(query, SECRET)
    print(
        f"model: {len(adult.frame)} Adult rows, n = {N}; {releases} simulated datasets per "
        f"secret ({time.perf_counter() - start:.1f} s); moment check {check}"
    )
    print_utility(utility_table(model, draws))
    algorithm2_table(model, n_eval)
    scalar_table(model)


if __name__ == "__main__":
    main()
