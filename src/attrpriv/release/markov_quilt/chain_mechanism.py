"""The Markov quilt mechanism (Song, Wang & Chaudhuri, SIGMOD 2017) for Markov chains.

See docs/mechanisms/markov-quilt.md for the privacy argument.
"""

from __future__ import annotations

import hashlib
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from attrpriv._checks import EPSILON, Rule, distinct_values, one_of, one_or_list, optional
from attrpriv.dp.accuracy import Accuracy
from attrpriv.dp.ledger import BudgetLedger
from attrpriv.dp.mechanism import SAMPLER_CONSTRAINTS, Mechanism, NoisePlan
from attrpriv.dp.noise import NoiseSampler
from attrpriv.dp.record import Diagnostics, PrivacyRecord, Release
from attrpriv.dp.units import PrivacyUnit
from attrpriv.errors import InputError
from attrpriv.release.markov_quilt.chain_calibration import (
    INFLUENCE_METHODS,
    ChainCalibration,
    calibrate_chain,
)
from attrpriv.release.markov_quilt.chain_model import MarkovChainModel, as_chains

QUERIES = ("histogram", "sum")
PROTECTS_CHAIN = (
    "the value of any single X_i (secret pairs X_i=a vs X_i=b) against an adversary whose "
    "beliefs are in Theta"
)


@dataclass(frozen=True)
class Chains:
    """The chains as state codes (private), with their state labels."""

    codes: tuple[np.ndarray, ...]
    states: tuple[Hashable, ...]


@dataclass(frozen=True)
class ChainLengths:
    """The public facts a chain release is calibrated on: the length of every chain.

    Parameters
    ----------
    lengths : int or iterable of int
        The length of every chain (one int for a single chain); kept sorted, without repeats.
    """

    lengths: tuple[int, ...]

    def __post_init__(self) -> None:
        given: Iterable[Any] = (self.lengths,) if isinstance(self.lengths, int) else self.lengths
        found = tuple(given)
        if not found or not all(
            isinstance(n, (int, np.integer)) and not isinstance(n, bool) and n >= 1 for n in found
        ):
            raise InputError(f"chain lengths must be integers >= 1, got {self.lengths!r}")
        object.__setattr__(self, "lengths", tuple(sorted({int(n) for n in found})))


@dataclass(frozen=True)
class ChainPlan(NoisePlan):
    """One Laplace scale, the largest any chain length needs, and each length's quilts."""

    lipschitz: float
    sigma_max: float
    calibrations: tuple[ChainCalibration, ...]
    theta: str  # a fingerprint of the class Theta: releases compose only under one Theta


