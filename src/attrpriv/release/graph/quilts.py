"""Markov quilts on a Bayesian network: max-influence and the noise scale they justify.

Song, Wang & Chaudhuri (SIGMOD 2017). For a protected node X_i, any set X_Q of other nodes is a
*Markov quilt*: with X_N the nodes not d-separated from X_i given X_Q (X_i included) and X_R
the rest, X_R is independent of X_i given X_Q. If F changes by at most ``sensitivity[j]``
(l1) when X_j alone changes, Laplace noise of scale

    sigma(Q) = sum_{j in N} sensitivity[j] / (epsilon - e(X_Q | X_i)),
    e(X_Q | X_i) = max_{a, b} max_{x_Q} log P(X_Q = x_Q | X_i = a) / P(X_Q = x_Q | X_i = b),

makes F + noise epsilon-Pufferfish private for the secret pairs (X_i = a, X_i = b) whenever
e < epsilon (docs/mechanisms/markov-quilt.md has the proof). Every quilt gives a valid bound,
so the smallest scale over any family of candidate quilts is valid too; the empty quilt
(N = the nodes d-connected to X_i, all of them in a connected network) is always a candidate.
Secrets are states of X_i with positive probability (Pufferfish conditions on them).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from attrpriv._checks import check_epsilon, check_non_negative, check_positive_int
from attrpriv.errors import InputError
from attrpriv.release.graph.network import DiscreteNetwork

MAX_CANDIDATES = 20_000
"""Most candidate quilts one search enumerates; beyond it, ``max_quilt_size`` is required."""

MAX_QUILT_CELLS = 2**20
"""Candidate quilts whose joint table with the node has more cells are not tried."""


@dataclass(frozen=True)
class Quilt:
    """The quilt chosen for one protected node, with the noise scale it justifies.

    Parameters
    ----------
    node : str
        The protected node X_i.
    quilt : tuple of str
        The Markov quilt X_Q (empty for the empty quilt).
    nearby : tuple of str
        X_N: the nodes not d-separated from ``node`` given ``quilt`` (``node`` included), in
        topological order.
    influence : float
        The max-influence ``e(X_Q | X_i)`` of the quilt, in nats (below epsilon for a quilt
        :func:`best_quilt` chose).
    scale : float
        The Laplace scale the quilt justifies: the sum of the sensitivities of ``nearby``
        divided by ``epsilon - influence``.
    """

    node: str
    quilt: tuple[str, ...]
    nearby: tuple[str, ...]
    influence: float
    scale: float

    def to_dict(self) -> dict[str, Any]:
        """The quilt as plain JSON-ready values, for records and reports.

        Returns
        -------
        dict
            ``node``, ``quilt`` and ``nearby`` (lists), ``influence`` and ``scale``.
        """
        return {
            "node": self.node,
            "quilt": list(self.quilt),
            "nearby": list(self.nearby),
            "influence": self.influence,
            "scale": self.scale,
        }


def max_log_ratio(conditional: np.ndarray) -> np.ndarray:
    """``R[..., a, b] = max_y log(C[..., a, y] / C[..., b, y])`` for tables of distributions.

    ``conditional`` has shape ``(..., k, m)``: k distributions over m outcomes (any leading
    batch axes). Outcomes impossible under both a and b are ignored; one possible under a only
    gives +inf. Every entry is >= 0 because both rows sum to 1.
    """
    table = np.asarray(conditional, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        logs = np.log(table)
        diff = logs[..., :, None, :] - logs[..., None, :, :]
    both_zero = (table[..., :, None, :] <= 0) & (table[..., None, :, :] <= 0)
    diff = np.where(both_zero, -np.inf, diff)
    result: np.ndarray = np.maximum(diff.max(axis=-1), 0.0)
    return result


def influence_of(conditional: np.ndarray) -> float:
    """Max-influence from a table ``P(X_Q = . | X_i = a)`` whose rows are the supported a."""
    table = np.asarray(conditional, dtype=np.float64)
    if table.shape[0] < 2:
        return 0.0
    return float(max_log_ratio(table.reshape(table.shape[0], -1)).max())


def max_influence(network: DiscreteNetwork, quilt: Sequence[str], node: str) -> float:
    """``e(X_Q | X_i)``: the most a quilt's value can tell about ``node`` (0.0 for no quilt).

    Only states of ``node`` with positive probability are compared (they are the secrets).

    Parameters
    ----------
    network : DiscreteNetwork
        The public model.
    quilt : sequence of str
        The quilt X_Q: distinct nodes of ``network``, not ``node``.
    node : str
        The protected node X_i.

    Returns
    -------
    float
        ``max_{a, b} max_{x_Q} log P(X_Q = x_Q | X_i = a) / P(X_Q = x_Q | X_i = b)`` in nats,
        >= 0 (``inf`` when some quilt value is possible under one state only); 0.0 for an
        empty quilt or a node with fewer than 2 supported states.

    Raises
    ------
    InputError
        ``node`` is in ``quilt``, a node is not in the network or repeated, or exact
        inference is too large.
    """
    names = tuple(quilt)
    if node in names:
        raise InputError(f"node {node!r} cannot be in its own quilt {list(names)}")
    if not names:
        network.card(node)  # validates the name
        return 0.0
    joint = network.marginal([node, *names])
    joint = joint.reshape(joint.shape[0], -1)
    totals = joint.sum(axis=1)
    supported = totals > 0
    return influence_of(joint[supported] / totals[supported, None])


def best_quilt(
    network: DiscreteNetwork,
    node: str,
    epsilon: float,
    sensitivity: Mapping[str, float],
    *,
    max_quilt_size: int | None = None,
) -> Quilt:
    """The minimum-scale quilt for ``node`` among the candidates (see :func:`candidate_quilts`).

    Quilts with influence >= epsilon are infeasible and skipped; the empty quilt never is.

    Parameters
    ----------
    network : DiscreteNetwork
        The public model.
    node : str
        The protected node X_i.
    epsilon : float
        The privacy-loss parameter (finite, > 0).
    sensitivity : mapping of str to float
        The l1 sensitivity of the released statistic to each node: one finite value >= 0 for
        every node of ``network`` and no other keys.
    max_quilt_size : int, optional
        The largest subset of other nodes tried as a quilt (an integer >= 1); all sizes when
        ``None`` (the moral-graph rings are tried either way).

    Returns
    -------
    Quilt
        The candidate quilt with the smallest scale.

    Raises
    ------
    InputError
        ``epsilon``, ``sensitivity``, ``node`` or ``max_quilt_size`` is invalid, there would
        be more than :data:`MAX_CANDIDATES` candidate quilts, or exact inference is too large.
    """
    epsilon = check_epsilon(epsilon)
    weights = check_sensitivity(network, sensitivity)
    network.card(node)  # validates the name
    return _best_quilt(network, node, epsilon, weights, max_quilt_size)


def _best_quilt(
    network: DiscreteNetwork,
    node: str,
    epsilon: float,
    weights: Mapping[str, float],
    max_quilt_size: int | None,
) -> Quilt:
    """:func:`best_quilt` on checked arguments."""
    best: Quilt | None = None
    for quilt in candidate_quilts(network, node, max_quilt_size=max_quilt_size):
        nearby = network.separates(quilt, node)
        total = math.fsum(weights[j] for j in nearby)
        if best is not None and total / epsilon >= best.scale:
            continue  # even zero influence could not beat the best so far
        influence = max_influence(network, quilt, node)
        if influence >= epsilon:
            continue
        scale = total / (epsilon - influence)
        if best is None or scale < best.scale:
            best = Quilt(node, quilt, nearby, influence, scale)
    if best is None:  # pragma: no cover - the empty quilt is always feasible
        raise AssertionError("the empty quilt must be feasible")
    return best


def quilt_scale(
    network: DiscreteNetwork,
    epsilon: float,
    sensitivity: Mapping[str, float],
    *,
    nodes: Sequence[str] | None = None,
    max_quilt_size: int | None = None,
) -> tuple[float, dict[str, Quilt]]:
    """``sigma_max``: the largest best-quilt scale over the protected ``nodes`` (default all).

    Parameters
    ----------
    network : DiscreteNetwork
        The public model.
    epsilon : float
        The privacy-loss parameter (finite, > 0).
    sensitivity : mapping of str to float
        The l1 sensitivity of the released statistic to each node: one finite value >= 0 for
        every node of ``network`` and no other keys.
    nodes : sequence of str, optional
        The protected nodes (a non-empty list, not a single string); every node when
        ``None``.
    max_quilt_size : int, optional
        As for :func:`best_quilt`.

    Returns
    -------
    sigma_max : float
        The largest of the best quilts' scales: the Laplace scale that protects every node.
    quilts : dict of str to Quilt
        The best quilt of each protected node, in the order of ``nodes``.

    Raises
    ------
    InputError
        ``nodes`` is a string, empty or names an unknown node; ``epsilon``, ``sensitivity``
        or ``max_quilt_size`` is invalid; there would be more than :data:`MAX_CANDIDATES`
        candidate quilts for a node; or exact inference is too large.
    """
    protected = network.nodes if nodes is None else tuple(nodes)
    if isinstance(nodes, str) or not protected:
        raise InputError(f"nodes must be a non-empty list of network nodes, got {nodes!r}")
    epsilon = check_epsilon(epsilon)
    weights = check_sensitivity(network, sensitivity)
    for node in protected:
        network.card(node)  # validates the name
    quilts = {
        node: _best_quilt(network, node, epsilon, weights, max_quilt_size) for node in protected
    }
    return max(q.scale for q in quilts.values()), quilts


def candidate_quilts(
    network: DiscreteNetwork,
    node: str,
    *,
    max_quilt_size: int | None = None,
    within: int | None = None,
) -> Iterator[tuple[str, ...]]:
    """The quilts tried for ``node``: the empty one, every subset of the other nodes of at
    most ``max_quilt_size`` nodes (all sizes when None) among those at moral distance at most
    ``within`` (every node when None), then the moral-graph rings.

    Ring d is the set of nodes at distance d from ``node`` in the moral graph: separating
    shells around it, of any size. Subsets come nearest first (by moral distance) and smallest
    first. Quilts whose joint table with ``node`` exceeds :data:`MAX_QUILT_CELLS` are skipped.
    """
    distance = moral_distances(network, node)
    others = _within(network, node, distance, within)
    largest = (
        len(others)
        if max_quilt_size is None
        else check_positive_int(max_quilt_size, "max_quilt_size")
    )
    largest = min(largest, len(others))
    count = _subsets(len(others), largest)
    if count > MAX_CANDIDATES:
        raise InputError(
            f"max_quilt_size={max_quilt_size} gives {count:,} candidate quilts for node "
            f"{node!r} (limit {MAX_CANDIDATES:,}); pass a smaller max_quilt_size"
        )
    seen: set[frozenset[str]] = set()
    rings = _rings(distance)
    subsets = (c for k in range(largest + 1) for c in itertools.combinations(others, k))
    for quilt in itertools.chain(subsets, rings):
        key = frozenset(quilt)
        cells = network.card(node) * math.prod(network.card(q) for q in quilt)
        if key in seen or cells > MAX_QUILT_CELLS:
            continue
        seen.add(key)
        yield tuple(quilt)


def affordable_quilt_size(
    network: DiscreteNetwork, node: str, max_quilt_size: int | None, within: int | None
) -> int:
    """The largest quilt size up to ``max_quilt_size`` (None: any) whose subsets, drawn from
    the nodes within moral distance ``within`` of ``node``, number at most
    :data:`MAX_CANDIDATES` (at least 1: single nodes are always affordable in practice)."""
    others = _within(network, node, moral_distances(network, node), within)
    size = len(others) if max_quilt_size is None else min(max_quilt_size, len(others))
    while size > 1 and _subsets(len(others), size) > MAX_CANDIDATES:
        size -= 1
    return max(size, 1)


def _within(
    network: DiscreteNetwork, node: str, distance: Mapping[str, float], within: int | None
) -> list[str]:
    reach = math.inf if within is None else within
    return sorted(
        (n for n in network.nodes if n != node and distance[n] <= reach),
        key=lambda n: distance[n],
    )


def _subsets(n: int, largest: int) -> int:
    return sum(math.comb(n, k) for k in range(largest + 1))


def moral_distances(network: DiscreteNetwork, node: str) -> dict[str, float]:
    """Breadth-first distance from ``node`` in the moral graph (inf if unreachable)."""
    neighbours: dict[str, set[str]] = {n: set() for n in network.nodes}
    for child in network.nodes:
        family = (*network.parents[child], child)
        for a, b in itertools.combinations(family, 2):
            neighbours[a].add(b)
            neighbours[b].add(a)
    network.card(node)  # validates the name
    distance: dict[str, float] = dict.fromkeys(network.nodes, math.inf)
    distance[node] = 0
    frontier = [node]
    while frontier:
        nxt = []
        for current in frontier:
            for other in sorted(neighbours[current]):
                if distance[other] == math.inf:
                    distance[other] = distance[current] + 1
                    nxt.append(other)
        frontier = nxt
    return distance


def check_sensitivity(
    network: DiscreteNetwork, sensitivity: Mapping[str, float]
) -> dict[str, float]:
    """Per-node sensitivities: one finite value >= 0 for every node, and no other keys."""
    if not isinstance(sensitivity, Mapping):
        raise InputError("sensitivity must be a mapping node -> l1 sensitivity")
    missing = [n for n in network.nodes if n not in sensitivity]
    extra = [k for k in sensitivity if k not in network.states]
    if missing or extra:
        what = f"has no entry for node {missing[0]!r}" if missing else f"names unknown {extra[0]!r}"
        raise InputError(f"sensitivity {what}; expected one value per network node")
    return {n: check_non_negative(sensitivity[n], f"sensitivity[{n!r}]") for n in network.nodes}


def _rings(distance: Mapping[str, float]) -> Iterator[tuple[str, ...]]:
    finite = sorted({int(d) for d in distance.values() if 0 < d < math.inf})
    for d in finite:
        yield tuple(n for n, dn in distance.items() if dn == d)


__all__ = [
    "MAX_CANDIDATES",
    "MAX_QUILT_CELLS",
    "Quilt",
    "affordable_quilt_size",
    "best_quilt",
    "candidate_quilts",
    "check_sensitivity",
    "influence_of",
    "max_influence",
    "max_log_ratio",
    "moral_distances",
    "quilt_scale",
]
