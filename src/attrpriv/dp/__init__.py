"""Differential-privacy plumbing shared by every release: noise, records, budget ledger, audit."""

from attrpriv.dp.audit import AuditResult, audit, audit_samples, clopper_pearson
from attrpriv.dp.ledger import Budget, BudgetLedger, LedgerEntry, LedgerSummary
from attrpriv.dp.noise import (
    NoiseSampler,
    OpenDPNoise,
    SeededNumpyNoise,
    default_sampler,
    require_private,
)
from attrpriv.dp.record import DEFINITIONS, PrivacyRecord, Release

__all__ = [
    "DEFINITIONS",
    "AuditResult",
    "Budget",
    "BudgetLedger",
    "LedgerEntry",
    "LedgerSummary",
    "NoiseSampler",
    "OpenDPNoise",
    "PrivacyRecord",
    "Release",
    "SeededNumpyNoise",
    "audit",
    "audit_samples",
    "clopper_pearson",
    "default_sampler",
    "require_private",
]
