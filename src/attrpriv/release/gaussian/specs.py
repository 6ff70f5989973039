"""The checked inputs of one attribute-private Gaussian calibration."""

from __future__ import annotations

from dataclasses import dataclass

from attrpriv.release.gaussian.query import Query, Secret
from attrpriv.release.gaussian.theta import ThetaModel


@dataclass(frozen=True)
class Specs:
    """The checked query, secrets and models; ``discrete``: variables the schema makes discrete."""

    query: Query
    secrets: tuple[Secret, ...]
    models: tuple[ThetaModel, ...]
    discrete: frozenset[str] = frozenset()


__all__ = ["Specs"]
