"""Deprecated: moved to :mod:`attrpriv.release.graph.learning`."""

from attrpriv._moved import warn_moved
from attrpriv.release.graph.learning import (
    EXACT_MAX_COLUMNS,
    STRUCTURES,
    Levels,
    column_levels,
    count_levels,
    encode,
    learn_network,
    learning_rows,
    levels_for,
)

__all__ = [
    "EXACT_MAX_COLUMNS",
    "STRUCTURES",
    "Levels",
    "column_levels",
    "count_levels",
    "encode",
    "learn_network",
    "learning_rows",
    "levels_for",
]

warn_moved(__name__, "attrpriv.release.graph.learning")
