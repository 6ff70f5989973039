"""Time-homogeneous Markov chains as Pufferfish models, and the mixing constants of a class.

See docs/mechanisms/markov-quilt.md.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import pandas as pd
from scipy.sparse.csgraph import connected_components

from attrpriv._checks import check_positive_int
from attrpriv.errors import InputError, offending
from attrpriv.release.graph.network import DiscreteNetwork
from attrpriv.release.graph.quilts import max_log_ratio


@dataclass(frozen=True, eq=False)
class MarkovChainModel:
    """A time-homogeneous Markov chain (arrays copied as float64, renormalised, read-only).

    Parameters
    ----------
    initial : array_like
        The law of X_0: k probabilities >= 0 summing to 1 (within 1e-6).
    transition : array_like
        ``k x k``, ``P[a, b] = P(X_{t+1} = b | X_t = a)``, rows summing to 1 (within 1e-6).
    """

    initial: np.ndarray
    transition: np.ndarray

    def __post_init__(self) -> None:
        transition = _distributions(self.transition, "transition", ndim=2)
        if transition.shape[0] != transition.shape[1]:
            raise InputError(f"transition must be a square matrix, got shape {transition.shape}")
        initial = _distributions(self.initial, "initial", ndim=1)
        if initial.shape[0] != transition.shape[0]:
            raise InputError(
                f"initial has {initial.shape[0]} states but transition has {transition.shape[0]}"
            )
        object.__setattr__(self, "transition", transition)
        object.__setattr__(self, "initial", initial)

    @classmethod
    def stationary(cls, transition: Any) -> MarkovChainModel:
        """The chain started in its stationary distribution.

        Parameters
        ----------
        transition : array_like
            A ``k x k`` row-stochastic, irreducible matrix.

        Returns
        -------
        MarkovChainModel
            The chain whose ``initial`` is the stationary distribution.

        Raises
        ------
        InputError
            ``transition`` is not row-stochastic or not irreducible.
        """
        matrix = _distributions(transition, "transition", ndim=2)
        return cls(stationary_distribution(matrix), matrix)

    @property
    def n_states(self) -> int:
        return int(self.transition.shape[0])

    @property
    def is_stationary(self) -> bool:
        """Whether ``initial`` is stationary, so that every X_t has the same marginal."""
        return bool(np.allclose(self.initial @ self.transition, self.initial, rtol=0, atol=1e-12))

    def marginals(self, length: int) -> np.ndarray:
        """The law of every X_t for t < length.

        Parameters
        ----------
        length : int
            The number of time steps (>= 1).

        Returns
        -------
        numpy.ndarray
            float64 of shape ``(length, n_states)``.
        """
        length = check_positive_int(length, "length")
        mu = np.empty((length, self.n_states))
        mu[0] = self.initial
        for t in range(1, length):
            mu[t] = mu[t - 1] @ self.transition
        return mu

    def sample(self, n: int, length: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` chains of ``length`` state codes (not private).

        Parameters
        ----------
        n, length : int
            The number of chains, and of states in each chain (each >= 1).
        rng : numpy.random.Generator
            The source of randomness.

        Returns
        -------
        numpy.ndarray
            int64 codes of shape ``(n, length)``.
        """
        n, length = check_positive_int(n, "n"), check_positive_int(length, "length")
        cumulative = np.cumsum(self.transition, axis=1)
        out = np.empty((n, length), dtype=np.int64)
        out[:, 0] = _draw(np.broadcast_to(np.cumsum(self.initial), (n, self.n_states)), rng)
        for t in range(1, length):
            out[:, t] = _draw(cumulative[out[:, t - 1]], rng)
        return out

    def to_network(self, length: int, states: Sequence[Hashable] | None = None) -> DiscreteNetwork:
        """The chain as a Bayesian network ``X0 -> X1 -> ... -> X{length-1}``.

        Parameters
        ----------
        length : int
            The number of time steps (>= 1).
        states : sequence of hashable, optional
            Distinct labels of the states, in code order; default the codes.

        Returns
        -------
        DiscreteNetwork
            The chain.
        """
        length = check_positive_int(length, "length")
        labels = tuple(range(self.n_states)) if states is None else tuple(states)
        names = [f"X{t}" for t in range(length)]
        return DiscreteNetwork(
            dict.fromkeys(names, labels),
            {names[t]: (names[t - 1],) for t in range(1, length)},
            {names[0]: self.initial, **{n: self.transition for n in names[1:]}},
        )


