"""Exceptions raised by attrpriv.

Every error caused by what the user gave is an :class:`InputError` (the CLI exits with code 2).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar, Token


class AttrprivError(Exception):
    """Base class of every error raised on purpose by attrpriv."""


class InputError(AttrprivError, ValueError):
    """Bad input: the message names the column, value or parameter and what was expected."""


class SchemaError(InputError):
    """Data does not match its schema, or a schema is malformed."""


class BudgetExceededError(InputError):
    """A release would spend more privacy budget than the ledger allows."""


class LedgerError(InputError):
    """A budget ledger file is missing, corrupt, or not an attrpriv ledger."""


class NotFittedError(InputError, AttributeError):
    """A method that needs learned state was called before ``fit``."""


# -- private values in messages ---------------------------------------------------------------
# An error about the data (a value outside its domain, an unknown label) would name the value
# itself, and error messages end up in logs. They name where it is (column, row) instead; the
# value appears only when asked for: ``attrpriv --debug``, or :func:`show_private_values`.
_SHOW_PRIVATE_VALUES = ContextVar("attrpriv_show_private_values", default=False)


def show_private_values(show: bool = True) -> Token[bool]:
    """Let error messages name the offending data values (off by default: they may be private).

    Parameters
    ----------
    show : bool, default True
        Whether messages may name the values.

    Returns
    -------
    contextvars.Token
        The token that undoes this call, for :func:`restore_private_values`.
    """
    return _SHOW_PRIVATE_VALUES.set(bool(show))


def restore_private_values(token: Token[bool]) -> None:
    """Undo the :func:`show_private_values` call that returned ``token``."""
    _SHOW_PRIVATE_VALUES.reset(token)


@contextmanager
def showing_private_values(show: bool = True) -> Iterator[None]:
    """Within the block, error messages name the offending data values (or not, ``show=False``).

    Parameters
    ----------
    show : bool, default True
        Whether messages may name the values inside the block (restored on leaving it).

    Yields
    ------
    None
        Nothing: the setting holds while the block runs.
    """
    token = show_private_values(show)
    try:
        yield
    finally:
        restore_private_values(token)


def private_values_shown() -> bool:
    """Whether error messages may name data values (False by default)."""
    return _SHOW_PRIVATE_VALUES.get()


def plain(value: object) -> object:
    """numpy scalars as Python scalars (``208``, not ``np.int64(208)``), anything else as is."""
    item = getattr(value, "item", None)
    if callable(item) and type(value).__module__ == "numpy":
        return item()
    return value


def offending(value: object, row: object | None = None) -> str:
    """How a message names one bad data value: where it is, and the value only when shown.

    ``offending(200.0, 278)`` is ``" at row 278 (value hidden: --debug shows it)"``, or
    ``" 200.0 at row 278"`` once :func:`show_private_values` is on (note the leading space).
    """
    where = "" if row is None else f" at row {plain(row)!r}"
    if private_values_shown():
        return f" {plain(value)!r}{where}"
    return f"{where} (value hidden: --debug shows it)"
