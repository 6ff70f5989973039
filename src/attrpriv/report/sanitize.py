"""HTML page of a sanitizer's privacy-utility sweep: leakage AUC against utility AUC, and tables.

Rendered from the :class:`~attrpriv.sanitize.tradeoff.SweepResult` alone (aggregates only).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from matplotlib.figure import Figure

from attrpriv._io import atomic_write_text
from attrpriv.report._page import png, render
from attrpriv.report._words import ci_method, epsilon_example

if TYPE_CHECKING:
    from attrpriv.sanitize.tradeoff import SweepPoint, SweepResult

__all__ = ["render_sweep_html", "write_sweep_html"]

TEMPLATE = "sanitize_sweep.html.j2"
_EPSILON = re.compile(r"\beps=(\S+)$")
_MARKERS = ("D", "v", "^", "P", "X", "*")

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
    "baseline": (
        "the simple releases a sanitizer must beat, measured the same way: 'drop sensitive' "
        "(the sensitive column removed), 'drop sensitive + top k proxies' (also the k columns "
        "that alone predict it best on the auxiliary data), 'marginal draw' (the sensitive "
        "column replaced by draws from its auxiliary-data marginal). No formal guarantee.",
        "",
    ),
}


def setting(point: SweepPoint) -> str:
    """A point's label: its epsilon for a DP sampler, else its knob's value (from its name)."""
    found = _EPSILON.search(point.name)
    if found:
        return f"\u03b5 = {found.group(1)}"
    if point.family in ("reference", "baseline"):
        return point.name
    for prefix in (point.family, point.family.replace("-", " ")):
        if point.name.startswith(prefix):
            rest = point.name[len(prefix) :].strip()
            knob = FAMILIES.get(point.family, ("", ""))[1]
            return f"{knob} {rest}".strip() if rest else "-"
    return point.name


def sweep_figure(result: SweepResult) -> Figure:
    """Leakage AUC (x) against utility AUC (y) with CIs: a line per family, baselines apart."""
    figure = Figure(figsize=(9, 5.5))
    axes = figure.add_subplot()
    for family in sorted({p.family for p in result.points}):
        points = [p for p in result.points if p.family == family]
        reference = family == "reference"
        _errorbar(axes, points, fmt="s" if reference else "o-", ms=7 if reference else 5,
                  label=family)  # fmt: skip
    for marker, point in zip(_MARKERS * 4, result.baselines, strict=False):
        _errorbar(axes, [point], fmt=marker, ms=8, label=f"baseline: {point.name}", color="k",
                  mfc="none", annotate=False)  # fmt: skip
    if result.public_only is not None:
        axes.axhline(result.public_only.auc.attack, color="tab:purple", linestyle="--",
                     linewidth=1, label="the public rows alone (no release)")  # fmt: skip
    axes.axvline(0.5, color="grey", linewidth=0.8)
    axes.set_xlabel("leakage: the strongest adversary's AUC for y_S (0.5 = chance; bars: CI)")
    axes.set_ylabel("utility: task AUC on real held-out rows (bars: CI)")
    axes.grid(alpha=0.3)
    axes.legend(fontsize="small")
    figure.tight_layout()
    return figure


def _errorbar(axes: Any, points: list[SweepPoint], *, annotate: bool = True, **style: Any) -> None:
    """Points with both intervals as error bars; each labelled with its setting."""
    xs, ys = [p.leakage_auc for p in points], [p.utility for p in points]
    xci = [_ci(p, "leakage_parts") or (x, x) for p, x in zip(points, xs, strict=True)]
    yci = [_ci(p, "utility_parts") or (y, y) for p, y in zip(points, ys, strict=True)]
    xerr = [[max(0.0, x - c[0]) for x, c in zip(xs, xci, strict=True)],
            [max(0.0, c[1] - x) for x, c in zip(xs, xci, strict=True)]]  # fmt: skip
    yerr = [[max(0.0, y - c[0]) for y, c in zip(ys, yci, strict=True)],
            [max(0.0, c[1] - y) for y, c in zip(ys, yci, strict=True)]]  # fmt: skip
    axes.errorbar(xs, ys, xerr=xerr, yerr=yerr, capsize=2, **style)
    for point in (p for p in points if annotate and setting(p) != "-"):
        axes.annotate(setting(point), (point.leakage_auc, point.utility), fontsize=7,
                      xytext=(4, 4), textcoords="offset points")  # fmt: skip


def _ci(point: SweepPoint, key: str) -> tuple[float, float] | None:
    ci = (point.parts.get(key) or {}).get("auc_ci")
    return None if ci is None else (float(ci[0]), float(ci[1]))


def _meaning(result: SweepResult, sensitive: str | None, target: str | None) -> str:
    """The page's "What this means" paragraph."""
    secret = sensitive if sensitive is not None else "the sensitive attribute"
    task = target if target is not None else "the task column"
    found = (_EPSILON.search(p.name) for p in (*result.points, *result.baselines))
    epsilons = sorted({float(f.group(1)) for f in found if f is not None})
    text = (
        "This page compares ways of sanitizing the data before sharing it: each replaces the "
        f"part of every record's latent code that carries {secret} (the sensitive attribute "
        f"y_S; that part is z_S) and is scored on leakage (how well an attacker still recovers "
        f"{secret}; lower is better) and utility (how well the released data still predict "
        f"{task}; higher is better), each score with its confidence interval. On the plot, "
        "points further left and higher up are better, and the simple baselines show what a "
        "sanitizer must beat."
    )
    if not epsilons:
        return (
            f"{text} No sampler here has an epsilon: their leakage is measured by these "
            "attackers, not bounded, and a stronger attacker could do better."
        )
    example = epsilon_example(
        epsilons[0], "one record's sensitive values", "one record's true sensitive values",
        "any other values",
    )  # fmt: skip
    return (
        f"{text} The samplers labelled with an epsilon carry a guarantee (the smallest here is "
        f"{epsilons[0]:g}). {example} The others are measured only, not bounded."
    )


