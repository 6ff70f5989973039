"""The rows a ``sanitize`` command reads: ``--row-range``, ``--where`` and ``--rows``.

For tables (a frame) and for images (arrays and their label arrays) alike.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from attrpriv.errors import InputError

if TYPE_CHECKING:
    import numpy as np


def _take(
    images: np.ndarray, labels: dict[str, np.ndarray], rows: int | None, seed: int
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """A seeded sample of ``rows`` images and their labels (all of them without ``rows``)."""
    if rows is None or rows >= len(images):
        return images, labels
    import numpy as np

    index = np.random.default_rng(seed).choice(len(images), size=rows, replace=False)
    return images[index], {name: values[index] for name, values in labels.items()}


RowRangeOption = Annotated[
    str | None,
    typer.Option(
        "--row-range",
        help="Use only rows START:STOP[:STEP] of the data as read (0-based, STOP excluded: "
        "':4000' the first 4000, '4000:' the rest, '::2' the even rows, '1::2' the odd ones), "
        "before --where and --rows. Train and sanitize disjoint rows.",
    ),
]


WhereOption = Annotated[
    str | None,
    typer.Option(
        "--where",
        help="Use only the rows whose COLUMN (or label array) reads VALUE, compared as text: "
        "COLUMN=VALUE (e.g. split=train; applied after --row-range, before --rows).",
    ),
]


def _row_slice(text: str, n: int, data: str) -> slice:
    """``--row-range START:STOP[:STEP]`` as a slice of ``n`` rows; it must select one or more."""
    parts = text.split(":")
    try:
        if len(parts) not in (2, 3):
            raise ValueError
        numbers = [int(part) if part.strip() else None for part in parts]
    except ValueError:
        raise InputError(
            "--row-range must be START:STOP or START:STOP:STEP (0-based row numbers, any may "
            f"be left out), got {text!r}"
        ) from None
    start, stop = numbers[0] or 0, n if numbers[1] is None else numbers[1]
    step = numbers[2] if len(numbers) == 3 and numbers[2] is not None else 1
    if start < 0 or stop < 0 or step < 1:
        raise InputError(f"--row-range takes row numbers >= 0 and a STEP >= 1, got {text!r}")
    if min(stop, n) <= start:
        raise InputError(f"--row-range {text} selects no row of {data!r} ({n} rows)")
    return slice(start, stop, step)


def _where(text: str) -> tuple[str, str]:
    """``--where COLUMN=VALUE`` as (column, value)."""
    column, sep, value = text.partition("=")
    if not sep or not column.strip():
        raise InputError(f"--where must be COLUMN=VALUE (e.g. split=train), got {text!r}")
    return column.strip(), value


def _table_rows(
    frame: Any, row_range: str | None, where: str | None, rows: int | None, seed: int, data: str
) -> Any:
    """The rows of a table that ``--row-range``, ``--where`` and ``--rows`` select, in order."""
    if row_range is not None:
        frame = frame.iloc[_row_slice(row_range, len(frame), data)]
    if where is not None:
        column, value = _where(where)
        if column not in frame.columns:
            raise InputError(f"--where column {column!r} is not a column of {data!r}")
        frame = frame[(frame[column].astype(str) == value).to_numpy()]
        if len(frame) == 0:
            raise InputError(f"--where {where} selects no row of {data!r}")
    if rows is not None and rows < len(frame):
        frame = frame.sample(rows, random_state=seed)
    return frame


def _image_rows(
    images: np.ndarray,
    labels: dict[str, np.ndarray],
    row_range: str | None,
    where: str | None,
    rows: int | None,
    seed: int,
    data: str,
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The images (and labels) that ``--row-range``, ``--where`` and ``--rows`` select."""
    import numpy as np

    index = np.arange(len(images))
    if row_range is not None:
        index = index[_row_slice(row_range, len(images), data)]
    if where is not None:
        name, value = _where(where)
        if name not in labels:
            raise InputError(
                f"--where label array {name!r} is not one of {data!r}: it has {sorted(labels)}"
            )
        index = index[np.asarray(labels[name][index]).astype(str) == value]
        if len(index) == 0:
            raise InputError(f"--where {where} selects no image of {data!r}")
    chosen = {name: values[index] for name, values in labels.items()}
    return _take(images[index], chosen, rows, seed)
