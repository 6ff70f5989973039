"""Data layer: schemas (roles + public domains), bundled datasets, aggregation engines."""

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
    "Categorical",
    "Column",
    "Domain",
    "Integer",
    "Numeric",
    "PrivateDomainWarning",
    "Role",
    "Schema",
]
