"""Composing privacy spend within one unit: basic composition, zCDP and privacy-loss distributions.

Pure functions over :class:`Charge` (the accounting part of one release): convert charges into
a unit by a proven :class:`~attrpriv.dp.units.Conversion`, compose them, and compare with a
budget. Three accountants bound the same composed release, and the tightest one that fits is
used:

- basic sequential composition (always);
- zCDP, for row-level DP where every charge has a zCDP bound, converted to (epsilon, delta) by
  Google's ``dp_accounting`` RDP accountant (the tight conversion of Canonne, Kamath & Steinke
  2020 and Balle et al. 2020, not ``rho + 2 sqrt(rho ln 1/delta)``);
- privacy-loss distributions, for row-level DP: each charge's (epsilon, delta) as its dominating
  pair, composed by ``dp_accounting``'s PLD library (optimal composition of the charges'
  stated guarantees, Kairouz, Oh & Viswanath 2015).

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
PLD = "pld"
ACCOUNTANTS = (BASIC, ZCDP, PLD)
DISCRETISATION = 1e-6
GRID = 200_000
"""The privacy-loss grid of the PLD accountant: ``max(DISCRETISATION, 2 total / GRID)`` for a
basic total epsilon ``total``. The library rounds pessimistically, so any grid gives an upper
bound; this one is within 3e-4 of the exact optimum on the tested cases at 0.1 s or less."""
ORDERS = tuple(float(1.0 + 10.0 ** (k / 100.0)) for k in range(-400, 601))
"""Renyi orders for the zCDP conversion: 1 + 10^-4 ... 1 + 10^6, 100 a decade (the accountant's
default grid stops at 256 and is up to 6% loose for small rho)."""
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
    pld_epsilon: float | None
    accounting: str
    used: Budget
    fits: bool


def counted_in(target: PrivacyUnit, charges: Iterable[Charge]) -> list[tuple[Charge, Conversion]]:
    """The charges that count in ``target`` (by a proven conversion, or by an overlap of their
    columns), each converted into ``target``, with the conversion that counted it."""
    counted = []
    for charge in charges:
        conversion = units.charged(charge.unit, target)
        if conversion is not None:
            counted.append((convert(charge, conversion), conversion))
    return counted


def convert(charge: Charge, conversion: Conversion) -> Charge:
    epsilon, delta = conversion.convert(charge.epsilon, charge.delta)
    own = charge.zcdp()
    rho = None if own is None else conversion.convert_rho(own)
    return Charge(conversion.target, charge.mechanism, epsilon, delta, rho)


def zcdp_to_epsilon(rho: float, delta: float) -> float:
    """rho-zCDP as epsilon at ``delta`` > 0, by ``dp_accounting``'s RDP accountant.

    rho-zCDP bounds the Renyi divergence of every order alpha by alpha rho; the accountant
    turns that into (epsilon, delta)-DP by the conversion of Balle et al. 2020 (Theorem 21;
    Canonne, Kamath & Steinke 2020), minimised over the orders of :data:`ORDERS` (within
    1e-4 of the minimum over every order > 1, tested). It is never above Bun & Steinke's
    ``rho + 2 sqrt(rho ln(1/delta))`` (Proposition 1.3), which it replaces.
    """
    if rho == 0.0:
        return 0.0
    from dp_accounting import dp_event, rdp

    accountant = rdp.RdpAccountant(orders=ORDERS)
    accountant.compose(dp_event.ZCDpEvent(rho))
    return min(float(accountant.get_epsilon(delta)), zcdp_to_epsilon_classic(rho, delta))


def rho_for(epsilon: float, delta: float) -> float:
    """The largest rho whose zCDP guarantee converts to at most ``epsilon`` at ``delta``."""
    low, high = 0.0, epsilon  # rho <= epsilon: the conversion never gives less than rho
    for _ in range(100):
        middle = (low + high) / 2
        low, high = (middle, high) if zcdp_to_epsilon(middle, delta) <= epsilon else (low, middle)
    return low


def zcdp_to_epsilon_classic(rho: float, delta: float) -> float:
    """rho-zCDP as epsilon at ``delta`` > 0 by Bun & Steinke 2016, Proposition 1.3 (looser)."""
    return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))


def pld_epsilon(charges: Sequence[Charge], delta: float) -> float | None:
    """The epsilon at ``delta`` of ``charges`` composed as privacy-loss distributions.

    Each charge is (epsilon_i, delta_i)-DP; its pessimistic dominating pair (loss +-epsilon_i,
    infinite with probability delta_i) bounds every mechanism with that guarantee, and the
    convolution of the pairs bounds the adaptive composition of the releases (Kairouz, Oh &
    Viswanath 2015; Zhu, Dong & Wang 2022). ``dp_accounting`` computes it on a pessimistic grid,
    so the result is an upper bound. Equal charges are self-composed in one step.

    Parameters
    ----------
    charges : sequence of Charge
        The charges, already in one unit.
    delta : float
        The target delta, > 0.

    Returns
    -------
    float or None
        The epsilon, or None when ``delta`` does not exceed the charges' own combined delta
        (then no finite epsilon exists at it).
    """
    if not charges:
        return 0.0
    if 1.0 - math.prod(1.0 - c.delta for c in charges) >= delta:
        return None
    from dp_accounting.pld import common
    from dp_accounting.pld import privacy_loss_distribution as pld

    total = math.fsum(c.epsilon for c in charges)
    interval = max(DISCRETISATION, 2.0 * total / GRID)
    groups: dict[tuple[float, float], int] = {}
    for charge in charges:
        key = (charge.epsilon, charge.delta)
        groups[key] = groups.get(key, 0) + 1
    composed = None
    for (epsilon, own_delta), count in sorted(groups.items()):
        one = pld.from_privacy_parameters(
            common.DifferentialPrivacyParameters(epsilon, own_delta),
            value_discretization_interval=interval,
        )
        part = one.self_compose(count) if count > 1 else one
        composed = part if composed is None else composed.compose(part)
    assert composed is not None
    found = float(composed.get_epsilon_for_delta(delta))
    return found if math.isfinite(found) else None


def fits(total: float, limit: float) -> bool:
    return total <= limit * (1.0 + TOLERANCE) + 1e-15


def within(spend: Budget, budget: Budget) -> bool:
    return fits(spend.epsilon, budget.epsilon) and fits(spend.delta, budget.delta)


def compose(
    unit: PrivacyUnit, charges: Sequence[Charge], budget: Budget | None, *, tightest: bool = True
) -> Spend:
    """Compose ``charges`` (already converted into ``unit``) and compare with ``budget``.

    Basic composition always applies. For row-level DP units with a budget delta > 0, two more
    accountants apply: zCDP where every charge has a zCDP bound, and privacy-loss distributions
    of the charges' (epsilon, delta), both as epsilon at the budget's delta. All are valid
    bounds of the same composed release, so the spend fits if any fits; the one used is the
    smallest epsilon among those that fit. With ``tightest=False`` the accountants are tried in
    that order and the first that fits is used (the same ``fits``, at less cost: a charge only
    needs to know whether it fits).
    """
    basic = Budget(math.fsum(c.epsilon for c in charges), math.fsum(c.delta for c in charges))
    rho = None
    if unit.definition == "dp":
        bounds = [c.rho for c in charges]
        if all(b is not None for b in bounds):
            rho = math.fsum(b for b in bounds if b is not None)
    found: dict[str, float | None] = {ZCDP: None, PLD: None}
    candidates = [(BASIC, basic)]
    if unit.definition == "dp" and budget is not None and budget.delta > 0.0:
        delta = budget.delta
        for name in (ZCDP, PLD):
            if not tightest and within(candidates[-1][1], budget):
                break
            if name == ZCDP:
                value = None if rho is None else zcdp_to_epsilon(rho, delta)
            else:
                value = pld_epsilon(charges, delta) if len(charges) > 1 else None
            found[name] = value
            if value is not None:
                candidates.append((name, Budget(value, delta)))
    fitting = [c for c in candidates if budget is None or within(c[1], budget)]
    pool = fitting or candidates
    accounting, used = min(pool, key=lambda c: c[1].epsilon)  # ties keep the first listed
    return Spend(basic, rho, found[ZCDP], found[PLD], accounting, used, bool(fitting))


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
    out: list[Spend] = []
    for charge, budget in zip(charges, budgets, strict=True):
        new = [c for c, _ in counted_in(unit, [charge])]
        counted += new
        if out and not new and budget == budgets[len(out) - 1]:
            out.append(out[-1])  # a charge of another unit, the same budget: nothing changed
        else:
            out.append(compose(unit, counted, budget))
    return out


def describe(spend: Spend) -> str:
    text = f"epsilon={spend.basic.epsilon:g}, delta={spend.basic.delta:g} by basic composition"
    if spend.zcdp_epsilon is not None:
        text += f"; epsilon={spend.zcdp_epsilon:g} by zCDP (rho={spend.rho:g})"
    if spend.pld_epsilon is not None:
        text += f"; epsilon={spend.pld_epsilon:g} by privacy-loss distributions"
    return text
