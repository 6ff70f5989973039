"""Tabular-DDP dependence: pairwise coefficients, calibration, and audits (XOR, broken rho)."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import logsumexp

from attrpriv import Column, InputError, Integer, Schema
from attrpriv.dp import SeededNumpyNoise, audit
from attrpriv.release.ddp.bound import chunk_evidence
from attrpriv.release.ddp.dependence import (
    PairwiseDependence,
    calibrate,
    chunk_noise,
    dependent_sensitivity,
    pairwise_dependence,
)
from attrpriv.release.ddp.mechanism import TabularDDP
from attrpriv.release.graph.network import DiscreteNetwork

# -- networks with known dependence --------------------------------------------------------------


def bits(names: list[str]) -> Schema:
    return Schema(tuple(Column(n, "feature", Integer(0, 1)) for n in names))


def xor_network(pairs: int = 2, flip: float = 0.02) -> DiscreteNetwork:
    """X_i a fair bit; each pair X_j fair, X_l = X_i XOR X_j (flipped w.p. ``flip``).

    X_i is independent of every other column on its own, yet each pair reveals it.
    """
    xor = np.array([[[1 - flip, flip], [flip, 1 - flip]], [[flip, 1 - flip], [1 - flip, flip]]])
    states, parents, cpds = {"i": (0, 1)}, {}, {"i": np.array([0.5, 0.5])}
    for p in range(pairs):
        states |= {f"j{p}": (0, 1), f"l{p}": (0, 1)}
        cpds |= {f"j{p}": np.array([0.5, 0.5]), f"l{p}": xor}
        parents[f"l{p}"] = ("i", f"j{p}")
    return DiscreteNetwork(states, parents, cpds)


def star_network(leaves: int = 3, keep: float = 0.95) -> DiscreteNetwork:
    """X_i a fair bit copied (w.p. ``keep``) into every leaf: strongly dependent columns."""
    copy = np.array([[keep, 1 - keep], [1 - keep, keep]])
    states, parents, cpds = {"i": (0, 1)}, {}, {"i": np.array([0.5, 0.5])}
    for p in range(leaves):
        states[f"c{p}"], parents[f"c{p}"], cpds[f"c{p}"] = (0, 1), ("i",), copy
    return DiscreteNetwork(states, parents, cpds)


def random_network(seed: int, n_nodes: int = 4) -> DiscreteNetwork:
    rng = np.random.default_rng(seed)
    names = [f"v{k}" for k in range(n_nodes)]
    states = {n: tuple(range(int(rng.integers(2, 4)))) for n in names}
    parents, cpds = {}, {}
    for k, name in enumerate(names):
        chosen = rng.choice(k, size=min(k, int(rng.integers(0, 3))), replace=False)
        parents[name] = tuple(names[int(c)] for c in sorted(chosen))
        shape = (*(len(states[p]) for p in parents[name]), len(states[name]))
        cpds[name] = rng.dirichlet(np.ones(shape[-1]) * 0.7, size=shape[:-1])
    return DiscreteNetwork(states, parents, cpds)


# -- the dependence coefficients -----------------------------------------------------------------


def brute_leakage(network: DiscreteNetwork, i: str, j: str, scale: float) -> float:
    """sup over outputs of the loss about X_i of histogram j alone, straight from its definition:
    each bin's Laplace factor ranges over [e^{-1/scale}, e^{1/scale}] independently."""
    table = network.conditional([j], given=i)
    low, high = math.exp(-1 / scale), math.exp(1 / scale)
    best = 0.0
    for a, b in itertools.permutations(range(table.shape[0]), 2):
        for corner in itertools.product((low, high), repeat=table.shape[1]):
            g = np.array(corner)
            best = max(best, math.log(table[a] @ g / (table[b] @ g)))
    return best


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), scale=st.floats(0.3, 50.0))
def test_pairwise_loss_is_the_exact_supremum(seed: int, scale: float) -> None:
    network = random_network(seed)
    dependence = pairwise_dependence(network, dict.fromkeys(network.nodes, 2.0))
    loss = dependence.leakage(scale)
    rho = dependence.coefficients(scale)
    for (a, i), (b, j) in itertools.permutations(enumerate(network.nodes), 2):
        assert loss[a, b] == pytest.approx(brute_leakage(network, i, j, scale), abs=1e-9)
    assert ((rho >= 0) & (rho <= 1)).all() and np.allclose(np.diag(rho), 1.0)
    assert np.allclose(np.diag(loss), 2.0 / scale)


