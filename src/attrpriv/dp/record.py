"""What every release returns: the noisy values and a record of the guarantee behind them."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from attrpriv._checks import check_delta, check_epsilon, check_non_negative, check_positive
from attrpriv._display import html_grid, html_pairs, number
from attrpriv._io import to_jsonable
from attrpriv.dp.accuracy import Accuracy
from attrpriv.dp.units import DEFINITIONS, PrivacyUnit
from attrpriv.errors import InputError

if TYPE_CHECKING:
    import pandas as pd


ANY_LAW = "any"
"""``Guarantee.laws`` of a guarantee that holds whatever the data's law (no assumption)."""


@dataclass(frozen=True)
class Guarantee:
    """One guarantee of a release: (epsilon, delta) about the record's secret, for every
    adversary whose belief about the data's law lies in ``laws``.

    A record's own ``epsilon`` and ``delta`` are its main (conditional) guarantee; a mechanism
    whose claim rests on an assumption about the data's law (a dependence model, independent
    modules) also states what the same noise guarantees for every law (``laws == "any"``).

    Parameters
    ----------
    epsilon : float
        The privacy-loss bound, finite and > 0 (no cap: an unconditional bound may be large).
    delta : float
        The failure probability, in [0, 1).
    laws : str
        The class of laws it holds for, in plain words, or ``"any"``.

    Raises
    ------
    InputError
        If a field is invalid as described above.
    """

    epsilon: float
    delta: float
    laws: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_positive(self.epsilon, "guarantee epsilon"))
        object.__setattr__(self, "delta", check_delta(self.delta, "guarantee delta"))
        if not isinstance(self.laws, str) or not self.laws.strip():
            raise InputError("a guarantee must say which laws it holds for ('any' for all)")

    def describe(self) -> str:
        """The guarantee in one line.

        Returns
        -------
        str
            ``"epsilon 3.2 for any law of the data"``, or ``"epsilon 1 if <laws>"``.
        """
        text = f"epsilon {number(self.epsilon)}"
        if self.delta:
            text += f", delta {number(self.delta)}"
        who = "for any law of the data" if self.laws == ANY_LAW else f"if {self.laws}"
        return f"{text} {who}"

    def to_dict(self) -> dict[str, Any]:
        """The guarantee as a JSON-ready dict.

        Returns
        -------
        dict of str to Any
            ``{"epsilon": ..., "delta": ..., "laws": ...}``.
        """
        return {"epsilon": self.epsilon, "delta": self.delta, "laws": self.laws}


