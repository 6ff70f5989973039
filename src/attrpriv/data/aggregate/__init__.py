"""Aggregation engines: the statistics privacy mechanisms need, over pandas, DuckDB or Dask.

Use ``with aggregator_for(data, schema) as agg:``; each engine is imported when first needed."""

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

    Parameters
    ----------
    data : pandas.DataFrame, str, pathlib.Path or dask.dataframe.DataFrame
        The data; a path must end in ``.csv``, ``.csv.gz``, ``.parquet`` or ``.pq``.
    schema : Schema
        The schema whose public domains the aggregates are computed over.

    Returns
    -------
    Aggregator
        The engine (close it, or use it in a ``with`` block).

    Raises
    ------
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
