"""Empirical privacy auditing: a statistical lower bound on a mechanism's epsilon, from a threshold
set chosen on half the samples and bounded on the other half. A bound above the claimed epsilon
is evidence of a bug; one below it is no proof of privacy (``docs/ledger-and-audit.md``)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from attrpriv._checks import check_delta, check_positive_int, check_probability
from attrpriv.errors import InputError
from attrpriv.stats import Interval
from attrpriv.stats import clopper_pearson as clopper_pearson  # attrpriv.dp exports it

Sampler = Callable[[int], ArrayLike]
Statistic = Callable[[np.ndarray], ArrayLike]
Scorer = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class AuditResult:
    """The audited lower bound on epsilon, and the test that produced it.

    Parameters
    ----------
    epsilon_lower, epsilon_estimate : float
        The bound that holds with probability ``confidence``, and the same ratio from the point
        estimates (may be infinite); both floored at 0.
    confidence, delta : float
        The confidence level of ``epsilon_lower``, and the delta the mechanism is audited at.
    threshold : float
        The score threshold t of the chosen set S.
    direction : str
        ``">="`` for ``S = {score >= t}``, ``"<="`` for ``S = {score <= t}``.
    first : str
        ``"a"`` or ``"b"``: the input whose probability of S is the numerator.
    p_first, p_second : Interval
        ``P[M(first) in S]`` and ``P[M(other) in S]`` on the evaluation half (one-sided bounds).
    n_samples : int
        The smaller of the two numbers of samples given.
    """

    epsilon_lower: float
    epsilon_estimate: float
    confidence: float
    delta: float
    threshold: float
    direction: str
    first: str
    p_first: Interval
    p_second: Interval
    n_samples: int

    def to_dict(self) -> dict[str, Any]:
        """The result as a JSON-ready dict.

        Returns
        -------
        dict of str to Any
            The fields by name; ``threshold`` and ``direction`` as one ``set`` string.
        """
        return {
            "epsilon_lower": self.epsilon_lower,
            "epsilon_estimate": self.epsilon_estimate,
            "confidence": self.confidence,
            "delta": self.delta,
            "set": f"score {self.direction} {self.threshold:.6g}",
            "first": self.first,
            "p_first": vars(self.p_first),
            "p_second": vars(self.p_second),
            "n_samples": self.n_samples,
        }


def audit(
    sample_a: Sampler,
    sample_b: Sampler,
    n_samples: int,
    *,
    delta: float = 0.0,
    confidence: float = 0.95,
    statistic: Statistic | None = None,
    seed: int | None = 0,
) -> AuditResult:
    """Audit a mechanism by drawing ``n_samples`` outputs on each of two inputs.

    Parameters
    ----------
    sample_a, sample_b : callable
        ``sample_a(n)``, ``sample_b(n)``: ``n`` outputs on input a, b (first axis = samples).
    n_samples : int
        The number of outputs drawn from each, >= 20.
    delta : float, default 0.0
        The delta the mechanism claims, in [0, 1).
    confidence : float, default 0.95
        The probability with which the reported lower bound holds.
    statistic : callable, optional
        Maps outputs (one per row) to scores; default the value, or a projection for vectors.
    seed : int or None, default 0
        Seed of the split into a selection half and an evaluation half.

    Returns
    -------
    AuditResult
        The audited lower bound on epsilon and the test that gave it.
    """
    n = check_positive_int(n_samples, "n_samples", minimum=20)
    return audit_samples(
        sample_a(n), sample_b(n), delta=delta, confidence=confidence, statistic=statistic, seed=seed
    )


def audit_samples(
    outputs_a: ArrayLike,
    outputs_b: ArrayLike,
    *,
    delta: float = 0.0,
    confidence: float = 0.95,
    statistic: Statistic | None = None,
    seed: int | None = 0,
) -> AuditResult:
    """Audit from outputs already drawn (first axis = samples).

    Parameters
    ----------
    outputs_a, outputs_b : array_like
        At least 20 finite outputs of the mechanism on inputs a and b; each is flattened to one row.
    delta, confidence, statistic, seed
        As in :func:`audit`.

    Returns
    -------
    AuditResult
        As in :func:`audit`.
    """
    delta = check_delta(delta)
    confidence = check_probability(confidence, "confidence")
    a, b = _as_outputs(outputs_a, "outputs_a"), _as_outputs(outputs_b, "outputs_b")
    rng = np.random.default_rng(seed)
    sel_a, ev_a = _split(a, rng)
    sel_b, ev_b = _split(b, rng)
    score = _scorer(sel_a, sel_b, statistic)
    threshold, direction, a_first = _choose_set(score(sel_a), score(sel_b), delta, confidence)
    scores_a, scores_b = score(ev_a), score(ev_b)
    first, second = (scores_a, scores_b) if a_first else (scores_b, scores_a)
    level = 1.0 - (1.0 - confidence) / 2.0
    p_first = clopper_pearson(_count_in(first, threshold, direction), first.size, level)
    p_second = clopper_pearson(_count_in(second, threshold, direction), second.size, level)
    return AuditResult(
        epsilon_lower=_epsilon(p_first.lower, p_second.upper, delta),
        epsilon_estimate=_epsilon(p_first.value, p_second.value, delta),
        confidence=confidence,
        delta=delta,
        threshold=threshold,
        direction=direction,
        first="a" if a_first else "b",
        p_first=p_first,
        p_second=p_second,
        n_samples=min(a.shape[0], b.shape[0]),
    )


def _as_outputs(values: ArrayLike, name: str) -> np.ndarray:
    array = np.asarray(values, dtype=np.float64)
    if array.ndim == 0 or array.shape[0] < 20:
        raise InputError(f"{name} needs at least 20 samples along its first axis")
    if not np.isfinite(array).all():
        raise InputError(f"{name} has NaN or infinite values")
    return array.reshape(array.shape[0], -1)


def _split(outputs: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Half of the samples choose the test, the other half evaluate it."""
    order = rng.permutation(outputs.shape[0])
    half = outputs.shape[0] // 2
    return outputs[order[:half]], outputs[order[half:]]


