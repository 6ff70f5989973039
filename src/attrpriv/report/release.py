"""HTML page of one release of any mechanism: noisy values, noise intervals, guarantee."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from attrpriv._io import atomic_write_text
from attrpriv.dp.record import ANY_LAW
from attrpriv.errors import InputError
from attrpriv.release.nonnegative import COUNTS, non_negative_counts
from attrpriv.report._page import plain_axis, png, render
from attrpriv.report._words import delta_words, epsilon_example, plural, rho_words

if TYPE_CHECKING:
    import pandas as pd

    from attrpriv.dp.ledger import LedgerSummary
    from attrpriv.dp.record import Diagnostics, PrivacyRecord, Release
    from attrpriv.dp.units import PrivacyUnit

__all__ = [
    "release_figure",
    "render_release_html",
    "unit_meaning",
    "unit_secret",
    "write_release_html",
]

TEMPLATE = "release.html.j2"
MAX_FIGURES = 40  # histograms drawn; the table below the figures has every value
MAX_LEVELS = 60  # levels drawn per histogram
BAR, INTERVAL = "#4c78a8", "#222222"
DEFINITIONS = {
    "dp": "differential privacy",
    "dependent-dp": "dependent differential privacy",
    "attribute-privacy": "attribute privacy",
    "pufferfish": "Pufferfish privacy",
}
SAMPLERS = {
    "OpenDPNoise": "OpenDP's exact samplers",
    "SeededNumpyNoise": "a seeded NumPy generator",
}


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


def unit_secret(unit: PrivacyUnit) -> tuple[str, str, str]:
    """What a unit protects, as noun phrases for the epsilon example (whose data, the two sides)."""
    if unit.definition == "dp":
        if unit.base == "add-remove":
            return "one person's data", "this person's row in the data", "without it"
        if unit.base == "substitute":
            return "one person's data", "one person's true row", "any other values in it"
        columns = ", ".join(sorted(unit.parts))
        return f"one person's {columns}", f"one person's true {columns}", "any other values"
    if unit.definition == "dependent-dp":
        return (
            "one respondent's answer",
            "one respondent's true answer to any one question",
            "any other answer (the answers that depend on it moving with it)",
        )
    if unit.definition == "attribute-privacy":
        return (
            "a property of the whole data set",
            f"one of the protected values of {unit.base}",
            "another of them",
        )
    return (
        "one secret",
        "one secret's true value",
        "the value it is paired with, for any adversary whose beliefs are in Theta",
    )


def _figure_size(levels: int) -> tuple[float, float]:
    return 7.5, 1.0 + 0.28 * max(levels, 2)


def release_figure(
    frame: pd.DataFrame, title: str, confidence: float, what: str = "noisy value"
) -> Figure:
    """Bars of one histogram's values with their noise intervals (first :data:`MAX_LEVELS`)."""
    shown = frame.head(MAX_LEVELS).iloc[::-1]  # first level at the top
    labels = [str(v) if v != "" else str(n) for n, v in zip(shown["name"], shown["level"],
                                                               strict=True)]  # fmt: skip
    values = shown["value"].to_numpy(dtype=float)
    lower = shown["lower"].to_numpy(dtype=float, na_value=np.nan)
    upper = shown["upper"].to_numpy(dtype=float, na_value=np.nan)
    figure = Figure(figsize=_figure_size(len(shown)))
    axes = figure.add_subplot()
    rows = np.arange(len(shown), dtype=float)
    axes.barh(rows, values, color=BAR, alpha=0.8, label=what)
    finite = np.isfinite(lower) & np.isfinite(upper)
    if finite.any():
        middle, half = (lower + upper) / 2, (upper - lower) / 2
        axes.errorbar(middle[finite], rows[finite], xerr=half[finite], fmt="none",
                      ecolor=INTERVAL, capsize=3, linewidth=1,
                      label=f"{confidence:.0%} noise interval")  # fmt: skip
    axes.axvline(0.0, color="grey", linewidth=0.8)
    axes.set_yticks(rows, labels)
    axes.set_ylim(-0.6, len(shown) - 0.4)
    axes.set_title(title, loc="left", pad=18)
    axes.set_xlabel(what)
    plain_axis(axes.xaxis)
    if "count" in what:
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.grid(axis="x", alpha=0.3)
    axes.legend(loc="lower right", bbox_to_anchor=(1.0, 1.0), ncols=2, fontsize="small",
                frameon=False, borderaxespad=0.1)  # fmt: skip
    if len(frame) > MAX_LEVELS:
        axes.text(0.99, 0.01, f"first {MAX_LEVELS} of {len(frame)} levels", ha="right",
                  va="bottom", transform=axes.transAxes, fontsize="small")  # fmt: skip
    figure.tight_layout()
    return figure


