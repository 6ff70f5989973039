"""Deprecated: moved to :mod:`attrpriv.stats`."""

from attrpriv._moved import warn_moved
from attrpriv.stats import (
    Score,
    binomial_ci,
    bootstrap_difference,
    pool_scores,
    rate_difference,
    rate_vs_chance,
    wilson_ci,
)

__all__ = [
    "Score",
    "binomial_ci",
    "bootstrap_difference",
    "pool_scores",
    "rate_difference",
    "rate_vs_chance",
    "wilson_ci",
]

warn_moved(__name__, "attrpriv.stats")
