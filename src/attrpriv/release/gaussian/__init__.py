"""The attribute-private Gaussian mechanism (Algorithms 1 and 2) and its models of the data."""

from attrpriv.release.gaussian.mechanism import AttributePrivateGaussian
from attrpriv.release.gaussian.query import Query, Secret, Statistic
from attrpriv.release.gaussian.resampling import ResamplingModel
from attrpriv.release.gaussian.theta import GaussianModel, ThetaModel

__all__ = [
    "AttributePrivateGaussian",
    "GaussianModel",
    "Query",
    "ResamplingModel",
    "Secret",
    "Statistic",
    "ThetaModel",
]
