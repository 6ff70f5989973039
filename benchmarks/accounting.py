"""Benchmark the ledger's accountants: how much of one budget a run of releases spends.

Tables printed (one run, every accountant on the same charges):

1. The issue's case: 100 Laplace releases at epsilon 0.05 against an (epsilon 1, delta 1e-6)
   budget. The spend (epsilon at the budget's delta) by basic composition, by zCDP with Bun &
   Steinke's conversion (the ledger before: the smaller of those two), by zCDP with the tight
   Renyi conversion, by privacy-loss distributions (the ledger now: the smallest that fits),
   beside the closed form of the optimal composition (Kairouz, Oh & Viswanath 2015).
2. How many releases of one size fit one budget, before and after, for pure releases of
   several epsilons and Gaussian releases of several rho; each count found by charging a real
   SQLite ledger until it refuses (so the ledger's own decision is measured), with CPU seconds
   beside wall seconds.
3. What the tight accountants cost: ``summary()`` and the ledger page (which composes the spend
   after every charge for its chart) on ledgers of 50 and 300 charges.

Run:  python benchmarks/accounting.py
"""

from __future__ import annotations

import math
import sys
import tempfile
import time
from pathlib import Path

from attrpriv.dp import BudgetLedger, PrivacyRecord
from attrpriv.dp.accounting import (
    Budget,
    Charge,
    pld_epsilon,
    zcdp_to_epsilon,
    zcdp_to_epsilon_classic,
)
from attrpriv.dp.units import ADD_REMOVE
from attrpriv.errors import BudgetExceededError
from attrpriv.report.ledger import render_ledger_html

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "dp"))
from closed_forms import kov_epsilon  # the closed form the tests check against


def before(charges: list[Charge], budget: Budget) -> float:
    """The ledger before: basic composition, or zCDP with rho + 2 sqrt(rho ln 1/delta)."""
    basic = math.fsum(c.epsilon for c in charges)
    rhos = [c.zcdp() for c in charges]
    if budget.delta <= 0 or any(r is None for r in rhos):
        return basic
    rho = math.fsum(r for r in rhos if r is not None)
    return min(basic, zcdp_to_epsilon_classic(rho, budget.delta))


def record(epsilon: float, delta: float, rho: float | None) -> PrivacyRecord:
    return PrivacyRecord(
        mechanism="gaussian" if rho is not None else "laplace",
        definition="dp",
        epsilon=epsilon,
        delta=delta,
        protects="benchmark",
        sensitivity=1.0,
        noise={},
        unit="dp/add-remove",
        rho=rho,
    )


def fill(release: PrivacyRecord, budget: Budget, folder: Path) -> tuple[int, float, float]:
    """Charge ``release`` to a fresh ledger until it refuses: (count, wall s, CPU s)."""
    book = BudgetLedger(folder / f"{release.mechanism}-{release.epsilon}-{release.rho}.db")
    book.set_budget(budget.epsilon, budget.delta)
    wall, cpu, count = time.perf_counter(), time.process_time(), 0
    while True:
        try:
            book.charge(release)
        except BudgetExceededError:
            return count, time.perf_counter() - wall, time.process_time() - cpu
        count += 1


def count_before(release: PrivacyRecord, budget: Budget) -> int:
    one = Charge(ADD_REMOVE, release.mechanism, release.epsilon, release.delta, release.rho)
    count = 0
    while before([one] * (count + 1), budget) <= budget.epsilon * (1 + 1e-9):
        count += 1
    return count


def main() -> None:
    budget = Budget(1.0, 1e-6)
    charges = [Charge(ADD_REMOVE, "laplace", 0.05, 0.0, None)] * 100
    rho = 100 * 0.05**2 / 2
    wall, cpu = time.perf_counter(), time.process_time()
    pld = pld_epsilon(charges, budget.delta)
    pld_wall, pld_cpu = time.perf_counter() - wall, time.process_time() - cpu
    exact = kov_epsilon(100, 0.05, budget.delta)
    print("## 100 Laplace releases at epsilon 0.05, budget (epsilon 1, delta 1e-6)\n")
    print("| accountant | epsilon spent at delta 1e-6 | vs the closed form |")
    print("|---|---|---|")
    rows = [
        ("basic composition", 5.0),
        ("zCDP, rho + 2 sqrt(rho ln 1/delta) (before)", zcdp_to_epsilon_classic(rho, 1e-6)),
        ("ledger before (the smaller of the two above)", before(charges, budget)),
        ("zCDP, tight Renyi conversion (dp_accounting)", zcdp_to_epsilon(rho, 1e-6)),
        ("privacy-loss distributions (dp_accounting; the ledger now)", pld or math.inf),
        ("closed form: optimal composition (Kairouz, Oh & Viswanath)", exact),
    ]
    for name, value in rows:
        print(f"| {name} | {value:.4f} | {value / exact:.3f}x |")
    print(f"\nPLD of the 100 charges: {pld_wall:.3f} s wall, {pld_cpu:.3f} s CPU\n")

    print("## Releases of one size that fit (epsilon 1, delta 1e-6), charged to a real ledger\n")
    print("| release | before | now | now / before | accountant now | wall s | CPU s |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        sizes = [record(e, 0.0, None) for e in (0.01, 0.05, 0.1, 0.25)]
        for g_rho in (1e-4, 1e-3):
            g_eps = zcdp_to_epsilon_classic(g_rho, 1e-8)
            sizes.append(record(g_eps, 1e-8, g_rho))
        for release in sizes:
            old = count_before(release, budget)
            new, w, c = fill(release, budget, Path(folder))
            book = BudgetLedger(
                Path(folder) / f"{release.mechanism}-{release.epsilon}-{release.rho}.db"
            )
            used = book.summary().unit("dp/add-remove").accounting
            name = (
                f"Gaussian rho={release.rho:g} ((epsilon {release.epsilon:.3g}, delta 1e-8))"
                if release.rho is not None
                else f"Laplace epsilon={release.epsilon:g}"
            )
            print(f"| {name} | {old} | {new} | {new / old:.2f}x | {used} | {w:.1f} | {c:.1f} |")
        print("\n## What the accounting costs a ledger of many charges (Laplace epsilon 0.01)\n")
        print("| charges | summary() wall s | CPU s | page (render_ledger_html) wall s | CPU s |")
        print("|---|---|---|---|---|")
        for count in (50, 300):
            small = BudgetLedger(Path(folder) / f"page-{count}.db")
            small.set_budget(budget.epsilon, budget.delta)
            for _ in range(count):
                small.charge(record(0.01, 0.0, None))
            wall, cpu = time.perf_counter(), time.process_time()
            summary = small.summary()
            s_wall, s_cpu = time.perf_counter() - wall, time.process_time() - cpu
            wall, cpu = time.perf_counter(), time.process_time()
            render_ledger_html(summary, small.entries(), title="benchmark")
            p_wall, p_cpu = time.perf_counter() - wall, time.process_time() - cpu
            print(f"| {count} | {s_wall:.2f} | {s_cpu:.2f} | {p_wall:.1f} | {p_cpu:.1f} |")
    print(f"\npython {sys.version.split()[0]}")


if __name__ == "__main__":
    main()
