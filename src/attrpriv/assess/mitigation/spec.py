"""Strategies from CLI strings: ``drop``, ``generalize:5:tree``, ``ldp:1.0``, ..."""

from __future__ import annotations

import math

from attrpriv.assess.choices import STRATEGY_FORMS
from attrpriv.assess.mitigation.base import Drop, Strategy
from attrpriv.assess.mitigation.encrypt import Encrypt
from attrpriv.assess.mitigation.generalize import BINNING_METHODS, Generalize
from attrpriv.assess.mitigation.ldp import LocalDPNoise
from attrpriv.assess.mitigation.synthetic import SyntheticReplacement
from attrpriv.data.schema import Schema
from attrpriv.errors import InputError


def parse_strategy(
    spec: str, *, schema: Schema | None = None, ldp_epsilon: float | None = None
) -> Strategy:
    """One strategy from its CLI form (``schema``: LDP domains; ``ldp_epsilon``: bare ``ldp``)."""
    if not isinstance(spec, str) or not spec.strip():
        raise InputError(f"mitigation must be one of {STRATEGY_FORMS}, got {spec!r}")
    parts = [p.strip() for p in spec.strip().split(":")]
    name, args = parts[0].lower(), parts[1:]
    if name in ("drop", "synthetic", "encrypt"):
        if args:
            raise InputError(f"mitigation {spec!r}: {name!r} takes no ':' arguments")
        plain: dict[str, type[Strategy]] = {
            "drop": Drop,
            "synthetic": SyntheticReplacement,
            "encrypt": Encrypt,
        }
        return plain[name]()
    if name == "generalize":
        return _generalize(spec, args)
    if name == "ldp":
        if not args and ldp_epsilon is not None:
            return LocalDPNoise(ldp_epsilon, schema=schema)
        if len(args) != 1:
            raise InputError(f"mitigation {spec!r}: expected 'ldp:EPSILON', e.g. 'ldp:1.0'")
        return LocalDPNoise(_number(spec, args[0]), schema=schema)
    raise InputError(
        f"mitigation {spec!r}: unknown strategy {parts[0]!r}; expected {STRATEGY_FORMS}"
    )


def _generalize(spec: str, args: list[str]) -> Generalize:
    if len(args) > 2:
        raise InputError(f"mitigation {spec!r}: expected 'generalize[:BINS[:quantile|tree]]'")
    bins = 5
    if args:
        try:
            bins = int(args[0])
        except ValueError:
            raise InputError(
                f"mitigation {spec!r}: BINS must be a whole number >= 2, got {args[0]!r}"
            ) from None
    method = args[1].lower() if len(args) == 2 else "quantile"
    if bins < 2 or method not in BINNING_METHODS:
        raise InputError(
            f"mitigation {spec!r}: expected BINS >= 2 and a method in {list(BINNING_METHODS)}"
        )
    return Generalize(bins=bins, method=method)


def _number(spec: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise InputError(f"mitigation {spec!r}: EPSILON must be a number > 0, got {text!r}")
    return value
