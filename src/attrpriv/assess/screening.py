"""Columns an audit cannot use, found before any work is done.

A column whose every value is missing, or that takes a single value, carries nothing to attack
and nothing to retrain without: it is left out of the audit (and of every model), and the
report says so. A categorical column with more values than the attackers learn apart
(:data:`~attrpriv.assess.inference.MAX_ATTACK_CLASSES`) is kept, with a note on how it is
attacked. Both are reported by name, never by value.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from attrpriv.assess._grid import identifier_like
from attrpriv.assess.inference import MAX_ATTACK_CLASSES, feature_kind

__all__ = ["Screening", "screen_columns"]


@dataclass(frozen=True)
class Screening:
    """What :func:`screen_columns` found.

    Parameters
    ----------
    left_out : dict of str to str
        Columns the audit cannot use, each with the reason.
    notes : tuple of str
        One line per kept column that is attacked in a reduced form.
    """

    left_out: dict[str, str]
    notes: tuple[str, ...]

    def report_notes(self) -> tuple[str, ...]:
        """Every finding as a line of the report.

        Returns
        -------
        tuple of str
            ``"left out 'c': why"`` per left-out column, then :attr:`notes`.
        """
        return tuple(f"left out {c!r}: {why}" for c, why in self.left_out.items()) + self.notes


def screen_columns(X: pd.DataFrame) -> Screening:
    """Find the columns of ``X`` an audit cannot use, and those it attacks in a reduced form.

    Parameters
    ----------
    X : pandas.DataFrame
        The features of the audit.

    Returns
    -------
    Screening
        The columns to leave out (every value missing; a single value) with the reason, and
        a note per categorical column with more than ``MAX_ATTACK_CLASSES`` values (but an
        identifier-like one, which attribute inference skips with its own note).
    """
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
