"""Deprecated: moved to :mod:`attrpriv.release.graph.quilts`."""

from attrpriv._moved import warn_moved
from attrpriv.release.graph.quilts import (
    MAX_CANDIDATES,
    MAX_QUILT_CELLS,
    Quilt,
    best_quilt,
    candidate_quilts,
    check_sensitivity,
    influence_of,
    max_influence,
    max_log_ratio,
    moral_distances,
    quilt_scale,
)

__all__ = [
    "MAX_CANDIDATES",
    "MAX_QUILT_CELLS",
    "Quilt",
    "best_quilt",
    "candidate_quilts",
    "check_sensitivity",
    "influence_of",
    "max_influence",
    "max_log_ratio",
    "moral_distances",
    "quilt_scale",
]

warn_moved(__name__, "attrpriv.release.graph.quilts")
