"""Whole-table DP synthetic data with OpenDP's AIM or MST. See docs/sanitize/synthesize.md."""

from __future__ import annotations

from attrpriv.sanitize.synthesize.mechanism import (
    METHODS,
    DPSynthesizer,
    SynthesisDiagnostics,
    SynthesisPlan,
)

__all__ = ["METHODS", "DPSynthesizer", "SynthesisDiagnostics", "SynthesisPlan"]
