"""Reading a job's data (a bundled dataset or a CSV/Parquet file) with its schema: the one place
attrpriv reads tabular data. A file that a job only aggregates stays a path (DuckDB reads it);
a schema is inferred from the data only when asked."""

from __future__ import annotations

import gzip
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar, overload

from attrpriv.data import datasets as bundled
from attrpriv.data.schema import Schema
from attrpriv.data.select import RowSelection
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
        A CSV/Parquet path (for aggregation: never loaded), or a loaded frame.
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
    select: RowSelection | None = None,
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
    select: RowSelection | None = None,
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
    select: RowSelection | None = None,
) -> JobData[Any]:
    """The data of a job and its schema, from a bundled dataset name or a CSV/Parquet file.

    Parameters
    ----------
    data : str or pathlib.Path
        A bundled dataset name (looked up first) or a file (``.parquet``/``.pq``, else CSV).
    schema : str or pathlib.Path, optional
        A schema file (``.yaml``, ``.yml`` or ``.json``); it replaces a bundled dataset's own.
    require_schema : bool, optional
        Refuse a file without a schema; when False, such a file comes with schema ``None``.
    infer_schema : bool, optional
        Read the domains off the data (warns :class:`PrivateDomainWarning`; loads the file).
    load : bool, optional
        Load a file into a pandas frame; otherwise a file stays a path.
    as_text : bool, optional
        Load every CSV cell as text, as written; implies ``load``.
    what : str, optional
        The name of the parameter in error messages.
    allow_empty : bool, optional
        Accept a header with no rows (under add/remove the row count is private); 0 bytes never.
    check : bool, optional
        Check loaded rows against a declared schema (False only where a job clips values itself).
    select : RowSelection, optional
        Keep only these rows (after the checks); implies ``load``.

    Returns
    -------
    JobData
        ``data`` (a path or a frame) and ``schema``.

    Raises
    ------
    InputError
        ``data`` is not found, needs a schema, repeats a header name, or holds an infinite number.
    SchemaError
        ``schema`` cannot be read, or (with ``check``) loaded rows do not fit it.
    """
    job = _read(data, schema, require_schema, infer_schema, load or select is not None, as_text,
                what, allow_empty, check)  # fmt: skip
    if select is None:
        return job
    return JobData(select.table(job.frame, str(data)), job.schema)


def _read(
    data: str | Path,
    schema: str | Path | None,
    require_schema: bool,
    infer_schema: bool,
    load: bool,
    as_text: bool,
    what: str,
    allow_empty: bool,
    check: bool,
) -> JobData[Any]:
    """:func:`read_data` without the row selection."""
    declared = Schema.load(schema) if schema is not None else None
    if isinstance(data, str) and data in bundled.names():
        return _read_bundled(data, declared, what, check)
    path = _existing_file(data, what)
    where = f"{what}{'' if what.endswith('file') else ' file'} {str(path)!r}"
    _check_not_empty(path, where, allow_empty and not (declared is None and infer_schema))
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
        return JobData(_load_checked(path, declared, where, as_text, allow_empty, check), declared)
    return JobData(path, declared)


def _read_bundled(name: str, declared: Schema | None, what: str, check: bool) -> JobData[Schema]:
    """A bundled dataset's rows, with ``declared`` (checked against them) or its own schema."""
    dataset = bundled.load(name)
    if check and declared is not None:  # the bundled schema fits its data by construction
        _check_fits(dataset.frame, declared, f"{what} {name!r}")
    return JobData(dataset.frame, declared or dataset.schema)


def _existing_file(data: str | Path, what: str) -> Path:
    """``data`` as the path of an existing file; anything else is an :class:`InputError`."""
    path = Path(data)
    if path.is_file():
        return path
    if isinstance(data, str):
        raise InputError(
            f"{what} {data!r} is neither a bundled dataset nor an existing file "
            f"(bundled: {', '.join(bundled.names())})"
        )
    raise InputError(f"{what} {str(path)!r} is not an existing file")


def _check_not_empty(path: Path, where: str, allow_empty: bool) -> None:
    """Refuse a file of 0 bytes, and (unless ``allow_empty``) a file without a row."""
    if not allow_empty:
        _require_rows(path, where)  # an empty file is refused before anything is asked of it
    elif path.stat().st_size == 0:
        raise InputError(f"{where} is empty (0 bytes): expected a header line")


def _load_checked(
    path: Path, declared: Schema | None, where: str, as_text: bool, allow_empty: bool, check: bool
) -> pd.DataFrame:
    """A file's rows, loaded and (with ``check``) checked against ``declared``."""
    frame = _load(path, as_text, where, allow_empty)
    if check and declared is not None and not as_text and len(frame):  # no rows: all fit
        _check_fits(frame, declared, where)
    return frame


def _load(path: Path, as_text: bool, where: str, allow_empty: bool = False) -> pd.DataFrame:
    """A Parquet or CSV file as a frame; an unparseable or empty file is an :class:`InputError`."""
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
    """Refuse a header naming a column twice (pandas and DuckDB would rename it ``age.1``)."""
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
    """Refuse an infinite number in a numeric column (naming the column and row, not the value)."""
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
    """Refuse loaded rows that do not fit their declared schema (values shown only if allowed)."""
    try:
        schema.validate(frame, allow_extra=True)
    except SchemaError as exc:
        raise SchemaError(f"{where}: {exc}") from None


def _kind(path: Path) -> str:
    return "Parquet" if path.suffix.lower() in PARQUET_SUFFIXES else "CSV"


def _require_rows(path: Path, where: str) -> None:
    """Refuse a file without a single row, reading no more than its first rows."""
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
