"""Short displays of result objects: one-line reprs and small HTML tables for notebooks.

Every result a user holds in a notebook (a release, its record, a risk report, a ledger, sanitized
data) shows itself as one short line (``repr``) and as a compact HTML table
(``_repr_html_``, which Jupyter renders); full pages are :mod:`attrpriv.report`'s. Nothing here
imports numpy or pandas.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Sequence

__all__ = ["html_grid", "html_pairs", "number", "shorten"]

STYLE = "border-collapse:collapse;font-size:90%"
CELL = "padding:2px 8px;border-bottom:1px solid #ddd;text-align:left;vertical-align:top"


def number(value: object, digits: int = 4) -> str:
    """A number in ``digits`` significant figures (``-`` for None, as written for text); a
    whole number, or one of ``10**digits`` or more below 1e15, in full with thousands
    separators (``41,760``, not ``4.176e+04``)."""
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
