"""HTML page of a sanitizer's privacy-utility sweep: one self-contained file, the plot inlined.

The page names the sensitive column and the utility task, defines every term it shows (leakage,
utility, CAS, the Pareto area, each sampler family), plots leakage against utility with every
point labelled by its epsilon or setting, and tables each sampler's scores with their confidence
intervals, the rows each score used and the classifiers. It is rendered from the
:class:`~attrpriv.sanitize.tradeoff.SweepResult` alone, which holds aggregates only.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from matplotlib.figure import Figure

from attrpriv._io import atomic_write_text
from attrpriv.report._page import png, render

if TYPE_CHECKING:
    from attrpriv.sanitize.tradeoff import SweepPoint, SweepResult

__all__ = ["render_sweep_html", "write_sweep_html"]

TEMPLATE = "sanitize_sweep.html.j2"
_EPSILON = re.compile(r"\beps=(\S+)$")

# What each sampler family of ``attrpriv sanitize evaluate`` is, and the name of its knob.
FAMILIES: dict[str, tuple[str, str]] = {
    "suppression": (
        "every record's sensitive latent z_S replaced by zeros: nothing about it is released "
        "(no noise, no parameter, no DP claim needed).",
        "",
    ),
    "dp-obfuscation": (
        "each record's z_S clipped to a public box [-bound, bound]^k and Laplace noise added: "
        "local epsilon-DP for the value of each record's sensitive latent.",
        "epsilon",
    ),
    "dp-sampling": (
        "a per-class Gaussian model of (z_S, y_S) fitted with epsilon-DP (RON-Gauss), from which "
        "every record gets a replacement z_S and a synthetic sensitive label, drawn independently "
        "of its own: epsilon-DP for one record's (z_S, y_S).",
        "epsilon",
    ),
    "input-noise": (
        "baseline without a decoupler: Gaussian noise added to the input (pixel std for images; "
        "for tables a share of each column's public range, categories replaced with that "
        "probability). No formal guarantee.",
        "noise scale",
    ),
    "beta-VAE interpolation": (
        "baseline: a plain beta-VAE's full latent z moved from the record's sensitive class mean "
        "towards the mean of a class drawn at random, by the given strength. No formal guarantee.",
        "strength",
    ),
    "reference": (
        "not sanitizers, to read the others against (left out of the Pareto areas): "
        "'reconstruction (z_S kept)' is the decoupler's output with every z_S kept, 'real data' "
        "the data as given.",
        "",
    ),
}


def setting(point: SweepPoint) -> str:
    """A point's label: its epsilon for a DP sampler, else its knob's value (from its name)."""
    found = _EPSILON.search(point.name)
    if found:
        return f"\u03b5 = {found.group(1)}"
    if point.family == "reference":
        return point.name
    for prefix in (point.family, point.family.replace("-", " ")):
        if point.name.startswith(prefix):
            rest = point.name[len(prefix) :].strip()
            knob = FAMILIES.get(point.family, ("", ""))[1]
            return f"{knob} {rest}".strip() if rest else "-"
    return point.name


def sweep_figure(result: SweepResult) -> Figure:
    """Leakage (x, with its CI) against utility (y), one line per family, each point labelled."""
    figure = Figure(figsize=(9, 5.5))
    axes = figure.add_subplot()
    for family in sorted({p.family for p in result.points}):
        points = [p for p in result.points if p.family == family]
        cis = [_get(p.parts, "leakage_parts", "score", "ci") for p in points]
        err = [
            [p.leakage - ci[0] if ci else 0.0 for p, ci in zip(points, cis, strict=True)],
            [ci[1] - p.leakage if ci else 0.0 for p, ci in zip(points, cis, strict=True)],
        ]
        reference = family == "reference"
        axes.errorbar([p.leakage for p in points], [p.utility for p in points], xerr=err,
                      fmt="s" if reference else "o-", ms=7 if reference else 5, capsize=2,
                      label=family)  # fmt: skip
        for point in (p for p in points if setting(p) != "-"):
            axes.annotate(setting(point), (point.leakage, point.utility), fontsize=7,
                          xytext=(4, 4), textcoords="offset points")  # fmt: skip
    axes.axvline(0.0, color="grey", linewidth=0.8)
    axes.set_xlabel("leakage: adversary accuracy - prior (bars: its CI)")
    axes.set_ylabel("utility: task accuracy on sanitized data")
    axes.grid(alpha=0.3)
    axes.legend(fontsize="small")
    figure.tight_layout()
    return figure


def render_sweep_html(
    result: SweepResult, *, title: str, sensitive: str | None = None, target: str | None = None
) -> str:
    """The sweep as one self-contained HTML page; ``sensitive`` and ``target`` name y_S and the
    utility task's column (or label array) when the caller knows them.

    Parameters
    ----------
    result : SweepResult
        What :func:`attrpriv.sanitize.tradeoff.sweep` or ``sweep_images`` returned.
    title : str
        The page's title.
    sensitive : str or None, optional
        The name of the sensitive attribute y_S, shown on the page; ``None``: "not named by
        the caller".
    target : str or None, optional
        The name of the utility task's column (or label array); ``None``: "the task column".

    Returns
    -------
    str
        The page: the terms defined, the leakage-utility plot inlined as PNG, and each
        sampler's scores with their confidence intervals.
    """
    rows = [_row(p) for p in result.points]
    families = {p.family: FAMILIES.get(p.family, ("a sampler family of this sweep.", ""))[0]
                for p in result.points}  # fmt: skip
    confidences = sorted({r["confidence"] for r in rows if r["confidence"] is not None})
    return render(
        TEMPLATE,
        title=title,
        result=result,
        rows=rows,
        families=families,
        sensitive=sensitive,
        target=target,
        confidence=", ".join(f"{100 * c:g}%" for c in confidences) or "-",
        methods=", ".join(sorted({r["method"] for r in rows if r["method"]})) or "-",
        max_leakage=result.to_dict()["pareto_max_leakage"],
        any_dp=any(p.family.startswith("dp-") for p in result.points),
        plot=png(sweep_figure(result), dpi=100),
    )


def write_sweep_html(
    result: SweepResult,
    path: str | Path,
    *,
    title: str,
    sensitive: str | None = None,
    target: str | None = None,
) -> Path:
    """Render and write the page atomically.

    Parameters
    ----------
    result : SweepResult
        What :func:`attrpriv.sanitize.tradeoff.sweep` or ``sweep_images`` returned.
    path : str or pathlib.Path
        The HTML file to write (UTF-8); missing parent directories are created and an
        existing file is replaced only once the page is written in full.
    title : str
        The page's title.
    sensitive : str or None, optional
        The name of the sensitive attribute y_S, shown on the page.
    target : str or None, optional
        The name of the utility task's column (or label array).

    Returns
    -------
    pathlib.Path
        The file written: ``path`` as a :class:`pathlib.Path`.

    See Also
    --------
    render_sweep_html : The page as a string.
    """
    page = render_sweep_html(result, title=title, sensitive=sensitive, target=target)
    return atomic_write_text(path, page)


def _row(point: SweepPoint) -> dict[str, Any]:
    """What the page shows of one point, read from its parts (None where a part is absent)."""
    leak = point.parts.get("leakage_parts") or {}
    use = point.parts.get("utility_parts") or {}
    score = leak.get("score") or {}
    sanitized = use.get("on_sanitized") or {}
    real = use.get("on_real") or {}
    return {
        "point": point,
        "setting": setting(point),
        "leak_ci": score.get("ci"),
        "accuracy": leak.get("accuracy"),
        "prior": leak.get("prior"),
        "prior_class": leak.get("prior_class"),
        "util_gain": sanitized.get("difference"),
        "util_ci": sanitized.get("ci"),
        "cas_gain": real.get("difference"),
        "cas_ci": real.get("ci"),
        "majority": sanitized.get("baseline"),
        "adversary_train": leak.get("n_train"),
        "adversary_test": score.get("n"),
        "adversary_model": leak.get("model"),
        "task_train": use.get("n_train"),
        "task_test": sanitized.get("n"),
        "task_real": real.get("n"),
        "task_model": use.get("model"),
        "confidence": score.get("confidence"),
        "method": score.get("method"),
    }


def _get(parts: Mapping[str, Any], *keys: str) -> Any:
    value: Any = parts
    for key in keys:
        value = value.get(key) if isinstance(value, Mapping) else None
    return value
