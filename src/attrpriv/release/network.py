"""Deprecated: moved to :mod:`attrpriv.release.graph.network`."""

from attrpriv._moved import warn_moved
from attrpriv.release.graph.network import MAX_INFERENCE_CELLS as MAX_CELLS
from attrpriv.release.graph.network import DiscreteNetwork

__all__ = ["MAX_CELLS", "DiscreteNetwork"]

warn_moved(__name__, "attrpriv.release.graph.network")
