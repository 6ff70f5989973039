"""The global decoupler's default training settings, shared by Python and the command line.

One table, read by :class:`~attrpriv.sanitize.decoupler.GlobalDecoupler` (a setting left at
``None`` takes its data kind's value here when ``fit`` runs) and by ``attrpriv sanitize fit``
(its help shows these numbers). No torch here, so the CLI's help stays fast.

The values are the tuned ones of ``benchmarks/decoupler.py`` (docs/sanitize/decoupler.md), not
the paper's (beta 5, alphas 1, 1, 100, 1, hidden 128, lr 1e-3): on Adult the paper's settings
collapse ``z_S`` to the prior (a probe on it scores the majority share), because a table's
reconstruction term (~14 nats a row against 200+ for an image) makes beta = 5 price the
sensitive information out of ``z_S``; alpha2 = 10 makes the aligner pull it back in.
"""

from __future__ import annotations

from typing import Final

__all__ = ["ALPHAS", "KINDS", "KIND_DEFAULTS", "LOSSES", "PAPER_ALPHAS"]

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
LOSSES: Final = ("reconstruction", "aligner", "dcorr", "adversary")
"""The per-epoch losses that progress lines and the CLI show."""
