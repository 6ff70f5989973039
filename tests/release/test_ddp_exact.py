"""Tabular-DDP's default bound against the exact worst-case privacy loss, by enumeration.

For one respondent and discrete Laplace noise on every histogram, the likelihood of an output
given the respondent's answers is a product over histograms and bins of factors that each take
``e^{+1/sigma}`` or ``e^{-1/sigma}`` (the bin's noisy count above or at/below the rest of the
data's count): every corner is reachable by some output, and the ratio of the two mixtures
(``X_i = a`` vs ``b``) is multilinear in the factors, so its supremum over outputs is the
maximum over the corners. Enumerating them gives the exact loss, no sampling.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attrpriv import Column, Integer, Schema
from attrpriv.release.ddp.bound import chunk_evidence, uniform_scale
from attrpriv.release.ddp.mechanism import TabularDDP
from attrpriv.release.graph.network import DiscreteNetwork


def exact_loss(network: DiscreteNetwork, node: str, scale: float | Mapping[str, float]) -> float:
    """sup over outputs and secret pairs of the log-likelihood ratio about ``node``, when
    histogram ``j`` has discrete Laplace noise of ``scale[j]`` (or ``scale`` for all)."""
    nodes = network.nodes
    scales = scale if isinstance(scale, Mapping) else dict.fromkeys(nodes, scale)
    joint = network.marginal(list(nodes))
    axis = nodes.index(node)
    cards = joint.shape
    prior = np.moveaxis(joint, axis, 0).reshape(cards[axis], -1).sum(axis=1)
    supported = prior > 0
    best = 0.0
    corners = [list(itertools.product((-1.0, 1.0), repeat=c)) for c in cards]
    for signs in itertools.product(*corners):
        weighted = joint
        for j, sign in enumerate(signs):
            shape = [1] * len(cards)
            shape[j] = cards[j]
            weighted = weighted * np.exp(np.array(sign) / scales[nodes[j]]).reshape(shape)
        mass = np.moveaxis(weighted, axis, 0).reshape(cards[axis], -1).sum(axis=1)
        ratio = mass[supported] / prior[supported]
        best = max(best, math.log(ratio.max() / ratio.min()))
    return best


def bits(
    n: int, parents: dict[str, tuple[str, ...]], cpds: dict[str, np.ndarray]
) -> DiscreteNetwork:
    names = [f"x{k}" for k in range(n)]
    return DiscreteNetwork(dict.fromkeys(names, (0, 1)), parents, cpds)


FAIR = np.array([0.5, 0.5])


def xor(flip: float = 0.02) -> DiscreteNetwork:
    """x2 = x0 XOR x1 (flipped w.p. ``flip``): every pair is independent."""
    table = np.zeros((2, 2, 2))
    for a, b in itertools.product((0, 1), repeat=2):
        table[a, b, a ^ b], table[a, b, 1 - (a ^ b)] = 1 - flip, flip
    return bits(3, {"x2": ("x0", "x1")}, {"x0": FAIR, "x1": FAIR, "x2": table})


def parity(flip: float = 0.01) -> DiscreteNetwork:
    """x3 = x0 XOR x1 XOR x2: every triple is independent."""
    table = np.zeros((2, 2, 2, 2))
    for a, b, c in itertools.product((0, 1), repeat=3):
        table[a, b, c, a ^ b ^ c], table[a, b, c, 1 - (a ^ b ^ c)] = 1 - flip, flip
    return bits(4, {"x3": ("x0", "x1", "x2")}, {"x0": FAIR, "x1": FAIR, "x2": FAIR, "x3": table})


def copy(keep: float = 0.999) -> DiscreteNetwork:
    """x1 is x0, almost surely; x2 independent noise."""
    same = np.array([[keep, 1 - keep], [1 - keep, keep]])
    return bits(3, {"x1": ("x0",)}, {"x0": FAIR, "x1": same, "x2": np.array([0.3, 0.7])})


def chain(keep: float = 0.8) -> DiscreteNetwork:
    same = np.array([[keep, 1 - keep], [1 - keep, keep]])
    parents = {f"x{k}": (f"x{k - 1}",) for k in range(1, 4)}
    return bits(4, parents, {"x0": FAIR, **{f"x{k}": same for k in range(1, 4)}})


def random_network(seed: int, n_nodes: int = 4) -> DiscreteNetwork:
    """Up to two parents per node, two or three states, Dirichlet(0.6) CPDs (often strong)."""
    rng = np.random.default_rng(seed)
    names = [f"x{k}" for k in range(n_nodes)]
    states = {n: tuple(range(int(rng.integers(2, 4)))) for n in names}
    parents: dict[str, tuple[str, ...]] = {}
    cpds: dict[str, np.ndarray] = {}
    for k, name in enumerate(names):
        chosen = rng.choice(k, size=min(k, int(rng.integers(0, 3))), replace=False)
        parents[name] = tuple(names[int(c)] for c in sorted(chosen))
        shape = tuple(len(states[p]) for p in parents[name])
        cpds[name] = rng.dirichlet([0.6] * len(states[name]), size=shape)
    return DiscreteNetwork(states, parents, cpds)


NETWORKS = {
    "xor": xor(),
    "parity": parity(),
    "copy": copy(),
    "chain": chain(),
    **{f"random{s}": random_network(s) for s in range(8)},
}


def _released_scales(
    network: DiscreteNetwork, epsilon: float, structure: str, **kwargs: object
) -> dict[str, float]:
    """The scale of every histogram the TabularDDP releases with (default parameters unless
    given), learning from 20,000 sampled rows."""
    rows = network.sample(20_000, np.random.default_rng(7))
    schema = Schema(
        tuple(Column(n, "feature", Integer(0, network.card(n) - 1)) for n in network.nodes)
    )
    mechanism = TabularDDP(epsilon, structure=structure, **kwargs)  # type: ignore[arg-type]
    plan = mechanism.fit(pd.DataFrame(rows), schema).calibrate()
    return plan.scales()


@pytest.mark.parametrize("structure", ["hc", "chow-liu"])
@pytest.mark.parametrize("name", NETWORKS)
def test_the_default_release_loses_at_most_epsilon_exactly(name: str, structure: str) -> None:
    """Learned structures miss XOR and parity (every pair or triple is independent), trees
    miss more, and the default groups answers by pairwise dependence, so an XOR starts in
    three chunks; the boundary checks and the checked bound keep every answer's exact loss,
    through every histogram, under epsilon."""
    network, epsilon = NETWORKS[name], 1.0
    scales = _released_scales(network, epsilon, structure)
    worst = max(exact_loss(network, node, scales) for node in network.nodes)
    assert worst <= epsilon + 1e-9  # the bisection stops within 1e-9 of the bound
    assert max(scales.values()) <= 2.0 * len(network.nodes) / epsilon * (1 + 1e-9)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 100_000), scale=st.floats(0.5, 20.0))
def test_the_no_claim_bound_holds_exactly_for_any_joint(seed: int, scale: float) -> None:
    """The total-variation expansion with every other answer nearby, from the exact pairwise
    conditionals, is at least the exact loss (any joint law, v-structures included)."""
    network = random_network(seed)
    c = math.expm1(2.0 / scale)
    for node in network.nodes:
        others = [n for n in network.nodes if n != node]
        bound = 0.0
        for a, b in itertools.combinations(range(network.card(node)), 2):
            tv = [
                0.5 * float(np.abs(t[a] - t[b]).sum())
                for t in (network.conditional([j], given=node) for j in others)
            ]
            higher = math.expm1(len(others) * 2.0 / scale) - len(others) * c
            bound = max(bound, 2.0 / scale + math.log1p(c * sum(tv) + higher))
        assert exact_loss(network, node, scale) <= bound * (1 + 1e-12) + 1e-12


def _empty(network: DiscreteNetwork) -> DiscreteNetwork:
    """The network a learner returns when it finds no dependence: every node on its own."""
    states = {n: tuple(range(network.card(n))) for n in network.nodes}
    return DiscreteNetwork(states, {}, {n: network.marginal([n]) for n in network.nodes})


@pytest.mark.parametrize("name", ["xor", "parity", "copy"])
def test_skipping_the_independence_checks_is_caught(name: str) -> None:
    """With the structure wrong (no edges), the checks reject what it claims; the variant
    that skips them trusts it, and its exact loss exceeds epsilon."""
    network, epsilon = NETWORKS[name], 1.0
    rows = network.sample(20_000, np.random.default_rng(3))
    codes = rows.loc[:, list(network.nodes)].to_numpy(np.int64)
    cards = [network.card(n) for n in network.nodes]
    sensitivity = dict.fromkeys(network.nodes, 2.0)
    losses = {}
    for check in (True, False):
        evidence = chunk_evidence(_empty(network), codes, cards, check=check)
        scale, _ = uniform_scale(evidence, epsilon, sensitivity)
        losses[check] = max(exact_loss(network, n, scale) for n in network.nodes)
    assert losses[True] <= epsilon < losses[False]


def test_the_bound_is_never_looser_than_the_quilt_bound_and_beats_laplace() -> None:
    """On a chain the nearby answers depend on the secret only partly: the total-variation
    terms make the noise clearly smaller than every answer changing at once (Laplace)."""
    scales = _released_scales(chain(0.7), 1.0, "hc")
    assert max(scales.values()) < 0.8 * 8.0


# -- surveys in several chunks: every histogram counts, the boundaries are what is checked ------


def _labelled(network: DiscreteNetwork, order: tuple[str, ...]) -> DiscreteNetwork:
    """The same joint law with the nodes listed in ``order`` (the survey's column order)."""
    return DiscreteNetwork(
        {n: network.states[n] for n in order},
        {n: network.parents.get(n, ()) for n in order},
        {n: network.cpds[n] for n in order},
    )


def linked_blocks(keep: float = 0.9, link: float = 0.6) -> DiscreteNetwork:
    """Two chains of three (x0-x1-x2 and x3-x4-x5) with one weaker link, x2 -> x3."""

    def same(p: float) -> np.ndarray:
        return np.array([[p, 1 - p], [1 - p, p]])

    parents = {f"x{k}": (f"x{k - 1}",) for k in range(1, 6)}
    cpds = {"x0": FAIR, **{f"x{k}": same(keep) for k in range(1, 6)}, "x3": same(link)}
    return bits(6, parents, cpds)


def spread_xor() -> DiscreteNetwork:
    """An XOR (x2 = x0 XOR x1) beside an independent chain: no pair shows the XOR."""
    network = xor()
    same = np.array([[0.85, 0.15], [0.15, 0.85]])
    states = {**network.states, "x3": (0, 1), "x4": (0, 1)}
    parents = {**network.parents, "x4": ("x3",)}
    cpds = {**network.cpds, "x3": FAIR, "x4": same}
    return DiscreteNetwork(states, parents, cpds)


def spread_copy() -> DiscreteNetwork:
    """x1 copies x0 almost surely, x2 and x3 a weak pair apart from them."""
    network = copy()
    weak = np.array([[0.7, 0.3], [0.3, 0.7]])
    states = {**network.states, "x3": (0, 1)}
    return DiscreteNetwork(states, {**network.parents, "x3": ("x2",)}, {**network.cpds, "x3": weak})


SPLIT = {
    "linked-blocks": (linked_blocks(), 3),
    "strongly-linked-blocks": (linked_blocks(link=0.9), 3),
    "xor-in-three-chunks": (spread_xor(), 1),
    "parity-in-four-chunks": (parity(), 1),
    "copy-in-two-chunks": (spread_copy(), 1),
}


@pytest.mark.parametrize("name", SPLIT)
def test_a_survey_in_several_chunks_loses_at_most_epsilon_exactly(name: str) -> None:
    """Chunks smaller than the dependence: every answer is calibrated against the full
    epsilon through its chunk's tested ring (a dependence no pair shows is caught by the
    joint test and the chunks merged); the exact loss over every histogram stays under it."""
    network, k = SPLIT[name]
    scales = _released_scales(network, 1.0, "hc", chunk_size=k)
    worst = max(exact_loss(network, node, scales) for node in network.nodes)
    assert worst <= 1.0 + 1e-9
    assert max(scales.values()) <= 2.0 * len(network.nodes) * (1 + 1e-9)


@pytest.mark.parametrize("name", SPLIT)
def test_skipping_the_boundary_checks_is_caught(name: str, monkeypatch) -> None:
    """The variant that takes every chunk as independent of the rest (no ring, no test) at
    the full epsilon leaks more than it claims on every one of these surveys."""
    from attrpriv.release.ddp import mechanism as ddp
    from attrpriv.release.ddp.boundary import Boundary

    def no_ring(encoded, names, chunk, **_: object) -> Boundary:
        return Boundary(tuple(names[p] for p in chunk), (), True, 0, None, "")

    network, k = SPLIT[name]
    monkeypatch.setattr(ddp, "find_boundary", no_ring)
    scales = _released_scales(network, 1.0, "hc", chunk_size=k)
    assert max(exact_loss(network, node, scales) for node in network.nodes) > 1.05


def test_a_weak_link_between_chunks_is_screened_by_a_ring_not_merged() -> None:
    """The linked blocks stay two chunks, each with the other's end of the link as its ring,
    and neither is noisier than one chunk of all six (the first is quieter)."""
    network, k = SPLIT["linked-blocks"]
    rows = network.sample(20_000, np.random.default_rng(7))
    schema = Schema(tuple(Column(n, "feature", Integer(0, 1)) for n in network.nodes))
    mechanism = TabularDDP(1.0, k).fit(pd.DataFrame(rows), schema)
    assert mechanism.chunks_ == (("x0", "x1", "x2"), ("x3", "x4", "x5"))
    assert [b.ring for b in mechanism.boundaries_] == [("x3",), ("x2",)]
    assert all(b.confirmed for b in mechanism.boundaries_)
    one = _released_scales(network, 1.0, "hc", chunk_size=6)["x0"]
    scales = mechanism.calibrate().scales()
    assert scales["x0"] < one and max(scales.values()) <= one * (1 + 1e-9)
