"""Plain words the pages share: epsilon, delta and rho with a worked example, and settings."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "ci_method",
    "delta_words",
    "epsilon_example",
    "factor",
    "plain",
    "plural",
    "rho_words",
]

_PARAMETER = re.compile(r"\b([a-z][a-z0-9]*(?:_[a-z0-9]+)+)=")


def factor(epsilon: float) -> str:
    """``e^epsilon`` in words: three digits, thousands separated, or "more than a billion"."""
    if epsilon > math.log(1e9):
        return "more than a billion"
    value = math.exp(epsilon)
    return f"{value:.3g}" if value < 1000 else f"{value:,.0f}"


def plural(n: int, noun: str) -> str:
    """``"1 count"``, ``"2 counts"``."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def epsilon_example(epsilon: float, whose: str, secret: str, other: str) -> str:
    """Epsilon in one plain sentence: ``whose`` data, ``secret`` versus ``other``."""
    text = f"{epsilon:g}"
    return (
        f"Epsilon is how much {whose} can change what anyone learns: at epsilon = {text}, "
        f"anything anyone concludes is at most e^{text} \u2248 {factor(epsilon)} times "
        f"more likely with {secret} than with {other}."
    )


def delta_words(delta: float) -> str:
    """What a delta means, in one sentence (empty for delta = 0)."""
    if delta <= 0:
        return ""
    odds = f"about 1 in {1 / delta:,.0f}" if delta < 0.5 else f"{delta:.0%}"
    return (
        f"Delta = {delta:g} is the chance ({odds}) that this bound does not hold: small, "
        "but not zero."
    )


def rho_words(rho: float | None) -> str:
    """What a release's rho (zCDP) means, in one sentence (empty without one)."""
    if rho is None:
        return ""
    return (
        f"Rho = {rho:.4g} (zCDP) is the same guarantee measured the way Gaussian noise adds "
        "up over releases; it implies the epsilon above at this delta."
    )


_CI_METHODS = {
    "delong": "DeLong's variance",
    "bootstrap": "bootstrap",
    "clopper-pearson": "Clopper-Pearson",
    "newcombe-paired": "Newcombe's paired interval",
    "wilson": "Wilson",
}
_POOLED = re.compile(r"^(rubin-pooled|random-effects)\((\d+)\)$")


def ci_method(method: str) -> str:
    """How a CI was computed, in words; an unknown method name as it is, without dashes."""
    pooled = _POOLED.match(method)
    if pooled:
        rule = "Rubin's rules" if pooled.group(1) == "rubin-pooled" else "random effects"
        return f"pooled over {plural(int(pooled.group(2)), 'repeat')} ({rule})"
    return _CI_METHODS.get(method, method.replace("-", " "))


def plain(value: Any) -> str:
    """A JSON-like setting's value in words, never a repr: ``None`` "not set", ``True`` "yes"."""
    if value is None:
        return "not set"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, float)):
        return f"{value:g}"
    if isinstance(value, Mapping):
        return ", ".join(f"{key} {plain(item)}" for key, item in value.items()) or "none"
    if isinstance(value, Sequence) and not isinstance(value, str):
        return ", ".join(plain(item) for item in value) or "none"
    return _PARAMETER.sub(lambda found: found.group(1).replace("_", " ") + " ", str(value))
