"""From the grid's outcomes to the report's parts: pooled scores, ranked feature sets."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from attrpriv.assess._grid import GridData, Task, identifier_like, make_split
from attrpriv.assess.membership import tpr_interval
from attrpriv.assess.outcomes import ModelOutcome, TaskFailure
from attrpriv.assess.report import (
    ExposedRecord,
    FeatureSetRisk,
    MembershipSummary,
    ModelSummary,
    ProxyRisk,
    RocCurve,
    SensitiveRisk,
)
from attrpriv.assess.scoring import (
    ScoreWeights,
    differential_score,
    evidence,
    flag_reason,
    mean_interval,
    modified_interval,
    modified_score,
    overall_score,
    score_flags,
)
from attrpriv.stats import Score, pool_replicates, rate_difference

__all__ = [
    "Outcomes",
    "exposed_records",
    "model_summary",
    "rank",
    "sensitive_risk",
    "set_risk",
    "summarize_membership",
]


def _pool(scores: Sequence[Score], confidence: float) -> Score:
    return scores[0] if len(scores) == 1 else pool_replicates(scores, confidence)


def summarize_membership(
    outcomes: Sequence[ModelOutcome], confidence: float
) -> MembershipSummary | None:
    """One model's membership attack over the repeats: pooled score, mean metrics, first ROC."""
    results = [o.membership for o in outcomes if o.membership is not None]
    if not results:
        return None
    return MembershipSummary(
        score=_pool([r.score for r in results], confidence),
        auc=float(np.mean([r.auc for r in results])),
        advantage=float(np.mean([r.advantage for r in results])),
        tpr_at_1pct_fpr=float(np.mean([r.tpr_at_1pct_fpr for r in results])),
        tpr_at_01pct_fpr=float(np.mean([r.tpr_at_01pct_fpr for r in results])),
        roc=RocCurve.from_arrays(results[0].fpr, results[0].tpr),
    )


def _mean(outcomes: Sequence[ModelOutcome], attribute: str) -> float:
    return float(np.mean([getattr(o, attribute) for o in outcomes]))


@dataclass(frozen=True, eq=False)
class Outcomes:
    """The grid's results, grouped by (kind, features) in repeat order."""

    full: list[ModelOutcome]
    grouped: dict[tuple[str, tuple[str, ...]], list[tuple[int, Any]]]
    failures: tuple[TaskFailure, ...] = ()

    @classmethod
    def collect(
        cls, full: list[ModelOutcome], tasks: Sequence[Task], results: Sequence[Any]
    ) -> Outcomes:
        """Group the results by (kind, features) as (repeat, result); failures apart."""
        grouped: dict[tuple[str, tuple[str, ...]], list[tuple[int, Any]]] = {}
        failures = []
        for task, result in zip(tasks, results, strict=True):
            grouped.setdefault((task.kind, task.features), [])
            if isinstance(result, TaskFailure):
                failures.append(result)
            else:
                grouped[(task.kind, task.features)].append((task.repeat, result))
        return cls(full, grouped, tuple(failures))

    def results(self, kind: str, features: tuple[str, ...]) -> list[Any]:
        """The successful results of one (kind, features), in repeat order."""
        return [result for _, result in self.grouped.get((kind, features), [])]

    def pairs(
        self, features: tuple[str, ...], skip: range = range(0)
    ) -> list[tuple[ModelOutcome, ModelOutcome]]:
        """(full, without ``features``) per successful repeat, but those in ``skip``."""
        found = self.grouped.get(("without", features), [])
        return [(self.full[r], w) for r, w in found if r not in skip]

    def notes(self) -> tuple[str, ...]:
        """One line per (kind, features) with failed repeats: how many, and the first reason."""
        by_part: dict[tuple[str, tuple[str, ...]], list[TaskFailure]] = {}
        for failure in self.failures:
            by_part.setdefault((failure.kind, failure.features), []).append(failure)
        lines = []
        for (kind, features), failed in by_part.items():
            total = len(failed) + len(self.grouped.get((kind, features), []))
            what = {"without": "retraining without", "attribute": "attribute inference of",
                    "property": "property inference of"}[kind]  # fmt: skip
            kept = "its scores use the others" if total > len(failed) else "it has no score"
            lines.append(
                f"{what} {'+'.join(features)} failed in {len(failed)} of {total} repeats "
                f"({failed[0].reason}); {kept}"
            )
        return tuple(lines)


def set_risk(
    group: tuple[str, ...],
    outcomes: Outcomes,
    data: GridData,
    weights: ScoreWeights,
    threshold: float,
    flag_on: str = "estimate",
    membership_only: range = range(0),
) -> FeatureSetRisk:
    """Every score of one feature set; NaN (never flagged) when no attack applies."""
    every = [w for _, w in outcomes.pairs(group)]
    pairs = outcomes.pairs(group, membership_only)
    without = [w for _, w in pairs]
    attacks: dict[str, Score] = {}
    paired = [o.differential for o in every if o.differential is not None]
    if paired:
        attacks["membership"] = differential_score(paired, data.confidence)
    per_feature: dict[str, dict[str, Score]] = {f: {} for f in group}
    for kind in ("attribute", "property"):
        for f in group:
            scores = outcomes.results(kind, (f,))
            if scores:
                per_feature[f][kind] = _pool(scores, data.confidence)
        present = [per_feature[f][kind] for f in group if kind in per_feature[f]]
        if present:
            attacks[kind] = max(present, key=lambda s: s.difference)
    nan = math.nan
    overall, overall_ci = overall_score(attacks, weights) if attacks else (nan, (nan, nan))
    overfitting, overfitting_ci = _paired(pairs, "gap", data.confidence)
    importance, importance_ci = _paired(pairs, "utility_test", data.confidence)
    modified = modified_score(overall, overfitting, importance, weights)
    modified_ci = modified_interval(overall_ci, overfitting_ci, importance_ci, modified, weights)
    flags = score_flags(
        attacks,
        (overall, overall_ci),
        (modified, modified_ci),
        threshold,
        flag_on,
        identifier=bool(identifier_like(data.X, group)),
    )
    return FeatureSetRisk(
        features=group,
        attacks=attacks,
        overall=overall,
        overall_ci=overall_ci,
        modified=modified,
        overfitting=overfitting,
        importance=importance,
        utility_without=_mean(without, "utility_test") if without else math.nan,
        modified_ci=modified_ci,
        overfitting_ci=overfitting_ci,
        importance_ci=importance_ci,
        flags=flags,
        rank=0,
        membership_without=summarize_membership(every, data.confidence),
        per_feature=per_feature,
        why=flag_reason(attacks, flags, (modified, modified_ci), threshold),
    )