@dataclass(frozen=True)
class PrivacyRecord:
    """The guarantee a release carries: which definition, which parameters, what it protects.

    ``unit`` is the privacy unit (:class:`PrivacyUnit`, or its ``definition/scope`` string):
    the budget ledger composes spend only within one unit. ``rho`` is the release's zCDP
    parameter where it has one (Gaussian noise), for tighter accounting.

    Parameters
    ----------
    mechanism : str
        The mechanism's name, non-empty.
    definition : str
        The privacy definition, one of ``DEFINITIONS``.
    epsilon : float
        The privacy-loss parameter, finite and > 0.
    delta : float
        The failure probability, in [0, 1).
    protects : str
        What an adversary cannot learn, non-empty.
    sensitivity : float or Mapping of str to float
        The sensitivity (or one per named part), each finite and >= 0; a mapping is stored
        as a dict.
    noise : Mapping of str to Any
        How the noise was drawn (distribution, scales, the sampler's description); stored as
        a dict.
    unit : PrivacyUnit
        The privacy unit, or its ``definition/scope`` string (parsed); it must be a unit of
        ``definition``.
    assumptions : tuple of str, default ()
        What the guarantee assumes; any sequence of strings, stored as a tuple.
    rho : float or None, default None
        The zCDP parameter, >= 0 and, when ``delta > 0``, no weaker than
        ``(epsilon, delta)``: ``rho + 2 sqrt(rho ln(1/delta)) >= epsilon``.
    guarantees : tuple of Guarantee, default ()
        The release's guarantees for stated classes of laws, when its main one rests on an
        assumption about the data's law: each a :class:`Guarantee` (or its dict), one of them
        for ``laws == "any"``. Empty for a mechanism whose guarantee holds for every law.

    Raises
    ------
    InputError
        If a field is invalid as described above.
    """

    mechanism: str
    definition: str
    epsilon: float
    delta: float
    protects: str
    sensitivity: float | Mapping[str, float]
    noise: Mapping[str, Any]
    unit: PrivacyUnit
    assumptions: tuple[str, ...] = ()
    rho: float | None = None
    guarantees: tuple[Guarantee, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.mechanism, str) or not self.mechanism:
            raise InputError(f"record mechanism must be a non-empty name, got {self.mechanism!r}")
        if self.definition not in DEFINITIONS:
            raise InputError(
                f"record definition must be one of {list(DEFINITIONS)}, got {self.definition!r}"
            )
        unit = self.unit if isinstance(self.unit, PrivacyUnit) else PrivacyUnit.parse(self.unit)
        if unit.definition != self.definition:
            raise InputError(
                f"record unit {unit.key!r} is not a unit of its definition {self.definition!r}"
            )
        object.__setattr__(self, "unit", unit)
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "delta", check_delta(self.delta))
        if self.rho is not None:
            object.__setattr__(self, "rho", _check_rho(self.rho, self.epsilon, self.delta))
        if not isinstance(self.protects, str) or not self.protects:
            raise InputError("record 'protects' must say what an adversary cannot learn")
        if isinstance(self.sensitivity, Mapping):
            for key, value in self.sensitivity.items():
                check_non_negative(value, f"sensitivity[{key!r}]")
            object.__setattr__(self, "sensitivity", dict(self.sensitivity))
        else:
            object.__setattr__(
                self, "sensitivity", check_non_negative(self.sensitivity, "sensitivity")
            )
        object.__setattr__(self, "noise", dict(self.noise))
        if isinstance(self.assumptions, str) or not all(
            isinstance(a, str) for a in self.assumptions
        ):
            raise InputError(
                f"record assumptions must be a sequence of strings, got {self.assumptions!r}"
            )
        object.__setattr__(self, "assumptions", tuple(self.assumptions))
        object.__setattr__(self, "guarantees", _guarantees(self.guarantees))

    @property
    def guarantee(self) -> str:
        """The guarantee in one phrase: ``(epsilon=1, delta=0)-dp``."""
        return f"(epsilon={number(self.epsilon)}, delta={number(self.delta)})-{self.definition}"

    def __repr__(self) -> str:
        return f"PrivacyRecord({self.mechanism}: {self.guarantee}, unit {self.unit.key})"

    def _display_pairs(self) -> list[tuple[str, str]]:
        noise = self.noise
        pairs = [
            ("mechanism", self.mechanism),
            ("guarantee", self.guarantee + ("" if self.rho is None else f", rho={self.rho:.4g}")),
            ("privacy unit", self.unit.key),
            ("protects", self.protects),
        ]
        if "distribution" in noise:
            pairs.append(("noise", f"{noise['distribution']} ({noise.get('sampler', '')})"))
        pairs += [("guarantee", g.describe()) for g in self.guarantees]
        pairs += [("assumes", a) for a in self.assumptions]
        return pairs

    def _repr_html_(self) -> str:
        return html_pairs("Privacy record", self._display_pairs())

    def to_dict(self) -> dict[str, Any]:
        """The record as a JSON-ready dict (read back by :meth:`from_dict`).

        Returns
        -------
        dict of str to Any
            The fields by name; ``unit`` as its key string, ``assumptions`` as a list, and
            ``sensitivity`` and ``noise`` converted to JSON-ready values.
        """
        return {
            "mechanism": self.mechanism,
            "definition": self.definition,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "protects": self.protects,
            "sensitivity": to_jsonable(self.sensitivity),
            "noise": to_jsonable(self.noise),
            "unit": self.unit.key,
            "assumptions": list(self.assumptions),
            "rho": self.rho,
            "guarantees": [g.to_dict() for g in self.guarantees],
        }

    @classmethod
    def from_dict(cls, spec: Mapping[str, Any]) -> PrivacyRecord:
        """A record from its :meth:`to_dict` form.

        Parameters
        ----------
        spec : Mapping of str to Any
            The record's fields by name; ``unit`` is required, ``assumptions``, ``rho`` and
            ``guarantees`` may be left out.

        Returns
        -------
        PrivacyRecord
            The record, validated as on construction.

        Raises
        ------
        InputError
            If ``spec`` is not a mapping, has no ``unit``, lacks a required field or has an
            unknown one, or holds an invalid value.
        """
        if not isinstance(spec, Mapping):
            raise InputError(f"a privacy record must be a mapping, got {type(spec).__name__}")
        fields = dict(spec)
        if "unit" not in fields:
            raise InputError(
                "not a privacy record of this version: it has no privacy unit (records written "
                "before privacy units cannot be read as a guarantee about any one secret)"
            )
        try:
            fields["assumptions"] = tuple(fields.get("assumptions", ()))
            fields["guarantees"] = tuple(fields.get("guarantees", ()))
            return cls(**fields)
        except TypeError as exc:
            raise InputError(f"not a privacy record: {exc}") from None


def _guarantees(value: object) -> tuple[Guarantee, ...]:
    """``value`` as guarantees: a sequence of :class:`Guarantee` or their dicts."""
    if isinstance(value, (str, Mapping)) or not isinstance(value, (list, tuple)):
        raise InputError(f"record guarantees must be a sequence, got {type(value).__name__}")
    found = []
    for item in value:
        if isinstance(item, Mapping):
            try:
                item = Guarantee(**item)
            except TypeError as exc:
                raise InputError(f"not a guarantee: {exc}") from None
        if not isinstance(item, Guarantee):
            raise InputError(f"a record guarantee must be a Guarantee, got {item!r}")
        found.append(item)
    return tuple(found)


