"""A discrete Bayesian network: a public model of how variables depend, with exact inference.

Marginals by variable elimination, conditionals, and d-separation (Bayes-ball); sampling is
for tests only. See docs/mechanisms/markov-quilt.md.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from attrpriv._checks import check_choice, check_positive_int
from attrpriv.errors import InputError

if TYPE_CHECKING:  # pragma: no cover - typing only
    from pgmpy.models import DiscreteBayesianNetwork

MAX_INFERENCE_CELLS = 2**24
"""Largest intermediate table (in cells) that exact inference builds before refusing."""

_ROW_TOLERANCE = 1e-6
_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

Factor = tuple[tuple[str, ...], np.ndarray]
Card = Callable[[str], int]


@dataclass(frozen=True, eq=False)
class DiscreteNetwork:
    """A discrete Bayesian network over named variables (arrays copied and made read-only).

    Parameters
    ----------
    states : mapping of str to sequence of hashable
        The ordered, distinct, non-empty states of each node.
    parents : mapping of str to sequence of str
        The parents of each node, in the order of its CPD's axes (missing: none).
    cpds : mapping of str to array_like
        Shape ``(*parent cards, card(v))``, >= 0, rows summing to 1 within 1e-6.
    """

    states: Mapping[str, tuple[Hashable, ...]]
    parents: Mapping[str, tuple[str, ...]]
    cpds: Mapping[str, np.ndarray]
    _order: tuple[str, ...] = field(init=False, repr=False)
    _children: Mapping[str, tuple[str, ...]] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        states = _check_states(self.states)
        parents = _check_parents(self.parents, states)
        cpds = {node: _check_cpd(node, self.cpds, states, parents) for node in states}
        object.__setattr__(self, "states", states)
        object.__setattr__(self, "parents", parents)
        object.__setattr__(self, "cpds", cpds)
        object.__setattr__(self, "_order", _topological_order(states, parents))
        children: dict[str, list[str]] = {node: [] for node in states}
        for node in self._order:
            for parent in parents[node]:
                children[parent].append(node)
        object.__setattr__(self, "_children", {k: tuple(v) for k, v in children.items()})

    @classmethod
    def from_pgmpy(cls, model: DiscreteBayesianNetwork) -> DiscreteNetwork:
        """Convert a fitted pgmpy ``DiscreteBayesianNetwork``.

        Parameters
        ----------
        model : pgmpy.models.DiscreteBayesianNetwork
            A fitted network with string nodes, each with a ``TabularCPD``.

        Returns
        -------
        DiscreteNetwork
            The same network.
        """
        states: dict[str, tuple[Hashable, ...]] = {}
        parents: dict[str, tuple[str, ...]] = {}
        cpds: dict[str, np.ndarray] = {}
        for node in model.nodes():
            if not isinstance(node, str):
                raise InputError(f"network node names must be strings, got {node!r}")
            cpd = model.get_cpds(node)
            if cpd is None:
                raise InputError(f"network node {node!r} has no CPD in the pgmpy model")
            states[node] = tuple(cpd.state_names[node])
            parents[node] = tuple(str(v) for v in cpd.variables[1:])
            cpds[node] = np.moveaxis(np.asarray(cpd.values, dtype=np.float64), 0, -1)
        return cls(states, parents, cpds)

    @property
    def nodes(self) -> tuple[str, ...]:
        """All nodes, in a topological order (parents before children)."""
        return self._order

    def card(self, node: str) -> int:
        """Number of states of ``node``.

        Parameters
        ----------
        node : str
            A node of the network.

        Returns
        -------
        int
            ``len(states[node])``.
        """
        return len(self.states[self._node(node)])

    def children(self, node: str) -> tuple[str, ...]:
        """The children of ``node``.

        Parameters
        ----------
        node
            As in :meth:`card`.

        Returns
        -------
        tuple of str
            The nodes with ``node`` as a parent, in topological order.
        """
        return self._children[self._node(node)]

    def ancestors(self, nodes: Iterable[str]) -> set[str]:
        """``nodes`` and all their ancestors.

        Parameters
        ----------
        nodes : iterable of str
            Nodes of the network.

        Returns
        -------
        set of str
            ``nodes`` and their ancestors.
        """
        found: set[str] = set()
        stack = [self._node(n) for n in nodes]
        while stack:
            node = stack.pop()
            if node not in found:
                found.add(node)
                stack.extend(self.parents[node])
        return found

    def marginal(self, variables: Sequence[str]) -> np.ndarray:
        """Exact joint ``P(variables)``, axes in the given order, by variable elimination.

        Parameters
        ----------
        variables : sequence of str
            Distinct nodes (a sequence, not a single string).

        Returns
        -------
        numpy.ndarray
            float64 of shape ``(card(v1), ..., card(vk))``.

        Raises
        ------
        InputError
            An unknown or repeated node, or a table above :data:`MAX_INFERENCE_CELLS` cells.
        """
        names = self._variables(variables, "variables")
        relevant = self.ancestors(names)
        factors: list[Factor] = [
            ((*self.parents[n], n), self.cpds[n]) for n in self._order if n in relevant
        ]
        for node in _elimination_order(factors, relevant - set(names), self.card):
            touching = [f for f in factors if node in f[0]]
            scope = tuple(dict.fromkeys(v for f in touching for v in f[0] if v != node))
            factors = [f for f in factors if node not in f[0]]
            factors.append((scope, _contract(touching, scope, self.card)))
        return _contract(factors, tuple(names), self.card)

    def conditional(self, target: Sequence[str], given: str, *, zero: str = "raise") -> np.ndarray:
        """``P(target | given)``, one row per state of ``given``.

        Parameters
        ----------
        target : sequence of str
            Distinct nodes (a sequence, not a single string), not ``given``.
        given : str
            The node conditioned on.
        zero : {"raise", "nan"}, optional
            For a state of ``given`` of probability 0: raise (default) or fill its row with NaN.

        Returns
        -------
        numpy.ndarray
            float64 of shape ``(card(given), *cards(target))``.

        Raises
        ------
        InputError
            An invalid argument, a zero-probability state with ``zero="raise"``, or too large.
        """
        check_choice(zero, "zero", ("raise", "nan"))
        names = self._variables(target, "target")
        given = self._node(given)
        if given in names:
            raise InputError(f"given node {given!r} is also in target {list(names)}")
        joint = self.marginal([given, *names])
        totals = joint.reshape(joint.shape[0], -1).sum(axis=1)
        if zero == "raise" and (totals <= 0).any():
            state = self.states[given][int(np.flatnonzero(totals <= 0)[0])]
            raise InputError(
                f"state {state!r} of {given!r} has probability 0 in the network; "
                "it is outside the model's support and cannot be conditioned on"
            )
        shape = (-1,) + (1,) * len(names)
        with np.errstate(invalid="ignore", divide="ignore"):
            result: np.ndarray = joint / totals.reshape(shape)
        result[totals <= 0] = np.nan
        return result

    def separates(self, quilt: Collection[str], node: str) -> tuple[str, ...]:
        """Nodes *not* d-separated from ``node`` given ``quilt``: the nearby set of a Markov quilt.

        Parameters
        ----------
        quilt : collection of str
            The observed nodes (the Markov quilt), not including ``node``.
        node : str
            The protected node.

        Returns
        -------
        tuple of str
            The nodes with an active trail to ``node`` (``node`` included), in topological order.
        """
        node = self._node(node)
        observed = {self._node(q) for q in quilt}
        if node in observed:
            raise InputError(f"node {node!r} cannot be in its own quilt {sorted(observed)}")
        reachable = self._reachable(node, observed)
        return tuple(n for n in self._order if n in reachable)

    def sample(self, n: int, rng: np.random.Generator) -> pd.DataFrame:
        """``n`` forward samples, one column per node (tests and benchmarks; not private).

        Parameters
        ----------
        n : int
            The number of samples (>= 1).
        rng : numpy.random.Generator
            The source of randomness.

        Returns
        -------
        pandas.DataFrame
            ``n`` rows of the nodes' states, columns in topological order.
        """
        n = check_positive_int(n, "n")
        codes: dict[str, np.ndarray] = {}
        for node in self._order:
            table = self.cpds[node]
            index = tuple(codes[p] for p in self.parents[node])
            rows = table[index] if index else np.broadcast_to(table, (n, table.shape[-1]))
            cumulative = np.cumsum(rows, axis=1)
            draws = rng.random((n, 1)) * cumulative[:, -1:]
            codes[node] = np.minimum((draws >= cumulative).sum(axis=1), table.shape[-1] - 1)
        return pd.DataFrame({node: _labels(self.states[node], codes[node]) for node in self.nodes})

    def _reachable(self, source: str, observed: set[str]) -> set[str]:
        """Bayes ball: nodes reachable from ``source`` by an active trail given ``observed``."""
        with_observed_descendant = self.ancestors(observed)
        reachable: set[str] = set()
        visited: set[tuple[str, bool]] = set()
        stack: list[tuple[str, bool]] = [(source, True)]  # (node, arrived from a child)
        while stack:
            node, upward = stack.pop()
            if (node, upward) in visited:
                continue
            visited.add((node, upward))
            if node not in observed:
                reachable.add(node)
            if upward and node not in observed:
                stack.extend((p, True) for p in self.parents[node])
                stack.extend((c, False) for c in self._children[node])
            elif not upward:
                if node not in observed:
                    stack.extend((c, False) for c in self._children[node])
                if node in with_observed_descendant:
                    stack.extend((p, True) for p in self.parents[node])
        return reachable

    def _node(self, node: Any) -> str:
        if not isinstance(node, str) or node not in self.states:
            raise InputError(f"unknown network node {node!r}; expected one of {list(self.nodes)}")
        return node

    def _variables(self, variables: Sequence[str], what: str) -> tuple[str, ...]:
        if isinstance(variables, str):
            raise InputError(
                f"{what} must be a sequence of node names, got the string {variables!r}"
            )
        names = tuple(self._node(v) for v in variables)
        if len(set(names)) != len(names):
            raise InputError(f"{what} has repeated nodes: {list(names)}")
        return names


def _check_states(states: Mapping[str, Sequence[Hashable]]) -> dict[str, tuple[Hashable, ...]]:
    if not isinstance(states, Mapping) or not states:
        raise InputError("network states must be a non-empty mapping node -> list of states")
    checked: dict[str, tuple[Hashable, ...]] = {}
    for node, values in states.items():
        if not isinstance(node, str) or not node:
            raise InputError(f"network node names must be non-empty strings, got {node!r}")
        if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
            raise InputError(f"node {node!r}: states must be a list, got {values!r}")
        values = tuple(values)
        if not values or len(set(values)) != len(values):
            raise InputError(f"node {node!r}: states must be distinct and non-empty, got {values}")
        checked[node] = values
    return checked


def _check_parents(
    parents: Mapping[str, Sequence[str]], states: Mapping[str, tuple[Hashable, ...]]
) -> dict[str, tuple[str, ...]]:
    if not isinstance(parents, Mapping):
        raise InputError("network parents must be a mapping node -> list of parent nodes")
    unknown = [n for n in parents if n not in states]
    if unknown:
        raise InputError(f"parents given for unknown node {unknown[0]!r}")
    checked: dict[str, tuple[str, ...]] = {}
    for node in states:
        given = parents.get(node, ())
        if isinstance(given, str):
            raise InputError(f"node {node!r}: parents must be a list, got the string {given!r}")
        tup = tuple(given)
        bad = [p for p in tup if p not in states or p == node]
        if bad or len(set(tup)) != len(tup):
            raise InputError(f"node {node!r}: parent {(bad or list(tup))[0]!r} is invalid")
        checked[node] = tup
    return checked


def _check_cpd(
    node: str,
    cpds: Mapping[str, Any],
    states: Mapping[str, tuple[Hashable, ...]],
    parents: Mapping[str, tuple[str, ...]],
) -> np.ndarray:
    if node not in cpds:
        raise InputError(f"node {node!r} has no CPD")
    try:
        table = np.array(cpds[node], dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"node {node!r}: CPD must be a numeric array") from None
    shape = (*(len(states[p]) for p in parents[node]), len(states[node]))
    if table.shape != shape:
        raise InputError(f"node {node!r}: CPD has shape {table.shape}, expected {shape}")
    if not np.isfinite(table).all() or (table < 0).any():
        raise InputError(f"node {node!r}: CPD entries must be finite probabilities >= 0")
    sums = table.sum(axis=-1)
    if np.abs(sums - 1.0).max() > _ROW_TOLERANCE:
        raise InputError(f"node {node!r}: CPD rows must sum to 1, one sums to {sums.flat[0]:g}")
    table /= sums[..., None]
    table.setflags(write=False)
    return table


def _topological_order(
    states: Mapping[str, tuple[Hashable, ...]], parents: Mapping[str, tuple[str, ...]]
) -> tuple[str, ...]:
    """Kahn's algorithm, stable in the order the nodes were given; refuses cycles."""
    waiting = {node: len(parents[node]) for node in states}
    children: dict[str, list[str]] = {node: [] for node in states}
    for node in states:
        for parent in parents[node]:
            children[parent].append(node)
    ready = [node for node in states if waiting[node] == 0]
    order: list[str] = []
    while ready:
        node = ready.pop(0)
        order.append(node)
        for child in children[node]:
            waiting[child] -= 1
            if waiting[child] == 0:
                ready.append(child)
    if len(order) != len(states):
        cyclic = next(node for node in states if node not in order)
        raise InputError(f"network has a directed cycle through node {cyclic!r}; expected a DAG")
    return tuple(order)


