"""How a release's guarantee is established (``"gaussian"``, ``"exact"``, ``"algorithm-2"``,
``"assume-gaussian"``) and what its record says. See docs/mechanisms/attribute-private-gaussian.md,
"How the guarantee is established".
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from attrpriv.errors import InputError
from attrpriv.release.gaussian import approximation as approx
from attrpriv.release.gaussian import request
from attrpriv.release.gaussian.calibration import (
    Calibration,
    Constraint,
    gaussian_delta,
    isotropic_noise,
)
from attrpriv.release.gaussian.checks import check_model
from attrpriv.release.gaussian.exact import PairLaw, exact_noise, pair_deltas
from attrpriv.release.gaussian.plan import GaussianPlan
from attrpriv.release.gaussian.query import Array
from attrpriv.release.gaussian.specs import Specs
from attrpriv.release.gaussian.theta import GaussianModel

MAX_POINTS = 4_000_000
"""The most Monte Carlo points per direction chosen automatically for Algorithm 2."""


def forced_variables(specs: Specs) -> tuple[str, ...]:
    """The discrete variables some Gaussian model is used on; refused unless it is forced."""
    used = {s.variable for s in specs.query.statistics}
    used |= {s.statistic.variable for s in specs.secrets}
    forced: set[str] = set()
    for model in specs.models:
        if not isinstance(model, GaussianModel):
            continue
        bad = sorted(v for v in used if v in model.discrete or v in specs.discrete)
        if bad and not model.force:
            raise InputError(
                f"a GaussianModel on discrete variables {bad} (category indicators, integer "
                "columns) understates delta: F given a secret is a sum of discrete records, not "
                "Gaussian; use a ResamplingModel, or GaussianModel(..., force=True) to accept "
                "it (the record says so)"
            )
        forced.update(bad)
    return tuple(sorted(forced))


def method(specs: Specs, approximation: str) -> tuple[str, list[PairLaw] | None]:
    """The accounting for ``specs`` (see the module docstring), and the exact laws it uses."""
    if all(m.gaussian for m in specs.models):
        return "gaussian", None
    if approximation == "assume-gaussian":
        return "assume-gaussian", None
    if approximation == "bound":
        return "algorithm-2", None
    laws = exact_laws(specs)
    if laws is not None:
        return "exact", laws
    if approximation == "exact":
        raise InputError(
            "approximation 'exact' needs a scalar query whose law the model gives exactly (a "
            "count, or a sum or mean of an integer column, under the resampling model); use "
            "'auto' or 'bound' (Algorithm 2)"
        )
    return "algorithm-2", None


def exact_laws(specs: Specs) -> list[PairLaw] | None:
    """Both exact laws of every pair under each non-Gaussian model, or None if one is missing."""
    query = specs.query
    if query.size != 1:
        return None
    pairs: list[PairLaw] = []
    for t, model in enumerate(specs.models):
        if model.gaussian:
            continue
        for secret in specs.secrets:
            values = model.support(secret)
            laws = {}
            for value in values:
                law = model.pmf(query, secret, value)
                if law is None:
                    return None
                laws[value] = law
            for a, b in secret.value_pairs(values):
                label = f"theta {t}: {secret.statistic} {a:g} vs {b:g}"
                pairs.append(PairLaw.of(label, laws[a], laws[b]))
    return pairs


def default_eta(epsilon: float, delta: float) -> float:
    """Half of delta for eta's terms: ``(1 + e^epsilon) eta = delta / 2``."""
    return delta / (2.0 * (1.0 + math.exp(epsilon)))


# -- the exact privacy loss -------------------------------------------------------------------


def exact(
    laws: list[PairLaw],
    epsilon: float,
    delta: float,
    cal: Calibration,
    constraints: tuple[Constraint, ...],
    base: Array,
    slack: float,
) -> Array:
    """Smallest 1 x 1 noise covariance >= ``base`` with exact delta <= ``delta`` per pair."""
    approximate = tuple(c for c in constraints if not c.gaussian)
    start = 0.0
    if approximate:
        start = math.sqrt(float(isotropic_noise(approximate, cal.max_shift)[0, 0]))
    steps = [float(np.diff(p.atoms).min()) for p in laws if p.atoms.size > 1]
    found = exact_noise(laws, epsilon, delta, start, min(steps, default=1.0), slack)
    return np.array([[max(float(base[0, 0]), found.sigma**2)]])


def verify_exact(
    laws: list[PairLaw], epsilon: float, delta: float, cov: Array, slack: float
) -> dict[str, float]:
    """Every pair's exact delta with the final noise; refuse to release if one exceeds delta."""
    deltas = pair_deltas(laws, math.sqrt(max(float(cov[0, 0]), 0.0)), epsilon, slack)
    if max(deltas.values(), default=0.0) > delta:
        raise RuntimeError("exact calibration failed its own check; please report this")
    return deltas


# -- Algorithm 2 ------------------------------------------------------------------------------