def stationary_distribution(transition: np.ndarray) -> np.ndarray:
    """The unique stationary distribution of an irreducible chain."""
    matrix = _distributions(transition, "transition", ndim=2)
    if not is_irreducible(matrix):
        raise InputError(
            "transition is not irreducible (some state cannot reach another), so its stationary "
            "distribution is not unique; give the initial distribution explicitly"
        )
    k = matrix.shape[0]
    system = matrix.T - np.eye(k)
    system[-1] = 1.0
    rhs = np.zeros(k)
    rhs[-1] = 1.0
    pi = np.clip(np.linalg.solve(system, rhs), 0.0, None)
    return np.asarray(pi / pi.sum(), dtype=np.float64)


def is_irreducible(transition: np.ndarray) -> bool:
    """Every state reaches every other (one strongly connected component)."""
    n_components, _ = connected_components(np.asarray(transition) > 0, connection="strong")
    return int(n_components) == 1


def mixing_constants(models: Sequence[MarkovChainModel]) -> tuple[float, float]:
    """``(pi_min, s)`` of a class: smallest stationary probability, largest s_2(P) in l2(pi)."""
    pis, singulars = [], []
    for model in models:
        if not is_irreducible(model.transition):
            raise InputError(
                "method='approx' needs irreducible chains (a unique stationary distribution); "
                "use method='exact'"
            )
        pi = stationary_distribution(model.transition)
        root = np.sqrt(pi)
        values = np.linalg.svd(root[:, None] * model.transition / root[None, :], compute_uv=False)
        pis.append(float(pi.min()))
        singulars.append(float(min(values[1], 1.0)) if values.size > 1 else 0.0)
    return min(pis), max(singulars)


def approx_influence(distance: np.ndarray, pi_min: float, s: float) -> np.ndarray:
    """``log((1 + d) / (1 - d))`` with ``d = (1/pi_min - 1) s^t``; inf where d >= 1."""
    delta = (1.0 / pi_min - 1.0) * np.power(s, np.asarray(distance, dtype=np.float64))
    with np.errstate(divide="ignore"):
        values = np.log1p(delta) - np.log1p(-np.minimum(delta, 1.0))
    result: np.ndarray = np.where(delta < 1.0, values, np.inf)
    return result


def as_chains(sequences: Any, states: tuple[Hashable, ...]) -> list[np.ndarray]:
    """One chain (1-d) or a list of chains -> arrays of state codes; values must be states."""
    nested = (isinstance(sequences, np.ndarray) and sequences.ndim == 2) or (
        isinstance(sequences, (list, tuple))
        and len(sequences) > 0
        and all(isinstance(s, (list, tuple, np.ndarray, pd.Series)) for s in sequences)
    )
    if nested:
        raw = list(sequences)
    elif isinstance(sequences, (list, tuple, np.ndarray, pd.Series)) and np.ndim(sequences) == 1:
        raw = [sequences]
    else:
        raise InputError("sequences must be a non-empty sequence of states, or a list of them")
    code = {state: i for i, state in enumerate(states)}
    chains = []
    for index, chain in enumerate(raw):
        values = list(chain)
        if not values:
            raise InputError(f"sequence {index} is empty")
        for position, value in enumerate(values):
            if _plain(value) not in code:
                raise InputError(
                    f"sequence {index} has a value{offending(value)} at position {position}, "
                    f"outside the model's states {list(states)}"
                )
        chains.append(np.array([code[_plain(v)] for v in values], dtype=np.int64))
    return chains


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


class Influences(Protocol):
    """Per-pair influence of quilt nodes 1..width before/after X_i, ``(width, n_pairs)``."""

    invariant: bool
    n_pairs: int

    def left(self, i: int, width: int) -> np.ndarray: ...
    def right(self, i: int, width: int) -> np.ndarray: ...


