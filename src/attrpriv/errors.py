"""Exceptions raised by attrpriv.

Every error caused by what the user gave (data, schema, parameters, files) is an
:class:`InputError`: the CLI prints its one-line message and exits with code 2.
"""

from __future__ import annotations


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
