"""The accountants against closed forms: the zCDP conversion against the Renyi closed form,
privacy-loss distributions against the exact optimal composition of Kairouz, Oh & Viswanath."""

from __future__ import annotations

import math

import pytest
from closed_forms import kov_epsilon, mixed_delta, renyi_epsilon
from scipy.optimize import brentq

from attrpriv.dp.accounting import (
    BASIC,
    PLD,
    ZCDP,
    Budget,
    Charge,
    compose,
    pld_epsilon,
    zcdp_to_epsilon,
    zcdp_to_epsilon_classic,
)
from attrpriv.dp.units import ADD_REMOVE, ONE_ANSWER


def _pure(epsilon: float, count: int, delta: float = 0.0) -> list[Charge]:
    """``count`` charges of (epsilon, delta), with the zCDP bound the ledger gives a pure one."""
    rho = epsilon**2 / 2 if delta == 0.0 else None
    return [Charge(ADD_REMOVE, "laplace", epsilon, delta, rho)] * count


@pytest.mark.parametrize(
    ("rho", "delta"),
    [(0.5, 1e-3), (0.125, 1e-6), (0.001, 1e-5), (1e-4, 1e-6), (0.224, 1e-5), (2.0, 1e-8),
     (10.0, 1e-5), (1e-7, 1e-9), (100.0, 1e-3)],
)  # fmt: skip
def test_zcdp_conversion_is_the_renyi_closed_form(rho: float, delta: float) -> None:
    found, exact = zcdp_to_epsilon(rho, delta), renyi_epsilon(rho, delta)
    assert exact * (1 - 1e-9) <= found <= exact * (1 + 1e-4)
    assert found < zcdp_to_epsilon_classic(rho, delta)


def test_zcdp_conversion_is_tighter_than_bun_and_steinke_where_the_issue_measured_it() -> None:
    """rho 0.5 at delta 1e-3: 4.22 by rho + 2 sqrt(rho ln 1/delta), 3.54 tight."""
    assert zcdp_to_epsilon_classic(0.5, 1e-3) == pytest.approx(4.2169, abs=1e-4)
    assert zcdp_to_epsilon(0.5, 1e-3) == pytest.approx(3.5366, abs=1e-4)
    assert zcdp_to_epsilon(0.0, 1e-3) == 0.0


@pytest.mark.parametrize(
    ("count", "epsilon", "own_delta", "delta"),
    [(100, 0.05, 0.0, 1e-6), (26, 0.05, 0.0, 1e-6), (1000, 0.01, 0.0, 1e-6), (10, 1.0, 0.0, 1e-6),
     (50, 0.1, 1e-8, 1e-5), (2, 0.5, 0.0, 1e-3)],
)  # fmt: skip
def test_privacy_loss_distributions_reach_the_optimal_composition(
    count: int, epsilon: float, own_delta: float, delta: float
) -> None:
    found = pld_epsilon(_pure(epsilon, count, own_delta), delta)
    exact = kov_epsilon(count, epsilon, delta, own_delta)
    assert found is not None
    assert exact - 1e-6 <= found <= exact + 3e-4  # an upper bound, and nearly the optimum


def test_privacy_loss_distributions_of_different_charges() -> None:
    groups = [(30, 0.02), (5, 0.3), (1, 0.7)]
    charges = [c for count, eps in groups for c in _pure(eps, count)]
    found = pld_epsilon(charges, 1e-6)
    exact = brentq(lambda e: mixed_delta(groups, e) - 1e-6, 0.0, 3.0)
    assert found is not None and exact - 1e-6 <= found <= exact + 1e-3
    assert found < math.fsum(c.epsilon for c in charges)


def test_privacy_loss_distributions_need_a_delta_above_the_charges_own() -> None:
    assert pld_epsilon(_pure(0.1, 11, 1e-6), 1e-5) is None  # 11 x 1e-6 is more than it
    assert pld_epsilon(_pure(0.1, 9, 1e-6), 1e-5) is not None
    assert pld_epsilon([], 1e-6) == 0.0


def test_a_broken_accountant_that_drops_the_charges_own_delta_is_caught() -> None:
    """What the closed-form check catches: composing (0.1, 1e-8) charges as if pure."""
    honest = pld_epsilon(_pure(0.1, 50, 1e-8), 1e-6)
    broken = pld_epsilon(_pure(0.1, 50), 1e-6)
    exact = kov_epsilon(50, 0.1, 1e-6, 1e-8)
    assert honest is not None and broken is not None
    assert honest >= exact - 1e-6 and broken < exact - 1e-3


def test_compose_uses_the_smallest_epsilon_that_fits() -> None:
    charges = _pure(0.05, 100)
    budget = Budget(3.0, 1e-6)
    spend = compose(ADD_REMOVE, charges, budget)
    assert spend.fits and spend.accounting == PLD
    assert spend.used == Budget(spend.pld_epsilon or 0.0, 1e-6)
    assert spend.pld_epsilon is not None and spend.zcdp_epsilon is not None
    assert spend.pld_epsilon < spend.zcdp_epsilon < spend.basic.epsilon == pytest.approx(5.0)
    quick = compose(ADD_REMOVE, charges, budget, tightest=False)
    assert quick.fits and quick.accounting == ZCDP and quick.pld_epsilon is None  # stops early
    assert compose(ADD_REMOVE, charges[:10], budget, tightest=False).accounting == BASIC


def test_only_row_dp_units_with_a_budget_delta_get_the_tight_accountants() -> None:
    charges = [Charge(ONE_ANSWER, "ddp", 0.05, 0.0, None)] * 100
    spend = compose(ONE_ANSWER, charges, Budget(10.0, 1e-6))
    assert spend.accounting == BASIC and spend.pld_epsilon is None and spend.rho is None
    pure_budget = compose(ADD_REMOVE, _pure(0.05, 100), Budget(10.0, 0.0))
    assert pure_budget.accounting == BASIC and pure_budget.pld_epsilon is None
