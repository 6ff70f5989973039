"""Deprecated: moved to :mod:`attrpriv.release.ddp.dependence`."""

from attrpriv._moved import warn_moved
from attrpriv.release.ddp.dependence import (
    METHODS,
    SUBSTITUTION_SENSITIVITY,
    ChunkNoise,
    ExpectedError,
    PairwiseDependence,
    calibrate,
    chunk_noise,
    dependent_sensitivity,
    discrete_laplace_mae,
    pairwise_dependence,
)

__all__ = [
    "METHODS",
    "SUBSTITUTION_SENSITIVITY",
    "ChunkNoise",
    "ExpectedError",
    "PairwiseDependence",
    "calibrate",
    "chunk_noise",
    "dependent_sensitivity",
    "discrete_laplace_mae",
    "pairwise_dependence",
]

warn_moved(__name__, "attrpriv.release.ddp.dependence")
