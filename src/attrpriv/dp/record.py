"""What every release returns: the noisy values and a record of the guarantee behind them."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
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
    """One guarantee of a release: (epsilon, delta) for adversaries whose belief lies in ``laws``.

    Parameters
    ----------
    epsilon, delta : float
        The privacy-loss bound (finite, > 0) and the failure probability, in [0, 1).
    laws : str
        The class of laws it holds for, in plain words, or ``"any"``.
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

    The ledger composes spend only within ``unit`` (``docs/ledger-and-audit.md``).

    Parameters
    ----------
    mechanism : str
        The mechanism's name, non-empty.
    definition : str
        The privacy definition, one of ``DEFINITIONS``.
    epsilon, delta : float
        The privacy-loss parameter (finite, > 0) and the failure probability, in [0, 1).
    protects : str
        What an adversary cannot learn, non-empty.
    sensitivity : float or Mapping of str to float
        The sensitivity (or one per named part), each finite and >= 0.
    noise : Mapping of str to Any
        How the noise was drawn (distribution, scales, the sampler's description).
    unit : PrivacyUnit
        The privacy unit (or its ``definition/scope`` string), a unit of ``definition``.
    assumptions : tuple of str, default ()
        What the guarantee assumes.
    rho : float or None, default None
        The zCDP parameter; it must imply the record's ``(epsilon, delta)``.
    guarantees : tuple of Guarantee, default ()
        Guarantees per class of laws (one for ``"any"``) when the main one assumes a law.
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
            The fields by name; ``unit`` as its key string.
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
            The fields by name; ``assumptions``, ``rho`` and ``guarantees`` may be left out.

        Returns
        -------
        PrivacyRecord
            The record, validated as on construction.
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
    """A zCDP parameter implying the record's (epsilon, delta) (Bun & Steinke 2016, Prop. 1.3)."""
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
class Diagnostics:
    """Public facts about how a release was made (noise scales, calibration choices); each
    mechanism returns its own subclass, and nothing in it is a private value."""

    def summary_lines(self) -> list[str]:
        """The facts a user should read, in plain words (what the command line prints).

        Returns
        -------
        list of str
            One line per fact; empty when there is nothing beyond the record to say.
        """
        return []

    def to_dict(self) -> dict[str, Any]:
        """Every field as JSON-ready values.

        Returns
        -------
        dict of str to Any
            One entry per field of the dataclass (fields with ``repr=False`` left out).
        """
        return {f.name: to_jsonable(getattr(self, f.name)) for f in fields(self) if f.repr}


@dataclass(frozen=True)
class Release:
    """A mechanism's output: the noisy ``values`` together with their ``record``.

    Parameters
    ----------
    values : Any
        The noisy values: a number, an array, a Series, or a mapping of them (one per histogram).
    record : PrivacyRecord
        The guarantee behind the values.
    diagnostics : Diagnostics, default Diagnostics()
        How the release was made, from public quantities only, never from the private data.
    accuracy : Accuracy or None, default None
        The noise scale and interval of every released value, where known.
    """

    values: Any
    record: PrivacyRecord
    diagnostics: Diagnostics = field(default_factory=Diagnostics)
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
        """One row per released value, with its interval where the accuracy is known.

        Returns
        -------
        pandas.DataFrame
            The columns ``name``, ``level``, ``value``, ``half_width``, ``lower`` and ``upper``.
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
            ``values``, and ``record``, ``diagnostics`` and ``accuracy`` as their ``to_dict()``.
        """
        return {
            "values": to_jsonable(self.values),
            "record": self.record.to_dict(),
            "diagnostics": self.diagnostics.to_dict(),
            "accuracy": None if self.accuracy is None else self.accuracy.to_dict(),
        }


def _flat(values: Any) -> dict[tuple[str, str], float]:
    """Released values as ``{(name, level): value}``, in their order."""
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
