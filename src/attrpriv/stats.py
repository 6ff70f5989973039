"""Statistics shared by every layer: intervals of proportions, score comparisons and pooling.

A :class:`Score` is *attack minus baseline*; methods and references: ``docs/assess/attacks.md``."""

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
    "delong_auc",
    "delong_difference",
    "pool_replicates",
    "pool_scores",
    "rate_difference",
    "rate_vs_chance",
    "wilson_ci",
]

Metric = Callable[[np.ndarray], float]


@dataclass(frozen=True)
class Interval:
    """A proportion with its confidence bounds.

    Parameters
    ----------
    value : float
        The point estimate, ``successes / trials``.
    lower, upper : float
        The confidence bounds, in [0, ``value``] and [``value``, 1].
    """

    value: float
    lower: float
    upper: float


@dataclass(frozen=True)
class Score:
    """A rate against its baseline: both, ``attack - baseline`` and the CI of that difference.

    Parameters
    ----------
    attack, baseline : float
        The attack's rate (or metric, e.g. an AUC) and the baseline's (or a constant).
    difference : float
        ``attack - baseline``.
    ci : tuple of (float, float)
        The ``(lower, upper)`` confidence interval of ``difference``.
    n : int
        The number of observations behind the score (summed over repeats when pooled).
    confidence : float, default 0.95
        The confidence level of ``ci``, in (0, 1).
    method : str, default ""
        How ``ci`` was computed, e.g. ``"newcombe-paired"`` or ``"bootstrap"``.
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
        """The score as a JSON-ready dict.

        Returns
        -------
        dict of str to Any
            The fields by name, ``ci`` as a two-item list (``significant`` is not included).
        """
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
    """Exact binomial interval; each bound is one-sided at level ``confidence``.

    Parameters
    ----------
    successes, trials : int
        The numbers of successes, in [0, ``trials``], and of trials (an integer >= 1).
    confidence : float, default 0.95
        The level of each bound, in (0, 1); the two-sided level is ``2 * confidence - 1``.

    Returns
    -------
    Interval
        ``successes / trials`` with its bounds (0 and 1 at the edges).
    """
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
    """Exact (Clopper-Pearson) two-sided interval for ``successes / trials``.

    Parameters
    ----------
    successes, trials : int
        The numbers of successes, in [0, ``trials``], and of trials (>= 1).
    confidence : float, default 0.95
        The two-sided confidence level, in (0, 1).

    Returns
    -------
    tuple of (float, float)
        The ``(lower, upper)`` bounds, within [0, 1].
    """
    confidence = check_probability(confidence, "confidence")
    one_sided = 1.0 - (1.0 - confidence) / 2.0
    interval = clopper_pearson(int(successes), int(trials), one_sided)
    return (interval.lower, interval.upper)


def wilson_ci(successes: int, trials: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval (the building block of Newcombe's difference intervals).

    Parameters
    ----------
    successes, trials : int
        The numbers of successes, in [0, ``trials``], and of trials (an integer >= 1).
    confidence : float, default 0.95
        The two-sided confidence level, in (0, 1).

    Returns
    -------
    tuple of (float, float)
        The ``(lower, upper)`` bounds, cut to [0, 1].
    """
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

    Parameters
    ----------
    attack_hits : array_like
        A non-empty 1-d vector of 0/1 (or bool) outcomes of the attack.
    baseline_hits : array_like
        The baseline's outcomes, as ``attack_hits``; of the same length when ``paired``.
    confidence : float, default 0.95
        The two-sided confidence level, in (0, 1).
    paired : bool, default True
        Both vectors score the same records in the same order; False for independent samples.

    Returns
    -------
    Score
        The rates, their difference and its CI; ``method`` is ``"newcombe-paired"`` or
        ``"newcombe-independent"``.
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
    """A rate against a known constant baseline (exact CI for the rate, shifted by ``chance``).

    Parameters
    ----------
    hits : array_like
        A non-empty 1-d vector of 0/1 (or bool) outcomes.
    chance : float
        The constant baseline rate, in [0, 1] (e.g. 0.5 for a balanced guess).
    confidence : float, default 0.95
        The two-sided confidence level, in (0, 1).

    Returns
    -------
    Score
        The rate against ``chance``, with the Clopper-Pearson interval (``"clopper-pearson"``).
    """
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

    Rows (first axis) are resampled; the interval is widened, if needed, to hold the estimate.

    Parameters
    ----------
    metric : callable
        Maps an array of rows to a float.
    attack : array_like
        The attack's observations, one per row; at least 2 rows.
    baseline : array_like or float
        The baseline's observations (at least 2 rows), or a finite constant (e.g. 0.5 for an AUC).
    paired : bool, default True
        Resample the same row indices of both (ignored for a constant ``baseline``).
    strata : array_like, optional
        One label per row of ``attack``; rows are resampled within each stratum.
    n_boot : int, default 1000
        The number of resamples, >= 100.
    seed : int, default 0
        Seed of the :func:`numpy.random.default_rng` that draws the resamples.
    confidence : float, default 0.95
        The two-sided confidence level, in (0, 1).

    Returns
    -------
    Score
        The two values, their difference and its CI; ``method`` is ``"bootstrap"``.
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


