"""Data layer: schemas, bundled datasets, reading, aggregation engines (loaded lazily)."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from attrpriv.data.draft import draft_schema
from attrpriv.data.read import JobData, read_data
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
from attrpriv.data.select import RowSelection

if TYPE_CHECKING:
    from attrpriv.data.aggregate import Aggregator, aggregator_for

_AGGREGATE = ("Aggregator", "aggregator_for")

__all__ = [
    "Aggregator",
    "Categorical",
    "Column",
    "Domain",
    "Integer",
    "JobData",
    "Numeric",
    "PrivateDomainWarning",
    "Role",
    "RowSelection",
    "Schema",
    "aggregator_for",
    "draft_schema",
    "read_data",
]


def __getattr__(name: str) -> Any:
    """Import the aggregation layer on first use."""
    if name not in _AGGREGATE:
        raise AttributeError(f"module 'attrpriv.data' has no attribute {name!r}")
    return getattr(import_module("attrpriv.data.aggregate"), name)
