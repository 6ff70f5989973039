"""Checking a Gaussian model against its public reference data before a release.

Conditional moments from the exponentially tilted reference are compared with the model's; beyond
:data:`LIMIT` standard errors it warns. See docs/mechanisms/attribute-private-gaussian.md, "Model
check and warnings".
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import optimize, special

from attrpriv.release.gaussian.query import (
    Array,
    Query,
    Secret,
    design_matrix,
    secret_per_record,
)
from attrpriv.release.gaussian.theta import GaussianModel

LIMIT = 3.0  # standard errors beyond which the model and the reference disagree


class ModelWarning(UserWarning):
    """The guarantee of an attribute-private release rests on a model the data may not fit."""


def tilt(x: Array, target: float) -> Array | None:
    """Weights ``w ~ exp(t x)`` with weighted mean ``target``; None unless inside x's range."""
    low, high = float(x.min()), float(x.max())
    if not low < target < high:
        return None
    centre, spread = float(x.mean()), float(x.std())
    u = (x - centre) / spread

    def weights(t: float) -> Array:
        logits = t * u
        return np.asarray(np.exp(logits - special.logsumexp(logits)), dtype=np.float64)

    def gap(t: float) -> float:
        return float(weights(t) @ x) - target

    bound = 1.0
    while gap(bound) < 0.0 or gap(-bound) > 0.0:
        bound *= 2.0
        if bound > 1e6:
            return None
    t = float(optimize.brentq(gap, -bound, bound, xtol=1e-14, rtol=1e-14, maxiter=500))
    return weights(t)


def check_model(
    model: GaussianModel, query: Query, secret: Secret
) -> tuple[dict[str, Any], list[str]]:
    """Model vs reference conditional means/variances; a warning beyond :data:`LIMIT` std errors."""
    assert model.reference is not None and model.schema is not None
    n = model.n
    ys = design_matrix(model.reference, model.schema, query.statistics)
    x = design_matrix(model.reference, model.schema, (secret.statistic,))[:, 0]
    scale = query.scales(n) * n
    rows: list[dict[str, Any]] = []
    worst: dict[tuple[str, str], tuple[float, str]] = {}
    for value in model.support(secret):
        a = secret_per_record(secret.statistic, value, n)
        w = tilt(x, a)
        if w is None:
            rows.append({"value": value, "checked": False, "why": "outside the reference's range"})
            continue
        model_law = model.conditional(query, secret, value)
        found = _tilted_moments(ys, x, a, w, scale, n)
        stats: dict[str, Any] = {}
        for j, name in enumerate(query.names):
            entry = {
                "mean_model": float(model_law.mean[j]),
                "var_model": float(model_law.cov[j, j]),
                **{key: float(found[key][j]) for key in found},
            }
            stats[name] = entry
            for kind in ("mean", "var"):
                ours, theirs = entry[f"{kind}_model"], entry[f"{kind}_reference"]
                z = _distance(ours, theirs, entry[f"{kind}_se"])
                entry[f"{kind}_z"] = z
                text = (
                    f"{_KIND[kind]} of {name} given {secret.statistic} = {value:g} is "
                    f"{entry[f'{kind}_model']:.4g}; the reference data show "
                    f"{entry[f'{kind}_reference']:.4g} +- {entry[f'{kind}_se']:.2g}"
                )
                if z > worst.get((name, kind), (-1.0, ""))[0]:
                    worst[(name, kind)] = (z, text)
        rows.append(
            {
                "value": value,
                "checked": True,
                "effective_rows": 1.0 / float(w @ w),
                "statistics": stats,
            }
        )
    warnings = [
        f"model check: the Gaussian model's {text} ({z:.3g} standard errors apart)"
        for z, text in worst.values()
        if z > LIMIT
    ]
    report = {
        "method": "exponential tilting of the reference rows",
        "reference_rows": len(model.reference),
        "limit_se": LIMIT,
        "values": rows,
        "max_z": max((z for z, _ in worst.values()), default=0.0),
    }
    return report, warnings


_KIND = {"mean": "conditional mean", "var": "conditional variance"}


def _tilted_moments(
    ys: Array, x: Array, a: float, w: Array, scale: Array, n: int
) -> dict[str, Array]:
    """Conditional mean and variance of F from the tilted rows, with standard errors."""
    mean = w @ ys
    centred = ys - mean
    dx = x - a
    beta = (centred.T @ (w * dx)) / float(w @ dx**2)
    resid = centred - np.outer(dx, beta)
    var = w @ resid**2
    w2 = w**2
    return {
        "mean_reference": mean * scale,
        "mean_se": np.sqrt(w2 @ resid**2) * scale,
        "var_reference": var * scale**2 / n,
        "var_se": np.sqrt(w2 @ (resid**2 - var) ** 2) * scale**2 / n,
    }


def _distance(model: float, reference: float, se: float) -> float:
    """``|model - reference|`` in standard errors (round-off counts as agreement)."""
    gap = abs(model - reference)
    floor = 1e-9 * max(abs(model), abs(reference), 1e-300)
    if gap <= floor:
        return 0.0
    return math.inf if se <= 0.0 else gap / se


__all__ = ["LIMIT", "ModelWarning", "check_model", "tilt"]
