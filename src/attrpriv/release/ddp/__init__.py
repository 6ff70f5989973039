"""Tabular-DDP: survey histograms under dependent differential privacy."""

from attrpriv.release.ddp.dependence import ExpectedError, discrete_laplace_mae
from attrpriv.release.ddp.empirical import EmpiricalLoss, empirical_loss, histogram_codes
from attrpriv.release.ddp.mechanism import TabularDDP
from attrpriv.release.ddp.modules import ModularDDP

__all__ = [
    "EmpiricalLoss",
    "ExpectedError",
    "ModularDDP",
    "TabularDDP",
    "discrete_laplace_mae",
    "empirical_loss",
    "histogram_codes",
]
