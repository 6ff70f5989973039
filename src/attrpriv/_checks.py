"""Parameter checks shared by every public entry point (scikit-learn's ``check_*`` style)."""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterable
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


def one_of(choices: Iterable[str]) -> Check:
    """A constraint: one of ``choices``."""
    options = tuple(choices)
    return lambda value, name: check_choice(value, name, options)


def optional(check: Check) -> Check:
    """A constraint: ``None``, or a value that passes ``check``."""
    return lambda value, name: None if value is None else check(value, name)


def check_flag(value: object, name: str) -> bool:
    """A boolean flag (``True`` or ``False``, not a truthy value)."""
    if not isinstance(value, (bool, np.bool_)):
        raise InputError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def instance_of(kind: type | tuple[type, ...], what: str) -> Check:
    """A constraint: an instance of ``kind`` (``what`` names it in the error)."""

    def check(value: object, name: str) -> object:
        if not isinstance(value, kind):
            raise InputError(f"{name} must be {what}, got {type(value).__name__}")
        return value

    return check
