"""release: statistics published under formal guarantees (DP, attribute privacy, Pufferfish)."""

from attrpriv.release.ddp import TabularDDP
from attrpriv.release.gaussian import AttributePrivateGaussian
from attrpriv.release.histogram import NEIGHBOURS, LaplaceHistograms
from attrpriv.release.markov_chain import MarkovChainModel
from attrpriv.release.markov_quilt import AttributeMarkovQuilt, MarkovQuiltMechanism
from attrpriv.release.models import GaussianModel
from attrpriv.release.network import DiscreteNetwork
from attrpriv.release.quilt import Quilt, best_quilt, max_influence, quilt_scale
from attrpriv.release.resampling import ResamplingModel
from attrpriv.release.specs import Query, Secret, Statistic

__all__ = [
    "NEIGHBOURS",
    "AttributeMarkovQuilt",
    "AttributePrivateGaussian",
    "DiscreteNetwork",
    "GaussianModel",
    "LaplaceHistograms",
    "MarkovChainModel",
    "MarkovQuiltMechanism",
    "Query",
    "Quilt",
    "ResamplingModel",
    "Secret",
    "Statistic",
    "TabularDDP",
    "best_quilt",
    "max_influence",
    "quilt_scale",
]