def _elimination_order(factors: list[Factor], eliminate: set[str], card: Card) -> list[str]:
    """Greedy min-weight order: eliminate first the node whose new factor is smallest."""
    scopes = [set(scope) for scope, _ in factors]
    order: list[str] = []
    remaining = set(eliminate)
    while remaining:
        weights = {}
        for node in remaining:
            union = set().union(*(s for s in scopes if node in s))
            weights[node] = (math.prod(card(v) for v in union), node)
        node = min(remaining, key=weights.__getitem__)
        merged = set().union(*(s for s in scopes if node in s)) - {node}
        scopes = [s for s in scopes if node not in s] + [merged]
        remaining.discard(node)
        order.append(node)
    return order


def _contract(factors: Sequence[Factor], keep: tuple[str, ...], card: Card) -> np.ndarray:
    """Multiply ``factors`` and sum out every variable not in ``keep`` (one einsum)."""
    names = list(dict.fromkeys([*keep, *(v for scope, _ in factors for v in scope)]))
    if len(names) > len(_LETTERS) or math.prod(card(v) for v in names) > MAX_INFERENCE_CELLS:
        raise InputError(
            f"exact inference needs a table over {len(names)} variables "
            f"({math.prod(card(v) for v in names):,} cells, limit {MAX_INFERENCE_CELLS:,}); "
            "the network is too large for exact computation"
        )
    letter = {name: _LETTERS[i] for i, name in enumerate(names)}
    inputs = ",".join("".join(letter[v] for v in scope) for scope, _ in factors)
    output = "".join(letter[v] for v in keep)
    if not factors:
        return np.ones(tuple(card(v) for v in keep))
    result = np.einsum(f"{inputs}->{output}", *(t for _, t in factors), optimize=True)
    return np.asarray(result, dtype=np.float64)


def _labels(states: tuple[Hashable, ...], codes: np.ndarray) -> pd.Series:
    values = np.empty(len(states), dtype=object)
    values[:] = list(states)
    return pd.Series(values[codes]).infer_objects()


__all__ = ["MAX_INFERENCE_CELLS", "DiscreteNetwork"]