def algorithm_2(
    specs: Specs,
    epsilon: float,
    delta: float,
    eta: float,
    method: str,
    n_eval: int | None,
    max_shift: float,
    noise_at: Callable[[float], Array],
    tried: Callable[..., None] | None = None,
) -> dict[str, Any]:
    """Algorithm 2 with noise giving (epsilon, delta); ``tried(detail=...)`` after each level."""
    query = specs.query
    inexact = [m for m in specs.models if not m.gaussian]
    monte_carlo = query.size > 1 or exact_laws(specs) is None
    points = n_eval
    if points is None and monte_carlo:
        points = approx.points_needed(eta)
        if points > MAX_POINTS:
            smallest = 2.0 * (1.0 + math.exp(epsilon)) * _eta_resolved(MAX_POINTS)
            ask = (
                f"ask for delta >= {smallest:.2g} at epsilon = {epsilon:g}"
                if smallest < 1.0
                else f"no delta below 1 can be resolved at epsilon = {epsilon:g}"
            )
            raise InputError(
                f"Algorithm 2 on this query needs {points:,} Monte Carlo points to resolve "
                f"eta = {eta:.3g}, above the {MAX_POINTS:,} chosen automatically: {ask}; give "
                "n_eval, or release the statistics one at a time (exact)"
            )
    cache: dict[Any, Any] = {}

    def evaluate(shift: float) -> request.Trial:
        cov = noise_at(shift)
        found: list[approx.Approximation] = []
        for model in inexact:
            for secret in specs.secrets:
                found += approx.model_lambdas(model, query, secret, cov, eta, points or 100, cache)
        lam = max(a.lam for a in found)
        if tried is not None:
            tried(detail=f"shift {shift:.4g}, lambda_eta {lam:.3g}")
        return request.Trial(shift, cov, lam, tuple(found))

    trial, certified = request.search(epsilon, delta, eta, method, max_shift, evaluate)
    cal = Calibration(
        method,
        certified.nominal_epsilon,
        certified.nominal_delta,
        trial.shift,
        gaussian_delta(trial.shift, certified.nominal_epsilon),
    )
    return {
        "covariance": trial.covariance,
        "calibration": cal,
        "lam": trial.lam,
        "approximations": trial.approximations,
        "certified": (certified.epsilon, certified.delta),
        "eta": eta,
        "n_eval": points if monte_carlo else None,
    }


def _eta_resolved(points: int) -> float:
    """The smallest eta :func:`approx.points_needed` resolves with ``points``."""
    return 4.0 * approx.upper_bound(0.0, points, 0.025)


# -- checks and the record --------------------------------------------------------------------


def checked(plan: GaussianPlan, specs: Specs) -> GaussianPlan:
    """The plan with its model checks and warnings."""
    checks: dict[str, Any] = {}
    found: list[str] = []
    unchecked = False
    if plan.forced:
        found.append(
            f"Gaussian model forced on discrete variables {list(plan.forced)}: the stated "
            f"({plan.epsilon:g}, {plan.delta:g}) holds for Gaussian records only"
        )
    for t, model in enumerate(specs.models):
        for secret in specs.secrets:
            key = f"theta {t}: {secret.name}"
            if isinstance(model, GaussianModel):
                if model.reference is None:
                    unchecked = True
                    continue
                checks[key], warnings = check_model(model, specs.query, secret)
                found += warnings
            else:
                moments = model.moment_check(specs.query, secret)
                if moments is not None:
                    checks[key] = moments
    if plan.free:
        found.append(
            "no noise is added: the release is the exact answer, and the guarantee rests "
            f"entirely on the model ({', '.join(plan.models)})"
        )
    return dataclasses.replace(plan, checks=checks, warnings=tuple(found), unchecked=unchecked)


def assumptions(plan: GaussianPlan) -> tuple[str, ...]:
    """What the guarantee rests on, in words; then the plan's warnings."""
    out = [
        "the n records are drawn from one of the models in Theta (Pufferfish prior): "
        + "; ".join(plan.models)
    ]
    if plan.gaussian_models:
        out.append(
            "Gaussian model: the records are i.i.d. Gaussian, so F given a secret is exactly "
            "Gaussian (an assumption about the data)"
        )
    if plan.forced:
        out.append(
            f"Gaussian model forced on discrete variables {list(plan.forced)}: F given a secret "
            "is a sum of discrete records, not Gaussian; the stated (epsilon, delta) holds for "
            "Gaussian records only, and the exact delta of such data can be several times larger"
        )
    if plan.unchecked:
        out.append("a Gaussian model given by its parameters was not checked against any data")
    if plan.accounting == "exact":
        worst = max(plan.exact.values(), default=0.0)
        out.append(
            "exact privacy loss: F given each secret has the model's exact pmf; every protected "
            f"pair's delta at epsilon = {plan.epsilon:g}, computed numerically, is at most "
            f"{worst:.4g}"
        )
    if plan.accounting == "algorithm-2":
        methods = sorted({a.method for a in plan.approximations})
        eps, delta = plan.guarantee
        out.append(
            f"Algorithm 2: Gaussian approximations with lambda_eta = {plan.lam:.4g} "
            f"({', '.join(methods)}), eta = {plan.eta:.3g}; nominal "
            f"({plan.calibration.epsilon:.4g}, {plan.calibration.delta:.3g}) certifies "
            f"({eps:.4g}, {delta:.3g}), within the stated pair"
        )
        if "monte-carlo" in methods:
            out.append("lambda_eta of a vector query is a Monte Carlo estimate, not a proof")
    if plan.accounting == "assume-gaussian":
        out.append(
            "F given a secret assumed Gaussian with the model's conditional mean and a common "
            "covariance (Algorithm 2's lambda_eta not computed, on request)"
        )
    out += [f"warning: {text}" for text in plan.warnings]
    return tuple(out)


__all__ = [
    "MAX_POINTS",
    "algorithm_2",
    "assumptions",
    "checked",
    "default_eta",
    "exact",
    "exact_laws",
    "forced_variables",
    "method",
    "verify_exact",
]
