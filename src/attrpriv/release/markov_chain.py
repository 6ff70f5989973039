"""Deprecated: moved to :mod:`attrpriv.release.markov_quilt.chain_model`."""

from attrpriv._moved import warn_moved
from attrpriv.release.markov_quilt.chain_model import (
    ApproxInfluences,
    ExactInfluences,
    Influences,
    MarkovChainModel,
    approx_influence,
    as_chains,
    is_irreducible,
    mixing_constants,
    stationary_distribution,
)

__all__ = [
    "ApproxInfluences",
    "ExactInfluences",
    "Influences",
    "MarkovChainModel",
    "approx_influence",
    "as_chains",
    "is_irreducible",
    "mixing_constants",
    "stationary_distribution",
]

warn_moved(__name__, "attrpriv.release.markov_quilt.chain_model")
