"""Risk scores of a feature set (differential, overall, modified) with their CIs and flags, as
pure functions of attack scores. See docs/assess/risk-scores.md.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from scipy import stats

from attrpriv._checks import check_non_negative, check_probability
from attrpriv.assess.choices import ATTACKS
from attrpriv.errors import InputError
from attrpriv.stats import Score, pool_replicates

__all__ = [
    "FLAG_REASONS",
    "ScoreWeights",
    "differential_score",
    "evidence",
    "flag_reason",
    "mean_interval",
    "modified_interval",
    "modified_score",
    "overall_score",
    "parse_weights",
    "score_flags",
    "score_from_dict",
]


@dataclass(frozen=True)
class ScoreWeights:
    """User-set weights of the overall and modified scores (all >= 0).

    Parameters
    ----------
    membership, attribute, property : float, default 1.0
        Weights of the attacks' differences in the overall score.
    overfitting : float, default 0.5
        Weight of the set's contribution to the train-test gap (adds to the risk).
    utility : float, default 0.5
        Weight of the set's importance (test-metric drop when removed; subtracts).

    Raises
    ------
    InputError
        If a weight is not a finite number >= 0.
    """

    membership: float = 1.0
    attribute: float = 1.0
    property: float = 1.0
    overfitting: float = 0.5
    utility: float = 0.5

    def __post_init__(self) -> None:
        for name, value in asdict(self).items():
            object.__setattr__(self, name, check_non_negative(value, f"weights.{name}"))

    def attack_weight(self, attack: str) -> float:
        """The weight of one attack's difference in the overall score.

        Parameters
        ----------
        attack : {"membership", "attribute", "property"}
            The attack.

        Returns
        -------
        float
            Its weight.

        Raises
        ------
        InputError
            If ``attack`` is not one of the attacks.
        """
        if attack not in ATTACKS:
            raise InputError(f"attack must be one of {list(ATTACKS)}, got {attack!r}")
        return float(getattr(self, attack))

    def to_dict(self) -> dict[str, float]:
        """The weights by name.

        Returns
        -------
        dict of str to float
            ``membership``, ``attribute``, ``property``, ``overfitting`` and ``utility``.
        """
        return asdict(self)

    @classmethod
    def from_dict(cls, spec: Mapping[str, Any]) -> ScoreWeights:
        """Weights from a dict of some of them (the others keep their defaults).

        Parameters
        ----------
        spec : mapping of str to object
            Weights by name, a subset of :meth:`to_dict`'s keys.

        Returns
        -------
        ScoreWeights
            The weights.

        Raises
        ------
        InputError
            If ``spec`` names an unknown weight or a weight is invalid.
        """
        unknown = set(spec) - set(cls.__dataclass_fields__)
        if unknown:
            raise InputError(
                f"unknown score weights {sorted(unknown)}; expected {list(asdict(cls()))}"
            )
        return cls(**dict(spec))


def parse_weights(text: str) -> ScoreWeights:
    """``"membership=1,property=0"`` -> :class:`ScoreWeights` (unnamed weights keep defaults)."""
    spec: dict[str, float] = {}
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        name, sep, value = (x.strip() for x in part.partition("="))
        if not sep or not name:
            raise InputError(f"weights: expected NAME=VALUE, got {part!r}")
        if name in spec:
            raise InputError(f"weights: {name!r} is given twice")
        try:
            spec[name] = float(value)
        except ValueError:
            raise InputError(f"weights: {name} must be a number, got {value!r}") from None
    return ScoreWeights.from_dict(spec)


def score_from_dict(spec: Mapping[str, Any]) -> Score:
    """Rebuild a :class:`Score` from its ``to_dict()`` form (JSON round trip)."""
    low, high = spec["ci"]
    return Score(
        attack=float(spec["attack"]),
        baseline=float(spec["baseline"]),
        difference=float(spec["difference"]),
        ci=(float(low), float(high)),
        n=int(spec["n"]),
        confidence=float(spec.get("confidence", 0.95)),
        method=str(spec.get("method", "")),
    )


def _z(confidence: float) -> float:
    return float(stats.norm.ppf(1.0 - (1.0 - confidence) / 2.0))


def _se(score: Score) -> float:
    """Standard error read back from a score's CI (half-width / z)."""
    return (score.ci[1] - score.ci[0]) / 2.0 / _z(score.confidence)


def differential_score(per_seed: Sequence[Score], confidence: float = 0.95) -> Score:
    """``AUC(full) - AUC(without the set)`` per repeat (paired), pooled by ``pool_replicates``."""
    confidence = check_probability(confidence, "confidence")
    if not per_seed:
        raise InputError("differential_score needs at least one repeat, got none")
    if len(per_seed) == 1:
        return per_seed[0]
    pooled = pool_replicates(per_seed, confidence)
    return replace(pooled, method=f"delong-paired, {pooled.method}")


