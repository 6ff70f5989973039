"""Which rows of a table, or of a set of images, a job reads: a range, a filter, a sample."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from attrpriv._checks import check_positive_int
from attrpriv.errors import InputError


@dataclass(frozen=True)
class RowSelection:
    """The rows ``row_range`` picks, then those where ``where`` holds, then a seeded sample.

    Parameters
    ----------
    row_range : str or None, default None
        ``"START:STOP[:STEP]"``, 0-based, STOP excluded, any part may be left out (``"::2"``:
        the even rows); applied to the rows as read.
    where : str or None, default None
        ``"COLUMN=VALUE"``: the rows whose column (or label array) reads VALUE, as text.
    rows : int or None, default None
        At most this many rows, drawn without replacement; ``None``: all of them.
    seed : int, default 0
        Seeds the draw of ``rows``.
    """

    row_range: str | None = None
    where: str | None = None
    rows: int | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        if self.rows is not None:
            check_positive_int(self.rows, "rows")
        check_positive_int(self.seed, "seed", minimum=0)

    def table(self, frame: pd.DataFrame, data: str = "the data") -> pd.DataFrame:
        """The selected rows of ``frame``, in order (``data`` names it in errors).

        Parameters
        ----------
        frame : pandas.DataFrame
            The rows as read.
        data : str, default "the data"
            What the rows are, for error messages.

        Returns
        -------
        pandas.DataFrame
            The selected rows (a sample in the sample's order).
        """
        if self.row_range is not None:
            frame = frame.iloc[_row_slice(self.row_range, len(frame), data)]
        if self.where is not None:
            column, value = _where(self.where)
            if column not in frame.columns:
                raise InputError(f"where column {column!r} is not a column of {data!r}")
            frame = frame[(frame[column].astype(str) == value).to_numpy()]
            if len(frame) == 0:
                raise InputError(f"where {self.where} selects no row of {data!r}")
        if self.rows is not None and self.rows < len(frame):
            frame = frame.sample(self.rows, random_state=self.seed)
        return frame

    def images(
        self, images: np.ndarray, labels: dict[str, np.ndarray], data: str = "the data"
    ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """The selected images and their labels (``where`` reads a label array).

        Parameters
        ----------
        images : numpy.ndarray
            The images as read, one per row.
        labels : dict of str to numpy.ndarray
            Their label arrays, by name.
        data : str, default "the data"
            What the images are, for error messages.

        Returns
        -------
        tuple of (numpy.ndarray, dict of str to numpy.ndarray)
            The selected images and their labels.
        """
        index = np.arange(len(images))
        if self.row_range is not None:
            index = index[_row_slice(self.row_range, len(images), data)]
        if self.where is not None:
            name, value = _where(self.where)
            if name not in labels:
                raise InputError(
                    f"where label array {name!r} is not one of {data!r}: it has {sorted(labels)}"
                )
            index = index[np.asarray(labels[name][index]).astype(str) == value]
            if len(index) == 0:
                raise InputError(f"where {self.where} selects no image of {data!r}")
        if self.rows is not None and self.rows < len(index):
            index = index[np.random.default_rng(self.seed).choice(len(index), self.rows, False)]
        return images[index], {name: values[index] for name, values in labels.items()}


def _row_slice(text: str, n: int, data: str) -> slice:
    """``START:STOP[:STEP]`` as a slice of ``n`` rows; it must select one or more."""
    parts = text.split(":")
    try:
        if len(parts) not in (2, 3):
            raise ValueError
        numbers = [int(part) if part.strip() else None for part in parts]
    except ValueError:
        raise InputError(
            "row_range must be START:STOP or START:STOP:STEP (0-based row numbers, any may "
            f"be left out), got {text!r}"
        ) from None
    start, stop = numbers[0] or 0, n if numbers[1] is None else numbers[1]
    step = numbers[2] if len(numbers) == 3 and numbers[2] is not None else 1
    if start < 0 or stop < 0 or step < 1:
        raise InputError(f"row_range takes row numbers >= 0 and a STEP >= 1, got {text!r}")
    if min(stop, n) <= start:
        raise InputError(f"row_range {text} selects no row of {data!r} ({n} rows)")
    return slice(start, stop, step)


def _where(text: str) -> tuple[str, str]:
    """``COLUMN=VALUE`` as (column, value)."""
    column, sep, value = text.partition("=")
    if not sep or not column.strip():
        raise InputError(f"where must be COLUMN=VALUE (e.g. split=train), got {text!r}")
    return column.strip(), value


__all__ = ["RowSelection"]
