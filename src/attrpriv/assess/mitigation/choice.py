"""How the mitigation loop compares candidates: the risk left over the threshold, per utility lost.

Small pure functions on :class:`~attrpriv.assess.report.RiskReport` objects; the loop itself is
:meth:`~attrpriv.assess.FeatureRiskAssessor.mitigate`. See docs/assess/mitigation.md.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from attrpriv.assess.choices import ATTACKS

if TYPE_CHECKING:
    from attrpriv.assess.report import FeatureSetRisk, RiskReport

CHOICES = ("ladder", "best")
"""How :meth:`mitigate` picks the next step: the riskiest set's next rung, or the candidate that
removes the most risk per utility lost."""

MIN_COST = 1e-3
"""The least utility cost a candidate is charged with in the ratio (a free step is not infinite)."""

MIN_REDUCTION = 1e-3
"""The least fall of the total excess that counts as one: a change in the fourth decimal is the
attacks' rounding (the same model on renamed columns), not a fix."""


def excess(risk: FeatureSetRisk, threshold: float, flag_on: str = "estimate") -> float:
    """How far the scores that flag a set lie over their threshold (0 when it is not flagged).

    The largest of: each flagging attack's difference (``flag_on="estimate"``) or CI lower end
    (``"lower"``) minus ``threshold``; the modified score (or its CI lower end) minus
    ``threshold``; and, for an identifier-like set, the membership differential's CI lower end
    (its threshold is 0).
    """
    flags, over = risk.flags, [0.0]
    for name in ATTACKS:
        score = risk.attacks.get(name)
        if flags.get(name) and score is not None:
            value = score.difference if flag_on == "estimate" else score.ci[0]
            over.append(value - threshold)
    if flags.get("modified"):
        value = risk.modified if flag_on == "estimate" else risk.modified_ci[0]
        over.append(value - threshold)
    membership = risk.attacks.get("membership")
    if flags.get("identifier") and membership is not None:
        over.append(membership.ci[0])
    return max(v for v in over if not math.isnan(v))


def total_excess(
    report: RiskReport,
    threshold: float,
    flag_on: str,
    sets: Iterable[tuple[str, ...]] | None = None,
) -> float:
    """The sum of :func:`excess` over ``report``'s sets (or those of ``sets`` it holds)."""
    wanted = None if sets is None else set(sets)
    return math.fsum(
        excess(r, threshold, flag_on)
        for r in report.feature_sets
        if wanted is None or r.features in wanted
    )


@dataclass(frozen=True)
class Candidate:
    """One probed step: the ``strategy`` on ``feature_set`` (None: the model), the excess over the
    threshold it removed from the flagged sets (``risk_reduction``), the test utility it costs
    beyond what was already paid (``utility_cost``), its total ``utility_paid``, and the
    ``verdict`` (``"chosen"``, or why not)."""

    feature_set: tuple[str, ...] | None
    strategy: str
    risk_reduction: float
    utility_cost: float
    utility_paid: float
    verdict: str = ""

    @property
    def ratio(self) -> float:
        """Risk removed per utility lost (the cost floored at :data:`MIN_COST`)."""
        return self.risk_reduction / max(self.utility_cost, MIN_COST)

    def label(self) -> str:
        """``strategy on a,b`` (or ``on the model``)."""
        where = "the model" if self.feature_set is None else ",".join(self.feature_set)
        return f"{self.strategy} on {where}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "feature_set": None if self.feature_set is None else list(self.feature_set),
            "strategy": self.strategy,
            "risk_reduction": self.risk_reduction,
            "utility_cost": self.utility_cost,
            "utility_paid": self.utility_paid,
            "verdict": self.verdict,
        }

    @classmethod
    def from_dict(cls, spec: dict[str, Any]) -> Candidate:
        where = spec["feature_set"]
        return cls(
            None if where is None else tuple(where),
            str(spec["strategy"]),
            float(spec["risk_reduction"]),
            float(spec["utility_cost"]),
            float(spec["utility_paid"]),
            str(spec.get("verdict", "")),
        )


def admissible(candidate: Candidate, max_utility_loss: float | None) -> str:
    """Why ``candidate`` cannot be taken (``""``: it can): it removes no risk, or it pays more
    test utility in all than ``max_utility_loss``."""
    if not candidate.risk_reduction >= MIN_REDUCTION:
        return f"removes no risk ({candidate.risk_reduction:+.4f})"
    if max_utility_loss is not None and candidate.utility_paid > max_utility_loss:
        return (
            f"would pay {candidate.utility_paid:.4f} of test utility in all, over the budget "
            f"{max_utility_loss:g}"
        )
    return ""


def ranked(candidates: Iterable[Candidate]) -> list[Candidate]:
    """Most risk removed per utility lost first; ties: the cheaper, then the order given."""
    return sorted(candidates, key=lambda c: (-c.ratio, c.utility_cost))
