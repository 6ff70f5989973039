"""Parameter checks shared by every public entry point (scikit-learn's ``check_*`` style)."""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from attrpriv.errors import InputError


def check_finite_number(value: object, name: str) -> float:
    """Return ``value`` as a float, or raise if it is not a finite real number."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise InputError(f"{name} must be a finite number, got {value!r} ({type(value).__name__})")
    result = float(value)
    if not math.isfinite(result):
        raise InputError(f"{name} must be a finite number, got {result}")
    return result


def check_positive(value: object, name: str) -> float:
    """Return ``value`` as a float, or raise if it is not finite and > 0."""
    result = check_finite_number(value, name)
    if result <= 0:
        raise InputError(f"{name} must be > 0, got {result}")
    return result


def check_non_negative(value: object, name: str) -> float:
    """Return ``value`` as a float, or raise if it is not finite and >= 0."""
    result = check_finite_number(value, name)
    if result < 0:
        raise InputError(f"{name} must be >= 0, got {result}")
    return result


MAX_EPSILON = 700.0
"""The largest privacy-loss parameter accepted anywhere: ``e^epsilon`` must be a finite float
(e^709 is the last), and a larger epsilon protects nothing anyway."""


MIN_EPSILON = 1e-300
"""The smallest privacy-loss parameter accepted anywhere: a noise scale ``sensitivity /
epsilon`` must be a finite float (1 / 1e-309 is not), and a smaller epsilon releases nothing
but noise anyway."""


def check_epsilon(value: object, name: str = "epsilon") -> float:
    """A privacy-loss parameter: finite, in [:data:`MIN_EPSILON`, :data:`MAX_EPSILON`]."""
    result = check_positive(value, name)
    if result < MIN_EPSILON:
        raise InputError(
            f"{name} must be at least {MIN_EPSILON:g} (the noise scale 1/epsilon must be a "
            f"finite number; a smaller epsilon releases only noise), got {result:g}"
        )
    if result > MAX_EPSILON:
        raise InputError(
            f"{name} must be at most {MAX_EPSILON:g} (e^epsilon must be a finite number; a "
            f"larger epsilon protects nothing), got {result:g}"
        )
    return result


def check_delta(value: object, name: str = "delta") -> float:
    """A failure probability: in [0, 1)."""
    result = check_finite_number(value, name)
    if not 0.0 <= result < 1.0:
        raise InputError(f"{name} must be in [0, 1), got {result}")
    return result


def check_probability(value: object, name: str, *, open_interval: bool = True) -> float:
    """A probability strictly inside (0, 1) (or in [0, 1] when ``open_interval`` is False)."""
    result = check_finite_number(value, name)
    inside = 0.0 < result < 1.0 if open_interval else 0.0 <= result <= 1.0
    if not inside:
        bounds = "(0, 1)" if open_interval else "[0, 1]"
        raise InputError(f"{name} must be in {bounds}, got {result}")
    return result


def check_positive_int(value: object, name: str, *, minimum: int = 1) -> int:
    """An integer >= ``minimum`` (bools are refused)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise InputError(f"{name} must be an integer >= {minimum}, got {value!r}")
    result = int(value)
    if result < minimum:
        raise InputError(f"{name} must be an integer >= {minimum}, got {result}")
    return result


def check_choice(value: object, name: str, choices: Iterable[str]) -> str:
    """One of a fixed set of strings."""
    options = tuple(choices)
    if value not in options:
        raise InputError(f"{name} must be one of {list(options)}, got {value!r}")
    return str(value)


Check = Callable[[Any, str], Any]
"""A check: ``check(value, name)`` returns the cleaned value or raises a one-line InputError."""


@dataclass(frozen=True)
class Rule:
    """A declared parameter constraint: what it accepts, in words, and the check enforcing it.

    Rules are what a class declares in ``_constraints`` (scikit-learn's ``Interval`` /
    ``StrOptions`` in spirit): calling one checks a value and returns it cleaned;
    ``str(rule)`` says what it accepts, so the declarations can be read without running them.
    """

    accepts: str
    check: Check = field(repr=False, compare=False)

    def __call__(self, value: Any, name: str) -> Any:
        return self.check(value, name)

    def __str__(self) -> str:
        return self.accepts


