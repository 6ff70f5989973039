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

import gzip
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar, overload

from attrpriv.data import datasets as bundled
from attrpriv.data.schema import Schema
from attrpriv.errors import InputError, SchemaError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["JobData", "read_data"]

PARQUET_SUFFIXES = (".parquet", ".pq")
"""File name endings read as Parquet; any other file is read as CSV."""

SchemaT = TypeVar("SchemaT", Schema, Schema | None)


@dataclass(frozen=True, eq=False)
class JobData(Generic[SchemaT]):
    """What :func:`read_data` read: the data a job takes and its schema.

    Parameters
    ----------
    data : pandas.DataFrame or pathlib.Path
        A CSV/Parquet path (for aggregation: it is never loaded), or a loaded frame.
    schema : Schema or None
        Its roles and domains; ``None`` only where the caller allowed a file without one.
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
    allow_empty: bool = False,
    check: bool = True,
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
    allow_empty: bool = False,
    check: bool = True,
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
    allow_empty: bool = False,
    check: bool = True,
) -> JobData[Any]:
    """The data of a job and its schema, from a bundled dataset name or a CSV/Parquet file.

    Parameters
    ----------
    data : str or pathlib.Path
        A bundled dataset name (see :func:`attrpriv.datasets.names`) or a file path; a ``str``
        is looked up among the bundled names first, any other path is a file. Files ending in
        ``.parquet``/``.pq`` are Parquet, any other file is CSV.
    schema : str or pathlib.Path, optional
        A schema file (``.yaml``, ``.yml`` or ``.json``); it replaces a bundled dataset's own
        schema.
    require_schema : bool, optional
        Refuse a file without ``schema`` (and without ``infer_schema``); when False, such a
        file comes with schema ``None``.
    infer_schema : bool, optional
        For a file without ``schema``, read the domains off the data (:meth:`Schema.infer`:
        warns with :class:`PrivateDomainWarning` and marks every column in
        ``Schema.inferred``). The file is then loaded.
    load : bool, optional
        Load a file into a pandas frame (for jobs that need rows); otherwise a file stays a
        path, which the aggregation engines read without loading it. Bundled data is a frame.
    as_text : bool, optional
        Load every cell of a CSV file as text, as written (no type inference, empty cells stay
        ``""``); implies ``load``.
    what : str, optional
        The name of the parameter in error messages (``"aux"``, ``"sequence file"``, ...).
    allow_empty : bool, optional
        Accept a file with a header line and no rows (for releases under add/remove
        neighbours, where the number of rows is private: refusing the empty table but
        releasing a one-row one would be a decision outside the guarantee). A file of 0 bytes
        is refused either way, as is an empty file that must be loaded to infer its schema.
    check : bool, optional
        Check loaded rows against a declared schema (every schema column present, no missing
        value where none is allowed, every value inside its domain); False only for a job that
        handles values outside the domain itself and says so (``sanitize apply`` clips them).
        Rows left as a path are checked by the engine that aggregates them.

    Returns
    -------
    JobData
        ``data`` (a path or a frame) and ``schema``.

    Raises
    ------
    InputError
        ``data`` is neither a bundled dataset nor an existing file, or a file needs a schema;
        a file's header names a column twice (pandas would rename the second ``age.1``); a
        loaded file has an infinite number in a column.
    SchemaError
        ``schema`` cannot be read, or (with ``check``) loaded rows do not fit it.
    """
    declared = Schema.load(schema) if schema is not None else None
    if isinstance(data, str) and data in bundled.names():
        dataset = bundled.load(data)
        if check and declared is not None:  # the bundled schema fits its data by construction
            _check_fits(dataset.frame, declared, f"{what} {data!r}")
        return JobData(dataset.frame, declared or dataset.schema)
    path = Path(data)
    if not path.is_file():
        if isinstance(data, str):
            raise InputError(
                f"{what} {data!r} is neither a bundled dataset nor an existing file "
                f"(bundled: {', '.join(bundled.names())})"
            )
        raise InputError(f"{what} {str(path)!r} is not an existing file")
    where = f"{what}{'' if what.endswith('file') else ' file'} {str(path)!r}"
    if not allow_empty or (declared is None and infer_schema):
        _require_rows(path, where)  # an empty file is refused before anything is asked of it
    elif path.stat().st_size == 0:
        raise InputError(f"{where} is empty (0 bytes): expected a header line")
    _check_header(path, where)
    if declared is None and infer_schema:
        frame = _load(path, as_text, where)
        return JobData(frame, Schema.infer(frame))
    if declared is None and require_schema:
        raise InputError(
            f"{where} needs a schema: pass --schema FILE "
            "(or --infer-schema, which reads the domains from the private data)"
        )
    if load or as_text:
        frame = _load(path, as_text, where, allow_empty)
        if check and declared is not None and not as_text and len(frame):  # no rows: all fit
            _check_fits(frame, declared, where)
        return JobData(frame, declared)
    return JobData(path, declared)


def _load(path: Path, as_text: bool, where: str, allow_empty: bool = False) -> pd.DataFrame:
    """A Parquet or CSV file as a frame (CSV cells as written when ``as_text``); a file that
    cannot be parsed, or holds no rows, is an :class:`InputError` naming it."""
    import pandas as pd

    try:
        if path.suffix.lower() in PARQUET_SUFFIXES:
            frame = pd.read_parquet(path)
        elif as_text:
            frame = pd.read_csv(path, dtype=str, keep_default_na=False)
        else:
            frame = pd.read_csv(path)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"{where} cannot be read as {_kind(path)}: {first}") from None
    except OSError as exc:  # pyarrow's ArrowInvalid for a damaged Parquet file is one
        raise InputError(f"{where} cannot be read as {_kind(path)}: {exc}") from None
    if len(frame) == 0 and not allow_empty:
        raise InputError(f"{where} has no rows")
    if not as_text:
        _check_finite(frame, where)
    return frame


def _check_header(path: Path, where: str) -> None:
    """Refuse a file whose header names a column twice (``age,age``): pandas and DuckDB would
    rename the second one (``age.1``), and later errors would blame a column not in the file.

    A CSV file's first non-blank line is parsed as CSV; a Parquet file's schema is read from
    its footer. A file that cannot be read is left to the reader, which names the problem.
    """
    if path.suffix.lower() in PARQUET_SUFFIXES:
        import pyarrow.parquet as pq

        try:
            names = list(pq.read_schema(path).names)
        except Exception:  # pyarrow's ArrowInvalid (and OSError): the reader refuses it
            return
    else:
        names = _csv_header(path)
    seen: set[str] = set()
    for name in names:
        if name in seen and name != "":
            raise InputError(
                f"{where} names column {name!r} twice in its header; expected each column name once"
            )
        seen.add(name)


def _csv_header(path: Path) -> list[str]:
    """The column names on a CSV file's first non-blank line (none if it has no such line)."""
    import csv

    opener = gzip.open if path.name.lower().endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8-sig", errors="replace", newline="") as handle:
            header = next((line for line in handle if line.strip()), None)
    except (OSError, EOFError):  # the reader names the problem
        return []
    if header is None:
        return []
    return next(csv.reader([header]), [])


