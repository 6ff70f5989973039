"""Privacy units ``definition/scope`` and which guarantees imply which. Epsilons compose only within
a unit; the few proven conversions between units are in :func:`conversions`
(``docs/ledger-and-audit.md``, "Privacy units" and "Conversions")."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from attrpriv.errors import InputError

DEFINITIONS = ("dp", "dependent-dp", "attribute-privacy", "pufferfish")
ROW_NEIGHBOURS = ("add-remove", "substitute")
ANSWER = "answer"
PART = "substitute:"
RECORD = "record:"


@dataclass(frozen=True)
class PrivacyUnit:
    """One unit of protection: a privacy definition and the secret it is about.

    Parameters
    ----------
    definition : str
        The privacy definition, one of ``DEFINITIONS``.
    scope : str
        The secret: ``add-remove``, ``substitute`` (a row), ``substitute:<columns>``, ``answer``,
        ``<statistics>`` or ``<secrets>``, optionally ending in ``@<model>``.
    """

    definition: str
    scope: str

    def __post_init__(self) -> None:
        if self.definition not in DEFINITIONS:
            raise InputError(
                f"privacy definition must be one of {list(DEFINITIONS)}, got {self.definition!r}"
            )
        if not isinstance(self.scope, str) or not self.scope.strip():
            raise InputError(f"the unit of a {self.definition} guarantee must name its secret")
        if self.definition == "dp" and not (
            self.scope in ROW_NEIGHBOURS or (self.scope.startswith(PART) and self.parts)
        ):
            raise InputError(
                f"a dp unit is one row under {' or '.join(ROW_NEIGHBOURS)} neighbours, or "
                f"{PART}<columns> for part of each row, got {self.scope!r}"
            )
        if self.definition == "dependent-dp" and self.base != ANSWER:
            raise InputError(
                f"a dependent-dp unit is one {ANSWER!r} (or {ANSWER}@<model>), got {self.scope!r}"
            )

    @property
    def base(self) -> str:
        """The scope without its model fingerprint."""
        return self.scope.split("@", 1)[0]

    @property
    def model(self) -> str:
        """The fingerprint of the model the guarantee is relative to ("" when none)."""
        return self.scope.split("@", 1)[1] if "@" in self.scope else ""

    @property
    def parts(self) -> frozenset[str]:
        """The named columns, attributes or statistics of the scope (empty for a row)."""
        base = self.base
        for prefix in (PART, RECORD):
            if base.startswith(prefix):
                base = base[len(prefix) :]
                break
        else:
            if self.definition == "dp" or self.definition == "dependent-dp":
                return frozenset()
        return frozenset(p.strip() for p in base.split(",") if p.strip())

    @property
    def key(self) -> str:
        """The unit as one string, ``definition/scope``."""
        return f"{self.definition}/{self.scope}"

    @classmethod
    def parse(cls, text: str, name: str = "privacy unit") -> PrivacyUnit:
        """The unit written as ``definition/scope`` (split at the first ``/``).

        Parameters
        ----------
        text : str
            The unit, ``definition/scope``.
        name : str, default "privacy unit"
            How the value is called in the error message.

        Returns
        -------
        PrivacyUnit
            The unit.
        """
        if not isinstance(text, str) or "/" not in text:
            raise InputError(
                f"{name} is written definition/scope (e.g. dp/add-remove, dp/substitute, "
                f"dependent-dp/answer, attribute-privacy/<secrets>), got {text!r}"
            )
        definition, scope = text.split("/", 1)
        try:
            return cls(definition.strip(), scope.strip())
        except InputError as exc:
            raise InputError(f"{name} {text!r}: {exc}") from None

    @classmethod
    def coerce(cls, value: PrivacyUnit | str, name: str = "unit") -> PrivacyUnit:
        """``value`` as a unit: a :class:`PrivacyUnit` as it is, a string parsed.

        Parameters
        ----------
        value : PrivacyUnit or str
            A unit, or its ``definition/scope`` key.
        name : str, default "unit"
            How the value is called in the error message.

        Returns
        -------
        PrivacyUnit
            The unit.
        """
        return value if isinstance(value, PrivacyUnit) else cls.parse(value, name)

    def __str__(self) -> str:
        return self.key


@dataclass(frozen=True)
class Conversion:
    """A proven implication: a guarantee in ``source`` gives one in ``target``.

    ``group``: ``source`` steps per ``target`` step (a substitution is 2). For an overlap (no
    implication) ``covers`` names the only columns of ``target`` the charge protects.
    """

    source: PrivacyUnit
    target: PrivacyUnit
    group: int
    reference: str
    covers: frozenset[str] | None = None

    @property
    def proven(self) -> bool:
        """Whether the converted charge guarantees all of ``target`` (False for an overlap)."""
        return self.covers is None

    def convert(self, epsilon: float, delta: float) -> tuple[float, float]:
        """(epsilon, delta) as ``(g eps, delta (1 + e^eps + ... + e^((g-1) eps)))`` in target."""
        if delta == 0.0:
            return self.group * epsilon, 0.0
        try:
            spread = math.fsum(math.exp(i * epsilon) for i in range(self.group))
        except OverflowError:  # the bound is vacuous (delta >= 1) long before this
            return self.group * epsilon, math.inf
        return self.group * epsilon, delta * spread

    def convert_rho(self, rho: float) -> float | None:
        """rho-zCDP as ``g^2 rho`` between row units (Bun & Steinke 2016, Prop. 1.9); else None."""
        if self.source.definition == "dp" and self.target.definition == "dp":
            return self.group**2 * rho
        return None


ADD_REMOVE = PrivacyUnit("dp", "add-remove")
SUBSTITUTE = PrivacyUnit("dp", "substitute")
ONE_ANSWER = PrivacyUnit("dependent-dp", ANSWER)

_GROUP = "group privacy (Dwork & Roth 2014, Theorem 2.2 and its (epsilon, delta) form)"
_ANSWER = (
    "changing one answer, with whatever it moves in the same respondent's row, is a "
    "substitution of that row; with respondents independent the output law is a mixture over "
    "substituted rows, so its ratio is bounded by the same e^epsilon (quasi-convexity)"
)
_PART = (
    "a neighbour that changes only part of a record is also a neighbour under whole-record "
    "substitution, so a guarantee for changing the whole record holds for changing a part"
)
_SUBSET = "a release protecting every secret of a set protects each secret of it on its own"
_MODEL = "the same guarantee, listed under the scope that collects every model"
_OVERLAP = (
    "no implication: the two units protect columns in common, and a neighbour that changes only "
    "those is a neighbour under both, so the charge counts here at its own (epsilon, delta); it "
    "guarantees only the shared columns"
)


def conversion(source: PrivacyUnit, target: PrivacyUnit) -> Conversion | None:
    """The proven conversion from ``source`` to ``target`` (group 1 if equal), or None."""
    if source == target:
        return Conversion(source, target, 1, "the same unit")
    if source.definition == "dp":
        return _from_row(source, target)
    same = source.definition == target.definition
    if same and target.scope == source.base and source.model:
        return Conversion(source, target, 1, _MODEL)
    if (
        same
        and source.definition in ("attribute-privacy", "pufferfish")
        and not target.model
        and target.parts
        and target.parts < source.parts
        and source.base.startswith(RECORD) == target.base.startswith(RECORD)
    ):
        return Conversion(source, target, 1, _SUBSET)
    return None


def _from_row(source: PrivacyUnit, target: PrivacyUnit) -> Conversion | None:
    """Conversions out of a row-level DP unit."""
    group = 2 if source.scope == "add-remove" else 1  # a substitution is two add/remove steps
    whole = source.scope in ROW_NEIGHBOURS
    if target.key == "dp/substitute" and source.scope == "add-remove":
        return Conversion(source, target, 2, _GROUP)
    if target.definition == "dp" and target.scope.startswith(PART):
        if whole:
            return Conversion(source, target, group, _PART if group == 1 else f"{_GROUP}; {_PART}")
        if source.scope.startswith(PART) and target.parts < source.parts:
            return Conversion(source, target, 1, _PART)
    if target.definition == "dependent-dp" and whole:
        return Conversion(
            source, target, group, _ANSWER if group == 1 else f"{_GROUP}, then: {_ANSWER}"
        )
    return None


def overlap(source: PrivacyUnit, target: PrivacyUnit) -> Conversion | None:
    """How a row-level DP charge in ``source`` counts in ``target`` when it implies nothing there.

    Columns U of a release and P of a budget share U ∩ P: the charge counts in ``target`` at its own
    (epsilon, delta), as a guarantee for ``covers`` = U ∩ P only; None when nothing is shared.
    """
    if source.definition != "dp" or target.definition != "dp" or source == target:
        return None
    part = source.scope.startswith(PART), target.scope.startswith(PART)
    if not any(part) or conversion(source, target) is not None:
        return None
    # a whole row (a budget's unit) holds every column; a whole-row source converts instead
    shared = source.parts & target.parts if part[1] else source.parts
    if not shared:
        return None
    return Conversion(source, target, 1, _OVERLAP, frozenset(shared))


def charged(source: PrivacyUnit, target: PrivacyUnit) -> Conversion | None:
    """How a charge in ``source`` counts in ``target``: :func:`conversion`, else :func:`overlap`."""
    return conversion(source, target) or overlap(source, target)


def conversions(source: PrivacyUnit, among: Iterable[PrivacyUnit] = ()) -> tuple[Conversion, ...]:
    """``source`` itself, then every fixed unit and unit of ``among`` that it implies."""
    found = [Conversion(source, source, 1, "the same unit")]
    seen = {source}
    for target in (SUBSTITUTE, ONE_ANSWER, *among):
        step = None if target in seen else conversion(source, target)
        if step is not None:
            found.append(step)
            seen.add(target)
    return tuple(found)


BASIC_RULE = "basic sequential composition (Dwork & Roth 2014, Theorem 3.16)"
ZCDP_RULE = (
    "zCDP composition (rhos add up; Bun & Steinke 2016, Lemma 1.7), pure epsilon-DP counted as "
    "epsilon^2/2-zCDP (Proposition 1.4), converted to (epsilon, delta)-DP at the budget's delta "
    "through Renyi DP (Balle et al. 2020, Theorem 21; Canonne, Kamath & Steinke 2020), computed "
    "by Google's dp_accounting RDP accountant"
)
PLD_RULE = (
    "optimal composition of the charges' (epsilon, delta) guarantees (Kairouz, Oh & Viswanath "
    "2015): each as its dominating privacy-loss distribution, convolved by Google's "
    "dp_accounting PLD library on a pessimistic grid, read at the budget's delta"
)


def composition_rule(
    unit: PrivacyUnit, sources: frozenset[PrivacyUnit], mechanisms: frozenset[str]
) -> tuple[str, bool]:
    """How spend in ``unit`` composes (in words, with its reference) and whether it is proven."""
    if unit.definition == "dp":
        return BASIC_RULE, True
    models = {s.model for s in sources if s.definition == unit.definition}
    one_model = len(models) <= 1
    if unit.definition == "dependent-dp":
        if one_model:
            return (
                "sequential composition of dependent DP for one dependence model "
                "(Liu, Chakraborty & Mittal, NDSS 2016)",
                True,
            )
        return (
            f"sum of epsilons as an accounting convention only: the releases rest on "
            f"{len(models)} different dependence models, and dependent DP composes for one",
            False,
        )
    if one_model and mechanisms and all(m.startswith("markov-quilt") for m in mechanisms):
        return (
            "sequential composition of Markov quilt releases on the same chains under one class "
            "Theta, which the unit's scope must name (Song & Chaudhuri, 'Composition properties "
            "of inferential privacy for time-series data', 2017)",
            True,
        )
    return (
        "sum of epsilons as an accounting convention only: Pufferfish guarantees (attribute "
        "privacy among them) do not compose in general (Kifer & Machanavajjhala 2014); linear "
        "composition needs extra DP-style conditions (Bai, He, Gu, Kifer & Maeng 2026) that "
        "these releases are not shown to meet",
        False,
    )


__all__ = [
    "ADD_REMOVE",
    "BASIC_RULE",
    "DEFINITIONS",
    "ONE_ANSWER",
    "PLD_RULE",
    "ROW_NEIGHBOURS",
    "SUBSTITUTE",
    "ZCDP_RULE",
    "Conversion",
    "PrivacyUnit",
    "charged",
    "composition_rule",
    "conversion",
    "conversions",
    "overlap",
]
