"""The sanitize evaluate page: it parses, its plot is a PNG, it names y_S and the task, defines
every term, labels every point with its epsilon or setting, shows the CIs and row counts, and no
data row reaches it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from attrpriv.report import render_sweep_html, write_sweep_html
from attrpriv.sanitize.evaluate import leakage, pareto_auc, utility
from attrpriv.sanitize.tradeoff import SweepPoint, SweepResult

N = 200
NAMES = {
    "suppression": "suppression",
    "dp-obfuscation eps=0.5": "dp-obfuscation",
    "dp-obfuscation eps=4": "dp-obfuscation",
    "dp-sampling eps=4": "dp-sampling",
    "input noise 0.2": "input-noise",
    "beta-VAE interpolation x1": "beta-VAE interpolation",
    "real data": "reference",
}


def _frame(rng: np.random.Generator, noise: float) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    secret = rng.choice(["F", "M"], N)
    task = rng.choice(["low", "high"], N)
    values = rng.normal(size=N) + noise * (secret == "F") + (task == "high")
    return pd.DataFrame({"x": values + 0.123456789}), secret, task


def _sweep() -> tuple[SweepResult, list[str]]:
    rng = np.random.default_rng(0)
    points, forbidden = [], []
    for i, (name, family) in enumerate(NAMES.items()):
        (aux, s_aux, _), (priv, s_priv, task) = _frame(rng, i / 3), _frame(rng, i / 3)
        forbidden += [repr(float(v)) for v in priv["x"].head(5)]
        leak = leakage(aux, s_aux, priv, s_priv)
        half = N // 2
        use = utility(priv[:half], task[:half], priv[half:], task[half:], x_real=priv[half:],
                      y_real=task[half:])  # fmt: skip
        assert use.on_real is not None
        parts = {"leakage_parts": leak.to_dict(), "utility_parts": use.to_dict()}
        points.append(SweepPoint(name, family, leak.difference, use.on_sanitized.attack,
                                 use.on_real.attack, parts))  # fmt: skip
    families = sorted({p.family for p in points} - {"reference"})
    aucs = {f: pareto_auc([[p.leakage, p.utility] for p in points if p.family == f],
                          max_leakage=0.5) for f in families}  # fmt: skip
    return SweepResult(tuple(points), aucs), forbidden


def test_sweep_page(check_page, tmp_path: Path) -> None:
    result, forbidden = _sweep()
    path = write_sweep_html(result, tmp_path / "sweep.html", title="Sanitizer sweep: test",
                            sensitive="gender", target="income")  # fmt: skip
    page = path.read_text(encoding="utf-8")
    assert page == render_sweep_html(result, title="Sanitizer sweep: test", sensitive="gender",
                                     target="income")  # fmt: skip
    check_page(page, forbidden, min_figures=1)
    assert "Sensitive column (y_S): <b>gender</b>" in page and "predict <b>income</b>" in page
    for term in ("<dt>leakage</dt>", "<dt>utility</dt>", "<dt>CAS (classification accuracy",
                 "<dt>Pareto area</dt>", "<dt>epsilon (&epsilon;)</dt>", *(
                 f"<dt>{f}</dt>" for f in set(NAMES.values()))):  # fmt: skip
        assert term in page, term
    for label in ("\u03b5 = 0.5", "\u03b5 = 4", "noise scale 0.2", "strength x1"):
        assert label in page, label
    assert "95% confidence intervals" in " ".join(page.split()) and "<th>leakage [CI]</th>" in page
    point = result.points[0]
    assert f"{point.parts['leakage_parts']['score']['ci'][0]:+.3f}" in page
    assert f"<td>{point.parts['leakage_parts']['n_train']}</td>" in page
    assert "holds no privacy record" in page and "sanitize apply --record" in page
    for family, auc in result.pareto_auc.items():
        assert f'<td class="name">{family}</td><td>{auc:.3f}</td>' in page


def test_sweep_page_without_names_or_dp(check_page) -> None:
    result, forbidden = _sweep()
    plain = SweepResult(
        tuple(p for p in result.points if not p.family.startswith("dp-")),
        {k: v for k, v in result.pareto_auc.items() if not k.startswith("dp-")},
    )
    page = render_sweep_html(plain, title="plain")
    check_page(page, forbidden)
    assert "not named by the caller" in page and "the task column" in page
    assert "epsilon (&epsilon;)" not in page and "No DP sampler in this sweep" in page
