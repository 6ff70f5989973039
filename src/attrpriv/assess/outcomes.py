"""Grid task results that outlive a worker (apart from the grid, to avoid an import cycle)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from attrpriv.assess.inference import AttributeInferenceResult
from attrpriv.assess.membership import MembershipResult
from attrpriv.stats import Score

__all__ = ["ModelOutcome", "TaskFailure"]


@dataclass(frozen=True, eq=False)
class ModelOutcome:
    """A retrained model's utility (on the attacked records) and membership attack."""

    utility_train: float
    utility_test: float
    membership: MembershipResult | None
    model: Any = None
    differential: Score | None = None
    sensitive: dict[str, AttributeInferenceResult] = field(default_factory=dict)

    @property
    def gap(self) -> float:
        return self.utility_train - self.utility_test


@dataclass(frozen=True)
class TaskFailure:
    """A grid task that raised: what it was and the first line of why (values hidden)."""

    kind: str
    repeat: int
    features: tuple[str, ...]
    reason: str
