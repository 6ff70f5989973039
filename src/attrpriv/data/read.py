"""Reading a job's data: a bundled dataset or a CSV/Parquet file, with its schema.

:func:`read_data` is the one place attrpriv reads tabular data. A file that a job only
aggregates stays a path (DuckDB aggregates it without loading it into pandas); jobs that need
the rows (assess, sanitize, models learned from reference data) ask for a loaded frame. The
schema comes from a schema file, from the bundled dataset, or, only when asked, is inferred from
the data with a :class:`~attrpriv.data.schema.PrivateDomainWarning` (the inferred columns are
recorded in :attr:`Schema.inferred`, and releases on them say so).

pandas is imported only when a file is loaded, so that ``import attrpriv.data`` stays fast.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar, overload

from attrpriv.data import datasets as bundled
from attrpriv.data.schema import Schema
from attrpriv.errors import InputError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["JobData", "read_data"]

_PARQUET = (".parquet", ".pq")

SchemaT = TypeVar("SchemaT", Schema, Schema | None)


@dataclass(frozen=True, eq=False)
class JobData(Generic[SchemaT]):
    """What :func:`read_data` read: the data a job takes and its schema.

    Attributes
    ----------
    data : a CSV/Parquet path (for aggregation: it is never loaded), or a loaded frame.
    schema : its roles and domains; ``None`` only where the caller allowed a file without one.
    """

    data: pd.DataFrame | Path
    schema: SchemaT

    @property
    def frame(self) -> pd.DataFrame:
        """The loaded rows (``read_data(..., load=True)`` always loads them)."""
        if isinstance(self.data, Path):
            raise InputError(f"data {str(self.data)!r} was not loaded: read it with load=True")
        return self.data


@overload
def read_data(
    data: str | Path,
    schema: str | Path | None = None,
    *,
    require_schema: Literal[True] = True,
    infer_schema: bool = False,
    load: bool = False,
    as_text: bool = False,
    what: str = "data",
) -> JobData[Schema]: ...


@overload
def read_data(
    data: str | Path,
    schema: str | Path | None = None,
    *,
    require_schema: bool,
    infer_schema: bool = False,
    load: bool = False,
    as_text: bool = False,
    what: str = "data",
) -> JobData[Schema | None]: ...


def read_data(
    data: str | Path,
    schema: str | Path | None = None,
    *,
    require_schema: bool = True,
    infer_schema: bool = False,
    load: bool = False,
    as_text: bool = False,
    what: str = "data",
) -> JobData[Any]:
    """The data of a job and its schema, from a bundled dataset name or a CSV/Parquet file.

    Parameters
    ----------
    data : a bundled dataset name (see :func:`attrpriv.datasets.names`) or a file path; a
        ``str`` is looked up among the bundled names first, any other path is a file. Files
        ending in ``.parquet``/``.pq`` are Parquet, any other file is CSV.
    schema : a schema file (``.yaml``, ``.yml`` or ``.json``); it replaces a bundled dataset's
        own schema.
    require_schema : refuse a file without ``schema`` (and without ``infer_schema``); when
        False, such a file comes with schema ``None``.
    infer_schema : for a file without ``schema``, read the domains off the data
        (:meth:`Schema.infer`: warns with :class:`PrivateDomainWarning` and marks every column
        in ``Schema.inferred``). The file is then loaded.
    load : load a file into a pandas frame (for jobs that need rows); otherwise a file stays a
        path, which the aggregation engines read without loading it. Bundled data is a frame.
    as_text : load every cell of a CSV file as text, as written (no type inference, empty cells
        stay ``""``); implies ``load``.
    what : the name of the parameter in error messages (``"aux"``, ``"sequence file"``, ...).

    Returns
    -------
    JobData
        ``data`` (a path or a frame) and ``schema``.

    Raises
    ------
    InputError
        ``data`` is neither a bundled dataset nor an existing file, or a file needs a schema.
    SchemaError
        ``schema`` cannot be read.
    """
    declared = Schema.load(schema) if schema is not None else None
    if isinstance(data, str) and data in bundled.names():
        dataset = bundled.load(data)
        return JobData(dataset.frame, declared or dataset.schema)
    path = Path(data)
    if not path.is_file():
        if isinstance(data, str):
            raise InputError(
                f"{what} {data!r} is neither a bundled dataset nor an existing file "
                f"(bundled: {', '.join(bundled.names())})"
            )
        raise InputError(f"{what} {str(path)!r} is not an existing file")
    if declared is None and infer_schema:
        frame = _load(path, as_text)
        return JobData(frame, Schema.infer(frame))
    if declared is None and require_schema:
        raise InputError(
            f"{what} file {str(path)!r} needs a schema: pass --schema FILE "
            "(or --infer-schema, which reads the domains from the private data)"
        )
    return JobData(_load(path, as_text) if load or as_text else path, declared)


def _load(path: Path, as_text: bool) -> pd.DataFrame:
    """A Parquet or CSV file as a frame (CSV cells as written when ``as_text``)."""
    import pandas as pd

    if path.suffix.lower() in _PARQUET:
        return pd.read_parquet(path)
    if as_text:
        return pd.read_csv(path, dtype=str, keep_default_na=False)
    return pd.read_csv(path)
