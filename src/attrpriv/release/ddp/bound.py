"""The checked bound on the loss about one answer (Markov quilt plus a total-variation term).

Every independence a candidate quilt relies on is G-tested on the learning rows; a rejected or
untestable claim is not used, and the no-claim candidate is always kept, so a wrong learned
structure can only enlarge the noise. See docs/mechanisms/tabular-ddp.md, "Checked bound".
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from attrpriv.release.graph.network import DiscreteNetwork
from attrpriv.release.graph.quilts import affordable_quilt_size, candidate_quilts, influence_of

ALPHA = 0.01
"""The level of the independence tests: a claim with p below it is rejected."""

QUILT_REACH = 2
"""Quilts of up to ``max_quilt_size`` answers are drawn from those within this moral distance
of the answer (farther shells are tried as whole rings)."""

ROWS_PER_CELL = 5
"""A claim whose contingency table has fewer learning rows per cell is not tested, nor used."""


@dataclass(frozen=True, eq=False)
class Candidate:
    """One way to bound the loss about ``node``: a quilt, its nearby answers and the terms.

    ``tv``: one row per (secret pair, quilt value), one column per nearby answer; ``claim`` is the
    independence relied on ("" for none), ``p_value`` its G-test.
    """

    node: str
    quilt: tuple[str, ...]
    nearby: tuple[str, ...]
    influence: float
    tv: np.ndarray
    claim: str
    p_value: float | None

    def loss(self, own: float, c: np.ndarray) -> float:
        """The bound, given ``own = Delta_i / sigma_i`` and ``c_j`` of the nearby answers."""
        if not self.nearby:
            return self.influence + own
        higher = math.expm1(float(np.log1p(c).sum())) - float(c.sum())
        inner = 1.0 + self.tv @ c + higher
        return self.influence + own + math.log(float(inner.max()))

    def to_dict(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "quilt": list(self.quilt),
            "nearby": list(self.nearby),
            "influence": self.influence,
            "claim": self.claim,
            "p_value": self.p_value,
            "largest_tv": float(self.tv.max()) if self.tv.size else 0.0,
        }


@dataclass(frozen=True, eq=False)
class Evidence:
    """Every usable candidate of a chunk's answers, and the count of rejected or untested claims."""

    columns: tuple[str, ...]
    candidates: Mapping[str, tuple[Candidate, ...]]
    rejected: int
    untestable: int

    def loss(
        self, node: str, scales: Mapping[str, float], sensitivity: Mapping[str, float]
    ) -> tuple[float, Candidate]:
        """The smallest bound on the loss about ``node`` at these scales, and its candidate."""
        own = sensitivity[node] / scales[node]
        best: tuple[float, Candidate] | None = None
        for candidate in self.candidates[node]:
            c = np.array([math.expm1(sensitivity[j] / scales[j]) for j in candidate.nearby])
            value = candidate.loss(own, c)
            if best is None or value < best[0]:
                best = (value, candidate)
        assert best is not None  # the no-claim candidate is always there
        return best


def chunk_evidence(
    network: DiscreteNetwork,
    codes: np.ndarray,
    n_states: Sequence[int],
    *,
    targets: Sequence[str] | None = None,
    ring: Sequence[str] = (),
    prior: float = 1.0,
    max_quilt_size: int | None = 3,
    alpha: float = ALPHA,
    check: bool = True,
) -> Evidence:
    """Every usable candidate of every answer of a chunk, from its network and learning rows.

    ``targets`` default to every node; the other nodes are the chunk's ring, allowed in or behind
    a quilt but never nearby. ``check=False`` skips the independence tests (unsafe, for tests).
    """
    columns = network.nodes
    table = _Rows(codes, tuple(int(s) for s in n_states), prior)
    found: dict[str, tuple[Candidate, ...]] = {}
    rejected = untestable = 0
    chosen = tuple(columns) if targets is None else tuple(targets)
    for node in chosen:
        found[node], refused, unknown = _node_candidates(
            network, table, node, tuple(ring), max_quilt_size, alpha=alpha, check=check
        )
        rejected += refused
        untestable += unknown
    return Evidence(chosen, found, rejected, untestable)


