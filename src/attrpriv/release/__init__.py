"""release: statistics published under formal guarantees (DP, attribute privacy, Pufferfish)."""

from attrpriv.release.ddp import TabularDDP
from attrpriv.release.histogram import NEIGHBOURS, LaplaceHistograms
from attrpriv.release.markov_chain import MarkovChainModel
from attrpriv.release.markov_quilt import AttributeMarkovQuilt, MarkovQuiltMechanism
from attrpriv.release.network import DiscreteNetwork
from attrpriv.release.quilt import Quilt, best_quilt, max_influence, quilt_scale

__all__ = [
    "NEIGHBOURS",
    "AttributeMarkovQuilt",
    "DiscreteNetwork",
    "LaplaceHistograms",
    "MarkovChainModel",
    "MarkovQuiltMechanism",
    "Quilt",
    "TabularDDP",
    "best_quilt",
    "max_influence",
    "quilt_scale",
]
