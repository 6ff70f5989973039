"""The checked inputs of one attribute-private Gaussian calibration."""

from __future__ import annotations

from dataclasses import dataclass

from attrpriv.release.gaussian.query import Query, Secret
from attrpriv.release.gaussian.theta import ThetaModel


@dataclass(frozen=True)
class Specs:
    """The public facts a Gaussian release is calibrated on: the checked ``query``, the protected
    ``secrets``, the ``models`` of Theta (all with the same n), the variables the schema makes
    ``discrete`` (known at release only), and the columns ``inferred`` from the private data."""

    query: Query
    secrets: tuple[Secret, ...]
    models: tuple[ThetaModel, ...]
    discrete: frozenset[str] = frozenset()
    inferred: tuple[str, ...] = ()


__all__ = ["Specs"]
