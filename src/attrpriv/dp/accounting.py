"""Composing privacy spend within one unit: basic sequential composition and zCDP.

Pure functions over :class:`Charge` (the accounting part of one release): convert charges into
a unit by a proven :class:`~attrpriv.dp.units.Conversion`, compose them (basic composition,
and zCDP for row-level DP where every charge has a zCDP bound), and compare with a budget.
The ledger (:mod:`attrpriv.dp.ledger`) stores charges and budgets and calls these.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from attrpriv.dp import units
from attrpriv.dp.units import Conversion, PrivacyUnit

BASIC = "basic"
ZCDP = "zcdp"
TOLERANCE = 1e-9  # relative slack so that 10 x 0.1 fits a budget of 1.0


@dataclass(frozen=True)
class Budget:
    """An (epsilon, delta) allowance, a spend, or what is left of an allowance.

    Parameters
    ----------
    epsilon : float
        The privacy-loss parameter epsilon (not checked here: the ledger checks what it
        stores).
    delta : float
        The failure probability delta.
    """

    epsilon: float
    delta: float

    def to_dict(self) -> dict[str, float]:
        """The budget as a JSON-ready dict.

        Returns
        -------
        dict of str to float
            ``{"epsilon": epsilon, "delta": delta}``.
        """
        return {"epsilon": self.epsilon, "delta": self.delta}


@dataclass(frozen=True)
class Charge:
    """The accounting columns of one stored release."""

    unit: PrivacyUnit
    mechanism: str
    epsilon: float
    delta: float
    rho: float | None

    def zcdp(self) -> float | None:
        """A rho such that the release is rho-zCDP in its own unit, if one is known."""
        bounds = [] if self.rho is None else [self.rho]
        if self.delta == 0.0:
            bounds.append(self.epsilon**2 / 2.0)  # Bun & Steinke 2016, Proposition 1.4
        return min(bounds) if bounds else None


@dataclass(frozen=True)
class Spend:
    """The composition of the charges that count in one unit."""

    basic: Budget
    rho: float | None
    zcdp_epsilon: float | None
    accounting: str
    used: Budget
    fits: bool


def counted_in(target: PrivacyUnit, charges: Iterable[Charge]) -> list[tuple[Charge, Conversion]]:
    """The charges that count in ``target``, each as a guarantee in ``target``."""
    counted = []
    for charge in charges:
        conversion = units.conversion(charge.unit, target)
        if conversion is not None:
            counted.append((convert(charge, conversion), conversion))
    return counted


def convert(charge: Charge, conversion: Conversion) -> Charge:
    epsilon, delta = conversion.convert(charge.epsilon, charge.delta)
    own = charge.zcdp()
    rho = None if own is None else conversion.convert_rho(own)
    return Charge(conversion.target, charge.mechanism, epsilon, delta, rho)


def zcdp_to_epsilon(rho: float, delta: float) -> float:
    """rho-zCDP as epsilon at ``delta`` > 0 (Bun & Steinke 2016, Proposition 1.3)."""
    return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))


def fits(total: float, limit: float) -> bool:
    return total <= limit * (1.0 + TOLERANCE) + 1e-15


def within(spend: Budget, budget: Budget) -> bool:
    return fits(spend.epsilon, budget.epsilon) and fits(spend.delta, budget.delta)


def compose(unit: PrivacyUnit, charges: Sequence[Charge], budget: Budget | None) -> Spend:
    """Compose ``charges`` (already converted into ``unit``) and compare with ``budget``.

    Basic composition always applies. For row-level DP units whose charges all have a zCDP
    bound, zCDP composition applies too, as epsilon at the budget's delta (> 0). Both are valid
    bounds of the same composed release, so the spend fits if either fits; the one used is the
    smaller epsilon among those that fit.
    """
    basic = Budget(math.fsum(c.epsilon for c in charges), math.fsum(c.delta for c in charges))
    rho = None
    if unit.definition == "dp":
        bounds = [c.rho for c in charges]
        if all(b is not None for b in bounds):
            rho = math.fsum(b for b in bounds if b is not None)
    zcdp_epsilon = None
    if rho is not None and budget is not None and budget.delta > 0.0:
        zcdp_epsilon = zcdp_to_epsilon(rho, budget.delta)
    candidates = [(BASIC, basic)]
    if zcdp_epsilon is not None and budget is not None:
        candidates.append((ZCDP, Budget(zcdp_epsilon, budget.delta)))
    fitting = [c for c in candidates if budget is None or within(c[1], budget)]
    pool = fitting or candidates
    accounting, used = min(pool, key=lambda c: c[1].epsilon)  # ties keep basic (listed first)
    return Spend(basic, rho, zcdp_epsilon, accounting, used, bool(fitting))


def running_spend(
    unit: PrivacyUnit, charges: Sequence[Charge], budgets: Sequence[Budget | None]
) -> list[Spend]:
    """The spend of ``unit`` after each of ``charges`` in turn (oldest first).

    ``budgets[i]`` is the unit's budget when charge ``i`` was made (``None``: none yet); the
    spend after it composes every charge up to ``i`` that counts in ``unit``, as the ledger
    did then. For a ledger's history of spend (its page plots it).
    """
    if len(budgets) != len(charges):
        raise ValueError("running_spend needs one budget per charge")
    counted: list[Charge] = []
    out = []
    for charge, budget in zip(charges, budgets, strict=True):
        counted += [c for c, _ in counted_in(unit, [charge])]
        out.append(compose(unit, counted, budget))
    return out


def describe(spend: Spend) -> str:
    text = f"epsilon={spend.basic.epsilon:g}, delta={spend.basic.delta:g} by basic composition"
    if spend.zcdp_epsilon is not None:
        text += f"; epsilon={spend.zcdp_epsilon:g} by zCDP (rho={spend.rho:g})"
    return text
