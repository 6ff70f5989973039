"""Is a table the training rows again? The share of rows equal to a training row, against chance.

Reads only that share and the row count, never a protected value.
"""

from __future__ import annotations

import math
from typing import Literal

__all__ = ["Verdict", "overlap_verdict", "standard_error"]

Verdict = Literal["disjoint", "more than chance", "training rows", "cannot tell"]


def standard_error(share: float, n: int) -> float:
    """The binomial standard error of a share over ``n`` rows."""
    return math.sqrt(share * (1.0 - share) / max(n, 1))


def overlap_verdict(share: float, chance: float, n: int) -> Verdict:
    """What ``share`` of ``n`` rows equal to a training row says, against the ``chance`` share.

    One of ``"training rows"``, ``"more than chance"`` (3 standard errors), ``"disjoint"`` or
    ``"cannot tell"``.
    """
    error = standard_error(chance, n)
    limit = (1.0 + chance) / 2.0
    if limit - chance <= 3.0 * error:
        return "cannot tell"
    if share > limit:
        return "training rows"
    if share > chance + 3.0 * error:
        return "more than chance"
    return "disjoint"
