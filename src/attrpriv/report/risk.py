"""HTML report of a feature risk assessment: one self-contained file, figures inlined as PNG.

Rendered from the :class:`~attrpriv.assess.report.RiskReport` alone (aggregates only).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from matplotlib.figure import Figure

from attrpriv._io import atomic_write_text
from attrpriv.report._page import png, render
from attrpriv.report._words import plain, plural

if TYPE_CHECKING:
    from attrpriv.assess.report import FeatureSetRisk, MitigationPath, RiskReport

__all__ = ["render_html", "write_html"]

TEMPLATE = "risk_report.html.j2"
ATTACK_COLOURS = {"membership": "#1f77b4", "attribute": "#ff7f0e", "property": "#2ca02c"}
MAX_ROWS_IN_FIGURE = 25
ROC_SETS = 3
SETTINGS = {
    "estimator": "model",
    "feature_sets": "feature sets",
    "threshold": "risk threshold",
    "flag_on": "a set is flagged on",
    "weights": "weights of the overall score",
    "n_repeats": "repeats (train-test splits)",
    "test_size": "share of rows held out for testing",
    "n_references": "reference models",
    "n_shadows": "shadow models",
    "max_attack_rows": "most rows attacked",
    "sensitive": "sensitive attributes",
    "sensitive_input": "sensitive attributes are model inputs",
    "max_repeats": "most repeats",
    "confidence": "confidence level",
    "seed": "random seed",
}
"""The labels of the assessor's settings on the page (others: their name, in words)."""
FLAG_ON = {"estimate": "its estimate", "lower": "the lower end of its CI"}


def _interval(
    axes: Any, y: np.ndarray, points: Sequence[tuple[float, tuple[float, float]]], **style: Any
) -> None:
    """Horizontal error bars: each point with its (low, high) interval, at heights ``y``."""
    x = np.array([value for value, _ in points])
    err = np.array([[value - low, high - value] for value, (low, high) in points]).T
    axes.errorbar(x, y, xerr=err.reshape(2, -1), capsize=2, **style)


def risk_figure(risks: Sequence[FeatureSetRisk], threshold: float) -> Figure:
    """Forest plot: each set's attack differences and overall score with their CIs."""
    shown = list(risks[:MAX_ROWS_IN_FIGURE])[::-1]  # riskiest at the top
    figure = Figure(figsize=(8, 1.2 + 0.42 * max(len(shown), 1)))
    axes = figure.add_subplot()
    rows = np.arange(len(shown), dtype=float)
    series = [a for a in ATTACK_COLOURS if any(a in r.attacks for r in shown)]
    offsets = np.linspace(-0.27, 0.27, len(series) + 1)
    for offset, attack in zip(offsets, series, strict=False):
        picked = [(i, r.attacks[attack]) for i, r in enumerate(shown) if attack in r.attacks]
        _interval(
            axes,
            rows[[i for i, _ in picked]] + offset,
            [(s.difference, s.ci) for _, s in picked],
            fmt="o",
            ms=4,
            color=ATTACK_COLOURS[attack],
            label=f"{attack} (attack - baseline)",
        )
    overall = [(r.overall, r.overall_ci) for r in shown]
    _interval(axes, rows + offsets[-1], overall, fmt="s", ms=5, color="black", label="overall")
    modified = [r.modified for r in shown]
    axes.scatter(modified, rows, marker="D", s=28, facecolors="none", edgecolors="crimson",
                 label="modified", zorder=3)  # fmt: skip
    axes.axvline(threshold, color="crimson", linestyle="--", linewidth=1, label="threshold")
    axes.axvline(0.0, color="grey", linewidth=0.8)
    axes.set_yticks(rows, [r.label for r in shown])
    axes.set_xlabel("risk score (rate difference)")
    axes.legend(loc="lower right", fontsize="small")
    axes.grid(axis="x", alpha=0.3)
    return figure


def roc_figure(report: RiskReport) -> Figure | None:
    """ROC of the membership attack on the full model and without each of the riskiest sets."""
    membership = report.model.membership
    if membership is None:
        return None
    figure = Figure(figsize=(10, 4.2))
    linear, logged = figure.subplots(1, 2)
    curves = [("all features", membership.roc, "black")]
    colours = ("#d62728", "#1f77b4", "#2ca02c")
    for risk, colour in zip(report.feature_sets[:ROC_SETS], colours, strict=False):
        if risk.membership_without is not None:
            curves.append((f"without {risk.label}", risk.membership_without.roc, colour))
    for axes, log in ((linear, False), (logged, True)):
        for name, roc, colour in curves:
            fpr, tpr = np.asarray(roc.fpr), np.asarray(roc.tpr)
            if log:
                keep = (fpr > 0) & (tpr > 0)
                fpr, tpr = fpr[keep], tpr[keep]
            axes.plot(fpr, tpr, color=colour, label=name, linewidth=1.4)
        reference = np.logspace(-3, 0, 50) if log else np.linspace(0, 1, 2)
        axes.plot(reference, reference, color="grey", linestyle=":", label="random guess")
        axes.set_xlabel("false positive rate")
        axes.set_ylabel("true positive rate")
        if log:
            axes.set_xscale("log")
            axes.set_yscale("log")
            axes.set_xlim(1e-3, 1)
            axes.set_ylim(1e-3, 1)
            axes.set_title("log scale (low FPR)")
        else:
            axes.set_title("membership attack ROC")
            axes.legend(fontsize="small", loc="lower right")
    return figure


