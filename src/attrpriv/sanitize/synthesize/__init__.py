"""Whole-table DP synthetic data: OpenDP's AIM or MST on the private rows, every column private
(docs/sanitize/synthesize.md).

- :class:`DPSynthesizer` -- the mechanism (``fit`` on the schema, ``release`` on private rows).
- :class:`SynthesizedRelease` -- what a release returns: the synthetic table and its record.
"""

from __future__ import annotations

from attrpriv.sanitize.synthesize.mechanism import (
    METHODS,
    DPSynthesizer,
    SynthesisPlan,
    SynthesizedRelease,
)

__all__ = ["METHODS", "DPSynthesizer", "SynthesisPlan", "SynthesizedRelease"]
