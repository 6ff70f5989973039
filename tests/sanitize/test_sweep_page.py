"""The sanitize evaluate page: it parses, its plot is a PNG, it names y_S and the task, defines
every term, labels every point with its epsilon or setting, shows the baselines, the CIs and row
counts, and no data row reaches it."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("torch")

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


def _point(rng: np.random.Generator, name: str, family: str, strength: float,
           forbidden: list[str]) -> SweepPoint:  # fmt: skip
    (aux, s_aux, _), (priv, s_priv, task) = _frame(rng, strength), _frame(rng, strength)
    forbidden += [repr(float(v)) for v in priv["x"].head(5)]
    leak = leakage(aux, s_aux, priv, s_priv, x_aux_sanitized=aux, seeds=2)
    half = N // 2
    use = utility(priv[:half], task[:half], priv[half:], task[half:], seeds=2)
    parts = {"leakage_parts": leak.to_dict(), "utility_parts": use.to_dict()}
    return SweepPoint(name, family, leak.advantage, use.auc.attack, use.accuracy.attack, parts,
                      leak, use)  # fmt: skip


BASELINES = ("drop sensitive", "drop sensitive + top 3 proxies", "marginal draw")


@cache
def _sweep() -> tuple[SweepResult, list[str]]:
    rng = np.random.default_rng(0)
    forbidden: list[str] = []
    points = [_point(rng, name, family, i / 3, forbidden)
              for i, (name, family) in enumerate(NAMES.items())]  # fmt: skip
    baselines = [_point(rng, name, "baseline", 1.0, forbidden) for name in BASELINES]
    families = sorted({p.family for p in points} - {"reference"})
    aucs = {f: pareto_auc([[p.leakage, p.utility] for p in points if p.family == f],
                          max_leakage=0.5) for f in families}  # fmt: skip
    simple = {p.name: pareto_auc([[p.leakage, p.utility]], max_leakage=0.5) for p in baselines}
    settings = {"seeds": 2, "target": "passed through unchanged"}
    return SweepResult(tuple(points), aucs, tuple(baselines), simple, settings), forbidden


def test_sweep_page(check_page, tmp_path: Path) -> None:
    result, forbidden = _sweep()
    path = write_sweep_html(result, tmp_path / "sweep.html", title="Sanitizer sweep: test",
                            sensitive="gender", target="income")  # fmt: skip
    page = path.read_text(encoding="utf-8")
    assert page == render_sweep_html(result, title="Sanitizer sweep: test", sensitive="gender",
                                     target="income")  # fmt: skip
    check_page(page, forbidden, min_figures=1)
    text = " ".join(page.split())
    assert "Sensitive column (y_S): <b>gender</b>" in page and "predict <b>income</b>" in page
    for term in ("<dt>leakage</dt>", "<dt>utility</dt>", "<dt>CAS (classification accuracy",
                 "<dt>Pareto area</dt>", "<dt>epsilon (&epsilon;)</dt>", "<dt>baseline</dt>", *(
                 f"<dt>{f}</dt>" for f in set(NAMES.values()))):  # fmt: skip
        assert term in page, term
    for label in ("\u03b5 = 0.5", "\u03b5 = 4", "noise scale 0.2", "strength x1"):
        assert label in page, label
    assert "95% confidence intervals" in text and "<th>leakage AUC [CI]</th>" in page
    assert "raw</em> auxiliary data" in text and "<em>sanitized</em> auxiliary data" in text
    assert "target column is passed through unchanged" in text and "over 2 seed(s)" in text
    point = result.points[0]
    assert point.leakage_result is not None and point.utility_result is not None
    low, high = point.leakage_result.auc_ci
    assert f"{point.leakage_auc:.3f} [{low:.3f}, {high:.3f}]" in page
    assert f"<td>{point.leakage_result.strongest.n_train}</td>" in page
    assert "holds no privacy record" in page and "sanitize apply --record" in page
    for family, auc in result.pareto_auc.items():
        assert f'<td class="name">{family}</td><td>{auc:.3f}</td>' in page
    for name, auc in result.baseline_pareto_auc.items():
        assert f'<td class="name">baseline: {name}</td><td>{auc:.3f}</td>' in page
        assert f"{name} (baseline)" in page


def test_sweep_page_without_names_or_dp(check_page) -> None:
    result, forbidden = _sweep()
    plain = SweepResult(
        tuple(p for p in result.points if not p.family.startswith("dp-")),
        {k: v for k, v in result.pareto_auc.items() if not k.startswith("dp-")},
    )  # no baselines, no settings: an older result's shape
    page = render_sweep_html(plain, title="plain")
    check_page(page, forbidden)
    assert "not named by the caller" in page and "the task column" in page
    assert "epsilon (&epsilon;)" not in page and "No DP sampler in this sweep" in page