def _figures(
    frame: pd.DataFrame, confidence: float, what: str, heading: str
) -> list[tuple[str, str]]:
    """(title, base64 PNG) per histogram, or one for values without levels."""
    histograms = frame[frame["level"] != ""]
    statistics = frame[frame["level"] == ""]
    figures = []
    for name, part in list(histograms.groupby("name", sort=False))[:MAX_FIGURES]:
        figure = release_figure(part, f"{name}", confidence, what)
        figures.append((str(name), png(figure, dpi=90)))
    if len(statistics):
        figure = release_figure(statistics, heading, confidence, what)
        figures.append((heading, png(figure, dpi=90)))
    return figures


def _guarantee(record: PrivacyRecord) -> list[tuple[str, str]]:
    definition = DEFINITIONS.get(record.definition, record.definition)
    rows = [
        ("mechanism", record.mechanism),
        ("definition", f"{definition} ({record.definition})"),
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
        sampler = SAMPLERS.get(str(noise["sampler"]), str(noise["sampler"]))
        rows.append(("noise drawn with", f"{sampler}{private}"))
    return rows


MAX_LISTED = 25
"""Modules or tree links listed on the page (the rest are counted; all are in the JSON)."""


def _calibration(diagnostics: Diagnostics) -> list[tuple[str, str]]:
    """A Tabular-DDP tier's noise source, expected error and gain (empty for others)."""
    from attrpriv.release.ddp import ModelDiagnostics, ModuleDiagnostics, TierDiagnostics

    if not isinstance(diagnostics, TierDiagnostics):
        return []
    rows: list[tuple[str, str]] = []
    if isinstance(diagnostics, ModuleDiagnostics):
        modules = diagnostics.modules
        rows.append(("modules", f"{len(modules)}, from {diagnostics.modules_from}"))
        rows += [(f"module {k}", ", ".join(module))
                 for k, module in enumerate(modules[:MAX_LISTED], start=1)]  # fmt: skip
        if len(modules) > MAX_LISTED:
            rows.append(("", f"{len(modules) - MAX_LISTED} more modules (in the JSON output)"))
    if isinstance(diagnostics, ModelDiagnostics):
        links = diagnostics.links
        rows.append(("model", f"tree {diagnostics.model.fingerprint} over {len(links) + 1} "
                              f"questions, from {diagnostics.model_from}"))  # fmt: skip
        shown = "; ".join(f"{a} - {b}" for a, b in links[:MAX_LISTED])
        more = f"; {len(links) - MAX_LISTED} more" if len(links) > MAX_LISTED else ""
        rows.append(("tree links", shown + more))
    laplace = f"{diagnostics.laplace_error:.4g} (scale {diagnostics.laplace_scale:.4g})"
    rows += [
        ("expected |error| per bin", f"{diagnostics.expected_error:.4g}"),
        ("row-level Laplace", laplace),
        ("gain over Laplace", f"{diagnostics.gain:.2f}x smaller noise scale on average"),
    ]
    return rows


def _fmt(value: Any) -> str:
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) else (
        f"{float(value):.6g}")  # fmt: skip


