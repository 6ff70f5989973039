"""The attribute-private Markov quilt mechanism (Zhang, Ohrimenko & Cummings).

Histograms of records drawn from a public Bayesian network, private for protected attributes.
See docs/mechanisms/markov-quilt.md, "Attribute-private version".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from attrpriv._checks import EPSILON, Rule, integer, names, one_or_list, optional
from attrpriv.data.aggregate import aggregator_for
from attrpriv.data.schema import Categorical, Integer, Schema
from attrpriv.dp.mechanism import SAMPLER_CONSTRAINTS, NoisePlan
from attrpriv.dp.noise import NoiseSampler
from attrpriv.dp.record import Diagnostics, PrivacyRecord
from attrpriv.dp.units import PrivacyUnit
from attrpriv.errors import InputError
from attrpriv.release._histograms import HistogramMechanism, Histograms
from attrpriv.release.graph.network import DiscreteNetwork
from attrpriv.release.graph.quilts import Quilt, quilt_scale


@dataclass(frozen=True)
class QuiltFacts:
    """The public facts an attribute Markov quilt release is calibrated on, beside its
    parameters: ``inferred``, the columns whose domains were read off the private data."""

    inferred: tuple[str, ...] = ()


@dataclass(frozen=True)
class AttributePlan(NoisePlan):
    """Noise for the attribute version: per-node sensitivity, chosen quilt per protected node."""

    sigma_max: float
    sensitivity: Mapping[str, float]
    quilts: Mapping[str, Quilt]
    network: Mapping[str, int]  # protected node -> index in Theta of the network that needs most
    protected: tuple[str, ...]


@dataclass(frozen=True)
class QuiltDiagnostics(Diagnostics):
    """How an attribute Markov quilt release was made: ``sigma_max``, every bin's discrete Laplace
    scale (the largest any protected node needs); each node's ``sensitivity`` (0: not released);
    per protected node, its chosen ``quilts`` and the Theta index of the neediest ``network``."""

    sigma_max: float
    sensitivity: Mapping[str, float]
    quilts: Mapping[str, Quilt]
    network: Mapping[str, int]

    def summary_lines(self) -> list[str]:
        """One line for the noise scale, then one per protected node with its quilt."""
        lines = [f"discrete Laplace scale {self.sigma_max:.4g} on every bin"]
        for node, q in self.quilts.items():
            lines.append(
                f"{node}: quilt {list(q.quilt)} ({len(q.nearby)} nearby nodes, influence "
                f"{q.influence:.3g}, scale {q.scale:.4g})"
            )
        return lines

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``sigma_max``, ``sensitivity``, ``quilts`` (as their dicts), ``network``."""
        quilts = {node: q.to_dict() for node, q in self.quilts.items()}
        return {**super().to_dict(), "quilts": quilts}


