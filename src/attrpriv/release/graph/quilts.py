"""Markov quilts on a Bayesian network (Song, Wang & Chaudhuri 2017): max-influence and scale.

A quilt ``Q`` of node ``i`` justifies Laplace scale ``sum_{j nearby} sensitivity[j] / (epsilon -
e(Q | i))``; the smallest over candidates (the empty quilt always one) is valid. Proof in
docs/mechanisms/markov-quilt.md.
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
        The protected node.
    quilt : tuple of str
        The Markov quilt (empty for the empty quilt).
    nearby : tuple of str
        The nodes not d-separated from ``node`` given ``quilt`` (``node`` included).
    influence : float
        The max-influence of the quilt, in nats.
    scale : float
        The Laplace scale: the nearby sensitivities' sum over ``epsilon - influence``.
    """

    node: str
    quilt: tuple[str, ...]
    nearby: tuple[str, ...]
    influence: float
    scale: float

    def to_dict(self) -> dict[str, Any]:
        """The quilt as JSON-ready values.

        Returns
        -------
        dict
            ``node``, ``quilt``, ``nearby``, ``influence`` and ``scale``.
        """
        return {
            "node": self.node,
            "quilt": list(self.quilt),
            "nearby": list(self.nearby),
            "influence": self.influence,
            "scale": self.scale,
        }


def max_log_ratio(conditional: np.ndarray) -> np.ndarray:
    """``R[..., a, b] = max_y log(C[..., a, y] / C[..., b, y])`` (>= 0; +inf if only a allows y)."""
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
    """``e(X_Q | X_i)``: the most a quilt's value can tell about ``node``, over its supported
    states.

    Parameters
    ----------
    network : DiscreteNetwork
        The public model.
    quilt : sequence of str
        Distinct nodes of ``network``, not ``node``.
    node : str
        The protected node.

    Returns
    -------
    float
        In nats, >= 0 (``inf`` possible); 0.0 for an empty quilt.

    Raises
    ------
    InputError
        ``node`` is in ``quilt``, an unknown or repeated node, or too large to infer.
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
    """The minimum-scale quilt for ``node`` among the candidates (influence >= epsilon skipped).

    Parameters
    ----------
    network : DiscreteNetwork
        The public model.
    node : str
        The protected node.
    epsilon : float
        The privacy-loss parameter (finite, > 0).
    sensitivity : mapping of str to float
        The l1 sensitivity to each node: a finite value >= 0 for every node, no other keys.
    max_quilt_size : int, optional
        The largest subset tried (>= 1); all sizes when ``None``.

    Returns
    -------
    Quilt
        The candidate quilt with the smallest scale.

    Raises
    ------
    InputError
        An invalid argument, more than :data:`MAX_CANDIDATES` candidates, or too large.
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
    """The largest best-quilt scale over the protected ``nodes``: the scale that protects all.

    Parameters
    ----------
    network : DiscreteNetwork
        The public model.
    epsilon : float
        The privacy-loss parameter (finite, > 0).
    sensitivity : mapping of str to float
        The l1 sensitivity to each node: a finite value >= 0 for every node, no other keys.
    nodes : sequence of str, optional
        The protected nodes (a non-empty list); every node when ``None``.
    max_quilt_size : int, optional
        As for :func:`best_quilt`.

    Returns
    -------
    sigma_max : float
        The largest of the best quilts' scales.
    quilts : dict of str to Quilt
        The best quilt of each protected node.

    Raises
    ------
    InputError
        An invalid argument, more than :data:`MAX_CANDIDATES` candidates, or too large.
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
    """Quilts tried for ``node``: empty, small nearby subsets, moral-graph rings (cells capped)."""
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
    """Largest quilt size <= ``max_quilt_size`` with at most :data:`MAX_CANDIDATES` subsets."""
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
