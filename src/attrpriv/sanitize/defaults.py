"""The global decoupler's default training settings, shared by Python and the command line.

Tuned values, not the paper's (which collapse z_S on tables); see docs/sanitize/decoupler.md.
No torch here, so the CLI's help stays fast.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "ALPHAS",
    "BOUND_QUANTILE",
    "COLLAPSE_TOLERANCE",
    "KINDS",
    "KIND_DEFAULTS",
    "LOSSES",
    "MIN_BATCH",
    "MIN_BATCHES_PER_EPOCH",
    "MIN_SPLIT_ROWS",
    "ON_COLLAPSE",
    "PAPER_ALPHAS",
    "PATIENCE",
    "RETUNE_EPOCHS",
    "RETUNE_GRID",
    "VALIDATION_SHARE",
]

KINDS: Final = ("tabular", "image")
ALPHAS: Final = (1.0, 10.0, 100.0, 1.0)
"""alpha1..alpha4 of equation 5 (reconstruction, aligner, distance correlation, adversary)."""
PAPER_ALPHAS: Final = (1.0, 1.0, 100.0, 1.0)
KIND_DEFAULTS: Final[dict[str, dict[str, float | int]]] = {
    "tabular": {"epochs": 15, "beta": 0.5, "lr": 3e-3, "batch_size": 128, "hidden": 64},
    "image": {"epochs": 30, "beta": 1.0, "lr": 1e-3, "batch_size": 64, "hidden": 128},
}
"""Per data kind: training epochs, beta of the beta-VAE, Adam's learning rate, batch size and
the hidden width of the networks."""
MIN_BATCHES_PER_EPOCH: Final = 16
"""A default batch size is cut so that an epoch has at least this many Adam steps: on a few
hundred rows the kind's batch gave two or three, and early stopping ended training before the
decoder had learned even the columns' frequencies (German credit, 320 training rows)."""
MIN_BATCH: Final = 16
"""The smallest batch that cut gives (a batch size given by the user is kept as it is)."""
LOSSES: Final = ("reconstruction", "aligner", "dcorr", "adversary")
"""The per-epoch losses that progress lines and the CLI show."""

VALIDATION_SHARE: Final = 0.2
"""Share of the auxiliary rows ``fit`` holds out (seeded) for early stopping, the collapse check
and the fidelity table; 0 trains on every row and checks nothing."""
MIN_SPLIT_ROWS: Final = 50
"""Below this many auxiliary rows there is no validation split (too few to judge anything)."""
PATIENCE: Final = 3
"""Early stopping: epochs without a better validation objective before training stops (the
best epoch's weights are restored); ``epochs`` is the maximum."""
COLLAPSE_TOLERANCE: Final = 0.98
"""z_S has collapsed when the aligner's validation log-loss is at least this share of the
prior's (the cross-entropy of the training class frequencies)."""
ON_COLLAPSE: Final = ("retune", "raise", "warn")
"""What ``fit`` does about a collapsed z_S: search :data:`RETUNE_GRID`, refuse, or warn."""
RETUNE_EPOCHS: Final = 8
"""Epochs (at most: early stopping applies) of each retuning candidate; the winner is then
trained with the decoupler's own ``epochs``."""
RETUNE_GRID: Final[tuple[tuple[float, tuple[float, float, float, float]], ...]] = (
    (0.1, (1.0, 100.0, 100.0, 1.0)),
    (0.02, (1.0, 100.0, 100.0, 1.0)),
    (0.1, (1.0, 30.0, 100.0, 1.0)),
    (0.5, (1.0, 100.0, 100.0, 1.0)),
    (0.1, (1.0, 100.0, 10.0, 1.0)),
)
"""(beta, alphas) tried, on the auxiliary data only, when z_S collapses: smaller beta (KL
prices sensitive information out of z_S less) and larger alpha2 (the aligner pulls it back)."""
BOUND_QUANTILE: Final = 0.95
"""The latent bound learned at ``fit``: this quantile of |z_S| (per dimension; the box is their
largest) and of ||z_S||_2 over the auxiliary rows."""
