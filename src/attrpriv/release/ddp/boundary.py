"""The boundary ring of a chunk: answers outside it that, tested, screen it from the rest.

Chosen by forward selection on G-tests (Bonferroni at ``alpha``); a pair-wise confirmed ring is
also tested jointly when the rows allow. See docs/mechanisms/tabular-ddp.md, "Whole-survey
calibration".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from attrpriv.release.ddp.bound import ALPHA, ROWS_PER_CELL, joint_independence

MAX_RING = 4
"""The most answers a boundary ring may hold: larger rings leave too few rows per stratum."""


@dataclass(frozen=True)
class Boundary:
    """The ring of one chunk and whether the learning rows confirm that it screens the chunk.

    ``tests`` and ``smallest_p`` are from the last round; ``reason`` says why it was not confirmed.
    """

    chunk: tuple[str, ...]
    ring: tuple[str, ...]
    confirmed: bool
    tests: int
    smallest_p: float | None
    reason: str

    @property
    def claim(self) -> str:
        """The independence claim, in words."""
        given = ", ".join(repr(c) for c in self.ring) or "nothing"
        return f"the chunk's answers independent of the rest of the survey given {{{given}}}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "ring": list(self.ring),
            "confirmed": self.confirmed,
            "claim": self.claim,
            "tests": self.tests,
            "smallest_p": self.smallest_p,
            "reason": self.reason,
        }


@dataclass(frozen=True, eq=False)
class Encoded:
    """The learning rows as level codes and as one one-hot matrix (built once per fit)."""

    codes: np.ndarray
    n_states: tuple[int, ...]
    onehot: np.ndarray
    at: np.ndarray  # where each column's levels start in ``onehot``

    @classmethod
    def of(cls, codes: np.ndarray, n_states: Sequence[int]) -> Encoded:
        table = np.asarray(codes, dtype=np.int64)
        sizes = np.array([int(k) for k in n_states], dtype=np.int64)
        at = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        onehot = np.zeros((len(table), int(sizes.sum())), dtype=np.float32)
        rows = np.arange(len(table))
        for column, offset in enumerate(at):
            onehot[rows, offset + table[:, column]] = 1.0
        return cls(table, tuple(int(k) for k in sizes), onehot, at)

    def levels(self, columns: Sequence[int]) -> np.ndarray:
        """The one-hot columns of ``columns``' levels, in order."""
        return np.concatenate([self.at[c] + np.arange(self.n_states[c]) for c in columns])


def pair_tests(
    encoded: Encoded, inner: Sequence[int], outer: Sequence[int], given: Sequence[int]
) -> np.ndarray:
    """``-log p`` of G-tests of ``X_u`` (``inner``) vs ``X_r`` (``outer``) given ``X_given``."""
    codes, n_states = encoded.codes, encoded.n_states
    n = len(codes)
    if given:
        shape = tuple(n_states[g] for g in given)
        key = np.ravel_multi_index(tuple(codes[:, g] for g in given), shape)
        _, stratum = np.unique(key, return_inverse=True)
    else:
        stratum = np.zeros(n, dtype=np.int64)
    n_strata = int(stratum.max()) + 1 if n else 0
    left = encoded.onehot[:, encoded.levels(inner)]
    left_at = np.concatenate([[0], np.cumsum([n_states[u] for u in inner])[:-1]])
    g = np.zeros((len(inner), len(n_states)))
    dof = np.zeros((len(inner), len(n_states)))
    order = np.argsort(stratum, kind="stable")
    edges = np.searchsorted(stratum[order], np.arange(n_strata + 1))
    for s in range(n_strata):
        rows = order[edges[s] : edges[s + 1]]
        a = left[rows]
        b = encoded.onehot if n_strata == 1 else encoded.onehot[rows]
        joint = (a.T @ b).astype(np.float64)
        row_totals = a.sum(axis=0, dtype=np.float64)
        column_totals = b.sum(axis=0, dtype=np.float64)
        expected = np.outer(row_totals, column_totals) / len(rows)
        seen = joint > 0
        cells = np.zeros_like(joint)
        cells[seen] = joint[seen] * np.log(joint[seen] / expected[seen])
        g += 2.0 * np.add.reduceat(np.add.reduceat(cells, left_at, axis=0), encoded.at, axis=1)
        seen_left = np.add.reduceat((row_totals > 0).astype(np.int64), left_at) - 1
        seen_right = np.add.reduceat((column_totals > 0).astype(np.int64), encoded.at) - 1
        dof += np.outer(np.maximum(seen_left, 0), np.maximum(seen_right, 0))
    g, dof = g[:, list(outer)], dof[:, list(outer)]
    score = np.where(dof > 0, -stats.chi2.logsf(np.maximum(g, 0.0), np.maximum(dof, 1)), 0.0)
    sizes = np.outer([n_states[u] for u in inner], [n_states[r] for r in outer])
    result: np.ndarray = np.where(sizes * n_strata * ROWS_PER_CELL > n, np.nan, score)
    return result


