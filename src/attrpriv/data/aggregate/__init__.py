"""Aggregation engines: the statistics privacy mechanisms need, over pandas, DuckDB or Dask.

>>> with aggregator_for("survey.parquet", schema) as agg:  # doctest: +SKIP
...     histograms = agg.all_counts()

:func:`aggregator_for` picks the engine from the data: pandas for a DataFrame, DuckDB for a
CSV/Parquet path (the file is never loaded into pandas), Dask for a Dask DataFrame. Each engine
is imported when it is first needed (``import attrpriv`` loads none of them, nor DuckDB).
"""

from __future__ import annotations

from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from attrpriv.data.aggregate.base import MAX_CELLS, Aggregator
from attrpriv.data.schema import Schema
from attrpriv.errors import InputError

if TYPE_CHECKING:
    from attrpriv.data.aggregate.dask import DaskAggregator
    from attrpriv.data.aggregate.duckdb import DuckDBAggregator
    from attrpriv.data.aggregate.pandas import PandasAggregator

_ENGINES = {
    "DaskAggregator": "attrpriv.data.aggregate.dask",
    "DuckDBAggregator": "attrpriv.data.aggregate.duckdb",
    "PandasAggregator": "attrpriv.data.aggregate.pandas",
}

__all__ = [
    "MAX_CELLS",
    "Aggregator",
    "DaskAggregator",
    "DuckDBAggregator",
    "PandasAggregator",
    "aggregator_for",
]


def __getattr__(name: str) -> Any:
    """Import an engine on first use."""
    if name not in _ENGINES:
        raise AttributeError(f"module 'attrpriv.data.aggregate' has no attribute {name!r}")
    return getattr(import_module(_ENGINES[name]), name)


def aggregator_for(data: Any, schema: Schema) -> Aggregator:
    """The engine for ``data``: pandas (DataFrame), DuckDB (CSV/Parquet path) or Dask.

    Paths must end in ``.csv``, ``.csv.gz``, ``.parquet`` or ``.pq``. Anything else raises
    :class:`~attrpriv.errors.InputError`.

    Parameters
    ----------
    data : pandas.DataFrame, str, pathlib.Path or dask.dataframe.DataFrame
        The data: an in-memory frame, a CSV/Parquet file path, or a Dask DataFrame.
    schema : Schema
        The schema whose public domains the aggregates are computed over.

    Returns
    -------
    Aggregator
        A :class:`PandasAggregator`, :class:`DuckDBAggregator` or :class:`DaskAggregator`
        (close it, or use it in a ``with`` block).

    Raises
    ------
    InputError
        ``data`` is none of the above, a path has another suffix or is not an existing file,
        or ``schema`` is not a :class:`Schema`.
    SchemaError
        A schema column that is not ignored is missing from the data.
    """
    if isinstance(data, pd.DataFrame):
        from attrpriv.data.aggregate.pandas import PandasAggregator

        return PandasAggregator(data, schema)
    if isinstance(data, (str, Path)):
        from attrpriv.data.aggregate.duckdb import DuckDBAggregator

        return DuckDBAggregator(data, schema)
    from attrpriv.data.aggregate.dask import DaskAggregator, is_dask_frame

    if is_dask_frame(data):
        return DaskAggregator(data, schema)
    raise InputError(
        "data must be a pandas DataFrame, a CSV/Parquet file path or a dask DataFrame, "
        f"got {type(data).__name__}"
    )