def _node_candidates(
    network: DiscreteNetwork,
    table: _Rows,
    node: str,
    ring: tuple[str, ...],
    max_quilt_size: int | None,
    *,
    alpha: float,
    check: bool,
) -> tuple[tuple[Candidate, ...], int, int]:
    """Every usable candidate of ``node``, with the numbers of rejected and untestable claims."""
    columns = network.nodes
    position = columns.index(node)
    outer = tuple(columns.index(n) for n in ring)
    others = tuple(p for p in range(len(columns)) if p != position and p not in outer)
    kept = [_candidate(table, columns, position, outer, others, "", None)]
    rejected = untestable = 0
    # a hub of a large merged chunk may have too many subsets: smaller quilts for it
    size = affordable_quilt_size(network, node, max_quilt_size, QUILT_REACH)
    for quilt in candidate_quilts(network, node, max_quilt_size=size, within=QUILT_REACH):
        nearby = set(network.separates(quilt, node)) - {node}
        if nearby & set(ring):  # the ring is never nearby
            continue
        q, n, rest = _quilt_positions(columns, position, quilt, nearby, others)
        if not rest:  # nothing behind the quilt: no claim, only its influence is paid
            if q:
                kept.append(_candidate(table, columns, position, q, n, "", None))
            continue
        verdict = table.independence((position,), q, rest) if check else 1.0
        if verdict is None or verdict < alpha:
            rejected += verdict is not None
            untestable += verdict is None
            continue
        claimed = _claimed_candidate(table, columns, position, q, n, rest, verdict, alpha, check)
        kept.append(claimed)
    return tuple(kept), rejected, untestable


def _quilt_positions(
    columns: Sequence[str],
    position: int,
    quilt: Sequence[str],
    nearby: set[str],
    others: tuple[int, ...],
) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """The positions of ``quilt``, of the ``nearby`` answers and of the rest behind the quilt."""
    q = tuple(columns.index(n) for n in quilt)
    n = tuple(p for p in others if columns[p] in nearby)
    rest = tuple(p for p in range(len(columns)) if p != position and p not in q and p not in n)
    return q, n, rest


def _claimed_candidate(
    table: _Rows,
    columns: Sequence[str],
    position: int,
    q: tuple[int, ...],
    n: tuple[int, ...],
    rest: tuple[int, ...],
    verdict: float,
    alpha: float,
    check: bool,
) -> Candidate:
    """The candidate of quilt ``q`` whose claim holds (with t_j only if ``n`` passes too)."""
    given = _names(columns, q)
    weak = f"{_names(columns, rest)} independent of {columns[position]!r} given {given}"
    if not n:
        return _candidate(table, columns, position, q, n, weak, verdict)
    # the total variations given x_Q alone need the nearby answers independent of the
    # rest too; without that, only the quilt bound (every t_j = 1) is justified
    strong = f"{_names(columns, rest)} independent of {_names(columns, (position, *n))}"
    full = table.independence((position, *n), q, rest) if check else 1.0
    if full is not None and full >= alpha:
        return _candidate(table, columns, position, q, n, f"{strong} given {given}", full)
    return _candidate(table, columns, position, q, n, weak, verdict, tv=False)


def _names(columns: Sequence[str], positions: Sequence[int]) -> str:
    return "{" + ", ".join(repr(columns[p]) for p in positions) + "}"


def _candidate(
    table: _Rows,
    columns: Sequence[str],
    node: int,
    quilt: tuple[int, ...],
    nearby: tuple[int, ...],
    claim: str,
    p_value: float | None,
    *,
    tv: bool = True,
) -> Candidate:
    """The influence of ``quilt`` and the TVs of the nearby answers (all 1 unless ``tv``)."""
    joint = table.counts((node, *quilt)) + table.prior_per(node, quilt)
    joint = joint.reshape(joint.shape[0], -1)
    influence = influence_of(joint / joint.sum(axis=1, keepdims=True))
    if tv:
        rows = [table.total_variations(node, quilt, j) for j in nearby]
        terms = np.stack(rows, axis=1) if rows else np.zeros((1, 0))
    else:
        terms = np.ones((1, len(nearby)))
    return Candidate(
        columns[node],
        tuple(columns[p] for p in quilt),
        tuple(columns[p] for p in nearby),
        influence,
        terms,
        claim,
        p_value,
    )


