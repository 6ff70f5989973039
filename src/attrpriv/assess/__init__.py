"""assess: which features of a model leak, measured by attacks with baselines and CIs.

Membership (:class:`ReferenceAttack`, :func:`loss_threshold_attack`, :class:`ShadowModelAttack`),
attribute (:func:`attribute_inference`) and property (:func:`property_inference`) inference;
:class:`FeatureRiskAssessor` runs the whole audit. See docs/assess/attacks.md.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from attrpriv.assess.choices import MODEL_CHOICES

if TYPE_CHECKING:
    from attrpriv.assess.assessor import FeatureRiskAssessor
    from attrpriv.assess.data import AssessmentData, load_task
    from attrpriv.assess.inference import AttributeInferenceResult, attribute_inference
    from attrpriv.assess.membership import (
        MembershipResult,
        ShadowModelAttack,
        auc_difference,
        loss_threshold_attack,
        overfitting_gap,
    )
    from attrpriv.assess.models import fit_without, load_model, make_model, save_model
    from attrpriv.assess.property import PropertyInferenceResult, property_inference
    from attrpriv.assess.reference import ReferenceAttack
    from attrpriv.assess.report import RiskReport
    from attrpriv.assess.scoring import ScoreWeights
    from attrpriv.stats import Score, binomial_ci, pool_scores, rate_difference

# Where each name lives; imported on first use, so that the light modules of the package (its
# option choices) load without scikit-learn.
_HOMES = {
    "FeatureRiskAssessor": "attrpriv.assess.assessor",
    "AssessmentData": "attrpriv.assess.data",
    "load_task": "attrpriv.assess.data",
    "AttributeInferenceResult": "attrpriv.assess.inference",
    "attribute_inference": "attrpriv.assess.inference",
    "MembershipResult": "attrpriv.assess.membership",
    "ShadowModelAttack": "attrpriv.assess.membership",
    "auc_difference": "attrpriv.assess.membership",
    "loss_threshold_attack": "attrpriv.assess.membership",
    "overfitting_gap": "attrpriv.assess.membership",
    "fit_without": "attrpriv.assess.models",
    "load_model": "attrpriv.assess.models",
    "make_model": "attrpriv.assess.models",
    "save_model": "attrpriv.assess.models",
    "PropertyInferenceResult": "attrpriv.assess.property",
    "property_inference": "attrpriv.assess.property",
    "ReferenceAttack": "attrpriv.assess.reference",
    "RiskReport": "attrpriv.assess.report",
    "ScoreWeights": "attrpriv.assess.scoring",
    "Score": "attrpriv.stats",
    "binomial_ci": "attrpriv.stats",
    "pool_scores": "attrpriv.stats",
    "rate_difference": "attrpriv.stats",
}

__all__ = [
    "MODEL_CHOICES",
    "AssessmentData",
    "AttributeInferenceResult",
    "FeatureRiskAssessor",
    "MembershipResult",
    "PropertyInferenceResult",
    "ReferenceAttack",
    "RiskReport",
    "Score",
    "ScoreWeights",
    "ShadowModelAttack",
    "attribute_inference",
    "auc_difference",
    "binomial_ci",
    "fit_without",
    "load_model",
    "load_task",
    "loss_threshold_attack",
    "make_model",
    "overfitting_gap",
    "pool_scores",
    "property_inference",
    "rate_difference",
    "save_model",
]


def __getattr__(name: str) -> Any:
    """Import a public name of the package on first use."""
    if name not in _HOMES:
        raise AttributeError(f"module 'attrpriv.assess' has no attribute {name!r}")
    return getattr(import_module(_HOMES[name]), name)
