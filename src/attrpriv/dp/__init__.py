"""Differential-privacy plumbing shared by every release: noise, the mechanism contract,
records, privacy units, the budget ledger, accuracy and the empirical audit."""

from attrpriv.dp.accounting import Budget
from attrpriv.dp.accuracy import Accuracy
from attrpriv.dp.audit import AuditResult, audit, audit_samples, clopper_pearson
from attrpriv.dp.ledger import BudgetChange, BudgetLedger, LedgerEntry, LedgerSummary, UnitSpend
from attrpriv.dp.mechanism import Mechanism, NoisePlan, Parameters
from attrpriv.dp.noise import (
    NoiseSampler,
    OpenDPNoise,
    SeededNumpyNoise,
    default_sampler,
    require_private,
)
from attrpriv.dp.record import ANY_LAW, Diagnostics, Guarantee, PrivacyRecord, Release
from attrpriv.dp.units import DEFINITIONS, PrivacyUnit

__all__ = [
    "ANY_LAW",
    "DEFINITIONS",
    "Accuracy",
    "AuditResult",
    "Budget",
    "BudgetChange",
    "BudgetLedger",
    "Diagnostics",
    "Guarantee",
    "LedgerEntry",
    "LedgerSummary",
    "Mechanism",
    "NoisePlan",
    "NoiseSampler",
    "OpenDPNoise",
    "Parameters",
    "PrivacyRecord",
    "PrivacyUnit",
    "Release",
    "SeededNumpyNoise",
    "UnitSpend",
    "audit",
    "audit_samples",
    "clopper_pearson",
    "default_sampler",
    "require_private",
]
