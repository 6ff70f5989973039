"""The Markov quilt mechanism (Song, Wang & Chaudhuri, SIGMOD 2017) and its attribute version.

:class:`MarkovQuiltMechanism` releases a statistic of Markov chains (the histogram of their
states, or their sum) so that no single X_i is revealed: epsilon-Pufferfish privacy for the
secret pairs (X_i = a, X_i = b) against every adversary whose belief is a chain in Theta.

:class:`AttributeMarkovQuilt` is the attribute-private version (Zhang, Ohrimenko & Cummings):
the nodes are the attributes of a record, related by a public Bayesian network; the secrets are
the values of the protected attributes; the released statistic is the histograms of chosen
columns over records drawn independently from the network. The quilt search is the one of
:mod:`attrpriv.release.quilt`; docs/mechanisms/markov-quilt.md has the privacy argument.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from attrpriv._checks import check_choice, check_epsilon
from attrpriv.data.aggregate import aggregator_for
from attrpriv.data.schema import Categorical, Integer, Schema
from attrpriv.dp.ledger import BudgetLedger
from attrpriv.dp.noise import NoiseSampler, default_sampler, require_private
from attrpriv.dp.record import PrivacyRecord, Release
from attrpriv.errors import InputError
from attrpriv.release.chain_quilt import METHODS, ChainCalibration, calibrate_chain
from attrpriv.release.markov_chain import MarkovChainModel, as_chains
from attrpriv.release.network import DiscreteNetwork
from attrpriv.release.quilt import Quilt, quilt_scale

QUERIES = ("histogram", "sum")
PROTECTS_CHAIN = (
    "the value of any single X_i (secret pairs X_i=a vs X_i=b) against an adversary whose "
    "beliefs are in Theta"
)


class MarkovQuiltMechanism:
    """epsilon-Pufferfish release of the state histogram (or sum) of Markov chains.

    Parameters
    ----------
    models : a :class:`MarkovChainModel`, or several (the class Theta: the noise covers all).
    epsilon : privacy parameter.
    states : labels of the chain states, in the models' order; default ``0 .. k-1``.
    query : ``"histogram"`` (counts of every state; Lipschitz 2 per node) or ``"sum"`` of the
        (numeric) states (Lipschitz max(states) - min(states) per node).
    method : ``"exact"`` max-influence, or ``"approx"`` (mixing bound; irreducible chains).
    noise, allow_nonprivate : the noise sampler, and whether a non-private one is accepted.
    """

    def __init__(
        self,
        models: MarkovChainModel | Sequence[MarkovChainModel],
        epsilon: float,
        *,
        states: Sequence[Hashable] | None = None,
        query: str = "histogram",
        method: str = "exact",
        noise: NoiseSampler | None = None,
        allow_nonprivate: bool = False,
    ) -> None:
        self.models = models
        self.epsilon = epsilon
        self.states = states
        self.query = query
        self.method = method
        self.noise = noise
        self.allow_nonprivate = allow_nonprivate

    def calibrate(self, length: int, sampler: NoiseSampler | None = None) -> ChainCalibration:
        """The quilts and noise scale for one chain of ``length`` (public: no data used)."""
        models, _ = self._model_states()
        lipschitz = self.lipschitz(sampler or self.noise or default_sampler())
        return calibrate_chain(models, length, self.epsilon, lipschitz, method=self.method)

    def lipschitz(self, sampler: NoiseSampler) -> float:
        """How much the statistic moves (l1) when one X_j changes, plus float-grid slack."""
        check_choice(self.query, "query", QUERIES)
        _, states = self._model_states()
        if self.query == "histogram":
            return 2.0
        values = _numeric_states(states)
        return float(values.max() - values.min()) + sampler.rounding_slack(1)

    def release(
        self,
        sequences: Any,
        *,
        ledger: BudgetLedger | None = None,
        label: str = "",
    ) -> Release:
        """Release the statistic of ``sequences`` (one chain, or a list of independent chains).

        The chain lengths are public. The ledger is charged before any noise is drawn.
        """
        epsilon = check_epsilon(self.epsilon)
        check_choice(self.method, "method", METHODS)
        sampler = self.noise if self.noise is not None else default_sampler()
        require_private(sampler, allow_nonprivate=self.allow_nonprivate)
        _, states = self._model_states()
        chains = as_chains(sequences, states)
        lengths = sorted({c.size for c in chains})
        calibrations = [self.calibrate(n, sampler) for n in lengths]
        sigma = max(c.sigma_max for c in calibrations)
        record = self.record(sigma, self.lipschitz(sampler), epsilon, sampler)
        if ledger is not None:
            ledger.charge(record, label=label)
        values = self._answer(chains, states, sigma, sampler)
        parts = {
            "sigma_max": sigma,
            "lengths": lengths,
            "calibrations": [c.to_dict() for c in calibrations],
        }
        return Release(values, record, parts)

    def record(
        self, sigma: float, lipschitz: float, epsilon: float, sampler: NoiseSampler
    ) -> PrivacyRecord:
        """The guarantee of releasing with Laplace scale ``sigma``."""
        discrete = self.query == "histogram"
        assumptions = _assumptions(
            "the given Markov chain models",
            "chains are independent of each other and their lengths are public",
            sampler,
        )
        return PrivacyRecord(
            mechanism=f"markov-quilt-{self.method}",
            definition="pufferfish",
            epsilon=epsilon,
            delta=0.0,
            protects=PROTECTS_CHAIN,
            sensitivity=lipschitz,
            noise={
                "distribution": "discrete laplace" if discrete else "laplace",
                "scale": sigma,
                "norm": "l1",
                "sensitivity_is": "per-node Lipschitz constant of the query",
                **sampler.describe(),
            },
            assumptions=assumptions,
        )

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

    def _answer(
        self,
        chains: list[np.ndarray],
        states: tuple[Hashable, ...],
        sigma: float,
        sampler: NoiseSampler,
    ) -> pd.Series | float:
        codes = np.concatenate(chains)
        if self.query == "histogram":
            counts = np.bincount(codes, minlength=len(states))
            noisy = sampler.discrete_laplace(counts, sigma)
            return pd.Series(noisy, index=pd.Index(states, name="state"), name="count")
        total = float(_numeric_states(states)[codes].sum())
        return float(sampler.laplace(np.array([total]), sigma)[0])


@dataclass(frozen=True)
class AttributeCalibration:
    """Noise for the attribute version: per-node sensitivity, chosen quilt per protected node."""

    sigma_max: float
    sensitivity: Mapping[str, float]
    quilts: Mapping[str, Quilt]
    network: Mapping[str, int]  # protected node -> index in Theta of the network that needs most

    def to_dict(self) -> dict[str, Any]:
        return {
            "sigma_max": self.sigma_max,
            "sensitivity": dict(self.sensitivity),
            "quilts": {node: q.to_dict() for node, q in self.quilts.items()},
            "network": dict(self.network),
        }


class AttributeMarkovQuilt:
    """Histograms of columns, private for the values of the ``protected`` attributes.

    Parameters
    ----------
    networks : a public :class:`DiscreteNetwork` over the attributes of one record, or several
        (the class Theta). Records are independent draws from it.
    epsilon : privacy parameter.
    protected : the attribute(s) whose values are secret (network nodes).
    columns : the columns whose histograms are released (network nodes in the schema);
        default every network node.
    max_quilt_size : the largest quilt tried besides the moral-graph rings (default: all).
    noise, allow_nonprivate : the noise sampler, and whether a non-private one is accepted.
    """

    def __init__(
        self,
        networks: DiscreteNetwork | Sequence[DiscreteNetwork],
        epsilon: float,
        protected: str | Sequence[str],
        columns: Sequence[str] | None = None,
        *,
        max_quilt_size: int | None = None,
        noise: NoiseSampler | None = None,
        allow_nonprivate: bool = False,
    ) -> None:
        self.networks = networks
        self.epsilon = epsilon
        self.protected = protected
        self.columns = columns
        self.max_quilt_size = max_quilt_size
        self.noise = noise
        self.allow_nonprivate = allow_nonprivate

    def calibrate(self) -> AttributeCalibration:
        """Best quilt of every protected node in every network; the largest scale wins."""
        networks, protected, columns = self._checked()
        first = networks[0]
        sensitivity = {n: 2.0 if n in columns else 0.0 for n in first.nodes}
        quilts: dict[str, Quilt] = {}
        chosen: dict[str, int] = {}
        for index, network in enumerate(networks):
            _, found = quilt_scale(
                network,
                self.epsilon,
                sensitivity,
                nodes=protected,
                max_quilt_size=self.max_quilt_size,
            )
            for node, quilt in found.items():
                if node not in quilts or quilt.scale > quilts[node].scale:
                    quilts[node], chosen[node] = quilt, index
        sigma = max(q.scale for q in quilts.values())
        return AttributeCalibration(sigma, sensitivity, quilts, chosen)

    def release(
        self,
        data: Any,
        schema: Schema,
        *,
        ledger: BudgetLedger | None = None,
        label: str = "",
    ) -> Release:
        """Count the columns, charge the ledger (before noise), add noise, return values+record."""
        epsilon = check_epsilon(self.epsilon)
        sampler = self.noise if self.noise is not None else default_sampler()
        require_private(sampler, allow_nonprivate=self.allow_nonprivate)
        networks, _, columns = self._checked()
        for network in networks:
            _check_domains(network, schema, columns)
        calibration = self.calibrate()
        with aggregator_for(data, schema) as aggregator:
            n_rows = aggregator.n_rows()
            counts = aggregator.all_counts(list(columns))
        for name, series in counts.items():
            if int(series.sum()) != n_rows:
                raise InputError(
                    f"column {name!r} has missing values; the network has no state for them"
                )
        record = self.record(calibration, epsilon, sampler)
        if ledger is not None:
            ledger.charge(record, label=label)
        flat = np.concatenate([counts[c].to_numpy() for c in columns])
        noisy = sampler.discrete_laplace(flat, calibration.sigma_max)
        values, start = {}, 0
        for name in columns:
            true = counts[name]
            values[name] = pd.Series(noisy[start : start + true.size], index=true.index, name=name)
            start += true.size
        return Release(values, record, calibration.to_dict())

    def record(
        self, calibration: AttributeCalibration, epsilon: float, sampler: NoiseSampler
    ) -> PrivacyRecord:
        """The guarantee of releasing with the calibrated scale."""
        _, protected, _ = self._checked()
        assumptions = _assumptions(
            "the given Bayesian networks",
            "records are independent draws; the number of records is public",
            sampler,
        )
        return PrivacyRecord(
            mechanism="attribute-markov-quilt",
            definition="pufferfish",
            epsilon=epsilon,
            delta=0.0,
            protects=(
                f"the value of {', '.join(repr(p) for p in protected)} of any single record "
                "(secret pairs value a vs value b) against an adversary whose beliefs are in Theta"
            ),
            sensitivity=dict(calibration.sensitivity),
            noise={
                "distribution": "discrete laplace",
                "scale": calibration.sigma_max,
                "norm": "l1",
                **sampler.describe(),
            },
            assumptions=assumptions,
        )

    def _checked(self) -> tuple[list[DiscreteNetwork], tuple[str, ...], tuple[str, ...]]:
        nets = self.networks
        networks = [nets] if isinstance(nets, DiscreteNetwork) else list(nets)
        if not networks or not all(isinstance(n, DiscreteNetwork) for n in networks):
            raise InputError("networks must be a DiscreteNetwork or a non-empty list of them")
        first = networks[0]
        for net in networks[1:]:
            if dict(net.states) != dict(first.states):
                raise InputError("every network in Theta must have the same nodes and states")
        protected = _names(self.protected, "protected", first)
        columns = first.nodes if self.columns is None else _names(self.columns, "columns", first)
        return networks, protected, columns


def _assumptions(theta: str, independence: str, sampler: NoiseSampler) -> tuple[str, ...]:
    """The model assumptions every quilt release rests on, and the sampler's caveat."""
    base = (f"data drawn from a distribution in Theta ({theta})", independence)
    return base if sampler.private else (*base, "noise sampler is not private")


def _names(value: str | Iterable[str], what: str, network: DiscreteNetwork) -> tuple[str, ...]:
    names = (value,) if isinstance(value, str) else tuple(value)
    if not names:
        raise InputError(f"{what} must name at least one network node")
    for name in names:
        if name not in network.states:
            raise InputError(
                f"{what} {name!r} is not a node of the network; "
                f"expected one of {list(network.nodes)}"
            )
    return names


def _check_domains(network: DiscreteNetwork, schema: Schema, columns: Sequence[str]) -> None:
    """Released columns, and every network node in the schema, must match the schema domain."""
    for node in network.nodes:
        if node not in schema:
            if node in columns:
                raise InputError(f"column {node!r} is not in the schema")
            continue
        domain = schema.domain(node)
        if not isinstance(domain, (Categorical, Integer)):
            raise InputError(f"column {node!r} must have a categorical or integer domain")
        if set(domain.categories) != set(network.states[node]):
            raise InputError(
                f"column {node!r}: the network's states {list(network.states[node])} differ "
                f"from the schema's domain {list(domain.categories)}"
            )


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
    "AttributeCalibration",
    "AttributeMarkovQuilt",
    "MarkovQuiltMechanism",
]
