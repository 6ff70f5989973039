"""Data layer: schemas (roles + public domains), bundled datasets, aggregation engines."""

from attrpriv.data.aggregate import Aggregator, aggregator_for
from attrpriv.data.schema import (
    Categorical,
    Column,
    Domain,
    Integer,
    Numeric,
    PrivateDomainWarning,
    Role,
    Schema,
)

__all__ = [
    "Aggregator",
    "Categorical",
    "Column",
    "Domain",
    "Integer",
    "Numeric",
    "PrivateDomainWarning",
    "Role",
    "Schema",
    "aggregator_for",
]
