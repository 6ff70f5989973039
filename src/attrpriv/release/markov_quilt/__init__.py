"""The Markov quilt mechanism: for Markov chains, and for attributes related by a network."""

from attrpriv.release.markov_quilt.attribute_mechanism import (
    AttributeMarkovQuilt,
    QuiltDiagnostics,
    QuiltFacts,
)
from attrpriv.release.markov_quilt.chain_mechanism import (
    PROTECTS_CHAIN,
    QUERIES,
    ChainDiagnostics,
    ChainLengths,
    MarkovQuiltMechanism,
)
from attrpriv.release.markov_quilt.chain_model import MarkovChainModel

__all__ = [
    "PROTECTS_CHAIN",
    "QUERIES",
    "AttributeMarkovQuilt",
    "ChainDiagnostics",
    "ChainLengths",
    "MarkovChainModel",
    "MarkovQuiltMechanism",
    "QuiltDiagnostics",
    "QuiltFacts",
]
