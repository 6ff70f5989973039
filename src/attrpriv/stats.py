"""Statistics shared by every layer: proportions with exact and score intervals, and scores.

Small pure functions with small typed results, in the manner of anonymeter's
``stats/confidence.py`` (its style only: a :class:`Score` is *attack minus baseline*, never a
control-normalised ratio):

- :func:`clopper_pearson` -- exact binomial bounds, each one-sided at level ``confidence``
  (the empirical audit of :mod:`attrpriv.dp.audit` takes them so).
- :func:`binomial_ci` -- exact two-sided Clopper-Pearson interval of one proportion.
- :func:`wilson_ci` -- Wilson score interval of one proportion.
- :func:`rate_difference` -- two rates of 0/1 outcomes and the CI of their difference: Newcombe's
  hybrid score interval (Newcombe 1998, Stat. Med. 17:873 for independent samples, method 10;
  Stat. Med. 17:2635 for paired outcomes, method 10), which keeps its coverage near the nominal
  level for small samples and rates near 0 or 1, where the Wald interval does not.
- :func:`rate_vs_chance` -- a rate against a known constant (e.g. 0.5 for a balanced guess).
- :func:`bootstrap_difference` -- any metric (AUC, R^2, ...) of two samples, percentile bootstrap.
- :func:`pool_scores` -- one score from repeats over seeds (Rubin's rules).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from attrpriv._checks import check_finite_number, check_positive_int, check_probability
from attrpriv.errors import InputError

__all__ = [
    "Interval",
    "Score",
    "binomial_ci",
    "bootstrap_difference",
    "clopper_pearson",
    "pool_scores",
    "rate_difference",
    "rate_vs_chance",
    "wilson_ci",
]

Metric = Callable[[np.ndarray], float]


@dataclass(frozen=True)
class Interval:
    """A proportion with its confidence bounds."""

    value: float
    lower: float
    upper: float


@dataclass(frozen=True)
class Score:
    """A rate against its baseline: both, ``attack - baseline`` and the CI of that difference.

    An attack's headline (its success rate or AUC against the baseline it must beat), and any
    other comparison of two rates, such as a sanitizer's leakage against the prior.
    """

    attack: float
    baseline: float
    difference: float
    ci: tuple[float, float]
    n: int
    confidence: float = 0.95
    method: str = ""

    @property
    def significant(self) -> bool:
        """True when the CI of the difference lies above 0: the attack beats its baseline."""
        return self.ci[0] > 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "attack": self.attack,
            "baseline": self.baseline,
            "difference": self.difference,
            "ci": [self.ci[0], self.ci[1]],
            "n": self.n,
            "confidence": self.confidence,
            "method": self.method,
        }


def clopper_pearson(successes: int, trials: int, confidence: float = 0.95) -> Interval:
    """Exact binomial interval; each bound is one-sided at level ``confidence``."""
    trials = _trials(successes, trials)
    alpha = 1.0 - check_probability(confidence, "confidence")
    lower = (
        0.0 if successes == 0 else float(stats.beta.ppf(alpha, successes, trials - successes + 1))
    )
    upper = (
        1.0
        if successes == trials
        else float(stats.beta.ppf(1.0 - alpha, successes + 1, trials - successes))
    )
    return Interval(successes / trials, lower, upper)


def binomial_ci(successes: int, trials: int, confidence: float = 0.95) -> tuple[float, float]:
    """Exact (Clopper-Pearson) two-sided interval for ``successes / trials``."""
    confidence = check_probability(confidence, "confidence")
    one_sided = 1.0 - (1.0 - confidence) / 2.0
    interval = clopper_pearson(int(successes), int(trials), one_sided)
    return (interval.lower, interval.upper)


def wilson_ci(successes: int, trials: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval (the building block of Newcombe's difference intervals)."""
    trials = _trials(successes, trials)
    z = _z(confidence)
    p = successes / trials
    centre = (p + z * z / (2 * trials)) / (1 + z * z / trials)
    half = (
        z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / (1 + z * z / trials)
    )
    return (max(0.0, centre - half), min(1.0, centre + half))


