"""HTML page of a budget ledger: the spend per privacy unit, and how it grew over time.

Rendered from the ledger's summary and entries (no data); units are never added up.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from matplotlib.figure import Figure

from attrpriv._io import atomic_write_text
from attrpriv.dp.accounting import Budget, Charge, running_spend
from attrpriv.dp.units import PrivacyUnit
from attrpriv.report._page import plain_axis, png, render
from attrpriv.report._words import epsilon_example, plural
from attrpriv.report.release import unit_meaning, unit_secret

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from attrpriv.dp.ledger import BudgetChange, LedgerEntry, LedgerSummary

__all__ = ["render_ledger_html", "spend_figure", "timeline_figure", "write_ledger_html"]

TEMPLATE = "ledger.html.j2"
USED, LEFT, BUDGET = "#4c78a8", "#dde6f0", "#d62728"
MIN_SPAN = timedelta(minutes=1)  # releases closer in time are shown on a one-minute axis


def spend_figure(summary: LedgerSummary) -> Figure:
    """One bar per budgeted unit: the share of its epsilon used (never summed)."""
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
    """Per unit, epsilon used and the budget over time (UTC); ``None`` if empty."""
    if not summary.units or not (entries or summary.history):
        return None
    charges = [_charge(e) for e in entries]
    figure = Figure(figsize=(8, 0.8 + 2.3 * len(summary.units)))
    panels = figure.subplots(len(summary.units), 1, squeeze=False, sharex=True)[:, 0]
    every_time = [_time(e.created) for e in entries] + [_time(h.created) for h in summary.history]
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
            axes.plot(budget_times, levels, "o", color=BUDGET, markersize=3)  # when it was set
        heading = textwrap.shorten(f"{unit.unit}: {unit_meaning(target)}", width=110)
        axes.set_title(heading, fontsize="small", loc="left")
        axes.set_ylabel("epsilon")
        axes.set_ylim(bottom=0)
        plain_axis(axes.yaxis)
        axes.grid(alpha=0.3)
        axes.legend(fontsize="small", loc="upper left")
    panels[-1].set_xlabel(_time_axis(panels[-1], every_time))
    figure.tight_layout()
    return figure


def _time_axis(axes: Axes, times: Sequence[datetime]) -> str:
    """UTC tick labels scaled to the span (widened to :data:`MIN_SPAN`); returns the axis label."""
    import matplotlib.dates as mdates

    start, end = min(times), max(times)
    if end - start < MIN_SPAN:
        middle = start + (end - start) / 2
        start, end = middle - MIN_SPAN / 2, middle + MIN_SPAN / 2
        axes.set_xlim(start, end)  # type: ignore[arg-type]
    span = end - start
    if span <= timedelta(hours=1):
        pattern = "%H:%M:%S"
    elif span <= timedelta(days=3):
        pattern = "%Y-%m-%d %H:%M"
    else:
        pattern = "%Y-%m-%d"
    axes.xaxis.set_major_locator(mdates.AutoDateLocator(maxticks=7))  # type: ignore[no-untyped-call]
    axes.xaxis.set_major_formatter(mdates.DateFormatter(pattern, tz=UTC))  # type: ignore[no-untyped-call]
    for label in axes.get_xticklabels():
        label.set_rotation(20)
        label.set_horizontalalignment("right")
    same_day = start.astimezone(UTC).date() == end.astimezone(UTC).date()
    day = f", {start.astimezone(UTC):%Y-%m-%d}" if same_day and "%d" not in pattern else ""
    return f"date and time (UTC){day}"


def _budget_at(changes: Sequence[BudgetChange], created: str) -> Budget | None:
    """The unit's budget when a release was charged: its latest change up to that time."""
    current = None
    for change in changes:
        if change.created <= created:
            current = Budget(change.epsilon, change.delta)
    return current


def _meaning(summary: LedgerSummary) -> str:
    """The page's "What this means" paragraph."""
    intro = (
        f"This ledger records {plural(summary.n_releases, 'release')} and, for each privacy "
        "unit, how much of its budget they spent. Spends add up within a unit (a release also "
        "counts in the units its guarantee implies), never across units, and a release that "
        "would go over its unit's budget is refused before any noise is drawn."
    )
    proven = [u for u in summary.units if u.proven]
    spent = max(proven, key=lambda u: u.used.epsilon, default=None)
    budgets = [(u.budget.epsilon, u.unit) for u in proven if u.budget is not None]
    if spent is not None and spent.used.epsilon > 0:
        epsilon, unit = spent.used.epsilon, spent.unit
        lead = f"The most spent is in {unit}: epsilon {epsilon:g} for its releases together."
    elif budgets:
        epsilon, unit = max(budgets)
        lead = f"Nothing is spent yet; the largest budget is epsilon {epsilon:g}, for {unit}."
    else:
        return f"{intro} No budget is set and nothing is spent yet."
    example = epsilon_example(epsilon, *unit_secret(PrivacyUnit.parse(unit)))
    return f"{intro} {lead} {example}"


def render_ledger_html(
    summary: LedgerSummary,
    entries: Sequence[LedgerEntry],
    *,
    title: str = "Privacy budget ledger",
) -> str:
    """The ledger as one self-contained HTML page. See docs/ledger-and-audit.md.

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
        The page, figures inlined as PNG.
    """
    figures = {"spend": png(spend_figure(summary), dpi=90)} if summary.units else {}
    timeline = timeline_figure(summary, entries)
    if timeline is not None:
        figures["timeline"] = png(timeline, dpi=90)
    meanings = {u.unit: unit_meaning(PrivacyUnit.parse(u.unit)) for u in summary.units}
    return render(
        TEMPLATE,
        meaning=_meaning(summary),
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
    """Render the page (:func:`render_ledger_html`) and write it atomically.

    Parameters
    ----------
    summary, entries, title
        As in :func:`render_ledger_html`.
    path : str or pathlib.Path
        The HTML file (UTF-8), replaced once written in full; parents made.

    Returns
    -------
    pathlib.Path
        The file written.
    """
    return atomic_write_text(path, render_ledger_html(summary, entries, title=title))
