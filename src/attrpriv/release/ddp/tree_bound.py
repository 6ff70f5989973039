"""The loss bound of Tabular-DDP's model tier: one answer's loss on a public Markov tree.

Setting (docs/mechanisms/tabular-ddp.md, "The model tier"). Histogram ``j`` gets discrete
Laplace noise of scale ``sigma_j``; write ``w_j = 2 / sigma_j``. For a fixed output, the
likelihood of one respondent's answers is ``prod_j G_j(x_j)``, each ``G_j`` ranging over a
factor at most ``e^{w_j}`` as ``x_j`` changes (one count moves from one bin to another); the
other respondents are independent of this one and cancel. Let the respondent's answers follow
any law Markov on the model's tree ``T`` whose every directed link ``p -> u`` has level at most
``l`` and contraction at most ``tau`` (:class:`~attrpriv.release.ddp.tree.EdgeLimit`). Root
``T`` at the protected answer ``i``; for ``u`` with parent ``p`` let

    M_u(x_p) = E[ prod_{j in subtree(u)} G_j(X_j) | X_p = x_p ],
    rho_u = max_{x, x'} M_u(x) / M_u(x').

``M_u(x_p) = sum_{x_u} K(x_u | x_p) h(x_u)`` with ``h = G_u prod_{c child of u} M_c`` ranging
over a factor ``R_u <= e^{w_u} prod_c rho_c``. Two facts bound ``rho_u``:

- ``M_u(x) - M_u(x') = sum (K(. | x) - K(. | x')) h <= tau (max h - min h) <= tau (R_u - 1)
  min h``, and ``M_u(x') >= min h``: so ``rho_u <= 1 + tau (R_u - 1)``;
- ``M_u(x) / M_u(x') <= max_y K(y | x) / K(y | x') <= e^l``.

The likelihood ratio of the secret pair ``(X_i = a, X_i = b)`` is
``G_i(a) / G_i(b) prod_{c child of i} M_c(a) / M_c(b)``, so the loss is at most

    loss(i) <= w_i + sum_{c child of i} log rho_c,
    log rho_u = min(l_u, log(1 - tau_u + tau_u e^{L_u})),  L_u = w_u + sum_c log rho_c.

A link the model calls independent (``tau = 0``) passes nothing; one that copies
(``tau = 1``, large level) passes everything, as group privacy would. The bound reads the model
only, never data. All answers at once: every directed link's ``log rho`` comes from one pass up
the tree and one down (the messages of the link away from each answer), ``O(m)`` per scale.
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

    ``order`` is breadth first (parents before children); for ``u`` not the root, ``down``
    is the link ``parent -> u`` and ``up`` the link ``u -> parent``.
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
    """``min(l, log(1 - tau + tau e^L))``, in logs (no overflow): 0 for ``tau = 0``, ``min(l,
    L)`` for ``tau = 1``."""
    with np.errstate(divide="ignore"):
        passed = np.logaddexp(np.log1p(-tau), np.log(tau) + inner)
    result: np.ndarray = np.minimum(level, passed)
    return result


def answer_losses(links: TreeLinks, w: np.ndarray) -> np.ndarray:
    """Every answer's loss bound when histogram ``j`` moves by a likelihood factor ``e^{w_j}``.

    Parameters
    ----------
    links : TreeLinks
        The model's tree and limits.
    w : numpy.ndarray
        ``2 / sigma_j`` per column, in the model's column order; shape ``(m,)``, or
        ``(k, m)`` for k settings at once.

    Returns
    -------
    numpy.ndarray
        ``loss(i)`` per column, the shape of ``w``.
    """
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
    """One answer's loss bound at the calibrated scale, and what it is made of.

    Parameters
    ----------
    column : str
        The protected answer.
    own : float
        ``2 / sigma_i`` of its own histogram.
    through_links : float
        What the other answers add, through the tree (``loss - own``).
    loss : float
        The bound: at most epsilon.
    """

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
    """Noise scales at which every answer's bound is at most ``epsilon`` for every law Markov
    on the model's tree within its links' limits.

    ``"uniform"``: the smallest single scale (bisection: the bounds grow with ``w``).
    ``"per-question"``: from there, one scale per histogram minimising the mean scale per bin
    (``bins``: each histogram's number of bins, public) under every answer's bound (SLSQP in
    ``log w``), then shrunk by one common factor until every bound is met; kept only if its
    expected error per bin is below the uniform one's. Whatever the optimiser does, the scales
    returned meet every bound: that is checked, not assumed.

    Parameters
    ----------
    model : TreeModel
        The public model.
    epsilon : float
        The loss bound to meet.
    calibration : {"per-question", "uniform"}, optional
        As above.
    bins : Mapping of str to int or None, optional
        Bins per histogram (default 1 each).

    Returns
    -------
    scales : dict of str to float
        The scale of every histogram, in column order (uniform: at most ``2 m / epsilon``;
        per question, a question may get more than that if the mean error per bin falls).
    bounds : tuple of AnswerBound
        Every answer's bound at those scales, in column order.
    """
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
    """``c * shape`` for the largest ``c`` in ``[low, high]`` at which every bound is at most
    epsilon (``low`` must fit; the bounds grow with ``c``)."""
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