def delong_auc(labels: ArrayLike, scores: ArrayLike, confidence: float = 0.95) -> Score:
    """The AUC of ``scores`` for telling ``labels`` 1 from 0, against 0.5, with DeLong's CI.

    Parameters
    ----------
    labels : array_like
        One 0/1 label per record (1 = positive); both values present.
    scores : array_like
        One score per record (not NaN); higher means "more likely 1"; ties count one half.
    confidence : float, default 0.95
        The two-sided confidence level, in (0, 1).

    Returns
    -------
    Score
        The AUC against 0.5 and the interval of ``AUC - 0.5``; ``method`` is ``"delong"``.
    """
    positive, (first,) = _auc_inputs(labels, [scores])
    v10, v01 = _placements(positive, first)
    value = float(v10.mean())
    half = _z(confidence) * math.sqrt(_placement_variance(v10, v01))
    difference = value - 0.5
    return Score(
        value,
        0.5,
        difference,
        (difference - half, difference + half),
        positive.size,
        confidence,
        "delong",
    )


def delong_difference(
    labels: ArrayLike, first: ArrayLike, second: ArrayLike, confidence: float = 0.95
) -> Score:
    """``AUC(first) - AUC(second)``, two scorings of the same records, with DeLong's paired CI.

    Parameters
    ----------
    labels : array_like
        One 0/1 label per record; both values present.
    first, second : array_like
        The two scorings: one score per record (not NaN), the records in the same order.
    confidence : float, default 0.95
        The two-sided confidence level, in (0, 1).

    Returns
    -------
    Score
        ``AUC(first)`` against ``AUC(second)``; ``method`` is ``"delong-paired"``.
    """
    positive, (a, b) = _auc_inputs(labels, [first, second])
    a10, a01 = _placements(positive, a)
    b10, b01 = _placements(positive, b)
    auc_a, auc_b = float(a10.mean()), float(b10.mean())
    half = _z(confidence) * math.sqrt(_placement_variance(a10 - b10, a01 - b01))
    difference = auc_a - auc_b
    return Score(
        auc_a,
        auc_b,
        difference,
        (difference - half, difference + half),
        positive.size,
        confidence,
        "delong-paired",
    )


def _pool_level(scores: Sequence[Score], confidence: float | None) -> float | None:
    """The pooled CI's level (default the first score's); ``None`` for a lone score kept as is."""
    if not scores:
        raise InputError("scores must hold at least one Score, got none")
    if len(scores) == 1 and confidence is None:
        return None
    return check_probability(
        scores[0].confidence if confidence is None else confidence, "confidence"
    )


def pool_scores(scores: Sequence[Score], confidence: float | None = None) -> Score:
    """One score from repeats on the same data: means, and a CI by Rubin's rules.

    Parameters
    ----------
    scores : sequence of Score
        The repeats' scores; at least one.
    confidence : float, optional
        The level of the pooled CI; default the first score's (a lone score is returned as is).

    Returns
    -------
    Score
        The mean values, the pooled CI, ``n`` summed and ``method`` ``"rubin-pooled(k)"``.
    """
    level = _pool_level(scores, confidence)
    if level is None:
        return scores[0]
    k = len(scores)
    within, between = _spread(scores)
    total = within + (1 + 1 / k) * between
    if between > 0:
        df = (k - 1) * (1 + within / ((1 + 1 / k) * between)) ** 2
        q = float(stats.t.ppf(1 - (1 - level) / 2, df))
    else:
        q = _z(level)
    return _pooled(scores, q * math.sqrt(total), level, f"rubin-pooled({k})")


