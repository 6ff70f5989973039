"""The choices of the assessment's options; light to import (the CLI's help reads them)."""

from __future__ import annotations

__all__ = [
    "ATTACKS",
    "BACKENDS",
    "FLAG_ON",
    "MEMBERSHIP_ATTACKS",
    "MODEL_CHOICES",
    "OFFLINE_ATTACKS",
    "REFERENCE_ATTACKS",
    "STRATEGY_FORMS",
]

MODEL_CHOICES = ("logreg", "rf", "hgb", "mlp")  # the built-in models (assess.models)
BACKENDS = ("sequential", "joblib", "dask")  # how the grid of tasks runs (assess.parallel)
ATTACKS = ("membership", "attribute", "property")  # the attacks a risk score is made of
FLAG_ON = ("estimate", "lower")  # what a flag compares with the threshold (assess.scoring)
REFERENCE_ATTACKS = ("rmia", "rmia-online", "lira")  # membership with reference models
OFFLINE_ATTACKS = ("rmia", "lira")  # references never trained on a candidate
MEMBERSHIP_ATTACKS = (*REFERENCE_ATTACKS, "loss", "shadow")
STRATEGY_FORMS = (
    "'drop', 'generalize[:BINS[:quantile|tree]]', 'ldp:EPSILON[:bins:K]', 'synthetic', "
    "'encrypt', 'regularize[:KEY=VALUE[:KEY=VALUE...]]'"
)
