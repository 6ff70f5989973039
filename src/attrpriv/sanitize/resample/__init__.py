"""Proxy resampling for tables: the sensitive column from its DP marginal, proxies redrawn.

See docs/sanitize/resample.md.
"""

from __future__ import annotations

from attrpriv.sanitize.resample.mechanism import (
    CONDITIONALS,
    ProxyResampler,
    ResampleDiagnostics,
    ResamplePlan,
    marginal,
)
from attrpriv.sanitize.resample.ranking import rank_proxies_greedy

__all__ = [
    "CONDITIONALS",
    "ProxyResampler",
    "ResampleDiagnostics",
    "ResamplePlan",
    "marginal",
    "rank_proxies_greedy",
]
