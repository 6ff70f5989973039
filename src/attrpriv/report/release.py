"""HTML page of one release: the noisy values with their noise intervals, and the guarantee.

Any mechanism's :class:`~attrpriv.dp.record.Release` renders here (Laplace histograms,
Tabular-DDP, the Markov quilt mechanism, the attribute-private Gaussian): the noisy histograms
(or statistics) with the 95% interval of the noise on each value, what is protected in one
sentence, epsilon and delta, the privacy unit, the assumptions, and, when given, the ledger's
state after the release. The page is rendered from the release alone (noisy aggregates and
public calibration facts), so no data row can reach it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from matplotlib.figure import Figure

from attrpriv._io import atomic_write_text
from attrpriv.report._page import png, render

if TYPE_CHECKING:
    import pandas as pd

    from attrpriv.dp.ledger import LedgerSummary
    from attrpriv.dp.record import PrivacyRecord, Release
    from attrpriv.dp.units import PrivacyUnit

__all__ = ["release_figure", "render_release_html", "unit_meaning", "write_release_html"]

TEMPLATE = "release.html.j2"
MAX_FIGURES = 40  # histograms drawn; the table below the figures has every value
MAX_LEVELS = 60  # levels drawn per histogram
BAR, INTERVAL = "#4c78a8", "#222222"


def unit_meaning(unit: PrivacyUnit) -> str:
    """What one unit of protection is, in words."""
    base = unit.base
    model = f" (relative to the data model {unit.model})" if unit.model else ""
    if unit.definition == "dp":
        if base == "add-remove":
            text = "one person's whole row: whether it is in the data at all"
        elif base == "substitute":
            text = "one person's whole row: whatever values it holds"
        else:
            text = f"the columns {', '.join(sorted(unit.parts))} of any one row"
    elif unit.definition == "dependent-dp":
        text = "any one answer of any one respondent, with the answers that depend on it"
    elif unit.definition == "attribute-privacy":
        text = f"the protected properties of the whole data set: {base}"
    else:
        text = f"the secrets {base} (Pufferfish)"
    return text + model


def _figure_size(levels: int) -> tuple[float, float]:
    return 7.5, 1.0 + 0.28 * max(levels, 2)


def release_figure(frame: pd.DataFrame, title: str, confidence: float) -> Figure:
    """Horizontal bars of the noisy values of one histogram (or statistics), each with the
    ``confidence`` interval of its noise; the first :data:`MAX_LEVELS` levels."""
    shown = frame.head(MAX_LEVELS).iloc[::-1]  # first level at the top
    labels = [str(v) if v != "" else str(n) for n, v in zip(shown["name"], shown["level"],
                                                               strict=True)]  # fmt: skip
    values = shown["value"].to_numpy(dtype=float)
    widths = shown["half_width"].to_numpy(dtype=float, na_value=np.nan)
    figure = Figure(figsize=_figure_size(len(shown)))
    axes = figure.add_subplot()
    rows = np.arange(len(shown), dtype=float)
    axes.barh(rows, values, color=BAR, alpha=0.8, label="noisy value")
    finite = np.isfinite(widths)
    if finite.any():
        axes.errorbar(values[finite], rows[finite], xerr=widths[finite], fmt="none",
                      ecolor=INTERVAL, capsize=3, linewidth=1,
                      label=f"{confidence:.0%} noise interval")  # fmt: skip
    axes.axvline(0.0, color="grey", linewidth=0.8)
    axes.set_yticks(rows, labels)
    axes.set_title(title, loc="left", pad=18)
    axes.set_xlabel("released (noisy) value")
    axes.grid(axis="x", alpha=0.3)
    axes.legend(loc="lower right", bbox_to_anchor=(1.0, 1.0), ncols=2, fontsize="small",
                frameon=False, borderaxespad=0.1)  # fmt: skip
    if len(frame) > MAX_LEVELS:
        axes.text(0.99, 0.01, f"first {MAX_LEVELS} of {len(frame)} levels", ha="right",
                  va="bottom", transform=axes.transAxes, fontsize="small")  # fmt: skip
    figure.tight_layout()
    return figure


def _figures(frame: pd.DataFrame, confidence: float) -> list[tuple[str, str]]:
    """(title, base64 PNG) per histogram (per name with levels), or one for the statistics."""
    histograms = frame[frame["level"] != ""]
    statistics = frame[frame["level"] == ""]
    figures = []
    for name, part in list(histograms.groupby("name", sort=False))[:MAX_FIGURES]:
        figure = release_figure(part, f"{name}", confidence)
        figures.append((str(name), png(figure, dpi=90)))
    if len(statistics):
        figure = release_figure(statistics, "released statistics", confidence)
        figures.append(("released statistics", png(figure, dpi=90)))
    return figures


def _guarantee(record: PrivacyRecord) -> list[tuple[str, str]]:
    rows = [
        ("mechanism", record.mechanism),
        ("definition", record.definition),
        ("epsilon", f"{record.epsilon:.6g}"),
        ("delta", f"{record.delta:.6g}"),
    ]
    if record.rho is not None:
        rows.append(("rho (zCDP)", f"{record.rho:.6g}"))
    rows += [("guarantee", guarantee.describe()) for guarantee in record.guarantees]
    rows.append(("privacy unit", f"{record.unit.key}: {unit_meaning(record.unit)}"))
    noise = record.noise
    if "distribution" in noise:
        rows.append(("noise", str(noise["distribution"])))
    if "sampler" in noise:
        private = "" if noise.get("private", True) else " (not private: tests only)"
        rows.append(("noise sampler", f"{noise['sampler']}{private}"))
    return rows


MAX_LISTED = 25
"""Modules or tree links listed on the page (the rest are counted; all are in the JSON)."""


def _calibration(parts: Mapping[str, Any]) -> list[tuple[str, str]]:
    """What a Tabular-DDP tier's noise came from, its expected error and its gain over
    substitution Laplace (empty for other mechanisms)."""
    if "gain" not in parts or "laplace_error" not in parts:
        return []
    rows: list[tuple[str, str]] = []
    if "modules" in parts:
        modules = parts["modules"]
        rows.append(("modules", f"{len(modules)}, from {parts['modules_from']}"))
        rows += [(f"module {k}", ", ".join(module))
                 for k, module in enumerate(modules[:MAX_LISTED], start=1)]  # fmt: skip
        if len(modules) > MAX_LISTED:
            rows.append(("", f"{len(modules) - MAX_LISTED} more modules (in the JSON output)"))
    if "links" in parts:
        links = parts["links"]
        model = parts["model"]
        rows.append(("model", f"tree {model['fingerprint']} over {len(links) + 1} questions, "
                              f"from {parts['model_from']}"))  # fmt: skip
        shown = "; ".join(f"{a} - {b}" for a, b in links[:MAX_LISTED])
        more = f"; {len(links) - MAX_LISTED} more" if len(links) > MAX_LISTED else ""
        rows.append(("tree links", shown + more))
    rows += [
        ("expected |error| per bin", f"{parts['expected_error']:.4g}"),
        ("row-level Laplace", f"{parts['laplace_error']:.4g} (scale {parts['laplace_scale']:.4g})"),
        ("gain over Laplace", f"{parts['gain']:.2f}x smaller noise scale on average"),
    ]
    return rows


def _values(frame: pd.DataFrame) -> list[dict[str, Any]]:
    def fmt(value: Any) -> str:
        return "-" if value is None or (isinstance(value, float) and math.isnan(value)) else (
            f"{float(value):.6g}")  # fmt: skip

    return [
        {"name": str(r.name), "level": str(r.level), "value": fmt(r.value),
         "half_width": fmt(r.half_width), "lower": fmt(r.lower), "upper": fmt(r.upper)}
        for r in frame.itertuples()
    ]  # fmt: skip


def render_release_html(
    release: Release,
    *,
    ledger_summary: LedgerSummary | None = None,
    title: str = "Release",
) -> str:
    """The release as one self-contained HTML page.

    Parameters
    ----------
    release : Release
        What any mechanism's ``release`` returned.
    ledger_summary : LedgerSummary, optional
        The ledger's state after the release was charged (``BudgetLedger.summary()``).
    title : str, optional
        The page's title.

    Returns
    -------
    str
        The page: the figures inlined as PNG, aggregates only.
    """
    frame = release.to_frame()
    accuracy = release.accuracy
    confidence = 0.95 if accuracy is None else float(accuracy.confidence)
    return render(
        TEMPLATE,
        title=title,
        record=release.record,
        guarantee=_guarantee(release.record),
        calibration=_calibration(release.parts),
        confidence=confidence,
        accuracy_of="" if accuracy is None else accuracy.of,
        distribution="" if accuracy is None else accuracy.distribution,
        figures=_figures(frame, confidence),
        values=_values(frame),
        n_figures_left=max(frame[frame["level"] != ""]["name"].nunique() - MAX_FIGURES, 0),
        ledger=ledger_summary,
    )


def write_release_html(
    release: Release,
    path: str | Path,
    *,
    ledger_summary: LedgerSummary | None = None,
    title: str = "Release",
) -> Path:
    """Render and write the page atomically.

    Parameters
    ----------
    release : Release
        What any mechanism's ``release`` returned.
    path : str or pathlib.Path
        The HTML file to write (UTF-8); missing parent directories are created and an
        existing file is replaced only once the page is written in full.
    ledger_summary : LedgerSummary, optional
        The ledger's state after the release was charged (``BudgetLedger.summary()``).
    title : str, optional
        The page's title.

    Returns
    -------
    pathlib.Path
        The file written: ``path`` as a :class:`pathlib.Path`.

    See Also
    --------
    render_release_html : The page as a string.
    """
    page = render_release_html(release, ledger_summary=ledger_summary, title=title)
    return atomic_write_text(path, page)
