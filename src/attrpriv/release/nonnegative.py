"""Non-negative rounded counts: post-processing of noisy counts, at no privacy cost.

Noise can push a small count below 0. Each noisy count y becomes round(max(0, y)), computed
from the released value alone, so the guarantee is unchanged (post-processing). Because a true
count x is a whole number >= 0, clipping never moves a count away from it,
|max(0, y) - x| <= |y - x|, and rounding moves it by at most 0.5 (none for discrete noise,
whose counts are whole already). What it costs is bias: a histogram's total rises by the
amount clipped, sum(max(0, -y)), stated beside it. A count's noise interval is clipped at 0
too, [max(0, lower), max(0, upper)]: the true count is in it whenever it is in the raw one.
The raw counts stay unbiased, and are kept.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from attrpriv.dp.record import Release

__all__ = ["COUNTS", "non_negative", "non_negative_counts", "non_negative_to_dict"]

COUNTS = ("non-negative", "raw")
"""What a page or a terminal shows of a release's noisy counts: the non-negative rounded ones
or the raw ones."""


def non_negative(values: ArrayLike) -> np.ndarray:
    """Each noisy count y as round(max(0, y)), the nearest whole number (halves to even).

    Parameters
    ----------
    values : array_like
        Noisy counts.

    Returns
    -------
    numpy.ndarray
        Floats, whole and >= 0, of the shape of ``values``.
    """
    rounded: np.ndarray = np.rint(np.maximum(np.asarray(values, dtype=float), 0.0))
    return rounded


def non_negative_counts(release: Release) -> pd.DataFrame:
    """Every count of a release, raw and non-negative, with both intervals.

    Parameters
    ----------
    release : Release
        A release whose values are counts: histograms, or one histogram.

    Returns
    -------
    pandas.DataFrame
        :meth:`Release.to_frame`'s columns (``value``, ``lower`` and ``upper`` the raw ones),
        and ``histogram`` (the count's histogram: its ``name`` where it has a ``level``, ""
        for a release of one histogram), ``non_negative`` (round(max(0, value))),
        ``non_negative_lower`` and ``non_negative_upper`` (the raw interval clipped at 0;
        missing where the release knows no accuracy) and ``clipped`` (max(0, -value): what
        clipping added to the count).
    """
    frame = release.to_frame()
    value = frame["value"].to_numpy(dtype=float)
    frame["histogram"] = frame["name"].where(frame["level"] != "", "")
    frame["non_negative"] = non_negative(value)
    for end in ("lower", "upper"):
        ends = frame[end].to_numpy(dtype=float, na_value=np.nan)
        frame[f"non_negative_{end}"] = np.maximum(ends, 0.0)  # a missing end stays missing
    frame["clipped"] = np.maximum(-value, 0.0)
    return frame


def non_negative_to_dict(release: Release) -> dict[str, Any]:
    """The non-negative counts as JSON-ready values, beside the raw ones of ``to_dict()``.

    Parameters
    ----------
    release : Release
        A release whose values are counts: histograms, or one histogram.

    Returns
    -------
    dict of str to Any
        ``values`` (``{histogram: {level: count}}``, or ``{level: count}`` for one histogram,
        as the raw values), ``intervals`` (the same shape, ``[lower, upper]`` clipped at 0;
        empty without accuracy), ``clipped`` (per histogram, or for the one, the sum of what
        clipping added), ``total_change`` (the non-negative total minus the raw one: the
        clipped amount plus the rounding) and ``method``.
    """
    frame = non_negative_counts(release)
    known = frame[frame["non_negative_lower"].notna()]
    ends = zip(known["non_negative_lower"], known["non_negative_upper"], strict=True)
    totals = frame.groupby("histogram", sort=False)[["clipped", "non_negative", "value"]].sum()
    clipped = {str(h): float(t.clipped) for h, t in totals.iterrows()}
    change = {str(h): float(t.non_negative - t.value) for h, t in totals.iterrows()}
    one = list(clipped) == [""]
    return {
        "values": _shaped(frame, [int(v) for v in frame["non_negative"]]),
        "intervals": _shaped(known, [[float(low), float(high)] for low, high in ends]),
        "clipped": clipped[""] if one else clipped,
        "total_change": change[""] if one else change,
        "method": "round(max(0, noisy count)): post-processing, no privacy cost; intervals "
        "clipped at 0",
    }


def _shaped(frame: pd.DataFrame, values: list[Any]) -> dict[str, Any]:
    """``values`` (one per row of ``frame``) in the shape of the raw ones: by histogram, then
    by level; by name for a release of one histogram."""
    out: dict[str, Any] = {}
    rows = zip(frame["histogram"], frame["name"], frame["level"], values, strict=True)
    for histogram, name, level, value in rows:
        if histogram:
            out.setdefault(str(histogram), {})[str(level)] = value
        else:
            out[str(name)] = value
    return out
