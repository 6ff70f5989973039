"""assess: which features of a model leak, measured by attacks with their baselines and CIs.

Attacks (each returns a result whose ``score`` is a :class:`Score`: attack rate, baseline rate,
their difference and its confidence interval): membership inference
(:class:`ReferenceAttack`, the strongest: RMIA with reference models; :func:`loss_threshold_attack`;
:class:`ShadowModelAttack`), attribute inference
(:func:`attribute_inference`), property inference (:func:`property_inference`); the differential
attack's risk is :func:`auc_difference` of two membership results. See docs/assess/attacks.md.

The whole audit (steps 202-210 of the spec) is :class:`FeatureRiskAssessor`, which returns a
:class:`RiskReport`; the mitigation strategies are in :mod:`attrpriv.assess.mitigation`.
"""

from attrpriv.assess.assessor import FeatureRiskAssessor
from attrpriv.assess.inference import AttributeInferenceResult, attribute_inference
from attrpriv.assess.membership import (
    MembershipResult,
    ShadowModelAttack,
    auc_difference,
    loss_threshold_attack,
    overfitting_gap,
)
from attrpriv.assess.models import MODEL_CHOICES, fit_without, load_model, make_model, save_model
from attrpriv.assess.property import PropertyInferenceResult, property_inference
from attrpriv.assess.reference import ReferenceAttack
from attrpriv.assess.report import RiskReport
from attrpriv.assess.scoring import ScoreWeights
from attrpriv.stats import Score, binomial_ci, pool_scores, rate_difference

__all__ = [
    "MODEL_CHOICES",
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
    "loss_threshold_attack",
    "make_model",
    "overfitting_gap",
    "pool_scores",
    "property_inference",
    "rate_difference",
    "save_model",
]