class ApproxInfluences:
    """Mixing-time bounds: the same for every node and every initial distribution."""

    invariant = True
    n_pairs = 1

    def __init__(self, pi_min: float, s: float) -> None:
        self.pi_min, self.s = pi_min, s

    def left(self, i: int, width: int) -> np.ndarray:
        bound: np.ndarray = 2.0 * self.right(i, width)
        return bound

    def right(self, i: int, width: int) -> np.ndarray:
        return approx_influence(np.arange(1, width + 1), self.pi_min, self.s)[:, None]


class ExactInfluences:
    """Exact influences from powers of P and the marginals mu_t (pairs of supported states)."""

    def __init__(self, model: MarkovChainModel, length: int) -> None:
        self.invariant = model.is_stationary
        k = model.n_states
        self.n_pairs = k * k
        self.mu = np.tile(model.initial, (length, 1)) if self.invariant else model.marginals(length)
        self.powers = np.stack([np.eye(k), model.transition])
        self.forward = np.zeros((1, k, k))  # forward[b] = F_b for every pair, unmasked

    def _grow(self, width: int) -> None:
        while self.powers.shape[0] <= width:
            extra = self.powers[1:] @ self.powers[-1]
            self.powers = np.concatenate([self.powers, extra])
        if self.forward.shape[0] <= width:
            self.forward = np.concatenate(
                [self.forward[:1], max_log_ratio(self.powers[1 : width + 1])]
            )

    def _mask(self, i: int, vecs: np.ndarray) -> np.ndarray:
        support = self.mu[i] > 0
        ok = support[:, None] & support[None, :]
        return np.where(ok, vecs, -np.inf).reshape(vecs.shape[0], self.n_pairs)

    def right(self, i: int, width: int) -> np.ndarray:
        self._grow(width)
        return self._mask(i, self.forward[1 : width + 1])

    def left(self, i: int, width: int) -> np.ndarray:
        self._grow(width)
        a = np.arange(1, width + 1)
        past = self.mu[np.maximum(i - a, 0)]  # (width, k): mu_{i-a}(z)
        mu_i = np.where(self.mu[i] > 0, self.mu[i], 1.0)
        # C[a, x, z] = mu_{i-a}(z) P^a(z, x) / mu_i(x)
        tables = past[:, None, :] * np.swapaxes(self.powers[a], 1, 2) / mu_i[None, :, None]
        return self._mask(i, max_log_ratio(tables))


def _distributions(values: Any, name: str, *, ndim: int) -> np.ndarray:
    """A probability vector (ndim 1) or a row-stochastic matrix (ndim 2), read-only."""
    try:
        array = np.array(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be numeric probabilities") from None
    if array.ndim != ndim or array.size == 0:
        raise InputError(f"{name} must be a {'vector' if ndim == 1 else 'matrix'} of probabilities")
    if ndim == 2 and array.shape[0] != array.shape[1]:
        raise InputError(f"{name} must be a square matrix, got shape {array.shape}")
    if not np.isfinite(array).all() or (array < 0).any():
        raise InputError(f"{name} must hold finite probabilities >= 0")
    sums = array.sum(axis=-1)
    if np.abs(sums - 1.0).max() > 1e-6:
        bad = int(np.argmax(np.abs(np.atleast_1d(sums) - 1.0)))
        where = f"row {bad} " if ndim == 2 else ""
        raise InputError(f"{name} {where}must sum to 1, sums to {np.atleast_1d(sums)[bad]:g}")
    result: np.ndarray = array / sums[..., None] if ndim == 2 else array / sums
    result.setflags(write=False)
    return result


def _draw(cumulative: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    u = rng.random((cumulative.shape[0], 1)) * cumulative[:, -1:]
    codes: np.ndarray = np.minimum((u >= cumulative).sum(axis=1), cumulative.shape[1] - 1)
    return codes


__all__ = [
    "ApproxInfluences",
    "ExactInfluences",
    "Influences",
    "MarkovChainModel",
    "approx_influence",
    "as_chains",
    "is_irreducible",
    "mixing_constants",
    "stationary_distribution",
]
