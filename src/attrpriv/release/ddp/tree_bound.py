"""The loss bound of Tabular-DDP's model tier: one answer's loss on a public Markov tree.

Each link passes at most ``min(l, log(1 - tau + tau e^L))`` of what lies behind it (level
``l``, contraction ``tau``); all answers in one pass up and one down the tree. Derivation in
docs/mechanisms/tabular-ddp.md, "The model tier".
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from scipy import optimize

from attrpriv._checks import check_choice, check_epsilon
from attrpriv.errors import InputError
from attrpriv.release.ddp.dependence import SUBSTITUTION_SENSITIVITY, discrete_laplace_mae
from attrpriv.release.ddp.tree import TreeModel


@dataclass(frozen=True, eq=False)
class TreeLinks:
    """The tree rooted at the model's root, with both directions' limits of every link.

    ``order`` is breadth first; for ``u`` not the root, ``down`` is ``parent -> u``, ``up`` the
    reverse.
    """

    parents: np.ndarray
    order: np.ndarray
    level_down: np.ndarray
    tau_down: np.ndarray
    level_up: np.ndarray
    tau_up: np.ndarray

    @classmethod
    def of(cls, model: TreeModel) -> TreeLinks:
        """The links of ``model``."""
        m = len(model.columns)
        parents = np.array(model.parents, dtype=np.int64)
        links = model.neighbours()
        order, seen = [model.root], {model.root}
        for u in order:
            for v in links[u]:
                if v not in seen:
                    seen.add(v)
                    order.append(v)
        level_down, tau_down, level_up, tau_up = (np.zeros(m) for _ in range(4))
        for (source, target), limit in model.edge_limits().items():
            if model.parents[target] == source:
                level_down[target], tau_down[target] = limit.level, limit.contraction
            else:
                level_up[source], tau_up[source] = limit.level, limit.contraction
        return cls(parents, np.array(order), level_down, tau_down, level_up, tau_up)


def _through(level: float, tau: float, inner: np.ndarray) -> np.ndarray:
    """``min(l, log(1 - tau + tau e^L))`` in logs: 0 at ``tau = 0``, ``min(l, L)`` at 1."""
    with np.errstate(divide="ignore"):
        passed = np.logaddexp(np.log1p(-tau), np.log(tau) + inner)
    result: np.ndarray = np.minimum(level, passed)
    return result


def answer_losses(links: TreeLinks, w: np.ndarray) -> np.ndarray:
    """Each answer's loss bound when histogram ``j`` moves by ``e^{w_j}``; ``w``: (m,) or (k, m)."""
    parents, order = links.parents, links.order
    w = np.asarray(w, dtype=np.float64)
    below = np.zeros_like(w)  # sum of log rho over u's children (links u -> child)
    down = np.zeros_like(w)  # log rho of the link parent(u) -> u (u's subtree)
    for u in order[:0:-1]:  # leaves first
        p = parents[u]
        down[..., u] = _through(links.level_down[u], links.tau_down[u], w[..., u] + below[..., u])
        below[..., p] += down[..., u]
    up = np.zeros_like(w)  # log rho of the link u -> parent(u) (everything but u's subtree)
    for u in order[1:]:  # root first
        p = parents[u]
        rest = w[..., p] + below[..., p] - down[..., u] + up[..., p]  # up[root] is 0
        up[..., u] = _through(links.level_up[u], links.tau_up[u], rest)
    losses: np.ndarray = w + below + up
    return losses


@dataclass(frozen=True)
class AnswerBound:
    """One answer's ``loss`` (<= epsilon): ``own`` histogram ``2 / sigma_i`` + ``through_links``."""

    column: str
    own: float
    through_links: float
    loss: float


CALIBRATIONS = ("per-question", "uniform")