def _check_rho(rho: object, epsilon: float, delta: float) -> float:
    """A zCDP parameter no weaker than the record's own (epsilon, delta): rho-zCDP implies
    (rho + 2 sqrt(rho ln(1/delta)), delta)-DP (Bun & Steinke 2016, Proposition 1.3), and a
    record whose epsilon exceeds that would let zCDP accounting admit more than it states."""
    value = check_non_negative(rho, "rho")
    if delta > 0.0:
        implied = value + 2.0 * math.sqrt(value * math.log(1.0 / delta))
        if epsilon > implied * (1.0 + 1e-12):
            raise InputError(
                f"rho={value:g} implies epsilon={implied:g} at delta={delta:g}, less than the "
                f"record's epsilon={epsilon:g}: the two guarantees disagree"
            )
    return value


@dataclass(frozen=True)
class Release:
    """A mechanism's output: the noisy ``values`` together with their ``record``.

    ``parts`` holds non-private diagnostics computed from public quantities only (noise scales,
    per-chunk sensitivities), never from the private data. ``accuracy`` says how far each
    released value can be from the true one through the noise (scale and interval per value).

    Parameters
    ----------
    values : Any
        The noisy released values: a number, a numpy array, a pandas Series, or a mapping of
        them (one per histogram).
    record : PrivacyRecord
        The guarantee behind the values.
    parts : Mapping of str to Any, default {}
        Non-private diagnostics, computed from public quantities only.
    accuracy : Accuracy or None, default None
        The noise scale and interval of every released value, where known.
    """

    values: Any
    record: PrivacyRecord
    parts: Mapping[str, Any] = field(default_factory=dict)
    accuracy: Accuracy | None = None

    def __repr__(self) -> str:
        count = len(_flat(self.values))
        shape = (
            f"{len(self.values)} histograms, {count} values"
            if isinstance(self.values, Mapping)
            else f"{count} value{'s' if count != 1 else ''}"
        )
        record = self.record
        return f"Release({record.mechanism}, {record.unit.key}, {record.guarantee}: {shape})"

    def to_frame(self) -> pd.DataFrame:
        """One row per released value: its ``name`` (the histogram or statistic), ``level``
        (the histogram bin; empty for a statistic), the noisy ``value`` and, where the release
        knows its accuracy, the ``half_width`` of its interval and that interval's ``lower`` and
        ``upper`` ends (at ``accuracy.confidence``, per value).

        Returns
        -------
        pandas.DataFrame
            The columns ``name``, ``level``, ``value``, ``half_width``, ``lower`` and ``upper``,
            in the order of the values; the last three are missing where no accuracy is known.
        """
        import pandas as pd

        values = _flat(self.values)
        widths = _flat(self.accuracy.half_width) if self.accuracy is not None else {}
        rows = []
        for (name, level), value in values.items():
            width = widths.get((name, level))
            rows.append(
                {
                    "name": name,
                    "level": level,
                    "value": value,
                    "half_width": width,
                    "lower": None if width is None else value - width,
                    "upper": None if width is None else value + width,
                }
            )
        columns = ["name", "level", "value", "half_width", "lower", "upper"]
        return pd.DataFrame(rows, columns=columns)

    def _repr_html_(self, max_values: int = 12) -> str:
        frame = self.to_frame()
        confidence = "" if self.accuracy is None else f" ({self.accuracy.confidence:.0%})"
        rows = [
            (str(r.name), str(r.level), number(r.value), number(_or_none(r.half_width)))
            for r in frame.head(max_values).itertuples()
        ]
        hidden = len(frame) - max_values
        more = f"{hidden} more values in Release.to_frame(). " if hidden > 0 else ""
        return html_grid(
            ["name", "level", "noisy value", f"+- noise{confidence}"],
            rows,
            title=repr(self),
            note=f"{more}Protects {self.record.protects}.",
        )

    def to_dict(self) -> dict[str, Any]:
        """The release as a JSON-ready dict.

        Returns
        -------
        dict of str to Any
            ``values`` and ``parts`` converted to JSON-ready values, ``record`` and
            ``accuracy`` (None when unknown) as their own ``to_dict()``.
        """
        return {
            "values": to_jsonable(self.values),
            "record": self.record.to_dict(),
            "parts": to_jsonable(self.parts),
            "accuracy": None if self.accuracy is None else self.accuracy.to_dict(),
        }


def _flat(values: Any) -> dict[tuple[str, str], float]:
    """Released values (a mapping of Series, a Series, an array or a number) as
    ``{(name, level): value}``, in their order."""
    import numpy as np
    import pandas as pd

    if isinstance(values, Mapping):
        out: dict[tuple[str, str], float] = {}
        for name, part in values.items():
            out |= {(str(name), label): v for (label, _), v in _flat(part).items()}
        return out
    if isinstance(values, pd.Series):
        return {(str(k), ""): float(v) for k, v in values.items()}
    if isinstance(values, np.ndarray):
        return {(str(i), ""): float(v) for i, v in enumerate(values.ravel())}
    return {("value", ""): float(values)}


def _or_none(value: Any) -> Any:
    """``None`` for a missing number (NaN in a frame), the number otherwise."""
    return None if value is None or value != value else value
