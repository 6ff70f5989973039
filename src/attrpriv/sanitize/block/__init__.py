"""Block resampling for tables: the sensitive column and its proxies redrawn from DP counts of
the private rows, with no public rows needed (docs/sanitize/block.md).

- :class:`BlockResampler` -- the mechanism (``fit`` on the schema, ``release`` on private rows).
- :func:`association` -- the noisy association ``proxies="auto"`` picks proxies by.
"""

from __future__ import annotations

from attrpriv.sanitize.block.mechanism import BlockPlan, BlockResampler, association

__all__ = ["BlockPlan", "BlockResampler", "association"]
