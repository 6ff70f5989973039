"""The release family of the table sanitizers: the released table, its record and diagnostics.

:class:`BlockResampler`, :class:`ProxyResampler` and :class:`DPSynthesizer` all return a
:class:`SanitizedTable`; their diagnostics share :class:`TableDiagnostics` (the noisy counts the
table was drawn from). See docs/sanitize/resample.md.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import pandas as pd

from attrpriv.dp.mechanism import Mechanism, P, X, Y, check_fitted
from attrpriv.dp.record import Diagnostics, Release
from attrpriv.errors import InputError

if TYPE_CHECKING:
    from attrpriv.dp.ledger import BudgetLedger


@dataclass(frozen=True)
class TableFacts:
    """The public facts a table sanitizer's calibration reads, all fixed by its fit; keyword-only
    ``inferred``: the columns whose domains were read off data (``Schema.infer``)."""

    inferred: tuple[str, ...] = field(default=(), kw_only=True)


@dataclass(frozen=True, eq=False, kw_only=True)  # holds Series
class TableDiagnostics(Diagnostics):
    """What every table sanitizer's release says of itself (public and noisy values only): the
    released ``rows`` and the ``noisy_counts`` it was drawn from (a Series per column, by value)."""

    rows: int
    noisy_counts: Mapping[str, pd.Series]

    def released(self) -> str:
        """What the table holds in a few words (``"500 rows"``); the release's repr ends with it."""
        return f"{self.rows} rows"


@dataclass(frozen=True, eq=False, kw_only=True)
class RedrawDiagnostics(TableDiagnostics):
    """A row-aligned release's diagnostics: ``rows`` (the private table's), ``noisy_counts`` (the
    ``sensitive`` column's), the ``proxies`` redrawn beside it (in order), the columns
    ``passed_through`` as they are, and the release's ``epsilon``."""

    sensitive: str
    proxies: tuple[str, ...]
    passed_through: tuple[str, ...]
    epsilon: float

    def released(self) -> str:
        """The rows and the redrawn columns: ``"500 rows, resampled ['s', 'p']"``."""
        return f"{self.rows} rows, resampled {[self.sensitive, *self.proxies]}"


class SanitizedTable(Release):
    """A table sanitizer's release: ``values`` is the released table, with its record.

    The accuracy and :meth:`to_frame` describe the noisy counts the table was drawn from.

    Parameters
    ----------
    values, record, diagnostics, accuracy
        As in :class:`~attrpriv.dp.record.Release`; ``diagnostics`` is a TableDiagnostics.
    """

    diagnostics: TableDiagnostics

    @property
    def data(self) -> pd.DataFrame:
        """The released table (``values``)."""
        table: pd.DataFrame = self.values
        return table

    def __repr__(self) -> str:
        record = self.record
        return (
            f"SanitizedTable({record.mechanism}, {record.unit.key}, {record.guarantee}: "
            f"{self.diagnostics.released()})"
        )

    def to_frame(self) -> pd.DataFrame:
        """One row per noisy count the table was drawn from, with its 95% noise interval.

        Returns
        -------
        pandas.DataFrame
            Columns ``name``, ``level``, ``value``, ``half_width``, ``lower`` and ``upper``.
        """
        counts = dict(self.diagnostics.noisy_counts)
        return Release(counts, self.record, accuracy=self.accuracy).to_frame()


def data_frame(data: object, what: str) -> pd.DataFrame:
    """``data`` if it is a DataFrame with rows and distinct string column names."""
    if not isinstance(data, pd.DataFrame):
        raise InputError(f"{what} must be a pandas DataFrame, got {type(data).__name__}")
    if len(data) == 0:
        raise InputError(f"{what} has no rows")
    if not all(isinstance(c, str) for c in data.columns):
        raise InputError(f"{what} must have string column names")
    if data.columns.has_duplicates:
        raise InputError(f"{what} has a column name twice")
    return data


class TableSanitizer(Mechanism[X, Y, P]):
    """A mechanism fitted on public facts that releases a sanitized table of private rows.

    The fit fixes the public facts calibration reads (:meth:`_facts`); a release checks that the
    parameters it was fitted with still hold.
    """

    _result: ClassVar[type[Release]] = SanitizedTable
    _fitted: ClassVar[str]
    """The attribute ``fit`` sets last but one (``fitted_for_`` is the last)."""

    def release(
        self, data: pd.DataFrame, *, ledger: BudgetLedger | None = None, label: str = ""
    ) -> SanitizedTable:
        """Release the sanitized table of the private rows ``data`` (not modified).

        ``ledger`` is charged with the record (entry ``label``) before any noise is drawn. Raises
        InputError (nothing charged) or BudgetExceededError (nothing released)."""
        out = self._release(data, ledger=ledger, label=label)
        assert isinstance(out, SanitizedTable)
        return out

    def _public_facts(self) -> Y:
        self._check_fitted()
        return self._facts()

    def _check_fitted(self) -> None:
        check_fitted(self, self._fitted, unchanged=self._structure())

    @abstractmethod
    def _structure(self) -> tuple[Any, ...]:
        """The parameters that shape what ``fit`` decides (a release checks they still hold)."""

    @abstractmethod
    def _facts(self) -> Y:
        """The public facts the fit fixed (what calibration reads)."""

    def _frame_with(
        self, data: Any, needed: Sequence[str], why: str, what: str = "the private data"
    ) -> pd.DataFrame:
        """``data`` as a DataFrame with every ``needed`` column (``why``: what each is for)."""
        frame = data_frame(data, what)
        for name in needed:
            if name not in frame.columns:
                raise InputError(f"no column {name!r} in {what} ({why})")
        return frame


__all__ = [
    "RedrawDiagnostics",
    "SanitizedTable",
    "TableDiagnostics",
    "TableFacts",
    "TableSanitizer",
    "data_frame",
]
