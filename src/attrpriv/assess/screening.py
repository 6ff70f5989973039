"""Columns an audit cannot use (all missing, or one value), found first; named, never valued."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from attrpriv.assess._grid import identifier_like
from attrpriv.assess.inference import MAX_ATTACK_CLASSES, feature_kind

__all__ = ["Screening", "screen_columns"]


@dataclass(frozen=True)
class Screening:
    """What :func:`screen_columns` found: ``left_out`` columns with the reason, and ``notes``."""

    left_out: dict[str, str]
    notes: tuple[str, ...]

    def report_notes(self) -> tuple[str, ...]:
        """Every finding as a line of the report: left-out columns, then :attr:`notes`."""
        return tuple(f"left out {c!r}: {why}" for c, why in self.left_out.items()) + self.notes


def screen_columns(X: pd.DataFrame) -> Screening:
    """The columns of ``X`` to leave out, with the reason, and notes on reduced attacks."""
    left_out: dict[str, str] = {}
    notes: list[str] = []
    identifiers = identifier_like(X, list(X.columns), categorical_only=True)  # noted there
    for column in X.columns:
        values = X[column]
        distinct = int(values.nunique(dropna=True))
        if distinct == 0:
            left_out[column] = "every value is missing"
        elif distinct == 1:
            left_out[column] = "it takes a single value (nothing to attack or retrain without)"
        elif (
            feature_kind(values) == "categorical"
            and distinct > MAX_ATTACK_CLASSES
            and column not in identifiers
        ):
            notes.append(
                f"{column!r} has {distinct} values: attribute inference learns its "
                f"{MAX_ATTACK_CLASSES - 1} most frequent and one 'rare' class for the rest (a "
                "rare guess never counts as a hit)"
            )
    return Screening(left_out, tuple(notes))
