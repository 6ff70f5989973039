"""Is a table the training rows again? A statistical margin over natural duplicates.

A coarse table has natural duplicates: different people with the same values on every column.
So "this row equals a training row" cannot say "this row is a training row". What can be
judged is the share of a table's rows that equal a training row, against the share *chance*
gives: the share of the training rows that equal another training row (a fresh row of the same
population equals one about as often). The verdict reads only that share and the number of
rows, never a protected value.
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
    """What the share of a table's rows that equal a training row says.

    Parameters
    ----------
    share : float
        The share of the table's ``n`` rows that equal a training row.
    chance : float
        The share chance gives: that of the training rows equal to another training row.
    n : int
        The table's rows.

    Returns
    -------
    str
        ``"cannot tell"`` when the refusal limit, halfway from chance to every row, is not 3
        standard errors above chance (columns with few values); ``"training rows"`` when the
        share is over that limit; ``"more than chance"`` when it is 3 standard errors above
        chance but under the limit; ``"disjoint"`` otherwise (what natural duplicates give).
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
