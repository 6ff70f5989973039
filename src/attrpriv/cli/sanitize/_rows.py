"""The options that choose the rows a ``sanitize`` command reads (``attrpriv.data.RowSelection``
selects them)."""

from __future__ import annotations

from typing import Annotated

import typer

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