class AttributeMarkovQuilt(HistogramMechanism[QuiltFacts, AttributePlan]):
    """Histograms of columns, private for the values of the ``protected`` attributes.

    Guarantee: epsilon-Pufferfish privacy for each record's protected values, with records drawn
    independently from any network in the class. See docs/mechanisms/markov-quilt.md.

    Parameters
    ----------
    networks : DiscreteNetwork or sequence of DiscreteNetwork
        Public network(s) over the attributes of one record (the class Theta).
    epsilon : float
        Privacy parameter.
    protected : str or sequence of str
        The attribute(s) whose values are secret (network nodes).
    columns : sequence of str, optional
        The columns whose histograms are released; default every network node.
    max_quilt_size : int or None, optional
        The largest quilt tried besides the moral-graph rings (default: all).
    sampler, allow_nonprivate
        As in :class:`~attrpriv.dp.mechanism.Mechanism`.
    """

    _constraints: ClassVar[Mapping[str, Rule]] = {
        "networks": one_or_list(DiscreteNetwork, "a DiscreteNetwork"),
        "epsilon": EPSILON,
        "protected": names(single=True),
        "columns": optional(names()),
        "max_quilt_size": optional(integer()),
        **SAMPLER_CONSTRAINTS,
    }

    def __init__(
        self,
        networks: DiscreteNetwork | Sequence[DiscreteNetwork],
        epsilon: float,
        protected: str | Sequence[str],
        columns: Sequence[str] | None = None,
        *,
        max_quilt_size: int | None = None,
        sampler: NoiseSampler | None = None,
        allow_nonprivate: bool = False,
    ) -> None:
        self.networks = networks
        self.epsilon = epsilon
        self.protected = protected
        self.columns = columns
        self.max_quilt_size = max_quilt_size
        self.sampler = sampler
        self.allow_nonprivate = allow_nonprivate

    def _public_facts(self) -> QuiltFacts:
        return QuiltFacts()

    def _calibrate(self, public: QuiltFacts, sampler: NoiseSampler) -> AttributePlan:
        """Best quilt of every protected node in every network; the largest scale wins."""
        networks, protected, columns = self._checked()
        sensitivity = {n: 2.0 if n in columns else 0.0 for n in networks[0].nodes}
        quilts: dict[str, Quilt] = {}
        chosen: dict[str, int] = {}
        epsilon = float(self.epsilon)
        for index, network in enumerate(networks):
            _, found = quilt_scale(
                network,
                epsilon,
                sensitivity,
                nodes=protected,
                max_quilt_size=self.max_quilt_size,
            )
            for node, quilt in found.items():
                if node not in quilts or quilt.scale > quilts[node].scale:
                    quilts[node], chosen[node] = quilt, index
        sigma = max(q.scale for q in quilts.values())
        return AttributePlan(
            epsilon,
            0.0,
            sampler,
            sigma,
            sensitivity,
            quilts,
            chosen,
            protected,
            inferred=public.inferred,
        )

    def _measure(self, data: Any, schema: Schema) -> tuple[Histograms, QuiltFacts]:
        networks, _, columns = self._checked()
        for network in networks:
            _check_domains(network, schema, columns)
        with aggregator_for(data, schema) as aggregator:
            n_rows = aggregator.n_rows()
            counts = aggregator.all_counts(list(columns))
        for name, series in counts.items():
            if int(series.sum()) != n_rows:
                raise InputError(
                    f"column {name!r} has missing values; the network has no state for them"
                )
        ordered = {name: counts[name] for name in columns}
        return ordered, QuiltFacts(schema.inferred_among(columns))

    def record(self, plan: AttributePlan) -> PrivacyRecord:
        """The guarantee of releasing with ``plan``.

        Parameters
        ----------
        plan : AttributePlan
            The noise plan of the release (from :meth:`calibrate` or a release).

        Returns
        -------
        PrivacyRecord
            ``(epsilon, 0)``-Pufferfish privacy under ``pufferfish/record:<nodes>``.
        """
        names = ", ".join(repr(p) for p in plan.protected)
        return self._record(
            plan,
            mechanism="attribute-markov-quilt",
            protects=(
                f"the value of {names} of any single record "
                "(secret pairs value a vs value b) against an adversary whose beliefs are in Theta"
            ),
            sensitivity=dict(plan.sensitivity),
            noise={
                "distribution": "discrete laplace",
                "scale": plan.sigma_max,
                "norm": "l1",
            },
            unit=PrivacyUnit("pufferfish", "record:" + ",".join(plan.protected)),
            assumptions=(
                "data drawn from a distribution in Theta (the given Bayesian networks)",
                "records are independent draws; the number of records is public",
            ),
        )

    def _scale(self, plan: AttributePlan) -> float:
        return plan.sigma_max

    def _diagnostics(
        self, public: QuiltFacts, plan: AttributePlan, noisy: Histograms
    ) -> QuiltDiagnostics:
        return QuiltDiagnostics(plan.sigma_max, plan.sensitivity, plan.quilts, plan.network)

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


__all__ = ["AttributeMarkovQuilt", "AttributePlan", "QuiltDiagnostics", "QuiltFacts"]