def rate_difference(
    attack_hits: ArrayLike,
    baseline_hits: ArrayLike,
    confidence: float = 0.95,
    *,
    paired: bool = True,
) -> Score:
    """Rates of two 0/1 outcome vectors and Newcombe's CI for ``attack - baseline``.

    ``paired=True``: both were scored on the same records, in the same order (an attack and its
    baseline on one evaluation set); the CI uses the correlation of the pairs (method 10 of
    Newcombe's paired paper). ``paired=False``: independent samples (e.g. train vs test accuracy).
    """
    a = _hits(attack_hits, "attack_hits")
    b = _hits(baseline_hits, "baseline_hits")
    if paired and a.size != b.size:
        raise InputError(
            f"paired hits need equal lengths, got attack_hits {a.size} and baseline_hits {b.size}"
        )
    p1, p2 = float(a.mean()), float(b.mean())
    l1, u1 = wilson_ci(int(a.sum()), a.size, confidence)
    l2, u2 = wilson_ci(int(b.sum()), b.size, confidence)
    phi = _phi(a, b) if paired else 0.0
    d = p1 - p2
    low = d - _root(p1 - l1, u2 - p2, phi)
    high = d + _root(u1 - p1, p2 - l2, phi)
    method = "newcombe-paired" if paired else "newcombe-independent"
    return Score(p1, p2, d, (max(-1.0, low), min(1.0, high)), a.size, confidence, method)


def rate_vs_chance(hits: ArrayLike, chance: float, confidence: float = 0.95) -> Score:
    """A rate against a known constant baseline (exact CI for the rate, shifted by ``chance``)."""
    h = _hits(hits, "hits")
    chance = check_probability(chance, "chance", open_interval=False)
    low, high = binomial_ci(int(h.sum()), h.size, confidence)
    rate = float(h.mean())
    ci = (low - chance, high - chance)
    return Score(rate, chance, rate - chance, ci, h.size, confidence, "clopper-pearson")


