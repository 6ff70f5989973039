"""Deprecated: moved to :mod:`attrpriv.release.gaussian.resampling`."""

from attrpriv._moved import warn_moved
from attrpriv.release.gaussian.resampling import ResamplingModel

__all__ = ["ResamplingModel"]

warn_moved(__name__, "attrpriv.release.gaussian.resampling")
