"""Block resampling for tables: a sensitive column and its proxies redrawn from DP counts.

See docs/sanitize/block.md.
"""

from __future__ import annotations

from attrpriv.sanitize.block.mechanism import (
    Association,
    BlockDiagnostics,
    BlockFacts,
    BlockPlan,
    BlockResampler,
    association,
)

__all__ = [
    "Association",
    "BlockDiagnostics",
    "BlockFacts",
    "BlockPlan",
    "BlockResampler",
    "association",
]
