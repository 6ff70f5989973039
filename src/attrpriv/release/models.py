"""Deprecated: moved to :mod:`attrpriv.release.gaussian.theta`."""

from attrpriv._moved import warn_moved
from attrpriv.release.gaussian.theta import Conditional, GaussianModel, ThetaModel

__all__ = ["Conditional", "GaussianModel", "ThetaModel"]

warn_moved(__name__, "attrpriv.release.gaussian.theta")
