"""Tabular-DDP: survey histograms under dependent differential privacy."""

from attrpriv.release.ddp.mechanism import TabularDDP

__all__ = ["TabularDDP"]