def _paired(
    pairs: Sequence[tuple[ModelOutcome, ModelOutcome]], attribute: str, confidence: float
) -> tuple[float, tuple[float, float]]:
    """Per-repeat full-minus-without differences: mean and t-interval (NaN if none)."""
    if not pairs:
        return math.nan, (math.nan, math.nan)
    return mean_interval(
        [getattr(f, attribute) - getattr(w, attribute) for f, w in pairs], confidence
    )


def sensitive_risk(
    attribute: str,
    model_input: bool,
    sets: Sequence[tuple[str, ...]],
    outcomes: Outcomes,
    confidence: float,
    threshold: float,
    flag_on: str = "estimate",
    skip: range = range(0),
) -> SensitiveRisk:
    """What the models reveal of a sensitive attribute, and its proxies, pooled over repeats."""
    full = [o.sensitive[attribute] for r, o in enumerate(outcomes.full) if r not in skip]
    proxies = []
    for group in sets:
        pairs = outcomes.pairs(group, skip)
        if not pairs or attribute in group:
            continue
        drops = [
            rate_difference(f.sensitive[attribute].hits, w.sensitive[attribute].hits, confidence)
            for f, w in pairs
        ]
        gains = [w.sensitive[attribute].score for _, w in pairs]
        drop = _pool(drops, confidence)
        flagged = score_flags({"drop": drop}, (0, (0, 0)), (0, (0, 0)), threshold, flag_on)["drop"]
        proxies.append(ProxyRisk(group, drop, _pool(gains, confidence), flagged))
    proxies.sort(key=lambda p: (-p.drop.difference, p.label))
    return SensitiveRisk(
        attribute=attribute,
        model_input=model_input,
        metric=full[0].metric,
        gain=_pool([r.score for r in full], confidence),
        proxies=tuple(proxies),
    )


def rank(risks: Sequence[FeatureSetRisk]) -> tuple[FeatureSetRisk, ...]:
    """Flagged first, then by strongest evidence, modified score, label; NaN last; ranks 1..n."""

    def key(r: FeatureSetRisk) -> tuple[bool, bool, float, float, str]:
        strongest = evidence(r.attacks)
        return (
            not r.flagged,
            math.isnan(strongest),
            -np.nan_to_num(strongest),
            -np.nan_to_num(r.modified),
            r.label,
        )

    ordered = sorted(risks, key=key)
    return tuple(replace(r, rank=i) for i, r in enumerate(ordered, start=1))


MAX_EXPOSED = 100  # exposed records a report keeps


def exposed_records(
    full: Sequence[ModelOutcome], data: GridData, skip: range = range(0)
) -> tuple[ExposedRecord, ...]:
    """The :data:`MAX_EXPOSED` rows the full model's attack singles out most."""
    rates: dict[int, list[float]] = {}
    for repeat, outcome in enumerate(full):
        result = outcome.membership
        if result is None or repeat in skip:
            continue
        members = make_split(data, repeat).members[0].index.to_numpy()
        outside = np.sort(result.scores[result.labels == 0])
        inside = result.scores[result.labels == 1]
        above = outside.size - np.searchsorted(outside, inside, side="left")
        for row, rate in zip(members.tolist(), (above / outside.size).tolist(), strict=True):
            rates.setdefault(int(row), []).append(float(rate))
    ranked = sorted((float(np.mean(v)), -len(v), row) for row, v in rates.items())
    return tuple(ExposedRecord(row, -n, fpr) for fpr, n, row in ranked[:MAX_EXPOSED])


def model_summary(
    every: Sequence[ModelOutcome], data: GridData, skip: range = range(0)
) -> ModelSummary:
    """The full model: mean metrics, membership attack, most exposed rows (repeats but ``skip``)."""
    full = [o for r, o in enumerate(every) if r not in skip]
    membership = summarize_membership(full, data.confidence)
    if membership is not None:
        results = [o.membership for o in full if o.membership is not None]
        intervals = []
        for target in (0.01, 0.001):
            pooled = _pool(
                [tpr_interval(r, target, confidence=data.confidence, seed=data.seed + i)
                 for i, r in enumerate(results)],
                data.confidence,
            )  # fmt: skip
            intervals.append((max(pooled.ci[0] + target, 0.0), min(pooled.ci[1] + target, 1.0)))
        membership = replace(
            membership,
            exposed=exposed_records(every, data, skip),
            tpr_at_1pct_fpr_ci=intervals[0],
            tpr_at_01pct_fpr_ci=intervals[1],
        )
    return ModelSummary(
        metric="accuracy" if data.classification else "r2",
        utility_train=_mean(full, "utility_train"),
        utility_test=_mean(full, "utility_test"),
        membership=membership,
    )