def tree_scales(
    model: TreeModel,
    epsilon: float,
    *,
    calibration: str = "per-question",
    bins: Mapping[str, int] | None = None,
) -> tuple[dict[str, float], tuple[AnswerBound, ...]]:
    """Scales with each answer's loss <= ``epsilon`` on the tree: one, or per question if better."""
    epsilon = check_epsilon(epsilon)
    check_choice(calibration, "calibration", CALIBRATIONS)
    links = TreeLinks.of(model)
    limits = (links.level_down, links.tau_down, links.level_up, links.tau_up)
    if not all(np.isfinite(x).all() for x in limits):
        raise InputError("the tree model has a link with no finite level: every kernel entry > 0")
    m = len(model.columns)
    weights = np.array([1.0 if bins is None else float(bins[c]) for c in model.columns])
    w = _largest_factor(links, np.ones(m), epsilon, epsilon / m, epsilon)
    if calibration == "per-question" and m > 1:
        tuned = _tuned(links, w, epsilon, weights)
        if _mean_error(tuned, weights) < _mean_error(w, weights):
            w = tuned
    losses = answer_losses(links, w)
    bounds = tuple(
        AnswerBound(column, float(own), float(loss - own), float(loss))
        for column, own, loss in zip(model.columns, w, losses, strict=True)
    )
    scales = {c: SUBSTITUTION_SENSITIVITY / float(x) for c, x in zip(model.columns, w, strict=True)}
    return scales, bounds


def _largest_factor(
    links: TreeLinks, shape: np.ndarray, epsilon: float, low: float, high: float
) -> np.ndarray:
    """``c * shape`` for the largest ``c`` in ``[low, high]`` with every bound <= epsilon."""
    if answer_losses(links, high * shape).max() <= epsilon:
        return high * shape
    while high / low - 1.0 > 1e-10:
        middle = math.sqrt(low * high)
        low, high = (middle, high) if answer_losses(links, middle * shape).max() <= epsilon else (
            low, middle)  # fmt: skip
    for _ in range(100):  # rounding at the start: the bound equals sum_j w_j where all copy
        if answer_losses(links, low * shape).max() <= epsilon:
            return low * shape
        low *= 1.0 - 1e-12
    raise AssertionError("no scale meets the bound")  # pragma: no cover - sum_j w_j <= epsilon


def _mean_error(w: np.ndarray, weights: np.ndarray) -> float:
    sigma = SUBSTITUTION_SENSITIVITY / w
    return float((weights * np.array([discrete_laplace_mae(x) for x in sigma])).sum())


def _tuned(links: TreeLinks, start: np.ndarray, epsilon: float, weights: np.ndarray) -> np.ndarray:
    """Per-histogram ``w`` from SLSQP, then the common factor that meets every bound."""
    m = start.size
    step = 1e-6
    total = float(weights.sum())

    def objective(x: np.ndarray) -> tuple[float, np.ndarray]:
        scaled = weights * np.exp(-x) / total  # the mean scale per bin, over 2
        return float(scaled.sum()), -scaled

    def slack(x: np.ndarray) -> np.ndarray:
        return epsilon - answer_losses(links, np.exp(x))

    def jacobian(x: np.ndarray) -> np.ndarray:
        base = answer_losses(links, np.exp(x))
        moved = answer_losses(links, np.exp(x)[None, :] * np.exp(step * np.eye(m)))
        gradient: np.ndarray = -(moved - base[None, :]).T / step  # [i, j] = d slack_i / d x_j
        return gradient

    floor = math.log(epsilon / m) - math.log(10.0)
    found = optimize.minimize(
        objective,
        np.log(start),
        jac=True,
        method="SLSQP",
        bounds=[(floor, math.log(epsilon))] * m,
        constraints=[{"type": "ineq", "fun": slack, "jac": jacobian}],
        options={"maxiter": 200, "ftol": 1e-10},
    )
    shape = np.exp(found.x)
    if not np.isfinite(shape).all():  # pragma: no cover - a failed optimisation
        return start
    # at c = epsilon / m every w_j <= epsilon / m, and a bound never exceeds sum_j w_j
    return _largest_factor(links, shape / shape.max(), epsilon, epsilon / m, epsilon)


def loss_bounds(model: TreeModel, scales: Mapping[str, float]) -> dict[str, float]:
    """Every answer's loss bound at per-column ``scales`` (every column of the model)."""
    links = TreeLinks.of(model)
    w = np.array([SUBSTITUTION_SENSITIVITY / scales[c] for c in model.columns])
    return dict(zip(model.columns, answer_losses(links, w).tolist(), strict=True))


__all__ = [
    "CALIBRATIONS",
    "AnswerBound",
    "TreeLinks",
    "answer_losses",
    "loss_bounds",
    "tree_scales",
]