def check_flag(value: object, name: str) -> bool:
    """A boolean flag (``True`` or ``False``, not a truthy value)."""
    if not isinstance(value, (bool, np.bool_)):
        raise InputError(f"{name} must be True or False, got {value!r}")
    return bool(value)


NUMBER = Rule("a finite number", check_finite_number)
POSITIVE = Rule("a finite number > 0", check_positive)
NON_NEGATIVE = Rule("a finite number >= 0", check_non_negative)
EPSILON = Rule(f"a number in [{MIN_EPSILON:g}, {MAX_EPSILON:g}]", check_epsilon)
DELTA = Rule("a number in [0, 1)", check_delta)
FLAG = Rule("True or False", check_flag)


def probability(*, open_interval: bool = True) -> Rule:
    """A rule: a probability in (0, 1), or in [0, 1] when ``open_interval`` is False."""
    bounds = "(0, 1)" if open_interval else "[0, 1]"
    return Rule(
        f"a number in {bounds}",
        lambda value, name: check_probability(value, name, open_interval=open_interval),
    )


def integer(minimum: int = 1) -> Rule:
    """A rule: an integer >= ``minimum``."""
    return Rule(
        f"an integer >= {minimum}",
        lambda value, name: check_positive_int(value, name, minimum=minimum),
    )


SEED = integer(minimum=0)


def one_of(choices: Iterable[str]) -> Rule:
    """A rule: one of ``choices``."""
    options = tuple(choices)
    return Rule(f"one of {list(options)}", lambda value, name: check_choice(value, name, options))


def optional(rule: Rule) -> Rule:
    """A rule: ``None``, or a value that passes ``rule``."""
    return Rule(f"None or {rule}", lambda value, name: None if value is None else rule(value, name))


def instance_of(kind: type | tuple[type, ...], what: str) -> Rule:
    """A rule: an instance of ``kind`` (``what`` names it, in the error too)."""

    def check(value: object, name: str) -> object:
        if not isinstance(value, kind):
            raise InputError(f"{name} must be {what}, got {type(value).__name__}")
        return value

    return Rule(what, check)


def one_or_list(kind: type | tuple[type, ...], what: str) -> Rule:
    """A rule: one instance of ``kind``, or a non-empty list of them (``what`` names one)."""
    accepts = f"{what} or a non-empty list of them"

    def check(value: object, name: str) -> object:
        items = [value] if isinstance(value, kind) else value
        if (
            not isinstance(items, (list, tuple))
            or not items
            or not all(isinstance(item, kind) for item in items)
        ):
            raise InputError(f"{name} must be {accepts}, got {type(value).__name__}")
        return value

    return Rule(accepts, check)


def distinct_values(what: str, *, empty: bool = False) -> Rule:
    """A rule: a list of distinct values, not a string (``what`` names them); non-empty unless
    ``empty``."""

    def check(value: object, name: str) -> tuple[Any, ...]:
        if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
            raise InputError(f"{name} must be a list of {what}, got {type(value).__name__}")
        items = tuple(value)
        try:
            distinct = len(set(items)) == len(items)
        except TypeError:  # an unhashable item
            distinct = False
        if not (items or empty) or not distinct:
            raise InputError(f"{name} must be a {accepts[2:]}")
        return items

    accepts = f"a {'' if empty else 'non-empty '}list of distinct {what}"
    return Rule(accepts, check)


def names(*, single: bool = False) -> Rule:
    """A rule: a list of column names (or, with ``single``, also one name). Which names, how
    many and whether one repeats is checked against the data, where the message can say where."""
    accepts = f"{'a column name or ' if single else ''}a list of column names"

    def check(value: object, name: str) -> tuple[str, ...]:
        if single and isinstance(value, str):
            return (value,)
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
            raise InputError(f"{name} must be {accepts}, got {type(value).__name__}")
        return tuple(value)

    return Rule(accepts, check)


def groups() -> Rule:
    """A rule: a list of groups of columns, each a list of column names (checked against the
    data where they are used, as :func:`names` says)."""
    group = names()

    def check(value: object, name: str) -> tuple[tuple[str, ...], ...]:
        if not isinstance(value, (list, tuple)):
            raise InputError(f"{name} must be a list of lists of column names")
        return tuple(group(item, f"each of {name}") for item in value)

    return Rule("a list of lists of column names", check)
