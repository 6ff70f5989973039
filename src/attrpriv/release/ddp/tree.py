"""The public dependence model of Tabular-DDP's model tier: a Markov tree over the questions.

Learned from public rows (Chow-Liu) or read from a model file; the bound uses the tree and each
directed link's level and contraction. See docs/mechanisms/tabular-ddp.md, "The model tier".
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy.sparse import csgraph, csr_matrix

from attrpriv._checks import check_positive
from attrpriv.errors import InputError
from attrpriv.release.ddp.chunking import mutual_information
from attrpriv.release.graph.network import DiscreteNetwork
from attrpriv.release.graph.quilts import max_log_ratio

FORMAT = "attrpriv.tree-model/1"
"""The ``format`` field of a model file."""


@dataclass(frozen=True)
class EdgeLimit:
    """A link's ``level`` (max log-ratio of the child's laws, nats), Dobrushin ``contraction``."""

    level: float
    contraction: float


@dataclass(frozen=True, eq=False)
class TreeModel:
    """A Markov tree over the questions: root marginal and one kernel per link.

    Parameters
    ----------
    columns : tuple of str
        The questions, in release order.
    cards : tuple of int
        Each question's number of states (its levels, plus "missing" for a nullable one).
    parents : tuple of int
        ``parents[v]`` is the position of ``v``'s parent, -1 for the (one) root.
    kernels : tuple of numpy.ndarray
        ``P(v | parent)``, shape ``(cards[parent], cards[v])``, entries > 0; root: ``(1, k)``.
    source : str
        Where the model came from (``"auxiliary rows (2,000)"``, a file name).
    """

    columns: tuple[str, ...]
    cards: tuple[int, ...]
    parents: tuple[int, ...]
    kernels: tuple[np.ndarray, ...]
    source: str

    def __post_init__(self) -> None:
        m = len(self.columns)
        if m == 0 or len(set(self.columns)) != m:
            raise InputError("a tree model needs distinct, at least one, column names")
        if len(self.cards) != m or len(self.parents) != m or len(self.kernels) != m:
            raise InputError("a tree model needs one card, parent and kernel per column")
        roots = [v for v, p in enumerate(self.parents) if p == -1]
        if len(roots) != 1:
            raise InputError(f"a tree model has exactly one root, got {len(roots)}")
        order = self._order(roots[0])
        if len(order) != m:
            raise InputError("the tree model's parents do not form one tree over every column")
        kernels = []
        for v, (card, parent, kernel) in enumerate(
            zip(self.cards, self.parents, self.kernels, strict=True)
        ):
            rows = 1 if parent == -1 else self.cards[parent]
            table = np.array(kernel, dtype=np.float64)
            name = self.columns[v]
            if table.shape != (rows, card) or int(card) < 1:
                raise InputError(
                    f"the kernel of {name!r} has shape {table.shape}, expected {(rows, card)}"
                )
            if not np.isfinite(table).all() or (table <= 0).any():
                raise InputError(f"the kernel of {name!r} needs finite entries > 0")
            error = np.abs(table.sum(axis=1) - 1.0).max()
            if error > 1e-6:
                raise InputError(f"the rows of the kernel of {name!r} must sum to 1")
            if error > 1e-12:  # a file's rounded kernel; a learned (or saved) one is kept as is
                table = table / table.sum(axis=1, keepdims=True)
            table.setflags(write=False)
            kernels.append(table)
        object.__setattr__(self, "kernels", tuple(kernels))
        object.__setattr__(self, "cards", tuple(int(c) for c in self.cards))
        object.__setattr__(self, "parents", tuple(int(p) for p in self.parents))

    def _order(self, root: int) -> list[int]:
        children: dict[int, list[int]] = {v: [] for v in range(len(self.columns))}
        for v, p in enumerate(self.parents):
            if p != -1:
                if not 0 <= p < len(self.columns) or p == v:
                    raise InputError(f"column {self.columns[v]!r} has an invalid parent {p}")
                children[p].append(v)
        order: list[int] = []
        stack = [root]
        while stack and len(order) <= len(self.columns):
            v = stack.pop()
            order.append(v)
            stack.extend(children[v])
        return order

    @property
    def root(self) -> int:
        """The position of the root."""
        return self.parents.index(-1)

    def marginals(self) -> list[np.ndarray]:
        """Every question's marginal law under the model.

        Returns
        -------
        list of numpy.ndarray
            ``P(v)`` for every column, in column order.
        """
        result: list[np.ndarray | None] = [None] * len(self.columns)
        for v in self._order(self.root):
            parent = self.parents[v]
            kernel = self.kernels[v]
            result[v] = kernel[0] if parent == -1 else result[parent] @ kernel
        return [r for r in result if r is not None]

    def neighbours(self) -> list[list[int]]:
        """The tree's adjacency lists (undirected).

        Returns
        -------
        list of list of int
            For every column, the positions of the columns linked to it.
        """
        links: list[list[int]] = [[] for _ in self.columns]
        for v, p in enumerate(self.parents):
            if p != -1:
                links[v].append(p)
                links[p].append(v)
        return links

    def kernel(self, source: int, target: int) -> np.ndarray:
        """``P(target | source)`` for two linked questions, in either direction (reverse by Bayes).

        Parameters
        ----------
        source, target : int
            The positions of the question conditioned on and of a question linked to it.

        Returns
        -------
        numpy.ndarray
            Shape ``(cards[source], cards[target])``, rows summing to 1.
        """
        if self.parents[target] == source:
            return self.kernels[target]
        if self.parents[source] != target:
            raise InputError(
                f"{self.columns[source]!r} and {self.columns[target]!r} are not linked"
            )
        joint = self.marginals()[target][:, None] * self.kernels[source]  # (target, source)
        reverse: np.ndarray = (joint / joint.sum(axis=0, keepdims=True)).T
        return reverse

    def edge_limits(self) -> dict[tuple[int, int], EdgeLimit]:
        """The level and contraction of every directed link.

        Returns
        -------
        dict of (int, int) to EdgeLimit
            Keyed by ``(source, target)`` positions, both directions of every link.
        """
        marginals = self.marginals()
        limits: dict[tuple[int, int], EdgeLimit] = {}
        for child, parent in enumerate(self.parents):
            if parent == -1:
                continue
            down = self.kernels[child]
            joint = marginals[parent][:, None] * down
            up = (joint / joint.sum(axis=0, keepdims=True)).T
            limits[(parent, child)] = _limit(down)
            limits[(child, parent)] = _limit(up)
        return limits

    @property
    def fingerprint(self) -> str:
        """Eight hex digits naming the model (tree and kernels to 12 significant digits)."""
        text = repr(
            (
                self.columns,
                self.cards,
                self.parents,
                [np.format_float_positional(x, 12) for k in self.kernels for x in k.ravel()],
            )
        )
        return hashlib.sha256(text.encode()).hexdigest()[:8]

    def links(self) -> list[tuple[str, str]]:
        """The tree's links.

        Returns
        -------
        list of tuple of str
            ``(parent, child)`` column names, one per link.
        """
        return [(self.columns[p], self.columns[v]) for v, p in enumerate(self.parents) if p != -1]

    def to_network(self) -> DiscreteNetwork:
        """The same law as a Bayesian network.

        Returns
        -------
        DiscreteNetwork
            The tree's law; each column's states are its level codes ``0 .. k - 1``.
        """
        states = {c: tuple(range(k)) for c, k in zip(self.columns, self.cards, strict=True)}
        parents = {
            c: (() if p == -1 else (self.columns[p],))
            for c, p in zip(self.columns, self.parents, strict=True)
        }
        cpds = {
            c: (k[0] if p == -1 else k)
            for c, p, k in zip(self.columns, self.parents, self.kernels, strict=True)
        }
        return DiscreteNetwork(states, parents, cpds)

    def to_dict(self) -> dict[str, Any]:
        """The model as JSON-ready values (read back by :meth:`from_dict`).

        Returns
        -------
        dict
            ``format``, ``source``, ``fingerprint`` and one entry per column.
        """
        return {
            "format": FORMAT,
            "source": self.source,
            "fingerprint": self.fingerprint,
            "columns": [
                {
                    "name": c,
                    "states": k,
                    "parent": None if p == -1 else self.columns[p],
                    "kernel": kernel.tolist(),
                }
                for c, k, p, kernel in zip(
                    self.columns, self.cards, self.parents, self.kernels, strict=True
                )
            ],
        }

    @classmethod
    def from_dict(cls, data: Any, source: str = "a model file") -> TreeModel:
        """A model from :meth:`to_dict`'s values.

        Parameters
        ----------
        data : dict
            The values (as read from JSON).
        source : str, optional
            Where they came from, for the record.

        Returns
        -------
        TreeModel
            The model.
        """
        if not isinstance(data, Mapping) or data.get("format") != FORMAT:
            raise InputError(f"a tree model file needs format {FORMAT!r}")
        entries = data.get("columns")
        if not isinstance(entries, list) or not entries:
            raise InputError("a tree model file needs a non-empty list 'columns'")
        try:
            names = [str(e["name"]) for e in entries]
            position = {name: t for t, name in enumerate(names)}
            parents = [-1 if e["parent"] is None else position[str(e["parent"])] for e in entries]
            cards = [int(e["states"]) for e in entries]
            kernels = [np.asarray(e["kernel"], dtype=np.float64) for e in entries]
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"a tree model file has a malformed column entry ({exc})") from None
        return cls(tuple(names), tuple(cards), tuple(parents), tuple(kernels), source)

    def check_columns(self, columns: Sequence[str], cards: Sequence[int]) -> None:
        """Refuse a model that is not over exactly these questions with these state counts.

        Parameters
        ----------
        columns : sequence of str
            The released columns, in order.
        cards : sequence of int
            Their numbers of states.

        Raises
        ------
        InputError
            The model names other columns, in another order, or other state counts.
        """
        if list(columns) != list(self.columns):
            missing = [c for c in columns if c not in self.columns]
            what = f"has no column {missing[0]!r}" if missing else "names other columns"
            raise InputError(f"the tree model {what}; expected the released columns, in order")
        for name, want, have in zip(columns, cards, self.cards, strict=True):
            if want != have:
                raise InputError(
                    f"the tree model gives column {name!r} {have} states, its levels are {want}"
                )


def _limit(kernel: np.ndarray) -> EdgeLimit:
    ratios = max_log_ratio(kernel)
    a, b = np.triu_indices(kernel.shape[0], k=1)
    tv = 0.5 * np.abs(kernel[a] - kernel[b]).sum(axis=1)
    contraction = min(float(tv.max()), 1.0) if tv.size else 0.0  # rows off 1 by rounding
    return EdgeLimit(float(ratios.max()), contraction)


def learn_tree(
    codes: pd.DataFrame, cards: Mapping[str, int], *, prior: float = 1.0, source: str = ""
) -> TreeModel:
    """Chow-Liu tree of ``codes``, rooted at the first column, smoothed by ``prior`` pseudo-rows."""
    prior = check_positive(prior, "prior")
    names = [str(c) for c in codes.columns]
    m = len(names)
    values = codes.to_numpy(np.int64)
    ks = [int(cards[c]) for c in names]
    parents = [-1] * m
    if m > 1:
        parents = spanning_parents(mutual_information(codes, dict(zip(names, ks, strict=True))))
    tables = []
    for v in range(m):
        p = parents[v]
        if p == -1:
            tables.append(np.bincount(values[:, v], minlength=ks[v])[None, :].astype(np.float64))
        else:
            flat = values[:, p] * ks[v] + values[:, v]
            counts = np.bincount(flat, minlength=ks[p] * ks[v]).reshape(ks[p], ks[v])
            tables.append(counts.astype(np.float64))
    return TreeModel(tuple(names), tuple(ks), tuple(parents), smoothed(tables, prior), source)


def spanning_parents(information: np.ndarray) -> list[int]:
    """Parent positions of the maximum spanning tree of ``information`` (-1 for root column 0)."""
    m = information.shape[0]
    if m == 1:
        return [-1]
    weights = np.triu(information.max() + 1.0 - information, k=1)  # minimum of (top + 1 - I)
    tree = csgraph.minimum_spanning_tree(csr_matrix(weights)).toarray()
    links = csr_matrix(((tree + tree.T) > 0).astype(np.int8))
    order, predecessors = csgraph.breadth_first_order(links, 0, directed=False)
    if len(order) != m:  # pragma: no cover - a spanning tree of a complete graph
        raise AssertionError("the spanning tree does not reach every column")
    return [-1] + [int(predecessors[v]) for v in range(1, m)]


def smoothed(tables: list[np.ndarray], prior: float) -> tuple[np.ndarray, ...]:
    """Kernels ``(count + prior / k) / (row total + prior)`` from count tables."""
    kernels = []
    for counts in tables:
        table = np.maximum(counts, 0.0) + prior / counts.shape[1]
        kernels.append(table / table.sum(axis=1, keepdims=True))
    return tuple(kernels)


__all__ = [
    "FORMAT",
    "EdgeLimit",
    "TreeModel",
    "learn_tree",
    "smoothed",
    "spanning_parents",
]
