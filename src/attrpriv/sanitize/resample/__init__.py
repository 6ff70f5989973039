"""Proxy resampling for tables: the sensitive column from its DP marginal (given the released
columns), its proxies copied from public auxiliary rows with the same drawn value and task level
(donors), or drawn from models learned on them (issue 12, item 3; docs/sanitize/resample.md).

- :class:`ProxyResampler` -- the mechanism (``fit`` on auxiliary rows, ``release`` on private).
- :class:`ResampledRelease` -- what a release returns: the table, its record and accuracy.
- :func:`rank_proxies_greedy` -- the greedy proxy ranking ``proxies="auto"`` uses, on its own
  (:func:`attrpriv.sanitize.baselines.rank_proxies` ranks each column alone instead).
"""

from __future__ import annotations

from attrpriv.sanitize.resample.mechanism import (
    CONDITIONALS,
    ProxyResampler,
    ResampledRelease,
    ResamplePlan,
    marginal,
)
from attrpriv.sanitize.resample.ranking import rank_proxies_greedy

__all__ = [
    "CONDITIONALS",
    "ProxyResampler",
    "ResamplePlan",
    "ResampledRelease",
    "marginal",
    "rank_proxies_greedy",
]