def find_boundary(
    encoded: Encoded,
    names: Sequence[str],
    chunk: Sequence[int],
    *,
    alpha: float = ALPHA,
    max_size: int = MAX_RING,
) -> Boundary:
    """The ring of ``chunk`` by forward selection (see module), and whether it is confirmed."""
    inside = set(chunk)
    ring: list[int] = []
    chunk_names = tuple(names[p] for p in chunk)
    while True:
        others = [p for p in range(len(names)) if p not in inside and p not in ring]
        if not others:
            return Boundary(chunk_names, _named(names, ring), True, 0, None, "")
        score = pair_tests(encoded, chunk, others, ring)
        tests = score.size
        if np.isnan(score).any():
            reason = "too few rows to test every pair given the ring"
            return Boundary(chunk_names, _named(names, ring), False, tests, None, reason)
        strongest = score.max(axis=0)  # per outside answer: its most dependent chunk answer
        smallest_p = math.exp(-float(strongest.max()))
        if smallest_p >= alpha / tests:
            joint = joint_independence(encoded.codes, encoded.n_states, chunk, ring, others)
            if joint is not None and joint < alpha:  # a dependence no single pair shows
                reason = "the rest of the survey, jointly, depends on the chunk given the ring"
                everything = _named(names, [*ring, *others])
                return Boundary(chunk_names, everything, False, tests + 1, joint, reason)
            return Boundary(chunk_names, _named(names, ring), True, tests, smallest_p, "")
        if len(ring) == max_size:
            dependent = int((strongest > -math.log(alpha / tests)).sum())
            reason = f"{dependent} outside answers still dependent given a ring of {max_size}"
            return Boundary(chunk_names, _named(names, ring), False, tests, smallest_p, reason)
        ring.append(others[int(np.argmax(strongest))])


def merge_ring(
    chunks: Sequence[tuple[str, ...]],
    chunk: tuple[str, ...],
    ring: Sequence[str],
    order: Sequence[str],
) -> list[tuple[str, ...]]:
    """``chunks`` with ``chunk`` merged into those holding its ring (all if empty), in ``order``."""
    where = {name: p for p, name in enumerate(order)}
    partners = [c for c in chunks if c != chunk and (not ring or set(ring) & set(c))]
    merged = tuple(sorted({*chunk, *(n for c in partners for n in c)}, key=where.__getitem__))
    kept = [c for c in chunks if c != chunk and c not in partners]
    return sorted([*kept, merged], key=lambda c: where[c[0]])


def _named(names: Sequence[str], positions: Sequence[int]) -> tuple[str, ...]:
    return tuple(names[p] for p in positions)


__all__ = ["MAX_RING", "Boundary", "Encoded", "find_boundary", "merge_ring", "pair_tests"]
