"""A first schema for your own data: roles guessed, domains read off the data (and marked so). A
draft's domains are a release of the data: replace them with public ones and delete the
``inferred`` key before protecting anything with it (``docs/schema.md``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from attrpriv.data.schema import Column, Role, Schema
from attrpriv.errors import SchemaError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["MIN_IDENTIFIER_ROWS", "draft_schema"]

MIN_IDENTIFIER_ROWS = 20
"""A column is taken for an identifier only with at least this many rows, all distinct."""


def draft_schema(
    frame: pd.DataFrame,
    *,
    target: str | None = None,
    sensitive: Sequence[str] = (),
    ignore: Sequence[str] = (),
    name: str = "",
) -> Schema:
    """Draft a schema for ``frame``: roles guessed or given, every domain read off the data.

    An identifier-like column (distinct integers or text, none missing) is ``ignore`` without a
    domain; every other unnamed column is a ``feature``.

    Parameters
    ----------
    frame : pandas.DataFrame
        The data (at least one row).
    target : str, optional
        The column a model predicts (role ``target``).
    sensitive, ignore : sequence of str
        The columns to protect (role ``sensitive``), and those that are not attributes (role
        ``ignore``, no domain).
    name : str
        The schema's name.

    Returns
    -------
    Schema
        The draft, every column with a domain listed in ``Schema.inferred``.

    Raises
    ------
    SchemaError
        A named column is missing or given two roles, there are no rows, or a column is all missing.

    Warns
    -----
    PrivateDomainWarning
        Always: the domains were read from the data.
    """
    columns = [str(c) for c in frame.columns]
    given: dict[str, Role] = {}
    for role, names in (
        (Role.TARGET, [] if target is None else [target]),
        (Role.SENSITIVE, list(sensitive)),
        (Role.IGNORE, list(ignore)),
    ):
        for column in names:
            if column not in columns:
                raise SchemaError(
                    f"{role.value} column {column!r} is not in the data; columns: {columns}"
                )
            if given.setdefault(column, role) is not role:
                raise SchemaError(
                    f"column {column!r} is given two roles: {given[column].value} and {role.value}"
                )
    if len(frame) == 0:
        raise SchemaError("data has no rows")
    for column in columns:
        if column not in given and _is_identifier(frame[column]):
            given[column] = Role.IGNORE
    kept = [c for c in columns if given.get(c) is not Role.IGNORE]
    if not kept:
        raise SchemaError("every column is ignored: nothing to draft a domain for")
    roles = {c: r for c, r in given.items() if c in kept}
    inferred = Schema.infer(frame[kept], roles)  # warns: the domains are read off the data
    drafted = {c.name: c for c in inferred.columns}
    return Schema(
        tuple(drafted.get(c, Column(c, Role.IGNORE)) for c in columns),
        name=name,
        inferred=inferred.inferred,
    )


def _is_identifier(values: pd.Series) -> bool:
    """Integers or text, no value missing and none repeated, over enough rows to tell."""
    import pandas as pd

    if len(values) < MIN_IDENTIFIER_ROWS or values.isna().any():
        return False
    kind = values.dtype
    if pd.api.types.is_bool_dtype(kind) or pd.api.types.is_float_dtype(kind):
        return False
    return bool(values.is_unique)
