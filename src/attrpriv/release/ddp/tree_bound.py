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

from attrpriv._checks import check_epsilon
from attrpriv.release.ddp.dependence import SUBSTITUTION_SENSITIVITY
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


def _through(level: float, tau: float, inner: float) -> float:
    """``min(l, log(1 - tau + tau e^L))``, computed in logs (no overflow)."""
    if tau <= 0.0:
        return 0.0
    if tau >= 1.0:
        return min(level, inner)
    return min(level, float(np.logaddexp(math.log1p(-tau), math.log(tau) + inner)))


def answer_losses(links: TreeLinks, w: np.ndarray) -> np.ndarray:
    """Every answer's loss bound when histogram ``j`` moves by a likelihood factor ``e^{w_j}``.

    Parameters
    ----------
    links : TreeLinks
        The model's tree and limits.
    w : numpy.ndarray
        ``2 / sigma_j`` per column, in the model's column order.

    Returns
    -------
    numpy.ndarray
        ``loss(i)`` per column.
    """
    parents, order = links.parents, links.order
    m = len(parents)
    below = np.zeros(m)  # sum of log rho over u's children (links u -> child)
    down = np.zeros(m)  # log rho of the link parent(u) -> u (u's subtree)
    for u in order[:0:-1]:  # leaves first
        p = parents[u]
        down[u] = _through(links.level_down[u], links.tau_down[u], w[u] + below[u])
        below[p] += down[u]
    up = np.zeros(m)  # log rho of the link u -> parent(u) (everything but u's subtree)
    for u in order[1:]:  # root first
        p = parents[u]
        above = up[p] if parents[p] != -1 else 0.0
        rest = w[p] + below[p] - down[u] + above
        up[u] = _through(links.level_up[u], links.tau_up[u], rest)
    return w + below + np.where(parents == -1, 0.0, up)


@dataclass(frozen=True)
class AnswerBound:
    """One answer's loss bound at the calibrated scale, and what it is made of.

    Parameters
    ----------
    column : str
        The protected answer.
    own : float
        ``2 / sigma`` of its own histogram.
    through_links : float
        What the other answers add, through the tree (``loss - own``).
    loss : float
        The bound: at most epsilon.
    """

    column: str
    own: float
    through_links: float
    loss: float


def tree_scale(model: TreeModel, epsilon: float) -> tuple[float, tuple[AnswerBound, ...]]:
    """The smallest scale, one for every histogram, at which every answer's bound is at most
    ``epsilon`` for every law Markov on the model's tree within its links' limits.

    Parameters
    ----------
    model : TreeModel
        The public model.
    epsilon : float
        The loss bound to meet.

    Returns
    -------
    scale : float
        ``sigma``, at most ``2 m / epsilon`` (the row-level scale, where every answer moves).
    bounds : tuple of AnswerBound
        One per answer, in column order.
    """
    epsilon = check_epsilon(epsilon)
    links = TreeLinks.of(model)
    m = len(model.columns)

    def worst(w: float) -> float:
        return float(answer_losses(links, np.full(m, w)).max())

    low, high = epsilon / m, epsilon  # low always fits: every link passes at most e^{L}
    if worst(high) <= epsilon:
        low = high
    while high / low - 1.0 > 1e-10:
        middle = math.sqrt(low * high)
        low, high = (middle, high) if worst(middle) <= epsilon else (low, middle)
    losses = answer_losses(links, np.full(m, low))
    bounds = tuple(
        AnswerBound(column, low, float(loss) - low, float(loss))
        for column, loss in zip(model.columns, losses, strict=True)
    )
    return SUBSTITUTION_SENSITIVITY / low, bounds


def loss_bounds(model: TreeModel, scales: Mapping[str, float]) -> dict[str, float]:
    """Every answer's loss bound at per-column ``scales`` (every column of the model)."""
    links = TreeLinks.of(model)
    w = np.array([SUBSTITUTION_SENSITIVITY / scales[c] for c in model.columns])
    return dict(zip(model.columns, answer_losses(links, w).tolist(), strict=True))


__all__ = ["AnswerBound", "TreeLinks", "answer_losses", "loss_bounds", "tree_scale"]