def _values(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return [
        {"name": str(r.name), "level": str(r.level), "value": _fmt(r.value),
         "half_width": _fmt(r.half_width), "lower": _fmt(r.lower), "upper": _fmt(r.upper),
         "non_negative": _fmt(r.non_negative), "non_negative_lower": _fmt(r.non_negative_lower),
         "non_negative_upper": _fmt(r.non_negative_upper)}
        for r in frame.itertuples()
    ]  # fmt: skip


def _totals(frame: pd.DataFrame) -> list[dict[str, str]]:
    """Per histogram: the raw total, the non-negative total and the amount clipping added."""
    totals = frame.groupby("histogram", sort=False)[["value", "non_negative", "clipped"]].sum()
    return [{"name": str(name) or "all counts", "raw": _fmt(t.value),
             "shown": _fmt(t.non_negative), "clipped": _fmt(t.clipped)}
            for name, t in totals.iterrows()]  # fmt: skip


def _listed(names: Any) -> str:
    shown = ", ".join(map(str, list(names)[:5]))
    return shown + (", ..." if len(names) > 5 else "")


def _meaning(release: Release, frame: pd.DataFrame, counts: str | None) -> str:
    """The page's "What this means" paragraph."""
    record = release.record
    histograms = frame[frame["level"] != ""]["name"].unique()
    confidence = 0.95 if release.accuracy is None else float(release.accuracy.confidence)
    if len(histograms):
        what = (f"{plural(len(frame), 'noisy count')} in "
                f"{plural(len(histograms), 'histogram')} ({_listed(histograms)})")  # fmt: skip
    else:
        kind = "noisy statistic" if counts is None else "noisy count"
        what = f"{plural(len(frame), kind)} ({_listed(frame['name'])})"
    sentences = [
        f"This page shows {what}: each is the true value plus random noise, and lies within "
        f"its noise interval of the true value with {confidence:.0%} probability.",
        epsilon_example(record.epsilon, *unit_secret(record.unit)),
        " ".join(filter(None, [delta_words(record.delta), rho_words(record.rho)])),
    ]
    for guarantee in record.guarantees:
        if guarantee.laws == ANY_LAW:
            sentences.append(
                "This epsilon rests on the assumptions below; without them the same noise still "
                f"gives epsilon {guarantee.epsilon:.4g} for any law of the data."
            )
    negative = _negative(frame, counts)
    if counts == "non-negative":
        below = "none" if not negative else plural(negative, "count")
        sentences.append(
            "Counts are shown non-negative and rounded, a post-processing that costs no "
            f"privacy (noisy counts below 0: {below}); the raw ones are in the table."
        )
    else:
        if negative:
            sentences.append(
                f"Noisy counts below 0 ({negative}) are so only because of the noise: they are "
                "shown as released (raw, unbiased)."
            )
        sentences.append(
            "Anything computed from these values alone keeps the same guarantee (post-processing)."
        )
    return " ".join(filter(None, sentences))


def _negative(frame: pd.DataFrame, counts: str | None) -> int:
    """How many of the released counts are below 0 (none for a release of statistics)."""
    return 0 if counts is None else int((frame["value"] < 0).sum())


def render_release_html(
    release: Release,
    *,
    ledger_summary: LedgerSummary | None = None,
    title: str = "Release",
    counts: str | None = None,
) -> str:
    """The release as one self-contained HTML page (aggregates only). See docs/noise.md.

    Parameters
    ----------
    release : Release
        What any mechanism's ``release`` returned.
    ledger_summary : LedgerSummary, optional
        The ledger's state after the release was charged.
    title : str, optional
        The page's title.
    counts : {None, "raw", "non-negative"}, optional
        Counts shown raw, or non-negative and rounded beside the raw ones; ``None``: not counts.

    Returns
    -------
    str
        The page, figures inlined as PNG.

    Raises
    ------
    InputError
        If ``counts`` is none of these.
    """
    if counts is not None and counts not in COUNTS:
        raise InputError(f"counts must be one of {', '.join(COUNTS)}, got {counts!r}")
    frame = non_negative_counts(release)
    non_negative = counts == "non-negative"
    accuracy = release.accuracy
    confidence = 0.95 if accuracy is None else float(accuracy.confidence)
    shown = frame.assign(value=frame["non_negative"], lower=frame["non_negative_lower"],
                         upper=frame["non_negative_upper"]) if non_negative else frame  # fmt: skip
    what = "non-negative count" if non_negative else ("noisy count" if counts else "noisy value")
    heading = "released counts" if counts else "released statistics"
    return render(
        TEMPLATE,
        meaning=_meaning(release, frame, counts),
        title=title,
        non_negative=non_negative,
        totals=_totals(frame) if non_negative else [],
        negative=_negative(frame, counts),
        record=release.record,
        guarantee=_guarantee(release.record),
        calibration=_calibration(release.diagnostics),
        confidence=confidence,
        accuracy_of="" if accuracy is None else accuracy.of,
        distribution="" if accuracy is None else accuracy.distribution,
        figures=_figures(shown, confidence, what, heading),
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
    counts: str | None = None,
) -> Path:
    """Render the page (:func:`render_release_html`) and write it atomically.

    Parameters
    ----------
    release, ledger_summary, title, counts
        As in :func:`render_release_html`.
    path : str or pathlib.Path
        The HTML file (UTF-8), replaced only once written in full; parents are created.

    Returns
    -------
    pathlib.Path
        The file written.
    """
    page = render_release_html(release, ledger_summary=ledger_summary, title=title,
                               counts=counts)  # fmt: skip
    return atomic_write_text(path, page)