def _check_finite(frame: pd.DataFrame, where: str) -> None:
    """Refuse an infinite number (``inf``, ``-inf``, or a value too large for a float, such as
    ``1e400``) in a numeric column: no model, domain or mechanism can use it. The message
    names the column and the first such row (0-based, after the header), never the value."""
    import numpy as np
    import pandas as pd

    for label in frame.columns:
        values = frame[label]
        if not pd.api.types.is_float_dtype(values.dtype):
            continue  # integer, boolean and text columns cannot hold an infinity
        infinite = np.isinf(values.to_numpy(dtype=float, na_value=np.nan))
        if infinite.any():
            row = int(np.flatnonzero(infinite)[0])
            raise InputError(
                f"{where}: column {str(label)!r} has an infinite number (first at row {row}); "
                "expected finite numbers (or empty cells for missing values)"
            )


def _check_fits(frame: pd.DataFrame, schema: Schema, where: str) -> None:
    """Refuse loaded rows that do not fit their declared schema (a missing schema column, a
    missing value in a column that allows none, a value outside its domain): the one check that
    every command's loaded data passes. The message names the file, the column and the first
    such row, and the value only while private values are shown."""
    try:
        schema.validate(frame, allow_extra=True)
    except SchemaError as exc:
        raise SchemaError(f"{where}: {exc}") from None


def _kind(path: Path) -> str:
    return "Parquet" if path.suffix.lower() in PARQUET_SUFFIXES else "CSV"


def _require_rows(path: Path, where: str) -> None:
    """Refuse a file without a single row, cheaply: no file is read beyond its first rows.

    A CSV file must hold a header line and a non-blank line after it; a Parquet file's footer
    says how many rows it has.
    """
    if path.stat().st_size == 0:
        raise InputError(f"{where} is empty (0 bytes): expected a header line and rows")
    if path.suffix.lower() in PARQUET_SUFFIXES:
        import pyarrow.parquet as pq

        try:
            rows = pq.read_metadata(path).num_rows
        except Exception as exc:  # pyarrow raises ArrowInvalid (and OSError) for non-Parquet
            raise InputError(f"{where} cannot be read as Parquet: {exc}") from None
        if rows == 0:
            raise InputError(f"{where} has no rows")
        return
    opener = gzip.open if path.name.lower().endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8", errors="replace") as handle:
            lines = (line for line in handle if line.strip())
            header, first = next(lines, None), next(lines, None)
    except (OSError, EOFError) as exc:
        raise InputError(f"{where} cannot be read as CSV: {exc}") from None
    if header is None:
        raise InputError(f"{where} holds only blank lines: expected a header line and rows")
    if first is None:
        raise InputError(f"{where} has a header line but no rows")
