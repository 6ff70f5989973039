"""One category per row, drawn from unnormalised log probabilities (logits)."""

from __future__ import annotations

import numpy as np


def draw_categories(log_p: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One draw per row of ``log_p`` (shape ``(n, k)``, unnormalised log probabilities): the
    index of the category, as int64."""
    p = np.exp(log_p - log_p.max(axis=1, keepdims=True))
    cumulative = np.cumsum(p, axis=1)
    u = rng.random(len(p)) * cumulative[:, -1]
    drawn: np.ndarray = np.minimum((cumulative < u[:, None]).sum(axis=1), p.shape[1] - 1)
    return drawn.astype(np.int64)


__all__ = ["draw_categories"]
