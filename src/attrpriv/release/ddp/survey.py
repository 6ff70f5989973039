"""The release entry point the Tabular-DDP mechanisms share: a survey, its schema, a progress
callback. Each mechanism says what its progress counts (see docs/mechanisms/tabular-ddp.md)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from attrpriv.data.schema import Role, Schema
from attrpriv.dp.mechanism import Mechanism, NoisePlan
from attrpriv.errors import InputError

if TYPE_CHECKING:
    from attrpriv.dp.ledger import BudgetLedger
    from attrpriv.dp.record import Release

Progress = Callable[[int, int], None]
"""``progress(done, total)``: how far a long step has come."""

X = TypeVar("X")
Y = TypeVar("Y")
P = TypeVar("P", bound=NoisePlan)


class SurveyMechanism(Mechanism[X, Y, P]):
    """A mechanism over the questions of a survey, which reports its progress."""

    def release(
        self,
        data: Any,
        schema: Schema,
        *,
        ledger: BudgetLedger | None = None,
        label: str = "",
        progress: Progress | None = None,
    ) -> Release:
        """Count the private survey rows ``data`` (a frame, CSV/Parquet path or Dask frame) under
        the public ``schema``, charge ``ledger`` (entry ``label``) before any noise is drawn, and
        call ``progress(done, total)`` as long steps advance. InputError: nothing is charged."""
        return self._release(data, schema, progress, ledger=ledger, label=label)


def question_names(schema: Schema, columns: Sequence[str] | None) -> list[str]:
    """``columns``, or every column of ``schema`` with a domain that is not ignored."""
    if columns is None:
        return [c.name for c in schema.columns if c.role is not Role.IGNORE and c.domain]
    if isinstance(columns, str):
        raise InputError(f"columns must be a list of column names, got {columns!r}")
    return list(columns)


__all__ = ["Progress", "SurveyMechanism", "question_names"]