def path_figure(path: MitigationPath, metric: str) -> Figure:
    """The mitigation loop: utility against the largest risk score, one point per step."""
    figure = Figure(figsize=(7, 4.2))
    axes = figure.add_subplot()
    risk = [s.max_score for s in path.steps]
    utility = [s.utility for s in path.steps]
    axes.plot(risk, utility, marker="o", color="#1f77b4")
    for step in path.steps:
        text = "start" if step.strategy is None else f"{step.step}: {step.strategy}"
        axes.annotate(
            text,
            (step.max_score, step.utility),
            textcoords="offset points",
            xytext=(5, 5),
            fontsize="small",
        )
    axes.axvline(path.threshold, color="crimson", linestyle="--", linewidth=1, label="threshold")
    axes.set_xlabel("largest modified risk score")
    axes.set_ylabel(f"test {metric} of the model")
    axes.set_title("mitigation loop: utility vs risk")
    axes.legend(fontsize="small")
    axes.grid(alpha=0.3)
    return figure


def _figure_png(figure: Figure) -> str:
    return png(figure, dpi=96, bbox_inches="tight")


def _figures(report: RiskReport) -> dict[str, str]:
    figures: dict[str, str] = {}
    if report.feature_sets:
        figures["risk"] = _figure_png(risk_figure(report.feature_sets, report.threshold))
    roc = roc_figure(report)
    if roc is not None:
        figures["roc"] = _figure_png(roc)
    if report.mitigation is not None:
        figures["path"] = _figure_png(path_figure(report.mitigation, report.model.metric))
    return figures


def _settings(settings: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The settings as (label, value) in words: no parameter names, no Python values."""
    rows = []
    for key, value in settings.items():
        label = SETTINGS.get(key, key.replace("_", " "))
        text = FLAG_ON.get(value, value) if key == "flag_on" else value
        rows.append((label, plain(text)))
    return rows


def _meaning(report: RiskReport) -> str:
    """The page's "What this means" paragraph (no epsilon: not a guarantee)."""
    flagged = sum(risk.flagged for risk in report.feature_sets)
    membership = report.model.membership
    attack = (
        ""
        if membership is None
        else f" The membership attack on the model trained on all features reaches AUC "
        f"{membership.score.attack:.3f}, where 0.5 is a guess."
    )
    return (
        "This page measures how much a model trained on this data leaks about its training "
        f"rows, and which features are to blame: {plural(len(report.feature_sets), 'feature set')}"
        f" assessed, {flagged} flagged at the risk threshold {report.threshold:g}.{attack} A "
        "set's risk score is how much better the attacks do with the set than without it (0: "
        "no measurable difference). It is a measurement by these attacks on this data, not a "
        "guarantee, so it has no epsilon (a release's epsilon bounds how much one person's data "
        "can change what anyone learns, whatever the attack), and a stronger attack could do "
        "better. A score whose confidence interval reaches 0 is no proof of safety."
    )


def render_html(report: RiskReport, *, title: str = "Feature privacy risk") -> str:
    """The report as one self-contained HTML page. See docs/assess/risk-scores.md.

    Parameters
    ----------
    report : RiskReport
        What the feature risk assessment returned.
    title : str, optional
        The page's title.

    Returns
    -------
    str
        The page: the ranked table, the figures inlined as PNG, the settings.
    """
    attacks = [a for a in ATTACK_COLOURS if any(a in r.attacks for r in report.feature_sets)]
    return render(
        TEMPLATE,
        meaning=_meaning(report),
        title=title,
        report=report,
        attacks=attacks,
        figures=_figures(report),
        settings=dict(report.settings),
        settings_in_words=_settings(report.settings),
    )


def write_html(
    report: RiskReport, path: str | Path, *, title: str = "Feature privacy risk"
) -> Path:
    """Render the page (:func:`render_html`) and write it atomically.

    Parameters
    ----------
    report, title
        As in :func:`render_html`.
    path : str or pathlib.Path
        The HTML file (UTF-8), replaced once written in full; parents made.

    Returns
    -------
    pathlib.Path
        ``path``, written.
    """
    return atomic_write_text(path, render_html(report, title=title))
