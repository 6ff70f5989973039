"""A small self-contained HTML page for a sanitize sweep: the privacy-utility plot and a table."""

from __future__ import annotations

import base64
import html
import io

from attrpriv.sanitize.sweep import SweepResult


def _plot(result: SweepResult) -> str:
    """Leakage (x) vs utility (y) per sampler family, as a base64 PNG."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    figure, axes = plt.subplots(figsize=(6, 4))
    for family in sorted({p.family for p in result.points}):
        pts = [p for p in result.points if p.family == family]
        style = "s" if family == "reference" else "o-"
        axes.plot([p.leakage for p in pts], [p.utility for p in pts], style, label=family)
    axes.set_xlabel("leakage (adversary accuracy - prior)")
    axes.set_ylabel("utility (accuracy on sanitized data)")
    axes.legend()
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100)
    plt.close(figure)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def sweep_html(result: SweepResult, *, title: str) -> str:
    """The page: title, plot, one table row per sampler, Pareto AUC per family."""
    rows = "\n".join(
        f"<tr><td>{html.escape(p.name)}</td><td>{p.leakage:+.3f}</td><td>{p.utility:.3f}</td>"
        f"<td>{p.cas:.3f}</td></tr>"
        for p in result.points
    )
    aucs = ", ".join(f"{html.escape(k)}: {v:.3f}" for k, v in result.pareto_auc.items())
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><title>{html.escape(title)}</title></head>
<body><h1>{html.escape(title)}</h1>
<img alt="privacy-utility plot" src="data:image/png;base64,{_plot(result)}">
<table border="1"><tr><th>sampler</th><th>leakage</th><th>utility</th><th>CAS</th></tr>
{rows}</table>
<p>Area under the Pareto front (leakage budget [0, 0.5]): {aucs}</p>
</body></html>
"""