def test_coefficients_vanish_for_independent_columns_and_grow_with_dependence() -> None:
    weak, strong = star_network(2, keep=0.6), star_network(2, keep=0.99)
    loose = pairwise_dependence(weak, dict.fromkeys(weak.nodes, 2.0)).coefficients(5.0)
    tight = pairwise_dependence(strong, dict.fromkeys(strong.nodes, 2.0)).coefficients(5.0)
    assert 0 < loose[0, 1] < tight[0, 1] < 1
    assert loose[1, 2] < loose[0, 1]  # two leaves depend on each other only through the root
    xor = pairwise_dependence(xor_network(1, flip=0.0), dict.fromkeys(("i", "j0", "l0"), 2.0))
    assert np.allclose(xor.coefficients(3.0), np.eye(3))  # every pair is independent


def test_coefficients_tend_to_dobrushin_total_variation_under_heavy_noise() -> None:
    network = random_network(3)
    rho = pairwise_dependence(network, dict.fromkeys(network.nodes, 2.0)).coefficients(1e6)
    for (a, i), (b, j) in itertools.permutations(enumerate(network.nodes), 2):
        table = network.conditional([j], given=i)
        tv = max(
            0.5 * np.abs(table[x] - table[y]).sum()
            for x, y in itertools.permutations(range(table.shape[0]), 2)
        )
        assert rho[a, b] == pytest.approx(tv, abs=1e-5)


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 10_000), epsilon=st.floats(0.05, 5.0))
def test_calibration_finds_the_smallest_safe_scale(seed: int, epsilon: float) -> None:
    network = random_network(seed)
    sensitivity = dict.fromkeys(network.nodes, 2.0)
    dependence = pairwise_dependence(network, sensitivity)
    scale, rho = calibrate(dependence.coefficients, dependence.sensitivity, epsilon)
    ds = dependent_sensitivity(rho, dependence.sensitivity)
    assert ds <= scale * epsilon * (1 + 1e-12)
    assert 2.0 / epsilon <= scale * (1 + 1e-12) and scale <= 2.0 * len(network.nodes) / epsilon
    if scale > 2.0 / epsilon * (1 + 1e-9):  # not at the floor: a slightly smaller one fails
        smaller = scale * (1 - 1e-6)
        assert dependent_sensitivity(dependence.coefficients(smaller), dependence.sensitivity) > (
            smaller * epsilon
        )
    rows = network.sample(2000, np.random.default_rng(seed))
    codes = rows.loc[:, list(network.nodes)].to_numpy(np.int64)
    evidence = chunk_evidence(network, codes, [network.card(n) for n in network.nodes])
    quilt = chunk_noise(network, epsilon, method="quilt", evidence=evidence)
    assert 2.0 / epsilon <= quilt.scale * (1 + 1e-12)
    assert quilt.scale <= 2.0 * len(network.nodes) / epsilon * (1 + 1e-12)


def test_calibrate_refuses_coefficients_above_one() -> None:
    with pytest.raises(InputError, match=r"must lie in \[0, 1\]"):
        calibrate(lambda s: np.full((2, 2), 1.5), np.array([2.0, 2.0]), 1.0)


# -- audits: sample the respondent's answers from the network given the secret ------------------


