"""Tabular-DDP: survey histograms under dependent differential privacy, in tiers whose
guarantees are proved for stated classes of laws (``modules``: independent modules; ``model``:
a public Markov tree). ``mechanism`` keeps the earlier calibration as a comparison only."""

from attrpriv.release.ddp.answers import SurveyFacts, TierDiagnostics
from attrpriv.release.ddp.dependence import ExpectedError, discrete_laplace_mae
from attrpriv.release.ddp.empirical import EmpiricalLoss, empirical_loss, histogram_codes
from attrpriv.release.ddp.model import ModelDDP, ModelDiagnostics, read_model
from attrpriv.release.ddp.modules import ModularDDP, ModuleDiagnostics, Modules
from attrpriv.release.ddp.tree import TreeModel, learn_tree

__all__ = [
    "EmpiricalLoss",
    "ExpectedError",
    "ModelDDP",
    "ModelDiagnostics",
    "ModularDDP",
    "ModuleDiagnostics",
    "Modules",
    "SurveyFacts",
    "TierDiagnostics",
    "TreeModel",
    "discrete_laplace_mae",
    "empirical_loss",
    "histogram_codes",
    "learn_tree",
    "read_model",
]