def pool_replicates(scores: Sequence[Score], confidence: float | None = None) -> Score:
    """The mean of independent re-runs of one experiment, with a random-effects CI.

    DerSimonian-Laird variance ``max(B, W) / k`` and a Hartung-Knapp t interval: unlike
    :func:`pool_scores`, it narrows as runs are added. See ``docs/assess/risk-scores.md``.

    Parameters
    ----------
    scores : sequence of Score
        The runs' scores; at least one.
    confidence : float, optional
        The level of the pooled CI; default the first score's (a lone score is returned as is).

    Returns
    -------
    Score
        The mean values, the pooled CI, ``n`` summed and ``method`` ``"random-effects(k)"``.
    """
    level = _pool_level(scores, confidence)
    if level is None:
        return scores[0]
    k = len(scores)
    within, between = _spread(scores)
    q = float(stats.t.ppf(1 - (1 - level) / 2, k - 1)) if k > 1 else _z(level)
    half = q * math.sqrt(max(between, within) / k)
    return _pooled(scores, half, level, f"random-effects({k})")


def _spread(scores: Sequence[Score]) -> tuple[float, float]:
    """Repeats' mean within-repeat variance (read off their CIs) and between-repeat variance."""
    within = float(np.mean([((s.ci[1] - s.ci[0]) / 2 / _z(s.confidence)) ** 2 for s in scores]))
    diffs = np.array([s.difference for s in scores])
    return within, float(diffs.var(ddof=1)) if len(scores) > 1 else 0.0


def _pooled(scores: Sequence[Score], half: float, level: float, method: str) -> Score:
    """The repeats' mean score with the interval ``mean -+ half``, cut to [-1, 1]."""
    mean = float(np.mean([s.difference for s in scores]))
    return Score(
        float(np.mean([s.attack for s in scores])),
        float(np.mean([s.baseline for s in scores])),
        mean,
        (max(-1.0, mean - half), min(1.0, mean + half)),
        int(sum(s.n for s in scores)),
        level,
        method,
    )


# -- helpers -------------------------------------------------------------------------------------


def _trials(successes: int, trials: int) -> int:
    """``trials`` (an integer >= 1), once ``successes`` is checked to lie in [0, trials]."""
    trials = check_positive_int(trials, "trials")
    if not 0 <= successes <= trials:
        raise InputError(f"successes must be in [0, {trials}], got {successes}")
    return trials


def _auc_inputs(
    labels: ArrayLike, scorings: Sequence[ArrayLike]
) -> tuple[np.ndarray, list[np.ndarray]]:
    """Labels as booleans and each scoring as floats, checked."""
    y = np.asarray(labels)
    if y.ndim != 1 or not np.isin(y, (0, 1)).all():
        raise InputError(f"labels must be a 1-d array of 0/1, got shape {y.shape}")
    positive = y.astype(bool)
    if positive.all() or not positive.any():
        raise InputError("labels must hold both 0 and 1 (an AUC needs both kinds of records)")
    out = []
    for scoring in scorings:
        s = np.asarray(scoring, dtype=float)
        if s.shape != y.shape:
            raise InputError(f"scores have shape {s.shape}, expected {y.shape} like labels")
        if np.isnan(s).any():
            raise InputError("scores must not be NaN")
        out.append(s)
    return positive, out


def _placements(positive: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """DeLong's placements: per positive, the share of negatives it beats (ties one half)."""
    pos, neg = scores[positive], scores[~positive]
    ranks = stats.rankdata(np.concatenate([pos, neg]))
    v10 = (ranks[: pos.size] - stats.rankdata(pos)) / neg.size
    v01 = 1.0 - (ranks[pos.size :] - stats.rankdata(neg)) / pos.size
    return v10, v01


def _placement_variance(v10: np.ndarray, v01: np.ndarray) -> float:
    """DeLong's variance of an AUC (or AUC difference) from its placements."""
    return float(_variance(v10) / v10.size + _variance(v01) / v01.size)


def _variance(values: np.ndarray) -> float:
    return float(values.var(ddof=1)) if values.size > 1 else 0.0


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
    """Newcombe's continuity-corrected correlation of paired 0/1 outcomes (Newcombe 1998)."""
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
