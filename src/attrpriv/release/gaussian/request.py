"""Algorithm 2 calibrated to the requested guarantee: the largest Mahalanobis shift whose
approximation cost still gives (epsilon, delta), found by a guess and bisection to 1 %.

Refused, with the best pair reached, if none is found within a factor 4096 of the first.
See docs/mechanisms/attribute-private-gaussian.md, "Algorithm 2".
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from attrpriv.errors import InputError
from attrpriv.release.gaussian.approximation import Approximation
from attrpriv.release.gaussian.calibration import largest_shift, nominal_delta
from attrpriv.release.gaussian.query import Array

_HALVINGS = 12
_BISECTIONS = 8
_PRECISION = 0.01  # relative precision of the shift found


@dataclass(frozen=True)
class Trial:
    """One noise level tried: its shift ``r``, noise covariance and lambda_eta."""

    shift: float
    covariance: Array
    lam: float
    approximations: tuple[Approximation, ...]


@dataclass(frozen=True)
class Certified:
    """What Algorithm 2 certifies at one trial: the nominal pair and the final one."""

    nominal_epsilon: float
    nominal_delta: float
    epsilon: float
    delta: float


def certify(trial: Trial, epsilon: float, eta: float, method: str) -> Certified | None:
    """The guarantee at ``trial`` with final epsilon ``epsilon``, or None if lambda is too big."""
    lam = trial.lam
    if not math.isfinite(lam) or 2.0 * lam >= epsilon:
        return None
    nominal_eps = epsilon - 2.0 * lam
    nominal = nominal_delta(trial.shift, nominal_eps, method)
    total = math.exp(lam) * nominal + (1.0 + math.exp(nominal_eps + lam)) * eta
    return Certified(nominal_eps, nominal, nominal_eps + 2.0 * lam, total)


def search(
    epsilon: float,
    delta: float,
    eta: float,
    method: str,
    max_shift: float,
    evaluate: Callable[[float], Trial],
) -> tuple[Trial, Certified]:
    """The largest shift (least noise) whose Algorithm 2 guarantee is within (epsilon, delta)."""
    if (1.0 + math.exp(epsilon)) * eta >= delta:
        raise InputError(
            f"eta = {eta:g} leaves nothing of delta = {delta:g}: Algorithm 2 needs "
            f"(1 + e^epsilon) eta < delta, i.e. eta < {delta / (1.0 + math.exp(epsilon)):.3g}"
        )

    def fits(trial: Trial) -> Certified | None:
        found = certify(trial, epsilon, eta, method)
        return found if found is not None and found.delta <= delta else None

    trial = evaluate(max_shift)
    found = fits(trial)
    if found is not None:
        return trial, found
    bad, good = max_shift, None
    guess = _guess(trial, epsilon, delta, eta, method)  # the shift if lambda stayed the same
    if guess is not None and guess < bad:
        trial = evaluate(guess)
        found = fits(trial)
        if found is not None:
            good = (trial, found)
        else:
            bad = guess
    while good is None:
        if bad < max_shift / 2**_HALVINGS:
            raise InputError(_refusal(trial, epsilon, delta, eta, method))
        trial = evaluate(bad / 2.0)
        found = fits(trial)
        if found is not None:
            good = (trial, found)
        else:
            bad /= 2.0
    for _ in range(_BISECTIONS):
        if bad / good[0].shift <= 1.0 + _PRECISION:
            break
        middle = math.sqrt(good[0].shift * bad)
        trial = evaluate(middle)
        found = fits(trial)
        if found is not None:
            good = (trial, found)
        else:
            bad = middle
    return good


def _guess(trial: Trial, epsilon: float, delta: float, eta: float, method: str) -> float | None:
    """Largest shift feasible if lambda kept its ``trial`` value (it is: more noise lowers it)."""
    lam = trial.lam
    if not math.isfinite(lam) or 2.0 * lam >= epsilon:
        return None
    nominal_eps = epsilon - 2.0 * lam
    budget = (delta - (1.0 + math.exp(nominal_eps + lam)) * eta) / math.exp(lam)
    if budget <= 0.0:
        return None
    return largest_shift(nominal_eps, budget, method)


def _refusal(trial: Trial, epsilon: float, delta: float, eta: float, method: str) -> str:
    """Why (epsilon, delta) cannot be given, and the best pair at the most noise tried."""
    asked = f"({epsilon:g}, {delta:g})"
    if not math.isfinite(trial.lam):
        return (
            f"Algorithm 2 cannot give {asked}: lambda_eta is infinite (a discrete statistic "
            "with rank-deficient noise, e.g. the directional variant); raise the smoothing"
        )
    nominal = nominal_delta(trial.shift, epsilon, method)
    reach = math.exp(trial.lam) * nominal + (1.0 + math.exp(epsilon + trial.lam)) * eta
    return (
        f"Algorithm 2 cannot give {asked} (eta = {eta:.3g}): with {2**_HALVINGS}x less "
        f"shift than (epsilon, delta) allows, lambda_eta is still {trial.lam:.3g}; the smallest "
        f"pair reached is ({epsilon + 2.0 * trial.lam:.4g}, {reach:.3g})"
    )


__all__ = ["Certified", "Trial", "certify", "search"]