def _scorer(sel_a: np.ndarray, sel_b: np.ndarray, statistic: Statistic | None) -> Scorer:
    """Map outputs to one score each: the user's statistic, the value, or a mean projection."""
    if statistic is not None:
        return lambda x: np.asarray(statistic(x), dtype=np.float64).reshape(x.shape[0])
    if sel_a.shape[1] == 1:
        return lambda x: x[:, 0]
    direction = sel_a.mean(axis=0) - sel_b.mean(axis=0)
    return lambda x: x @ direction


def _choose_set(
    sel_a: np.ndarray, sel_b: np.ndarray, delta: float, confidence: float
) -> tuple[float, str, bool]:
    """Pick the threshold set with the best confidence-bounded epsilon on the selection half."""
    candidates = np.unique(np.quantile(np.concatenate([sel_a, sel_b]), np.linspace(0, 1, 201)))
    alpha = (1.0 - confidence) / 2.0
    best = (-math.inf, float(candidates[0]), ">=", True)
    for direction in (">=", "<="):
        counts_a = _counts_at(sel_a, candidates, direction)
        counts_b = _counts_at(sel_b, candidates, direction)
        for a_first in (True, False):
            k1, n1, k2, n2 = (
                (counts_a, sel_a.size, counts_b, sel_b.size)
                if a_first
                else (counts_b, sel_b.size, counts_a, sel_a.size)
            )
            lower = np.where(k1 > 0, stats.beta.ppf(alpha, np.maximum(k1, 1), n1 - k1 + 1), 0.0)
            upper = np.where(
                k2 < n2, stats.beta.ppf(1 - alpha, k2 + 1, np.maximum(n2 - k2, 1)), 1.0
            )
            with np.errstate(divide="ignore", invalid="ignore"):
                eps = np.log((lower - delta) / upper)
            eps = np.where(lower > delta, eps, -math.inf)
            i = int(np.argmax(eps))
            if eps[i] > best[0]:
                best = (float(eps[i]), float(candidates[i]), direction, a_first)
    return best[1], best[2], best[3]


def _counts_at(scores: np.ndarray, thresholds: np.ndarray, direction: str) -> np.ndarray:
    """Number of scores in {score >= t} (or {score <= t}) for every threshold t."""
    ordered = np.sort(scores)
    if direction == ">=":
        return ordered.size - np.searchsorted(ordered, thresholds, side="left")
    return np.searchsorted(ordered, thresholds, side="right")


def _count_in(scores: np.ndarray, threshold: float, direction: str) -> int:
    return int(_counts_at(scores, np.array([threshold]), direction)[0])


def _epsilon(p_first: float, p_second: float, delta: float) -> float:
    """ln((p1 - delta) / p2), floored at 0 (no evidence of leakage)."""
    if p_first <= delta or p_second <= 0.0:
        return 0.0 if p_first <= delta else math.inf
    return max(0.0, math.log((p_first - delta) / p_second))
