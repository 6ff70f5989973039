"""Strategies from CLI strings: ``drop``, ``generalize:5:tree``, ``ldp:1.0:bins:5``,
``regularize:min_samples_leaf=50``, ..."""

from __future__ import annotations

import math

from attrpriv.assess.choices import STRATEGY_FORMS
from attrpriv.assess.mitigation.base import Drop, Strategy
from attrpriv.assess.mitigation.encrypt import Encrypt
from attrpriv.assess.mitigation.generalize import BINNING_METHODS, Generalize
from attrpriv.assess.mitigation.ldp import LocalDPNoise
from attrpriv.assess.mitigation.regularize import Regularize
from attrpriv.assess.mitigation.synthetic import SyntheticReplacement
from attrpriv.data.schema import Schema
from attrpriv.errors import InputError


def parse_strategy(
    spec: str, *, schema: Schema | None = None, ldp_epsilon: float | None = None
) -> Strategy | Regularize:
    """One strategy from its CLI form (``schema``: LDP domains; ``ldp_epsilon``: bare ``ldp``).

    Parameters
    ----------
    spec : str
        One of the forms of ``STRATEGY_FORMS``; the name is case-insensitive.
    schema : Schema or None, default None
        Keyword-only: the public domains of local DP.
    ldp_epsilon : float or None, default None
        Keyword-only: the epsilon of a bare ``ldp``.

    Returns
    -------
    Strategy or Regularize
        A data strategy, or :class:`Regularize` (a model-level one) for ``regularize``.

    Raises
    ------
    InputError
        If ``spec`` is not one of the forms; the message names the bad part.
    """
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
        return _ldp(spec, args, schema, ldp_epsilon)
    if name == "regularize":
        return _regularize(spec, args)
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


def _ldp(
    spec: str, args: list[str], schema: Schema | None, ldp_epsilon: float | None
) -> LocalDPNoise:
    if not args and ldp_epsilon is not None:
        return LocalDPNoise(ldp_epsilon, schema=schema)
    if len(args) == 1:
        return LocalDPNoise(_number(spec, args[0]), schema=schema)
    if len(args) != 3 or args[1].lower() != "bins":
        raise InputError(
            f"mitigation {spec!r}: expected 'ldp:EPSILON' or 'ldp:EPSILON:bins:K', e.g. 'ldp:1.0'"
        )
    try:
        bins = int(args[2])
    except ValueError:
        bins = 0
    if bins < 2:
        raise InputError(f"mitigation {spec!r}: K must be a whole number >= 2, got {args[2]!r}")
    return LocalDPNoise(_number(spec, args[0]), schema=schema, numeric="bins", bins=bins)


def _regularize(spec: str, args: list[str]) -> Regularize:
    if not args:
        return Regularize()
    params: dict[str, int | float | str] = {}
    for pair in args:  # ':' separates them: ',' separates the strategies of --mitigate
        key, equals, text = (part.strip() for part in pair.partition("="))
        if not key or not equals or not text or key in params:
            raise InputError(
                f"mitigation {spec!r}: expected 'regularize[:KEY=VALUE[:KEY=VALUE...]]' with "
                "distinct keys, e.g. 'regularize:min_samples_leaf=50'"
            )
        params[key] = _value(text)
    return Regularize(params)


def _value(text: str) -> int | float | str:
    """A parameter value: an int, else a float, else the text itself."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _number(spec: str, text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise InputError(f"mitigation {spec!r}: EPSILON must be a number > 0, got {text!r}")
    return value
