"""release: statistics published under formal guarantees (DP, attribute privacy, Pufferfish).

One folder per mechanism (``gaussian/``, ``markov_quilt/``, ``ddp/``), the graph code they
share (``graph/``), and the row-level Laplace baseline (``laplace``).
"""

from attrpriv.release.ddp import ModelDDP, ModularDDP, SurveyFacts, TreeModel
from attrpriv.release.gaussian import (
    AttributePrivateGaussian,
    GaussianModel,
    Query,
    ResamplingModel,
    Secret,
    Statistic,
)
from attrpriv.release.graph.network import DiscreteNetwork
from attrpriv.release.graph.quilts import Quilt, best_quilt, max_influence, quilt_scale
from attrpriv.release.laplace import NEIGHBOURS, HistogramFacts, LaplaceHistograms
from attrpriv.release.markov_quilt import (
    AttributeMarkovQuilt,
    ChainLengths,
    MarkovChainModel,
    MarkovQuiltMechanism,
)

__all__ = [
    "NEIGHBOURS",
    "AttributeMarkovQuilt",
    "AttributePrivateGaussian",
    "ChainLengths",
    "DiscreteNetwork",
    "GaussianModel",
    "HistogramFacts",
    "LaplaceHistograms",
    "MarkovChainModel",
    "MarkovQuiltMechanism",
    "ModelDDP",
    "ModularDDP",
    "Query",
    "Quilt",
    "ResamplingModel",
    "Secret",
    "Statistic",
    "SurveyFacts",
    "TreeModel",
    "best_quilt",
    "max_influence",
    "quilt_scale",
]