@dataclass(frozen=True)
class ChainDiagnostics(Diagnostics):
    """How a chain release was made: ``sigma_max``, its Laplace scale (the largest any chain
    length needs), and per chain length the ``calibrations`` (every node's quilt)."""

    sigma_max: float
    calibrations: tuple[ChainCalibration, ...]

    @property
    def lengths(self) -> list[int]:
        """The chain lengths, shortest first."""
        return [c.length for c in self.calibrations]

    def summary_lines(self) -> list[str]:
        """The noise scale and the quilt of the node that needs the most, in one line."""
        worst = max(self.calibrations, key=lambda c: c.sigma_max).worst
        start, stop = worst.nearby
        return [
            f"Laplace scale {self.sigma_max:.4g} (quilt {list(worst.quilt)} of node "
            f"{worst.node}, {stop - start} nearby nodes, influence {worst.influence:.3g})"
        ]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``sigma_max``, ``lengths`` and ``calibrations`` (as their dicts)."""
        return {
            "sigma_max": self.sigma_max,
            "lengths": self.lengths,
            "calibrations": [c.to_dict() for c in self.calibrations],
        }


class MarkovQuiltMechanism(Mechanism[Chains, ChainLengths, ChainPlan]):
    """epsilon-Pufferfish release of the state histogram (or sum) of Markov chains.

    Guarantee: no single state X_i is revealed (secret pairs ``X_i = a`` vs ``X_i = b``) against
    every adversary whose belief is a chain in Theta. See docs/mechanisms/markov-quilt.md.

    Parameters
    ----------
    models : MarkovChainModel or sequence of MarkovChainModel
        One chain model, or several (the class Theta: the noise covers all).
    epsilon : float
        Privacy parameter.
    states : sequence of hashable, optional
        Labels of the chain states, in the models' order; default ``0 .. k-1``.
    query : str, optional
        ``"histogram"`` (Lipschitz 2 per node) or ``"sum"`` of numeric states.
    method : str, optional
        ``"exact"`` max-influence, or ``"approx"`` (mixing bound; irreducible chains).
    sampler, allow_nonprivate
        As in :class:`~attrpriv.dp.mechanism.Mechanism`.
    """

    _constraints: ClassVar[Mapping[str, Rule]] = {
        "epsilon": EPSILON,
        "query": one_of(QUERIES),
        "method": one_of(INFLUENCE_METHODS),
        "models": one_or_list(MarkovChainModel, "a MarkovChainModel"),
        "states": optional(distinct_values("states")),
        **SAMPLER_CONSTRAINTS,
    }

    def __init__(
        self,
        models: MarkovChainModel | Sequence[MarkovChainModel],
        epsilon: float,
        *,
        states: Sequence[Hashable] | None = None,
        query: str = "histogram",
        method: str = "exact",
        sampler: NoiseSampler | None = None,
        allow_nonprivate: bool = False,
    ) -> None:
        self.models = models
        self.epsilon = epsilon
        self.states = states
        self.query = query
        self.method = method
        self.sampler = sampler
        self.allow_nonprivate = allow_nonprivate

    def release(
        self,
        sequences: Any,
        *,
        ledger: BudgetLedger | None = None,
        label: str = "",
    ) -> Release:
        """Release the statistic of ``sequences``; chain lengths are public.

        Parameters
        ----------
        sequences : sequence of hashable, or sequence of such sequences
            One chain (its states in order), or a list of independent chains.
        ledger, label
            As in :meth:`~attrpriv.release._table.TableMechanism.release`.

        Returns
        -------
        Release
            The noisy statistic, its accuracy and the :class:`PrivacyRecord`.

        Raises
        ------
        InputError
            A parameter is invalid, or a chain holds a state the models do not have.
        BudgetExceededError
            The release does not fit the ledger's budget (nothing is released).
        """
        return self._release(sequences, ledger=ledger, label=label)

    def _public_facts(self) -> ChainLengths:
        raise InputError(
            "MarkovQuiltMechanism.calibrate needs the chain lengths: pass ChainLengths(lengths)"
        )

    def _calibrate(self, public: ChainLengths, sampler: NoiseSampler) -> ChainPlan:
        models, states = self._model_states()
        lipschitz = self._lipschitz(states, sampler)
        epsilon = float(self.epsilon)
        found = tuple(
            calibrate_chain(models, n, epsilon, lipschitz, method=self.method)
            for n in public.lengths
        )
        sigma = max(c.sigma_max for c in found)
        return ChainPlan(epsilon, 0.0, sampler, lipschitz, sigma, found, _fingerprint(models))

    def _lipschitz(self, states: tuple[Hashable, ...], sampler: NoiseSampler) -> float:
        """How much the statistic moves (l1) when one X_j changes, plus float-grid slack."""
        if self.query == "histogram":
            return 2.0
        values = _numeric_states(states)
        return float(values.max() - values.min()) + sampler.rounding_slack(1)

    def _measure(self, sequences: Any) -> tuple[Chains, ChainLengths]:
        _, states = self._model_states()
        codes = tuple(as_chains(sequences, states))
        return Chains(codes, states), ChainLengths(tuple(c.size for c in codes))

    def record(self, plan: ChainPlan) -> PrivacyRecord:
        """The guarantee of releasing with ``plan``.

        Parameters
        ----------
        plan : ChainPlan
            The noise plan of the release (from :meth:`calibrate` or a release).

        Returns
        -------
        PrivacyRecord
            ``(epsilon, 0)``-Pufferfish privacy under ``pufferfish/chain-state@<theta>``.
        """
        discrete = self.query == "histogram"
        return self._record(
            plan,
            mechanism=f"markov-quilt-{self.method}",
            protects=PROTECTS_CHAIN,
            sensitivity=plan.lipschitz,
            noise={
                "distribution": "discrete laplace" if discrete else "laplace",
                "scale": plan.sigma_max,
                "norm": "l1",
                "sensitivity_is": "per-node Lipschitz constant of the query",
            },
            unit=PrivacyUnit("pufferfish", f"chain-state@{plan.theta}"),
            assumptions=(
                "data drawn from a distribution in Theta (the given Markov chain models)",
                "chains are independent of each other and their lengths are public",
            ),
        )

    def _add_noise(self, private: Chains, plan: ChainPlan) -> pd.Series | float:
        codes = np.concatenate(private.codes)
        states = private.states
        if self.query == "histogram":
            counts = np.bincount(codes, minlength=len(states))
            noisy = plan.sampler.discrete_laplace(counts, plan.sigma_max)
            return pd.Series(noisy, index=pd.Index(states, name="state"), name="count")
        total = float(_numeric_states(states)[codes].sum())
        return float(plan.sampler.laplace(np.array([total]), plan.sigma_max)[0])

    def _accuracy(self, plan: ChainPlan, values: pd.Series | float) -> Accuracy:
        if isinstance(values, pd.Series):
            return Accuracy.of_scales("discrete laplace", pd.Series(plan.sigma_max, values.index))
        return Accuracy.of_scales("laplace", plan.sigma_max)

    def _diagnostics(
        self, public: ChainLengths, plan: ChainPlan, noisy: pd.Series | float
    ) -> ChainDiagnostics:
        return ChainDiagnostics(plan.sigma_max, plan.calibrations)

    def _model_states(self) -> tuple[list[MarkovChainModel], tuple[Hashable, ...]]:
        models = [self.models] if isinstance(self.models, MarkovChainModel) else list(self.models)
        if not models or not all(isinstance(m, MarkovChainModel) for m in models):
            raise InputError("models must be a MarkovChainModel or a non-empty list of them")
        k = models[0].n_states
        if any(m.n_states != k for m in models):
            raise InputError("every model in Theta must have the same number of states")
        states = tuple(range(k)) if self.states is None else tuple(self.states)
        if len(states) != k or len(set(states)) != k:
            raise InputError(f"states must be {k} distinct labels (one per state), got {states}")
        return models, states


def _fingerprint(models: Sequence[MarkovChainModel]) -> str:
    """Eight hex digits naming the class Theta (its initial and transition probabilities)."""
    digest = hashlib.sha256()
    for model in models:
        digest.update(np.ascontiguousarray(model.initial, dtype=np.float64).tobytes())
        digest.update(np.ascontiguousarray(model.transition, dtype=np.float64).tobytes())
    return digest.hexdigest()[:8]


def _numeric_states(states: tuple[Hashable, ...]) -> np.ndarray:
    try:
        values = np.array(states, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f"query='sum' needs numeric states, got {list(states)}") from None
    if not np.isfinite(values).all():
        raise InputError(f"query='sum' needs finite numeric states, got {list(states)}")
    return values


__all__ = [
    "PROTECTS_CHAIN",
    "QUERIES",
    "ChainDiagnostics",
    "ChainLengths",
    "ChainPlan",
    "MarkovQuiltMechanism",
]
