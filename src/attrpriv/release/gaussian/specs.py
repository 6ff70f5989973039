"""The checked inputs of one attribute-private Gaussian calibration."""

from __future__ import annotations

from dataclasses import dataclass

from attrpriv.release.gaussian.query import Query, Secret
from attrpriv.release.gaussian.theta import ThetaModel


@dataclass(frozen=True)
class Specs:
    """The query, the secrets and the models, checked and as tuples; ``discrete``: the
    variables the schema makes discrete (category indicators, integer columns), known at
    release (a plan made without data knows only the indicators)."""

    query: Query
    secrets: tuple[Secret, ...]
    models: tuple[ThetaModel, ...]
    discrete: frozenset[str] = frozenset()


__all__ = ["Specs"]
