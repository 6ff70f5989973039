"""HTML page of a sanitizer's privacy-utility sweep: one self-contained file, the plot inlined.

The page shows the leakage-utility plot of every sampler family, one table row per sampler and
the area under each family's Pareto front. It is rendered from the
:class:`~attrpriv.sanitize.tradeoff.SweepResult` alone, which holds aggregates only.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from matplotlib.figure import Figure

from attrpriv._io import atomic_write_text
from attrpriv.report._page import png, render

if TYPE_CHECKING:
    from attrpriv.sanitize.tradeoff import SweepResult

__all__ = ["render_sweep_html", "write_sweep_html"]

TEMPLATE = "sanitize_sweep.html.j2"


def sweep_figure(result: SweepResult) -> Figure:
    """Leakage (x) against utility (y), one line per sampler family."""
    figure = Figure(figsize=(6, 4))
    axes = figure.add_subplot()
    for family in sorted({p.family for p in result.points}):
        points = [p for p in result.points if p.family == family]
        style = "s" if family == "reference" else "o-"
        axes.plot([p.leakage for p in points], [p.utility for p in points], style, label=family)
    axes.set_xlabel("leakage (adversary accuracy - prior)")
    axes.set_ylabel("utility (accuracy on sanitized data)")
    axes.legend()
    figure.tight_layout()
    return figure


def render_sweep_html(result: SweepResult, *, title: str) -> str:
    """The sweep as one self-contained HTML page."""
    return render(TEMPLATE, title=title, result=result, plot=png(sweep_figure(result), dpi=100))


def write_sweep_html(result: SweepResult, path: str | Path, *, title: str) -> Path:
    """Render and write the page atomically."""
    return atomic_write_text(path, render_sweep_html(result, title=title))
