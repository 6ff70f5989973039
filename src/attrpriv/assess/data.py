"""The rows an assessment sees, prepared from Python as ``attrpriv assess run`` prepares them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from attrpriv._checks import check_choice, check_positive_int
from attrpriv.errors import InputError

if TYPE_CHECKING:
    import pandas as pd

    from attrpriv.assess.report import RiskReport
    from attrpriv.data.schema import Schema
    from attrpriv.data.select import RowSelection

__all__ = ["TASKS", "AssessmentData", "infer_task", "load_task"]

TASKS = ("auto", "classification", "regression")
"""The tasks an assessment takes: ``auto`` infers it from the target (:func:`infer_task`)."""

MAX_TARGET_COLUMNS_SHOWN = 15


@dataclass(frozen=True, eq=False)  # holds frames
class AssessmentData:
    """What an assessment is run on.

    Parameters
    ----------
    X : pandas.DataFrame
        The features: every column but the target and the ignored ones.
    y : pandas.Series
        The target, with no missing value.
    schema : Schema or None
        The data's schema, where one was given or bundled.
    task : {"classification", "regression"}
        The model's task.
    rows : numpy.ndarray
        The positions, in the data, of the rows kept.
    ignored : tuple of str
        The columns the schema left out (role ``ignore``).
    """

    X: pd.DataFrame
    y: pd.Series
    schema: Schema | None
    task: str
    rows: np.ndarray
    ignored: tuple[str, ...]

    def sensitive_columns(self, names: Sequence[str] | None) -> tuple[str, ...]:
        """The sensitive columns: ``names``, or the schema's sensitive role for ``["schema"]``.

        Parameters
        ----------
        names : sequence of str or None
            Column names; ``["schema"]`` for the columns the schema gives the sensitive role.

        Returns
        -------
        tuple of str
            The columns (empty for ``None``).

        Raises
        ------
        InputError
            If ``["schema"]`` is asked of data with no schema, or its schema names none.
        """
        from attrpriv.data.schema import Role

        if names is None:
            return ()
        if list(names) != ["schema"]:
            return tuple(names)
        if self.schema is None:
            raise InputError("--sensitive schema needs a schema (--schema, or a bundled dataset)")
        columns = tuple(self.schema.with_role(Role.SENSITIVE))
        if not columns:
            raise InputError("--sensitive schema: the schema gives no column the sensitive role")
        return columns

    def report_on_data(self, report: RiskReport) -> RiskReport:
        """``report`` in the data's terms: exposed records numbered as rows of the data (not of
        the sample), and the columns the schema left out noted.

        Parameters
        ----------
        report : RiskReport
            A report of an assessment on these rows.

        Returns
        -------
        RiskReport
            The renumbered report, with a note naming the ignored columns (if any).
        """
        if self.ignored:
            note = f"left out by the schema (role ignore): {', '.join(map(repr, self.ignored))}"
            report = replace(report, notes=(note, *report.notes))
        membership = report.model.membership
        if membership is None:
            return report
        exposed = tuple(replace(r, row=int(self.rows[r.row])) for r in membership.exposed)
        model = replace(report.model, membership=replace(membership, exposed=exposed))
        return replace(report, model=model)


def infer_task(y: pd.Series) -> str:
    """Regression for a numeric target with more than 20 distinct values, else classification."""
    import pandas as pd

    numeric = pd.api.types.is_numeric_dtype(y) and not pd.api.types.is_bool_dtype(y)
    return "regression" if numeric and y.nunique() > 20 else "classification"


def load_task(
    data: str | Path,
    target: str,
    *,
    schema: str | Path | None = None,
    max_rows: int | None = None,
    task: str = "auto",
    seed: int = 0,
    select: RowSelection | None = None,
) -> AssessmentData:
    """The features, target, schema and task of a bundled dataset or a CSV/Parquet file.

    Parameters
    ----------
    data : str or pathlib.Path
        A bundled dataset name or a CSV/Parquet file.
    target : str
        The target column; it must have no missing value.
    schema : str or pathlib.Path, optional
        A schema file; rows are checked against it, its ``ignore`` columns left out.
    max_rows : int, optional
        Keep a seeded sample of this many rows (without replacement, in data order).
    task : {"auto", "classification", "regression"}, default "auto"
        The model's task; ``"auto"`` infers it from the target.
    seed : int, default 0
        Seeds the sample of ``max_rows``.
    select : RowSelection or None, optional
        The rows to read (a range, a ``where`` condition, a sample), before ``max_rows``.

    Returns
    -------
    AssessmentData
        The features, the target, the schema, the task and the rows kept.

    Raises
    ------
    InputError
        If the data, schema, target, ``max_rows`` or ``task`` are invalid.
    """
    from attrpriv.data.read import read_data
    from attrpriv.data.schema import Role

    check_choice(task, "task", TASKS)
    source = read_data(data, schema, load=True, require_schema=False, select=select)
    frame, found = source.frame, source.schema
    if target not in frame.columns:
        names = list(map(str, frame.columns))
        shown = ", ".join(names[:MAX_TARGET_COLUMNS_SHOWN])
        more = f", ... ({len(names)} in all)" if len(names) > MAX_TARGET_COLUMNS_SHOWN else ""
        raise InputError(f"target column {target!r} is not in the data; columns: {shown}{more}")
    ignored = tuple(c for c in found.with_role(Role.IGNORE) if c != target) if found else ()
    y = frame[target]
    if y.isna().any():
        raise InputError(f"target column {target!r} has {int(y.isna().sum())} missing values")
    X = frame[[c for c in frame.columns if c != target and c not in ignored]]
    rows = np.arange(len(X))
    if max_rows is not None and check_positive_int(max_rows, "max_rows") < len(X):
        rows = np.sort(np.random.default_rng(seed).choice(len(X), size=max_rows, replace=False))
        X, y = X.iloc[rows], y.iloc[rows]
    resolved = infer_task(y) if task == "auto" else task
    return AssessmentData(X, y, found, resolved, rows, ignored)
