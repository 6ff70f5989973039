"""Sanitize: decouple sensitive from non-sensitive latents, then replace the sensitive ones.

``GlobalDecoupler`` and ``Sanitizer`` need torch (the ``sanitize`` extra); they are imported
lazily so that the samplers and evaluation work, and ``attrpriv`` imports, without it.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_LAZY = {
    "GlobalDecoupler": "attrpriv.sanitize.decoupler",
    "Sanitizer": "attrpriv.sanitize.sanitizer",
    "SanitizedData": "attrpriv.sanitize.sanitizer",
    "thickness_labels": "attrpriv.sanitize.images",
    "mnist_images": "attrpriv.sanitize.images",
    "sweep": "attrpriv.sanitize.tradeoff",
    "sweep_images": "attrpriv.sanitize.tradeoff",
    "BlockResampler": "attrpriv.sanitize.block",
    "DPSynthesizer": "attrpriv.sanitize.synthesize",
    "InputNoise": "attrpriv.sanitize.baselines",
    "LatentInterpolation": "attrpriv.sanitize.baselines",
    "ProxyResampler": "attrpriv.sanitize.resample",
    "SanitizedTable": "attrpriv.sanitize.table",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    """Import torch-backed classes on first use."""
    if name not in _LAZY:
        raise AttributeError(f"module 'attrpriv.sanitize' has no attribute {name!r}")
    return getattr(import_module(_LAZY[name]), name)
