"""The release entry point of every mechanism that reads a table and its schema."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from attrpriv.dp.mechanism import Mechanism, NoisePlan

if TYPE_CHECKING:
    from attrpriv.data.schema import Schema
    from attrpriv.dp.ledger import BudgetLedger
    from attrpriv.dp.record import Release

X = TypeVar("X")
Y = TypeVar("Y")
P = TypeVar("P", bound=NoisePlan)


class TableMechanism(Mechanism[X, Y, P]):
    """A mechanism whose input is a table and the public schema of its columns."""

    def release(
        self, data: Any, schema: Schema, *, ledger: BudgetLedger | None = None, label: str = ""
    ) -> Release:
        """Release the private ``data`` (a DataFrame, CSV/Parquet path or Dask frame) under the
        public ``schema``: ``ledger`` is charged (entry ``label``) before any noise is drawn. An
        InputError charges nothing; a BudgetExceededError releases nothing."""
        return self._release(data, schema, ledger=ledger, label=label)