class _Rows:
    """Contingency tables of the learning rows over a few columns at a time."""

    def __init__(self, codes: np.ndarray, n_states: tuple[int, ...], prior: float) -> None:
        self.codes = np.asarray(codes, dtype=np.int64)
        self.n_states = n_states
        self.prior = prior

    def counts(self, positions: Sequence[int]) -> np.ndarray:
        shape = tuple(self.n_states[p] for p in positions)
        if not positions:
            return np.array(float(len(self.codes)))
        flat = np.ravel_multi_index(tuple(self.codes[:, p] for p in positions), shape)
        return np.bincount(flat, minlength=math.prod(shape)).reshape(shape).astype(np.float64)

    def prior_per(self, node: int, quilt: tuple[int, ...]) -> float:
        """Dirichlet pseudo-count per cell of a (node, quilt) table: ``prior`` over its cells."""
        return self.prior / max(math.prod(self.n_states[p] for p in quilt), 1)

    def total_variations(self, node: int, quilt: tuple[int, ...], j: int) -> np.ndarray:
        """``t_j(a, b, x_Q)`` per state pair and quilt value, plus an estimation allowance, <= 1."""
        counts = self.counts((node, *quilt, j))
        k = counts.shape[-1]
        cells = counts.reshape(counts.shape[0], -1, k)  # (node state, quilt value, j state)
        smoothed = cells + self.prior / k
        conditional = smoothed / smoothed.sum(axis=-1, keepdims=True)
        support = cells.sum(axis=-1)  # rows behind each conditional
        a, b = np.triu_indices(cells.shape[0], k=1)
        tv = 0.5 * np.abs(conditional[a] - conditional[b]).sum(axis=-1)  # (pairs, quilt values)
        with np.errstate(divide="ignore"):
            error = 0.5 * np.sqrt(k / support)
        allowance = error[a] + error[b]
        capped: np.ndarray = np.minimum(tv + allowance, 1.0).ravel()
        return capped

    def independence(
        self, side: tuple[int, ...], quilt: tuple[int, ...], rest: tuple[int, ...]
    ) -> float | None:
        """G-test p-value of ``rest`` independent of ``side`` given ``quilt``; None if few rows."""
        sizes = [self.n_states[p] for p in (*side, *quilt, *rest)]
        if math.prod(sizes) * ROWS_PER_CELL > len(self.codes):
            return None
        counts = self.counts((*side, *quilt, *rest))
        k_side = math.prod(self.n_states[p] for p in side)
        k_rest = math.prod(self.n_states[p] for p in rest)
        table = counts.reshape(k_side, -1, k_rest).transpose(1, 0, 2)  # (quilt, side, rest)
        g, dof = 0.0, 0
        for layer in table:
            total = layer.sum()
            if total == 0:
                continue
            rows, cols = layer.sum(axis=1), layer.sum(axis=0)
            expected = np.outer(rows, cols) / total
            seen = layer > 0
            g += 2.0 * float((layer[seen] * np.log(layer[seen] / expected[seen])).sum())
            dof += (int((rows > 0).sum()) - 1) * (int((cols > 0).sum()) - 1)
        if dof <= 0:
            return 1.0
        return float(stats.chi2.sf(g, dof))


def joint_independence(
    codes: np.ndarray,
    n_states: Sequence[int],
    side: Sequence[int],
    given: Sequence[int],
    rest: Sequence[int],
) -> float | None:
    """G-test p-value of ``rest`` independent of ``side`` given ``given``; None if too few rows."""
    table = _Rows(codes, tuple(int(s) for s in n_states), 1.0)
    return table.independence(tuple(side), tuple(given), tuple(rest))


def uniform_scale(
    evidence: Evidence,
    epsilon: float,
    sensitivity: Mapping[str, float],
    *,
    ceiling: float | None = None,
) -> tuple[float, dict[str, Candidate]] | None:
    """Smallest common scale (<= ``ceiling``) with every bound <= ``epsilon``, or None."""
    columns = evidence.columns

    def worst(scale: float) -> float:
        scales = dict.fromkeys(columns, scale)
        return max(evidence.loss(c, scales, sensitivity)[0] for c in columns)

    low = max(sensitivity[c] for c in columns) / epsilon
    high = math.fsum(sensitivity[c] for c in columns) / epsilon if ceiling is None else ceiling
    high = max(high, low)
    if worst(high) > epsilon * (1 + 1e-12):
        return None
    if worst(low) <= epsilon:
        high = low
    while high / low - 1.0 > 1e-9:
        middle = math.sqrt(low * high)
        low, high = (low, middle) if worst(middle) <= epsilon else (middle, high)
    scales = dict.fromkeys(columns, high)
    return high, {c: evidence.loss(c, scales, sensitivity)[1] for c in columns}


__all__ = [
    "ALPHA",
    "QUILT_REACH",
    "ROWS_PER_CELL",
    "Candidate",
    "Evidence",
    "chunk_evidence",
    "joint_independence",
    "uniform_scale",
]