def overall_score(
    attacks: Mapping[str, Score], weights: ScoreWeights
) -> tuple[float, tuple[float, float]]:
    """``sum_k w_k d_k / sum_k w_k`` over the attacks that ran, with CI
    ``+- z sqrt(sum_k (w_k / W)^2 se_k^2)`` (attacks taken as independent).
    """
    weighted = {k: weights.attack_weight(k) for k in attacks if weights.attack_weight(k) > 0}
    if not weighted:
        raise InputError(
            f"weights give no attack a weight > 0 among those that ran ({sorted(attacks)})"
        )
    total = sum(weighted.values())
    value = sum(w * attacks[k].difference for k, w in weighted.items()) / total
    confidence = min(attacks[k].confidence for k in weighted)
    variance = sum((w / total) ** 2 * _se(attacks[k]) ** 2 for k, w in weighted.items())
    half = _z(confidence) * math.sqrt(variance)
    return value, (value - half, value + half)


def modified_score(
    overall: float, overfitting: float, importance: float, weights: ScoreWeights
) -> float:
    """``overall + w_overfitting * overfitting - w_utility * importance``."""
    return overall + weights.overfitting * overfitting - weights.utility * importance


def mean_interval(values: Sequence[float], confidence: float) -> tuple[float, tuple[float, float]]:
    """Mean of per-repeat values with its t-interval; a single value has no spread to read."""
    n = len(values)
    if n == 0:
        raise InputError("mean_interval needs at least one value")
    mean = math.fsum(values) / n
    if n == 1:
        return mean, (mean, mean)
    sd = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1))
    half = float(stats.t.ppf((1 + confidence) / 2, n - 1)) * sd / math.sqrt(n)
    return mean, (mean - half, mean + half)


def modified_interval(
    overall_ci: tuple[float, float],
    overfitting_ci: tuple[float, float],
    importance_ci: tuple[float, float],
    modified: float,
    weights: ScoreWeights,
) -> tuple[float, float]:
    """CI of the modified score: its three terms' half-widths in quadrature (approximate)."""
    halves = [
        (overall_ci[1] - overall_ci[0]) / 2,
        weights.overfitting * (overfitting_ci[1] - overfitting_ci[0]) / 2,
        weights.utility * (importance_ci[1] - importance_ci[0]) / 2,
    ]
    half = math.sqrt(math.fsum(h * h for h in halves))
    return modified - half, modified + half


def score_flags(
    attacks: Mapping[str, Score],
    overall: tuple[float, tuple[float, float]],
    modified: tuple[float, tuple[float, float]],
    threshold: float,
    flag_on: str = "estimate",
    *,
    identifier: bool = False,
) -> dict[str, bool]:
    """Which scores exceed the threshold: each attack, overall, modified, the identifier rule."""
    if flag_on == "estimate":
        flags = {n: s.difference > threshold and s.ci[0] > 0 for n, s in attacks.items()}
        flags["overall"], flags["modified"] = overall[0] > threshold, modified[0] > threshold
    else:
        flags = {name: score.ci[0] > threshold for name, score in attacks.items()}
        flags["overall"], flags["modified"] = overall[1][0] > threshold, modified[1][0] > threshold
    membership = attacks.get("membership")
    flags["identifier"] = bool(identifier and membership is not None and membership.ci[0] > 0)
    return flags


FLAG_REASONS = (*ATTACKS, "identifier", "modified")  # a set is flagged when one of these is


def flag_reason(
    attacks: Mapping[str, Score],
    flags: Mapping[str, bool],
    modified: tuple[float, tuple[float, float]],
    threshold: float,
) -> str:
    """Why a set is flagged, in one line; ``""`` if it is not."""
    if flags.get("identifier"):
        return (
            f"an identifier-like column (most values unique) whose removal changes the membership "
            f"attack: differential {_text(attacks['membership'])}, CI above 0"
        )
    judged = [n for n in ATTACKS if flags.get(n)]
    if judged:
        name = max(judged, key=lambda n: attacks[n].ci[0])
        return f"{name} attack {_text(attacks[name])} over the threshold {threshold:g}"
    if flags.get("modified"):
        value, (low, high) = modified
        return (
            f"modified score {value:+.3f} [{low:+.3f}, {high:+.3f}] over the threshold "
            f"{threshold:g} (attacks, overfitting and utility together)"
        )
    return ""


def evidence(attacks: Mapping[str, Score]) -> float:
    """The strongest evidence of risk: the highest lower CI end among the attacks (NaN if none)."""
    lows = [s.ci[0] for s in attacks.values() if not math.isnan(s.ci[0])]
    return max(lows) if lows else math.nan


def _text(score: Score) -> str:
    return f"{score.difference:+.3f} [{score.ci[0]:+.3f}, {score.ci[1]:+.3f}]"
