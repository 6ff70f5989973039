"""Non-negative rounded counts: round(max(0, y)), post-processing at no privacy cost.

The raw (unbiased) counts are kept. See docs/mechanisms/laplace-histograms.md, "Negative counts".
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
    """Each noisy count y as round(max(0, y)) (halves to even)."""
    rounded: np.ndarray = np.rint(np.maximum(np.asarray(values, dtype=float), 0.0))
    return rounded


def non_negative_counts(release: Release) -> pd.DataFrame:
    """Every count of a release as a frame: raw, non-negative, both intervals and ``clipped``."""
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
    """The non-negative counts as JSON-ready values, beside the raw ones of ``to_dict()``."""
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
    """``values`` (one per row of ``frame``) in the raw ones' shape: by histogram, then by level."""
    out: dict[str, Any] = {}
    rows = zip(frame["histogram"], frame["name"], frame["level"], values, strict=True)
    for histogram, name, level, value in rows:
        if histogram:
            out.setdefault(str(histogram), {})[str(level)] = value
        else:
            out[str(name)] = value
    return out
