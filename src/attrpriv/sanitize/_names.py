"""The checks of the column-name parameters the table sanitizers share."""

from __future__ import annotations

from attrpriv._checks import Rule
from attrpriv.errors import InputError


def column_name(value: object, name: str) -> str:
    """``value`` if it can name a protected column (a unit's key joins names with ',')."""
    if not isinstance(value, str) or not value.strip():
        raise InputError(f"{name} must be a column name (a non-empty string), got {value!r}")
    if "," in value or "@" in value:
        raise InputError(f"{name} {value!r}: a protected column's name cannot hold ',' or '@'")
    return value


def column_names(value: object, name: str) -> tuple[str, ...]:
    """``value`` as a tuple of distinct column names."""
    if not isinstance(value, (list, tuple)):
        raise InputError(f"{name} must be a list of column names, got {type(value).__name__}")
    names = tuple(column_name(v, f"each of {name}") for v in value)
    if len(set(names)) != len(names):
        raise InputError(f"{name} names a column twice: {list(names)}")
    return names


def proxies_choice(value: object, name: str) -> object:
    """``"auto"``, or a list of distinct column names."""
    if isinstance(value, str):
        if value != "auto":
            raise InputError(f"{name} must be 'auto' or a list of column names, got {value!r}")
        return value
    return column_names(value, name)


COLUMN_NAME = Rule("a column name (a non-empty string without ',' or '@')", column_name)
COLUMN_NAMES = Rule("a list of distinct column names", column_names)
PROXIES = Rule("'auto' or a list of distinct column names", proxies_choice)

__all__ = [
    "COLUMN_NAME",
    "COLUMN_NAMES",
    "PROXIES",
    "column_name",
    "column_names",
    "proxies_choice",
]
