"""The Markov quilt search on a chain: the best quilt of every node.

``method="exact"`` computes the max-influences; ``"approx"`` bounds them from pi_min and the
second singular value, for any initial law. See docs/mechanisms/markov-quilt.md, "Search".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from attrpriv.release.markov_quilt.chain_model import (
    ApproxInfluences,
    ExactInfluences,
    Influences,
    MarkovChainModel,
    mixing_constants,
)

INFLUENCE_METHODS = ("exact", "approx")
_START_WIDTH = 8
_FIRST = 64  # pairs with the smallest lower bounds, evaluated first
_BLOCK = 2**14  # pairs evaluated exactly per block
_MAX_TABLE = 2**26  # cells (pairs included) of the edge table before falling back


@dataclass(frozen=True)
class ChainQuilt:
    """The quilt chosen for X_node: quilt nodes ``left``/``right`` (None: N runs to the end)."""

    node: int
    left: int | None
    right: int | None
    influence: float
    scale: float
    length: int
    model: int = 0

    @property
    def quilt(self) -> tuple[int, ...]:
        """The quilt's positions (none for the empty quilt)."""
        return tuple(q for q in (self.left, self.right) if q is not None)

    @property
    def nearby(self) -> tuple[int, int]:
        """The nearby set X_N as a half-open range of positions."""
        start = 0 if self.left is None else self.left + 1
        return start, self.length if self.right is None else self.right

    def to_dict(self) -> dict[str, Any]:
        start, stop = self.nearby
        return {
            "node": self.node,
            "quilt": list(self.quilt),
            "nearby": [start, stop],
            "nearby_size": stop - start,
            "influence": self.influence,
            "scale": self.scale,
            "model": self.model,
        }


@dataclass(frozen=True)
class ChainCalibration:
    """The noise a chain of ``length`` needs: the chosen quilt of every node, and the max."""

    method: str
    length: int
    epsilon: float
    lipschitz: float
    quilts: tuple[ChainQuilt, ...]

    @property
    def sigma_max(self) -> float:
        return max(q.scale for q in self.quilts)

    @property
    def worst(self) -> ChainQuilt:
        """The node that needs the most noise (the first one, on ties)."""
        return max(self.quilts, key=lambda q: q.scale)

    def to_dict(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "length": self.length,
            "sigma_max": self.sigma_max,
            "worst": self.worst.to_dict(),
            "quilts": [q.to_dict() for q in self.quilts],
        }


def calibrate_chain(
    models: Sequence[MarkovChainModel],
    length: int,
    epsilon: float,
    lipschitz: float,
    *,
    method: str = "exact",
) -> ChainCalibration:
    """Best quilt of every node of a ``length`` chain, worst case over ``models`` (trusted)."""
    if method == "approx":
        pi_min, s = mixing_constants(models)
        per_model = [_all_nodes(ApproxInfluences(pi_min, s), length, epsilon, lipschitz)]
    else:
        per_model = [
            _all_nodes(ExactInfluences(m, length), length, epsilon, lipschitz) for m in models
        ]
    quilts = []
    for i in range(length):
        index = max(range(len(per_model)), key=lambda j: per_model[j][i].scale)
        choice = per_model[index][i]
        quilts.append(
            ChainQuilt(
                node=i,
                left=i - choice.left if choice.left else None,
                right=i + choice.right if choice.right else None,
                influence=choice.influence,
                scale=choice.scale,
                length=length,
                model=index,
            )
        )
    return ChainCalibration(method, length, epsilon, lipschitz, tuple(quilts))


@dataclass(frozen=True)
class _Choice:
    scale: float
    left: int  # distance a to the left quilt node, 0 for none
    right: int
    influence: float


@dataclass(frozen=True)
class _Options:
    """Quilt choices on one side: distance (0 = none), nodes of N on that side, pair influences."""

    distance: np.ndarray
    count: np.ndarray
    vecs: np.ndarray


