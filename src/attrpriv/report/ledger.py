"""HTML page of a budget ledger: the spend per privacy unit, and how it grew over time.

The page shows, per unit, the budget, what is used of it (under the accounting the ledger uses)
and what remains; a chart of the share of each budget used; one chart per unit of the spend after
each release, with the budget as it was set over time; and the releases and the budget history.
It is rendered from the ledger's summary and entries (records of releases: no data), and never
adds up units.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from matplotlib.figure import Figure

from attrpriv._io import atomic_write_text
from attrpriv.dp.accounting import Budget, Charge, running_spend
from attrpriv.dp.units import PrivacyUnit
from attrpriv.report._page import png, render
from attrpriv.report.release import unit_meaning

if TYPE_CHECKING:
    from attrpriv.dp.ledger import BudgetChange, LedgerEntry, LedgerSummary

__all__ = ["render_ledger_html", "spend_figure", "timeline_figure", "write_ledger_html"]

TEMPLATE = "ledger.html.j2"
USED, LEFT, BUDGET = "#4c78a8", "#dde6f0", "#d62728"


def spend_figure(summary: LedgerSummary) -> Figure:
    """One bar per budgeted unit: the share of its budget's epsilon used (units side by side,
    never summed); unbudgeted units are listed with their spend."""
    units = list(summary.units)
    figure = Figure(figsize=(8, 1.2 + 0.5 * max(len(units), 1)))
    axes = figure.add_subplot()
    rows = list(range(len(units)))[::-1]
    for row, unit in zip(rows, units, strict=True):
        if unit.budget is None:
            axes.text(0.01, row, f"no budget: epsilon {unit.used.epsilon:.4g} spent",
                      va="center", fontsize="small", color=BUDGET)  # fmt: skip
            continue
        share = unit.used.epsilon / unit.budget.epsilon if unit.budget.epsilon else 0.0
        axes.barh(row, 1.0, color=LEFT)
        axes.barh(row, min(share, 1.0), color=USED)
        axes.text(min(share, 1.0) + 0.01, row, f"{unit.used.epsilon:.4g} of "
                  f"{unit.budget.epsilon:.4g} ({unit.accounting})", va="center",
                  fontsize="small")  # fmt: skip
    axes.set_yticks(rows, [u.unit for u in units])
    axes.set_xlim(0, 1.35)
    axes.set_xticks([0, 0.25, 0.5, 0.75, 1.0], ["0", "25%", "50%", "75%", "100%"])
    axes.set_xlabel("share of the unit's epsilon budget used")
    axes.set_title("spend per privacy unit")
    figure.tight_layout()
    return figure


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text)


def _charge(entry: LedgerEntry) -> Charge:
    record = entry.record
    return Charge(record.unit, record.mechanism, record.epsilon, record.delta, record.rho)


def timeline_figure(summary: LedgerSummary, entries: Sequence[LedgerEntry]) -> Figure | None:
    """One panel per unit: the epsilon used after each release (as the ledger composed it then)
    and the unit's budget as it was set over time; ``None`` without releases or budgets."""
    import matplotlib.dates as mdates

    if not summary.units or not (entries or summary.history):
        return None
    charges = [_charge(e) for e in entries]
    figure = Figure(figsize=(8, 0.5 + 2.3 * len(summary.units)))
    panels = figure.subplots(len(summary.units), 1, squeeze=False, sharex=True)[:, 0]
    for axes, unit in zip(panels, summary.units, strict=True):
        target = PrivacyUnit.parse(unit.unit)
        changes = [h for h in summary.history if h.unit == unit.unit]
        budgets = [_budget_at(changes, e.created) for e in entries]
        spend = running_spend(target, charges, budgets)
        times = [_time(e.created) for e in entries]
        used = [s.used.epsilon for s in spend]
        if times:
            axes.step(times, used, where="post", color=USED, marker="o", markersize=3,
                      label="epsilon used")  # fmt: skip
        if changes:
            budget_times = [_time(h.created) for h in changes]
            levels = [h.epsilon for h in changes]
            end = max([*budget_times, *times])
            axes.step([*budget_times, end], [*levels, levels[-1]], where="post", color=BUDGET,
                      linestyle="--", label="budget epsilon")  # fmt: skip
        heading = textwrap.shorten(f"{unit.unit}: {unit_meaning(target)}", width=110)
        axes.set_title(heading, fontsize="small", loc="left")
        axes.set_ylabel("epsilon")
        axes.set_ylim(bottom=0)
        axes.grid(alpha=0.3)
        axes.legend(fontsize="small", loc="upper left")
        locator = mdates.AutoDateLocator()  # type: ignore[no-untyped-call]
        axes.xaxis.set_major_locator(locator)
        concise = mdates.ConciseDateFormatter(locator)  # type: ignore[no-untyped-call]
        axes.xaxis.set_major_formatter(concise)
    figure.tight_layout()
    return figure


def _budget_at(changes: Sequence[BudgetChange], created: str) -> Budget | None:
    """The unit's budget when a release was charged: its latest change up to that time."""
    current = None
    for change in changes:
        if change.created <= created:
            current = Budget(change.epsilon, change.delta)
    return current


def render_ledger_html(
    summary: LedgerSummary,
    entries: Sequence[LedgerEntry],
    *,
    title: str = "Privacy budget ledger",
) -> str:
    """The ledger as one self-contained HTML page.

    Parameters
    ----------
    summary : LedgerSummary
        ``BudgetLedger.summary()``: spend per unit and the budget history.
    entries : sequence of LedgerEntry
        ``BudgetLedger.entries()``: every charged release, oldest first.
    title : str, optional
        The page's title.

    Returns
    -------
    str
        The page: the figures inlined as PNG.
    """
    figures = {"spend": png(spend_figure(summary), dpi=90)} if summary.units else {}
    timeline = timeline_figure(summary, entries)
    if timeline is not None:
        figures["timeline"] = png(timeline, dpi=90)
    meanings = {u.unit: unit_meaning(PrivacyUnit.parse(u.unit)) for u in summary.units}
    return render(
        TEMPLATE,
        title=title,
        summary=summary,
        entries=list(entries),
        figures=figures,
        meanings=meanings,
    )


def write_ledger_html(
    summary: LedgerSummary,
    entries: Sequence[LedgerEntry],
    path: str | Path,
    *,
    title: str = "Privacy budget ledger",
) -> Path:
    """Render and write the page atomically.

    Parameters
    ----------
    summary : LedgerSummary
        ``BudgetLedger.summary()``: spend per unit and the budget history.
    entries : sequence of LedgerEntry
        ``BudgetLedger.entries()``: every charged release, oldest first.
    path : str or pathlib.Path
        The HTML file to write (UTF-8); missing parent directories are created and an
        existing file is replaced only once the page is written in full.
    title : str, optional
        The page's title.

    Returns
    -------
    pathlib.Path
        The file written: ``path`` as a :class:`pathlib.Path`.

    See Also
    --------
    render_ledger_html : The page as a string.
    """
    return atomic_write_text(path, render_ledger_html(summary, entries, title=title))