class Respondent:
    """Outputs of a chunk's mechanism when one respondent's X_i is a vs b.

    The other respondents are fixed (5 in every bin); the respondent's other answers are drawn
    from ``network`` given X_i; each histogram gets discrete Laplace noise at ``scale``.
    ``log_ratio`` is the exact log-likelihood ratio of an output under the two secrets (the
    best statistic an adversary who knows the network has).
    """

    def __init__(self, network: DiscreteNetwork, scale: float, secret: str = "i") -> None:
        self.others = [n for n in network.nodes if n != secret]
        self.cards = [network.card(n) for n in (secret, *self.others)]
        table = network.conditional(self.others, given=secret)
        self.conditional = table.reshape(table.shape[0], -1)
        self.combos = np.array(list(itertools.product(*(range(c) for c in self.cards[1:]))))
        self.scale = scale
        self.rng, self.noise = np.random.default_rng(0), SeededNumpyNoise(0)

    def sample(self, value: int) -> Callable[[int], np.ndarray]:
        def draw(n: int) -> np.ndarray:
            pick = self.rng.choice(len(self.combos), size=n, p=self.conditional[value])
            states = np.column_stack([np.full(n, value), self.combos[pick]])
            blocks = []
            for column, card in enumerate(self.cards):
                counts = np.full((n, card), 5, dtype=np.int64)
                counts[np.arange(n), states[:, column]] += 1
                blocks.append(self.noise.discrete_laplace(counts, self.scale))
            return np.hstack(blocks)

        return draw

    def log_ratio(self, outputs: np.ndarray) -> np.ndarray:
        costs, start = [], 0
        for card in self.cards:
            block = outputs[:, start : start + card] - 5
            start += card
            costs.append(-np.abs(block[:, None, :] - np.eye(card)).sum(axis=-1) / self.scale)
        rest = sum(costs[1 + k][:, self.combos[:, k]] for k in range(len(self.others)))
        log_a = costs[0][:, 0] + logsumexp(rest + np.log(self.conditional[0]), axis=1)
        log_b = costs[0][:, 1] + logsumexp(rest + np.log(self.conditional[1]), axis=1)
        return np.asarray(log_a - log_b)


def audited_epsilon(network: DiscreteNetwork, scale: float) -> float:
    respondent = Respondent(network, scale)
    result = audit(
        respondent.sample(0),
        respondent.sample(1),
        100_000,
        statistic=respondent.log_ratio,
        confidence=0.99,
    )
    return result.epsilon_lower


def fitted_scale(mechanism: TabularDDP, network: DiscreteNetwork, rows: int = 20_000) -> float:
    """Fit the mechanism on a sample of the network (one chunk) and return its noise scale."""
    sample = network.sample(rows, np.random.default_rng(11))
    mechanism.fit(sample, bits(list(network.nodes)))
    (chunk,) = mechanism.calibrate().chunks
    return chunk.scale


def test_audit_xor_the_default_holds_and_pairwise_leaks() -> None:
    network = xor_network(pairs=1)
    sound = fitted_scale(TabularDDP(2.0, 3, structure="exact"), network)
    pairwise = fitted_scale(TabularDDP(2.0, 3, structure="exact", method="pairwise"), network)
    assert pairwise < 1.1 < 1.9 < sound  # pairwise sees no dependence at all
    assert audited_epsilon(network, sound) < 2.0
    assert audited_epsilon(network, pairwise) > 2.0  # the pairwise claim is broken by XOR


def test_hill_climbing_misses_xor_yet_the_default_stays_sound() -> None:
    """Greedy search never adds an edge that alone gains nothing, so it learns no edge on XOR;
    the independence checks reject what that empty network claims, and the noise covers it."""
    mechanism = TabularDDP(2.0, 3, structure="hc")
    sound = fitted_scale(mechanism, xor_network(pairs=1))
    assert all(not parents for parents in mechanism.networks_[0].parents.values())
    assert mechanism.evidence_[0].rejected > 0
    assert sound > 1.9  # the unchecked quilt bound gave 1.0 here
    assert audited_epsilon(xor_network(pairs=1), sound) < 2.0


class _IndependentTabularDDP(TabularDDP):
    """Broken on purpose: every dependence coefficient forced to 0 (columns as if independent)."""

    def coefficients(self, dependence: PairwiseDependence, scale: float) -> np.ndarray:
        return np.eye(len(dependence.columns))


def test_audit_strong_dependence_pairwise_holds_and_the_broken_variant_is_caught() -> None:
    network = star_network(leaves=3, keep=0.95)
    pairwise = fitted_scale(TabularDDP(1.0, 4, method="pairwise"), network)
    broken = fitted_scale(_IndependentTabularDDP(1.0, 4, method="pairwise"), network)
    assert broken == pytest.approx(2.0) and pairwise > 6.0
    assert audited_epsilon(network, pairwise) < 1.0  # sound here: leaves independent given X_i
    assert audited_epsilon(network, broken) > 1.0
