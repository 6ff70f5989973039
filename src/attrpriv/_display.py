"""Short displays of result objects: one-line reprs and small HTML tables for notebooks.

Nothing here imports numpy or pandas.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Sequence

__all__ = ["html_grid", "html_pairs", "number", "shorten"]

STYLE = "border-collapse:collapse;font-size:90%"
CELL = "padding:2px 8px;border-bottom:1px solid #ddd;text-align:left;vertical-align:top"


def number(value: object, digits: int = 4) -> str:
    """A number in ``digits`` significant figures, large whole numbers in full (``41,760``)."""
    if value is None:
        return "-"
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        try:
            value = float(value)  # type: ignore[arg-type]  # numpy scalars
        except (TypeError, ValueError):
            return str(value)
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if 10**digits <= abs(value) < 1e15:
        return f"{round(value):,}"
    return f"{value:.{digits}g}"


def shorten(text: str, width: int = 80) -> str:
    """``text`` on one line, cut to ``width`` characters with an ellipsis."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= width else flat[: width - 3].rstrip() + "..."


def html_pairs(title: str, pairs: Iterable[tuple[str, str]]) -> str:
    """A two-column table (name, value) under a bold ``title``; every cell escaped."""
    rows = "".join(
        f"<tr><th style='{CELL}'>{html.escape(k)}</th><td style='{CELL}'>{html.escape(v)}</td></tr>"
        for k, v in pairs
    )
    return f"<div><b>{html.escape(title)}</b><table style='{STYLE}'>{rows}</table></div>"


def html_grid(
    header: Sequence[str], rows: Iterable[Sequence[str]], *, title: str = "", note: str = ""
) -> str:
    """A table with a header row; every cell escaped; ``note`` in small print under it."""
    head = "".join(f"<th style='{CELL}'>{html.escape(h)}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(f"<td style='{CELL}'>{html.escape(c)}</td>" for c in row) + "</tr>"
        for row in rows
    )
    caption = f"<b>{html.escape(title)}</b>" if title else ""
    small = f"<div style='font-size:80%;color:#555'>{html.escape(note)}</div>" if note else ""
    return f"<div>{caption}<table style='{STYLE}'><tr>{head}</tr>{body}</table>{small}</div>"