def bootstrap_difference(
    metric: Metric,
    attack: ArrayLike,
    baseline: ArrayLike | float,
    *,
    paired: bool = True,
    strata: ArrayLike | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> Score:
    """``metric(attack) - metric(baseline)`` with a percentile-bootstrap CI.

    ``attack``/``baseline`` hold one observation per row (first axis) and ``metric`` maps such an
    array to a number (e.g. rows of (is_member, score) to an AUC). ``baseline`` may be a constant
    (e.g. 0.5, a random guess's AUC). ``paired``: resample the same rows of both (they describe the
    same records). ``strata``: one label per row; each stratum is resampled within itself, which
    keeps e.g. the member / non-member counts fixed. The interval is widened, if needed, to hold
    the point estimate (a percentile interval may miss it when the metric is skewed).
    """
    n_boot = check_positive_int(n_boot, "n_boot", minimum=100)
    confidence = check_probability(confidence, "confidence")
    a = _rows(attack, "attack")
    constant = isinstance(baseline, (int, float, np.number))
    b = a if constant else _rows(baseline, "baseline")
    if paired and not constant and len(a) != len(b):
        raise InputError(f"paired samples need equal lengths, got {len(a)} and {len(b)}")
    groups_a = _strata(strata, len(a))
    groups_b = groups_a if paired or constant else _strata(None, len(b))
    base_value = check_finite_number(baseline, "baseline") if constant else float(metric(b))
    point = float(metric(a)) - base_value
    rng = np.random.default_rng(seed)
    diffs = np.empty(n_boot)
    for i in range(n_boot):
        idx_a = _resample(groups_a, rng)
        idx_b = idx_a if paired else _resample(groups_b, rng)
        other = base_value if constant else float(metric(b[idx_b]))
        diffs[i] = float(metric(a[idx_a])) - other
    alpha = 1.0 - confidence
    low, high = (float(v) for v in np.nanquantile(diffs, [alpha / 2, 1 - alpha / 2]))
    ci = (min(low, point), max(high, point))
    return Score(point + base_value, base_value, point, ci, len(a), confidence, "bootstrap")


def pool_scores(scores: Sequence[Score], confidence: float | None = None) -> Score:
    """One score from repeats over seeds: means, and a CI from Rubin's rules.

    Each repeat's CI gives a within-repeat variance ``W_i = (half-width / z)^2``; with ``W`` their
    mean and ``B`` the variance of the repeats' differences, the total variance is
    ``W + (1 + 1/k) B`` (Rubin 1987), and the CI is a t interval on Rubin's degrees of freedom,
    cut to [-1, 1]: every score is a difference of two rates (or AUCs).
    """
    if not scores:
        raise InputError("scores must hold at least one Score, got none")
    level = scores[0].confidence if confidence is None else confidence
    if len(scores) == 1 and confidence is None:
        return scores[0]
    k = len(scores)
    diffs = np.array([s.difference for s in scores])
    z_in = np.array([_z(s.confidence) for s in scores])
    within = float(
        np.mean([((s.ci[1] - s.ci[0]) / 2 / z) ** 2 for s, z in zip(scores, z_in, strict=True)])
    )
    between = float(diffs.var(ddof=1)) if k > 1 else 0.0
    total = within + (1 + 1 / k) * between
    if between > 0:
        df = (k - 1) * (1 + within / ((1 + 1 / k) * between)) ** 2
        q = float(stats.t.ppf(1 - (1 - check_probability(level, "confidence")) / 2, df))
    else:
        q = _z(level)
    mean = float(diffs.mean())
    half = q * math.sqrt(total)
    return Score(
        float(np.mean([s.attack for s in scores])),
        float(np.mean([s.baseline for s in scores])),
        mean,
        (max(-1.0, mean - half), min(1.0, mean + half)),
        int(sum(s.n for s in scores)),
        level,
        f"rubin-pooled({k})",
    )


# -- helpers -------------------------------------------------------------------------------------


def _trials(successes: int, trials: int) -> int:
    """``trials`` (an integer >= 1), once ``successes`` is checked to lie in [0, trials]."""
    trials = check_positive_int(trials, "trials")
    if not 0 <= successes <= trials:
        raise InputError(f"successes must be in [0, {trials}], got {successes}")
    return trials


def _z(confidence: float) -> float:
    confidence = check_probability(confidence, "confidence")
    return float(stats.norm.ppf(1.0 - (1.0 - confidence) / 2.0))


def _hits(values: ArrayLike, name: str) -> np.ndarray:
    """A non-empty vector of 0/1 (or bool) outcomes."""
    arr = np.asarray(values)
    if arr.ndim != 1 or arr.size == 0:
        raise InputError(
            f"{name} must be a non-empty 1-d array of 0/1 outcomes, got shape {arr.shape}"
        )
    if arr.dtype != bool and not np.isin(arr, (0, 1)).all():
        raise InputError(f"{name} must hold only 0/1 outcomes")
    return arr.astype(np.int64)


def _rows(values: ArrayLike, name: str) -> np.ndarray:
    arr = np.asarray(values)
    if arr.ndim == 0 or len(arr) < 2:
        raise InputError(f"{name} must hold at least 2 observations (rows), got {arr.shape}")
    return arr


def _strata(strata: ArrayLike | None, n: int) -> list[np.ndarray]:
    """Row indices of each stratum (one stratum of all rows when none are given)."""
    if strata is None:
        return [np.arange(n)]
    labels = np.asarray(strata)
    if labels.shape != (n,):
        raise InputError(f"strata must hold one label per row ({n}), got shape {labels.shape}")
    return [np.flatnonzero(labels == value) for value in np.unique(labels)]


def _resample(groups: list[np.ndarray], rng: np.random.Generator) -> np.ndarray:
    return np.concatenate([rng.choice(g, size=g.size, replace=True) for g in groups])


def _phi(a: np.ndarray, b: np.ndarray) -> float:
    """Newcombe's continuity-corrected correlation of paired 0/1 outcomes.

    With ``A = both * neither - only_a * only_b``: ``(A - n/2) / sqrt(margins)`` when
    ``A > n/2``, 0 when ``0 <= A <= n/2``, ``A / sqrt(margins)`` when ``A < 0``, and 0 when a
    margin is empty (Newcombe 1998; Fagerland, Lydersen & Laake 2017, section 8.5).
    """
    both = int(np.sum(a & b))
    only_a = int(np.sum(a & (1 - b)))
    only_b = int(np.sum((1 - a) & b))
    neither = a.size - both - only_a - only_b
    margins = (both + only_a) * (only_b + neither) * (both + only_b) * (only_a + neither)
    if margins == 0:
        return 0.0
    cross = both * neither - only_a * only_b
    if cross > a.size / 2:
        return (cross - a.size / 2) / math.sqrt(margins)
    return 0.0 if cross >= 0 else cross / math.sqrt(margins)


def _root(x: float, y: float, phi: float) -> float:
    return math.sqrt(max(0.0, x * x - 2.0 * phi * x * y + y * y))
