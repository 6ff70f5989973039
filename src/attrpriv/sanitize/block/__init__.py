"""Block resampling for tables: a sensitive column and its proxies redrawn from DP counts.

See docs/sanitize/block.md.
"""

from __future__ import annotations

from attrpriv.sanitize.block.mechanism import (
    BlockDiagnostics,
    BlockFacts,
    BlockPlan,
    BlockResampler,
    association,
)

__all__ = ["BlockDiagnostics", "BlockFacts", "BlockPlan", "BlockResampler", "association"]