def _all_nodes(sides: Influences, length: int, epsilon: float, lipschitz: float) -> list[_Choice]:
    """Every node's best quilt; with invariant sides, one middle search and an edge table."""
    if not sides.invariant:
        return [_node_choice(sides, i, length, epsilon, lipschitz) for i in range(length)]
    middle = _node_choice(sides, None, length, epsilon, lipschitz)
    reach = middle.scale * epsilon / lipschitz  # a none option (|N| > i) cannot beat it
    width = length - 1 if not math.isfinite(reach) else min(length - 1, math.ceil(reach))
    table = _EdgeTable(sides, length, width, epsilon, lipschitz)
    choices = []
    for i in range(length):
        if min(i, length - 1 - i) >= reach:
            choices.append(middle)
            continue
        choice = table.best(i)
        if choice is None:  # the table may be too narrow for this node: search it directly
            choice = _node_choice(sides, i, length, epsilon, lipschitz)
        choices.append(choice)
    return choices


class _EdgeTable:
    """Best quilts of nodes near the ends if influences are node-independent (``None``: search)."""

    def __init__(
        self, sides: Influences, length: int, width: int, epsilon: float, lipschitz: float
    ) -> None:
        self.length, self.width, self.epsilon, self.lipschitz = length, width, epsilon, lipschitz
        self.usable = width * width * sides.n_pairs <= _MAX_TABLE
        if width == 0 or not self.usable:
            return
        left, right = sides.left(length - 1, width), sides.right(length - 1, width)
        self.own_l = np.maximum(left.max(axis=1), 0.0)
        self.own_r = np.maximum(right.max(axis=1), 0.0)
        grid = np.empty((width, width))
        step = max(1, _BLOCK // (width * sides.n_pairs))
        for start in range(0, width, step):
            block = left[start : start + step, None, :] + right[None, :, :]
            grid[start : start + step] = np.maximum(block.max(axis=2), 0.0)
        self.influence = grid
        size = np.arange(1, width + 1)[:, None] + np.arange(1, width + 1)[None, :] - 1
        with np.errstate(divide="ignore"):
            scale = np.where(grid < epsilon, lipschitz * size / (epsilon - grid), np.inf)
        self.prefix, self.arg_a, self.arg_b = _prefix_min(scale)

    def best(self, i: int) -> _Choice | None:
        before, after = i, self.length - 1 - i
        lip, eps = self.lipschitz, self.epsilon
        options = [_Choice(lip * self.length / eps, 0, 0, 0.0)]  # the empty quilt
        na, nb = min(self.width, before), min(self.width, after)
        if not (na or nb):
            return options[0]
        if not self.usable:
            return None
        if na and nb:
            a, b = int(self.arg_a[na - 1, nb - 1]), int(self.arg_b[na - 1, nb - 1])
            options.append(_Choice(float(self.prefix[na - 1, nb - 1]), a + 1, b + 1, 0.0))
        for own, n, other, right in (
            (self.own_r, nb, before, True),
            (self.own_l, na, after, False),
        ):
            if n:
                with np.errstate(divide="ignore"):
                    size = np.arange(1, n + 1) + other
                    scale = np.where(own[:n] < eps, lip * size / (eps - own[:n]), np.inf)
                j = int(np.argmin(scale))
                d = (0, j + 1) if right else (j + 1, 0)
                options.append(_Choice(float(scale[j]), *d, float(own[j])))
        choice = min(options, key=lambda c: c.scale)
        if choice.left and choice.right:
            choice = _Choice(
                choice.scale,
                choice.left,
                choice.right,
                float(self.influence[choice.left - 1, choice.right - 1]),
            )
        reach = choice.scale * eps / lip
        wide_enough = all(
            n >= full or self.width + 1 >= reach for n, full in ((na, before), (nb, after))
        )
        return choice if wide_enough else None


def _prefix_min(grid: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``m[A, B] = min over a <= A, b <= B of grid[a, b]`` with the argmin (smallest first)."""
    best = grid.copy()
    arg_a = np.broadcast_to(np.arange(grid.shape[0])[:, None], grid.shape).copy()
    arg_b = np.broadcast_to(np.arange(grid.shape[1])[None, :], grid.shape).copy()
    for r in range(1, grid.shape[0]):
        keep = best[r - 1] <= best[r]
        best[r] = np.where(keep, best[r - 1], best[r])
        arg_a[r] = np.where(keep, arg_a[r - 1], arg_a[r])
        arg_b[r] = np.where(keep, arg_b[r - 1], arg_b[r])
    for c in range(1, grid.shape[1]):
        keep = best[:, c - 1] <= best[:, c]
        best[:, c] = np.where(keep, best[:, c - 1], best[:, c])
        arg_a[:, c] = np.where(keep, arg_a[:, c - 1], arg_a[:, c])
        arg_b[:, c] = np.where(keep, arg_b[:, c - 1], arg_b[:, c])
    return best, arg_a, arg_b


def _node_choice(
    sides: Influences, i: int | None, length: int, epsilon: float, lipschitz: float
) -> _Choice:
    """Best quilt of X_i (i None: a node far from both ends), widening until nothing can win."""
    before, after = (length - 1, length - 1) if i is None else (i, length - 1 - i)
    at = length - 1 if i is None else i
    width = _START_WIDTH
    while True:
        na, nb = min(width, before), min(width, after)
        left = _side(sides.left(at, na), before if i is not None else None, sides.n_pairs)
        right = _side(sides.right(at, nb), after if i is not None else None, sides.n_pairs)
        choice = _search(left, right, epsilon, lipschitz)
        reach = choice.scale * epsilon / lipschitz
        if (na >= before or width + 1 >= reach) and (nb >= after or width + 1 >= reach):
            return choice
        width *= 2


def _side(vecs: np.ndarray, none_count: int | None, n_pairs: int) -> _Options:
    """Options at distances 1..len(vecs) (|N| on this side = distance - 1), plus 'none'."""
    distance = np.arange(1, vecs.shape[0] + 1)
    count = distance - 1
    vecs = vecs.reshape(vecs.shape[0], n_pairs)
    if none_count is not None:
        distance = np.append(distance, 0)
        count = np.append(count, none_count)
        vecs = np.concatenate([vecs, np.zeros((1, n_pairs))])
    return _Options(distance, count, vecs)


def _search(left: _Options, right: _Options, epsilon: float, lipschitz: float) -> _Choice:
    """Minimum-scale (left, right) pair, evaluating only pairs that can still win."""
    own_l = np.maximum(left.vecs.max(axis=1, initial=-np.inf), 0.0)
    own_r = np.maximum(right.vecs.max(axis=1, initial=-np.inf), 0.0)
    lk, rk = np.flatnonzero(own_l < epsilon), np.flatnonzero(own_r < epsilon)
    if lk.size == 0 or rk.size == 0:
        return _Choice(math.inf, 0, 0, math.inf)
    floor = np.maximum(own_l[lk][:, None], own_r[rk][None, :])
    size = left.count[lk][:, None] + right.count[rk][None, :] + 1
    with np.errstate(divide="ignore"):
        bound = np.where(floor < epsilon, lipschitz * size / (epsilon - floor), np.inf).ravel()
    first = np.argpartition(bound, min(_FIRST, bound.size) - 1)[:_FIRST]
    best = _evaluate(np.sort(first), left, right, lk, rk, epsilon, lipschitz)
    rest = np.flatnonzero(bound < best.scale)
    for start in range(0, rest.size, _BLOCK):
        other = _evaluate(rest[start : start + _BLOCK], left, right, lk, rk, epsilon, lipschitz)
        if other.scale < best.scale:
            best = other
    return best


def _evaluate(
    cells: np.ndarray,
    left: _Options,
    right: _Options,
    lk: np.ndarray,
    rk: np.ndarray,
    epsilon: float,
    lipschitz: float,
) -> _Choice:
    """Exact influence and scale of the given (row-major) cells; the first minimum wins."""
    if cells.size == 0:
        return _Choice(math.inf, 0, 0, math.inf)
    rows, cols = lk[cells // rk.size], rk[cells % rk.size]
    influence = np.maximum((left.vecs[rows] + right.vecs[cols]).max(axis=1), 0.0)
    size = left.count[rows] + right.count[cols] + 1
    with np.errstate(divide="ignore"):
        scale = np.where(influence < epsilon, lipschitz * size / (epsilon - influence), np.inf)
    j = int(np.argmin(scale))
    return _Choice(
        float(scale[j]),
        int(left.distance[rows[j]]),
        int(right.distance[cols[j]]),
        float(influence[j]),
    )


__all__ = ["INFLUENCE_METHODS", "ChainCalibration", "ChainQuilt", "calibrate_chain"]
