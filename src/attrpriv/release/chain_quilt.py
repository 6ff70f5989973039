"""Deprecated: moved to :mod:`attrpriv.release.markov_quilt.chain_calibration`."""

from attrpriv._moved import warn_moved
from attrpriv.release.markov_quilt.chain_calibration import INFLUENCE_METHODS as METHODS
from attrpriv.release.markov_quilt.chain_calibration import (
    ChainCalibration,
    ChainQuilt,
    calibrate_chain,
)

__all__ = ["METHODS", "ChainCalibration", "ChainQuilt", "calibrate_chain"]

warn_moved(__name__, "attrpriv.release.markov_quilt.chain_calibration")
