"""release: statistics published under formal guarantees (DP, attribute privacy, Pufferfish)."""

from attrpriv.release.histogram import NEIGHBOURS, LaplaceHistograms

__all__ = ["NEIGHBOURS", "LaplaceHistograms"]