def render_sweep_html(
    result: SweepResult, *, title: str, sensitive: str | None = None, target: str | None = None
) -> str:
    """The sweep as one self-contained HTML page. See docs/sanitize/evaluation.md.

    Parameters
    ----------
    result : SweepResult
        What :func:`attrpriv.sanitize.tradeoff.sweep` or ``sweep_images`` returned.
    title : str
        The page's title.
    sensitive : str or None, optional
        The name of the sensitive attribute y_S, shown on the page.
    target : str or None, optional
        The name of the utility task's column (or label array).

    Returns
    -------
    str
        The page: the terms, the plot inlined as PNG, and each method's scores with CIs.
    """
    everything = (*result.points, *result.baselines)
    rows = [_row(p) for p in everything]
    families = {p.family: FAMILIES.get(p.family, ("a sampler family of this sweep.", ""))[0]
                for p in everything}  # fmt: skip
    confidences = sorted({r["confidence"] for r in rows if r["confidence"] is not None})
    return render(
        TEMPLATE,
        meaning=_meaning(result, sensitive, target),
        title=title,
        result=result,
        rows=rows,
        families=families,
        sensitive=sensitive,
        target=target,
        confidence=", ".join(f"{100 * c:g}%" for c in confidences) or "-",
        methods=", ".join(sorted({ci_method(r["method"]) for r in rows if r["method"]})) or "-",
        max_leakage=result.to_dict()["pareto_max_leakage"],
        settings=result.settings,
        leak_form=", ".join(sorted({r["auc_form"] for r in rows if r["auc_form"]})) or "binary",
        util_form=", ".join(sorted({r["util_form"] for r in rows if r["util_form"]})) or "binary",
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
    """Render the page (:func:`render_sweep_html`) and write it atomically.

    Parameters
    ----------
    result : SweepResult
        The sweep to show.
    path : str or pathlib.Path
        The HTML file (UTF-8), replaced only once written in full; parents are created.
    title, sensitive, target : str or None
        Keyword-only, as :func:`render_sweep_html` takes them (``title`` is required).

    Returns
    -------
    pathlib.Path
        The file written.
    """
    page = render_sweep_html(result, title=title, sensitive=sensitive, target=target)
    return atomic_write_text(path, page)


def _row(point: SweepPoint) -> dict[str, Any]:
    """What the page shows of one point, read from its parts (None where a part is absent)."""
    leak = point.parts.get("leakage_parts") or {}
    use = point.parts.get("utility_parts") or {}
    adversaries = {a.get("name"): a for a in leak.get("adversaries") or []}
    strongest = adversaries.get(leak.get("strongest")) or {}
    accuracy = strongest.get("accuracy") or {}
    auc = strongest.get("auc") or {}
    return {
        "point": point,
        "setting": setting(point),
        "leak_ci": leak.get("auc_ci"),
        "strongest": leak.get("strongest"),
        "raw_auc": (adversaries.get("raw-aux") or {}).get("auc", {}).get("attack"),
        "sanitized_auc": (adversaries.get("sanitized-aux") or {}).get("auc", {}).get("attack"),
        "acc_gain": accuracy.get("difference"),
        "acc_ci": accuracy.get("ci"),
        "prior": accuracy.get("baseline"),
        "prior_class": strongest.get("prior_class"),
        "util_ci": use.get("auc_ci"),
        "majority": use.get("majority"),
        "adversary_train": strongest.get("n_train"),
        "adversary_test": auc.get("n"),
        "adversary_model": strongest.get("model"),
        "task_train": use.get("n_train"),
        "task_test": use.get("n_test"),
        "task_model": use.get("model"),
        "seeds": leak.get("seeds"),
        "auc_form": leak.get("auc_form"),
        "util_form": use.get("auc_form"),
        "confidence": auc.get("confidence"),
        "method": auc.get("method"),
    }
