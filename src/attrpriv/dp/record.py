"""What every release returns: the noisy values and a record of the guarantee behind them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from attrpriv._checks import check_delta, check_epsilon, check_non_negative
from attrpriv._io import to_jsonable
from attrpriv.dp.accuracy import Accuracy
from attrpriv.dp.units import DEFINITIONS, PrivacyUnit
from attrpriv.errors import InputError


@dataclass(frozen=True)
class PrivacyRecord:
    """The guarantee a release carries: which definition, which parameters, what it protects.

    ``unit`` is the privacy unit (:class:`PrivacyUnit`, or its ``definition/scope`` string):
    the budget ledger composes spend only within one unit. ``rho`` is the release's zCDP
    parameter where it has one (Gaussian noise), for tighter accounting.
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
        if self.rho is not None:
            object.__setattr__(self, "rho", check_non_negative(self.rho, "rho"))
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "delta", check_delta(self.delta))
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

    def to_dict(self) -> dict[str, Any]:
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
        }

    @classmethod
    def from_dict(cls, spec: Mapping[str, Any]) -> PrivacyRecord:
        if not isinstance(spec, Mapping):
            raise InputError(f"a privacy record must be a mapping, got {type(spec).__name__}")
        fields = dict(spec)
        try:
            fields["assumptions"] = tuple(fields.get("assumptions", ()))
            return cls(**fields)
        except TypeError as exc:
            raise InputError(f"not a privacy record: {exc}") from None


@dataclass(frozen=True)
class Release:
    """A mechanism's output: the noisy ``values`` together with their ``record``.

    ``parts`` holds non-private diagnostics computed from public quantities only (noise scales,
    per-chunk sensitivities), never from the private data. ``accuracy`` says how far each
    released value can be from the true one through the noise (scale and interval per value).
    """

    values: Any
    record: PrivacyRecord
    parts: Mapping[str, Any] = field(default_factory=dict)
    accuracy: Accuracy | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "values": to_jsonable(self.values),
            "record": self.record.to_dict(),
            "parts": to_jsonable(self.parts),
            "accuracy": None if self.accuracy is None else self.accuracy.to_dict(),
        }
