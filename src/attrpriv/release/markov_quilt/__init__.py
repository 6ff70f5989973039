"""The Markov quilt mechanism: for Markov chains, and for attributes related by a network."""

from attrpriv.release.markov_quilt.attribute_mechanism import AttributeMarkovQuilt
from attrpriv.release.markov_quilt.chain_mechanism import (
    PROTECTS_CHAIN,
    QUERIES,
    MarkovQuiltMechanism,
)
from attrpriv.release.markov_quilt.chain_model import MarkovChainModel

__all__ = [
    "PROTECTS_CHAIN",
    "QUERIES",
    "AttributeMarkovQuilt",
    "MarkovChainModel",
    "MarkovQuiltMechanism",
]
