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

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attrpriv import Column, Integer, Schema
from attrpriv.release.ddp.bound import chunk_evidence, uniform_scale
from attrpriv.release.ddp.mechanism import TabularDDP
from attrpriv.release.graph.network import DiscreteNetwork


def exact_loss(network: DiscreteNetwork, node: str, scale: float) -> float:
    """sup over outputs and secret pairs of the log-likelihood ratio about ``node``."""
    nodes = network.nodes
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
            weighted = weighted * np.exp(np.array(sign) / scale).reshape(shape)
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


def _released_scale(network: DiscreteNetwork, epsilon: float, structure: str) -> float:
    """The scale the default TabularDDP releases with, learning from 20,000 sampled rows."""
    rows = network.sample(20_000, np.random.default_rng(7))
    schema = Schema(
        tuple(Column(n, "feature", Integer(0, network.card(n) - 1)) for n in network.nodes)
    )
    mechanism = TabularDDP(epsilon, len(network.nodes), structure=structure)
    (chunk,) = mechanism.fit(pd.DataFrame(rows), schema).calibrate().chunks
    return chunk.scale


@pytest.mark.parametrize("structure", ["hc", "chow-liu"])
@pytest.mark.parametrize("name", NETWORKS)
def test_the_default_release_loses_at_most_epsilon_exactly(name: str, structure: str) -> None:
    """Learned structures miss XOR and parity (every pair or triple is independent) and trees
    miss more; the checked bound stays under epsilon whatever was learned."""
    network, epsilon = NETWORKS[name], 1.0
    scale = _released_scale(network, epsilon, structure)
    worst = max(exact_loss(network, node, scale) for node in network.nodes)
    assert worst <= epsilon + 1e-9  # the bisection stops within 1e-9 of the bound
    assert scale <= 2.0 * len(network.nodes) / epsilon * (1 + 1e-9)  # never above Laplace


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
    scale = _released_scale(chain(0.7), 1.0, "hc")
    assert scale < 0.8 * 8.0
