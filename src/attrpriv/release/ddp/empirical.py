"""The loss of survey histograms when the adversary's belief is the rows' empirical law.

:func:`empirical_loss` searches output corners by exact block ascent; each corner is a lower
bound on the worst case. See docs/mechanisms/tabular-ddp.md, "Against the empirical law".
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from attrpriv._checks import check_positive_int
from attrpriv.errors import InputError
from attrpriv.release.graph.learning import encode

if TYPE_CHECKING:
    from attrpriv.release.ddp.mechanism import TabularDDP

__all__ = ["EmpiricalLoss", "empirical_loss", "histogram_codes"]

MAX_SWEEPS = 50
"""Block-ascent sweeps over every histogram, at most (each one improves the loss or stops)."""


@dataclass(frozen=True)
class EmpiricalLoss:
    """The largest loss found (lower bound, nats), its ``column``, ``secret`` pair and ``rows``."""

    value: float
    column: str
    secret: tuple[Hashable, Hashable]
    rows: tuple[int, int]


def empirical_loss(
    frame: pd.DataFrame, scales: Mapping[str, float], *, min_rows: int = 1
) -> EmpiricalLoss:
    """Worst loss over answers and secret pairs at ``scales`` (empirical law, ``min_rows`` each)."""
    columns = list(scales)
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise InputError(f"frame lacks the released column(s) {missing}")
    steps = {}
    for column in columns:
        scale = scales[column]
        if not isinstance(scale, (int, float)) or not np.isfinite(scale) or scale <= 0:
            raise InputError(f"scale of {column!r} must be a positive number, got {scale!r}")
        steps[column] = 1.0 / float(scale)
    min_rows = check_positive_int(min_rows, "min_rows")
    codes: dict[str, np.ndarray] = {}
    levels: dict[str, pd.Index] = {}
    for column in columns:
        code, values = pd.factorize(frame[column])  # a missing answer gets code -1
        codes[column], levels[column] = code, values
    best: EmpiricalLoss | None = None
    for column in columns:
        code = codes[column]
        counts = np.bincount(code[code >= 0], minlength=len(levels[column]))
        held = np.flatnonzero(counts >= min_rows)
        others = {c: codes[c] for c in columns if c != column}
        for a in held:
            for b in held:
                if a == b:
                    continue
                loss = 2.0 * steps[column] + _search(others, steps, code == a, code == b)
                if best is None or loss > best.value:
                    values = levels[column]
                    secret = (values[int(a)], values[int(b)])
                    best = EmpiricalLoss(loss, column, secret, (int(counts[a]), int(counts[b])))
    if best is None:
        raise InputError(f"no answer has two values held by at least {min_rows} rows")
    return best


def histogram_codes(mechanism: TabularDDP, frame: pd.DataFrame) -> pd.DataFrame:
    """Bin index of each answer of ``frame`` in a fitted mechanism's histograms (NaN if missing)."""
    codes = encode(frame, mechanism.levels_)
    sizes = pd.Series({c: lv.size for c, lv in mechanism.levels_.items()})
    return codes.astype(float).where(codes.lt(sizes, axis=1))


def _search(
    codes: Mapping[str, np.ndarray], steps: Mapping[str, float], in_a: np.ndarray, in_b: np.ndarray
) -> float:
    """The largest log-ratio found over corners of the histograms in ``codes`` (block ascent)."""
    part = {c: (code[in_a], code[in_b]) for c, code in codes.items()}
    size = {c: int(code.max()) + 1 if code.size else 0 for c, code in codes.items()}
    signs = {}
    for c, (ca, cb) in part.items():  # high where the value is more frequent under a
        fa = np.bincount(ca[ca >= 0], minlength=size[c]) / max(ca.size, 1)
        fb = np.bincount(cb[cb >= 0], minlength=size[c]) / max(cb.size, 1)
        signs[c] = np.where(fa > fb, 1.0, -1.0)
    log_a, log_b = np.zeros(int(in_a.sum())), np.zeros(int(in_b.sum()))
    for c, (ca, cb) in part.items():
        log_a = log_a + _factor(signs[c], steps[c], ca)
        log_b = log_b + _factor(signs[c], steps[c], cb)
    current = _log_ratio(log_a, log_b)
    for _ in range(MAX_SWEEPS):
        start = current
        for c, (ca, cb) in part.items():
            rest_a = log_a - _factor(signs[c], steps[c], ca)
            rest_b = log_b - _factor(signs[c], steps[c], cb)
            signs[c] = _best_block(rest_a, rest_b, ca, cb, size[c], steps[c])
            log_a = rest_a + _factor(signs[c], steps[c], ca)
            log_b = rest_b + _factor(signs[c], steps[c], cb)
            current = _log_ratio(log_a, log_b)
        if current <= start + 1e-12:
            break
    return current


def _factor(signs: np.ndarray, step: float, code: np.ndarray) -> np.ndarray:
    """Each row's log-factor from one histogram: +-step for its bin, 0 for a missing answer."""
    return np.where(code >= 0, signs[np.maximum(code, 0)] * step, 0.0)


def _log_ratio(log_a: np.ndarray, log_b: np.ndarray) -> float:
    """log mean exp over the a-rows minus log mean exp over the b-rows."""
    return _log_mean_exp(log_a) - _log_mean_exp(log_b)


def _log_mean_exp(values: np.ndarray) -> float:
    top = float(values.max())
    return top + float(np.log(np.mean(np.exp(values - top))))


def _best_block(
    rest_a: np.ndarray,
    rest_b: np.ndarray,
    code_a: np.ndarray,
    code_b: np.ndarray,
    size: int,
    step: float,
) -> np.ndarray:
    """The signs of one histogram's bins that maximise the ratio, the others fixed (exact)."""
    shift = max(float(rest_a.max()), float(rest_b.max()))
    weight_a, weight_b = np.exp(rest_a - shift) / rest_a.size, np.exp(rest_b - shift) / rest_b.size
    alpha = np.bincount(code_a[code_a >= 0], weights=weight_a[code_a >= 0], minlength=size)
    beta = np.bincount(code_b[code_b >= 0], weights=weight_b[code_b >= 0], minlength=size)
    fixed_a, fixed_b = weight_a[code_a < 0].sum(), weight_b[code_b < 0].sum()
    with np.errstate(divide="ignore", invalid="ignore"):
        order = np.argsort(-np.where(beta > 0, alpha / beta, np.inf), kind="stable")
    low, high = np.exp(-step), np.exp(step)
    # top-k of the order high, the rest low: numerator and denominator for every k at once
    gain_a = np.concatenate([[0.0], np.cumsum(alpha[order] * (high - low))])
    gain_b = np.concatenate([[0.0], np.cumsum(beta[order] * (high - low))])
    numerator = fixed_a + alpha.sum() * low + gain_a
    denominator = fixed_b + beta.sum() * low + gain_b
    k = int(np.argmax(np.log(numerator) - np.log(denominator)))
    signs = np.full(size, -1.0)
    signs[order[:k]] = 1.0
    return signs
