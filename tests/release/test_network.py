"""DiscreteNetwork and Markov quilts: exact inference, d-separation, max-influence, quilt search."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attrpriv import InputError
from attrpriv.release.graph.network import DiscreteNetwork
from attrpriv.release.graph.quilts import (
    Quilt,
    best_quilt,
    candidate_quilts,
    max_influence,
    max_log_ratio,
    quilt_scale,
)


def random_network(seed: int, n_nodes: int = 5, max_parents: int = 2) -> DiscreteNetwork:
    """A random DAG (edges from earlier to later nodes) with random cards and CPDs."""
    rng = np.random.default_rng(seed)
    names = [f"v{k}" for k in range(n_nodes)]
    states = {n: tuple(range(int(rng.integers(2, 4)))) for n in names}
    parents: dict[str, tuple[str, ...]] = {}
    cpds = {}
    for k, name in enumerate(names):
        chosen = rng.choice(k, size=min(k, int(rng.integers(0, max_parents + 1))), replace=False)
        parents[name] = tuple(names[int(c)] for c in sorted(chosen))
        shape = (*(len(states[p]) for p in parents[name]), len(states[name]))
        cpds[name] = rng.dirichlet(np.ones(shape[-1]) * 0.7, size=shape[:-1])
    return DiscreteNetwork(states, parents, cpds)


def full_joint(network: DiscreteNetwork) -> np.ndarray:
    """Brute force: the product of all CPDs over every assignment, axes in ``network.nodes``."""
    nodes = network.nodes
    joint = np.zeros(tuple(network.card(n) for n in nodes))
    for assignment in itertools.product(*(range(network.card(n)) for n in nodes)):
        value = dict(zip(nodes, assignment, strict=True))
        joint[assignment] = math.prod(
            network.cpds[n][(*(value[p] for p in network.parents[n]), value[n])] for n in nodes
        )
    return joint


def brute_marginal(network: DiscreteNetwork, variables: list[str]) -> np.ndarray:
    joint = full_joint(network)
    nodes = list(network.nodes)
    summed = joint.sum(axis=tuple(i for i, n in enumerate(nodes) if n not in variables))
    kept = [n for n in nodes if n in variables]
    return np.transpose(summed, [kept.index(v) for v in variables])


def brute_influence(network: DiscreteNetwork, quilt: list[str], node: str) -> float:
    """max over state pairs and quilt values of the log ratio, straight from the definition."""
    joint = brute_marginal(network, [node, *quilt]).reshape(network.card(node), -1)
    best = 0.0
    for a, b in itertools.permutations(range(joint.shape[0]), 2):
        pa, pb = joint[a].sum(), joint[b].sum()
        if pa == 0 or pb == 0:
            continue
        for x in range(joint.shape[1]):
            ca, cb = joint[a, x] / pa, joint[b, x] / pb
            if ca > 0:
                best = max(best, math.inf if cb == 0 else math.log(ca / cb))
    return best


def xor_network() -> DiscreteNetwork:
    """X_l = X_i XOR X_j with X_i, X_j independent fair bits."""
    table = np.zeros((2, 2, 2))
    for a, b in itertools.product(range(2), repeat=2):
        table[a, b, a ^ b] = 1.0
    fair = [0.5, 0.5]
    return DiscreteNetwork(
        {"i": (0, 1), "j": (0, 1), "l": (0, 1)},
        {"l": ("i", "j")},
        {"i": fair, "j": fair, "l": table},
    )


def chain(p: float, length: int = 3) -> DiscreteNetwork:
    names = [f"x{t}" for t in range(length)]
    flip = np.array([[p, 1 - p], [1 - p, p]])
    cpds = {names[0]: np.array([0.5, 0.5]), **{n: flip for n in names[1:]}}
    parents = {names[t]: (names[t - 1],) for t in range(1, length)}
    return DiscreteNetwork(dict.fromkeys(names, (0, 1)), parents, cpds)


@pytest.mark.parametrize("seed", range(6))
def test_marginals_match_brute_force_enumeration(seed: int) -> None:
    network = random_network(seed)
    for size in (1, 2, 3):
        for variables in itertools.combinations(reversed(network.nodes), size):
            np.testing.assert_allclose(
                network.marginal(list(variables)),
                brute_marginal(network, list(variables)),
                atol=1e-12,
            )


@pytest.mark.parametrize("seed", range(6))
def test_max_influence_matches_brute_force_for_every_quilt(seed: int) -> None:
    network = random_network(seed, n_nodes=4)
    for node in network.nodes:
        others = [n for n in network.nodes if n != node]
        for size in range(len(others) + 1):
            for quilt in itertools.combinations(others, size):
                expected = brute_influence(network, list(quilt), node)
                got = max_influence(network, quilt, node)
                assert got == pytest.approx(expected, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_nodes_outside_nearby_are_independent_of_the_node_given_the_quilt(seed: int) -> None:
    network = random_network(seed)
    nodes = list(network.nodes)
    node = nodes[2]
    for size in range(3):
        for quilt in itertools.combinations([n for n in nodes if n != node], size):
            rest = [n for n in nodes if n not in network.separates(quilt, node) and n not in quilt]
            if not rest:
                continue
            joint = network.marginal([node, *quilt, *rest])
            k, q = network.card(node), math.prod(network.card(n) for n in quilt)
            joint = joint.reshape(k, q, -1)
            p_q = joint.sum(axis=(0, 2), keepdims=True)
            with np.errstate(invalid="ignore"):
                factorised = (
                    joint.sum(axis=2, keepdims=True) * joint.sum(axis=0, keepdims=True) / p_q
                )
            np.testing.assert_allclose(np.nan_to_num(factorised), joint, atol=1e-12)


def test_d_separation_on_a_chain() -> None:
    network = chain(0.9)
    assert network.separates([], "x0") == ("x0", "x1", "x2")
    assert network.separates(["x1"], "x0") == ("x0",)
    assert network.separates(["x0", "x2"], "x1") == ("x1",)


def test_d_separation_on_a_collider_and_its_descendant() -> None:
    rng = np.random.default_rng(0)
    network = DiscreteNetwork(
        {"a": (0, 1), "b": (0, 1), "c": (0, 1), "d": (0, 1)},
        {"c": ("a", "b"), "d": ("c",)},
        {
            "a": [0.5, 0.5],
            "b": [0.3, 0.7],
            "c": rng.dirichlet([1, 1], size=(2, 2)),
            "d": rng.dirichlet([1, 1], size=2),
        },
    )
    assert network.separates([], "a") == ("a", "c", "d")  # b is independent of a
    assert network.separates(["c"], "a") == ("a", "b")  # observing the collider opens a - b
    assert set(network.separates(["d"], "a")) == {"a", "b", "c"}  # so does its descendant


def test_xor_quilts_single_nodes_tell_nothing_but_together_everything() -> None:
    network = xor_network()
    assert max_influence(network, ["j"], "i") == 0.0
    assert max_influence(network, ["l"], "i") == 0.0
    assert max_influence(network, ["j", "l"], "i") == math.inf
    sensitivity = {"i": 1.0, "j": 1.0, "l": 1.0}
    chosen = best_quilt(network, "i", 1.0, sensitivity)
    # {j, l} would leave N = {i} (scale 1) but is infeasible; the best valid ones have |N| = 2.
    assert chosen.scale == pytest.approx(2.0)
    assert chosen.quilt != ("j", "l") and len(chosen.nearby) == 2
    assert {("j", "l")} <= {tuple(sorted(q)) for q in candidate_quilts(network, "i")}


def test_independent_nodes_need_only_their_own_sensitivity() -> None:
    network = chain(0.5, length=4)  # p = 0.5: the "chain" is i.i.d. fair bits
    sigma, quilts = quilt_scale(network, 0.5, dict.fromkeys(network.nodes, 2.0))
    assert sigma == pytest.approx(2.0 / 0.5)
    assert all(len(q.nearby) == 1 for q in quilts.values())


def test_trivial_quilt_gives_group_privacy_noise() -> None:
    network = chain(
        1.0, length=4
    )  # deterministic copies: every proper quilt has infinite influence
    sigma, quilts = quilt_scale(network, 1.0, dict.fromkeys(network.nodes, 2.0))
    assert sigma == pytest.approx(4 * 2.0 / 1.0)
    assert all(q.quilt == () and len(q.nearby) == 4 for q in quilts.values())


def test_noise_grows_with_correlation() -> None:
    scales = [
        quilt_scale(chain(p, 5), 1.0, dict.fromkeys(chain(p, 5).nodes, 1.0))[0]
        for p in (0.5, 0.6, 0.7, 0.8, 0.9, 0.99)
    ]
    assert scales == sorted(scales) and scales[-1] > scales[0]


def test_infeasible_quilts_are_skipped() -> None:
    network = chain(0.9, 3)  # e({x0, x2} | x1) = 2 log 9: infeasible at epsilon = 1
    assert max_influence(network, ["x0", "x2"], "x1") > 1.0
    chosen = best_quilt(network, "x1", 1.0, dict.fromkeys(network.nodes, 1.0))
    assert chosen.influence < 1.0 and chosen.quilt == ()
    assert chosen.scale == pytest.approx(3.0)


def test_sensitivity_weights_only_the_nearby_nodes() -> None:
    network = chain(0.5, 3)
    chosen = best_quilt(network, "x1", 1.0, {"x0": 5.0, "x1": 0.0, "x2": 5.0})
    assert chosen.scale == 0.0  # independent neighbours, F does not depend on x1


def test_conditional_rows_and_zero_probability_states() -> None:
    network = DiscreteNetwork(
        {"a": ("u", "v", "w"), "b": (0, 1)},
        {"b": ("a",)},
        {"a": [0.5, 0.5, 0.0], "b": [[0.9, 0.1], [0.2, 0.8], [0.5, 0.5]]},
    )
    with pytest.raises(InputError, match="state 'w' of 'a' has probability 0"):
        network.conditional(["b"], "a")
    table = network.conditional(["b"], "a", zero="nan")
    np.testing.assert_allclose(table[:2], [[0.9, 0.1], [0.2, 0.8]])
    assert np.isnan(table[2]).all()
    # the impossible state is not a secret: the influence is over u vs v only
    assert max_influence(network, ["b"], "a") == pytest.approx(math.log(0.8 / 0.1))


def test_sample_frequencies_match_the_marginals() -> None:
    network = random_network(3)
    frame = network.sample(40_000, np.random.default_rng(1))
    assert list(frame.columns) == list(network.nodes)
    for node in network.nodes:
        freq = frame[node].value_counts(normalize=True).reindex(network.states[node], fill_value=0)
        p = network.marginal([node])
        assert np.abs(freq.to_numpy() - p).max() < 4 * math.sqrt(0.25 / 40_000) + 1e-3


def test_from_pgmpy_matches_pgmpy_inference() -> None:
    from pgmpy.factors.discrete import TabularCPD
    from pgmpy.inference import VariableElimination
    from pgmpy.models import DiscreteBayesianNetwork

    model = DiscreteBayesianNetwork(
        [("smoke", "cancer"), ("pollution", "cancer"), ("cancer", "xray")]
    )
    model.add_cpds(
        TabularCPD("smoke", 2, [[0.7], [0.3]], state_names={"smoke": ["no", "yes"]}),
        TabularCPD("pollution", 2, [[0.9], [0.1]], state_names={"pollution": ["low", "high"]}),
        TabularCPD(
            "cancer",
            2,
            [[0.999, 0.97, 0.98, 0.95], [0.001, 0.03, 0.02, 0.05]],
            evidence=["smoke", "pollution"],
            evidence_card=[2, 2],
            state_names={
                "cancer": ["no", "yes"],
                "smoke": ["no", "yes"],
                "pollution": ["low", "high"],
            },
        ),
        TabularCPD(
            "xray",
            2,
            [[0.8, 0.1], [0.2, 0.9]],
            evidence=["cancer"],
            evidence_card=[2],
            state_names={"xray": ["neg", "pos"], "cancer": ["no", "yes"]},
        ),
    )
    network = DiscreteNetwork.from_pgmpy(model)
    assert network.states["xray"] == ("neg", "pos") and network.parents["cancer"] == (
        "smoke",
        "pollution",
    )
    expected = VariableElimination(model).query(["xray", "smoke"], joint=True, show_progress=False)
    order = [expected.variables.index(v) for v in ("xray", "smoke")]
    np.testing.assert_allclose(
        network.marginal(["xray", "smoke"]), np.transpose(expected.values, order)
    )


@pytest.mark.parametrize(
    ("states", "parents", "cpds", "message"),
    [
        ({"a": (0, 1)}, {}, {"a": [0.5, 0.6]}, "node 'a': CPD rows must sum to 1"),
        (
            {"a": (0, 1)},
            {},
            {"a": [[0.5, 0.5]]},
            r"node 'a': CPD has shape \(1, 2\), expected \(2,\)",
        ),
        ({"a": (0, 1)}, {}, {}, "node 'a' has no CPD"),
        ({"a": (0, 0)}, {}, {"a": [0.5, 0.5]}, "node 'a': states must be distinct"),
        ({"a": (0, 1)}, {"a": ("z",)}, {"a": [0.5, 0.5]}, "node 'a': parent 'z' is invalid"),
        ({"a": (0, 1)}, {}, {"a": [1.5, -0.5]}, "node 'a': CPD entries must be finite"),
        (
            {"a": (0, 1), "b": (0, 1)},
            {"a": ("b",), "b": ("a",)},
            {"a": [[0.5, 0.5]] * 2, "b": [[0.5, 0.5]] * 2},
            "directed cycle",
        ),
    ],
)
def test_bad_networks_name_the_node(states, parents, cpds, message: str) -> None:
    with pytest.raises(InputError, match=message):
        DiscreteNetwork(states, parents, cpds)


def test_bad_queries_are_input_errors() -> None:
    network = chain(0.8)
    with pytest.raises(InputError, match="unknown network node 'y'"):
        network.marginal(["y"])
    with pytest.raises(InputError, match="repeated nodes"):
        network.marginal(["x0", "x0"])
    with pytest.raises(InputError, match="cannot be in its own quilt"):
        max_influence(network, ["x1"], "x1")
    with pytest.raises(InputError, match="sensitivity has no entry for node 'x2'"):
        best_quilt(network, "x1", 1.0, {"x0": 1.0, "x1": 1.0})
    with pytest.raises(InputError, match=r"sensitivity\['x0'\] must be >= 0"):
        best_quilt(network, "x1", 1.0, {"x0": -1.0, "x1": 1.0, "x2": 1.0})
    with pytest.raises(InputError, match="max_quilt_size must be an integer >= 1"):
        best_quilt(network, "x1", 1.0, dict.fromkeys(network.nodes, 1.0), max_quilt_size=0)


@settings(max_examples=40, deadline=None)
@given(epsilon=st.one_of(st.floats(max_value=0.0), st.just(math.inf), st.just(math.nan)))
def test_best_quilt_refuses_non_positive_or_non_finite_epsilon(epsilon: float) -> None:
    network = chain(0.8)
    with pytest.raises(InputError, match="epsilon must be"):
        best_quilt(network, "x1", epsilon, dict.fromkeys(network.nodes, 1.0))


@settings(max_examples=60, deadline=None)
@given(
    rows=st.lists(
        st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=3, max_size=3).filter(
            lambda r: sum(r) > 0.01
        ),
        min_size=2,
        max_size=4,
    )
)
def test_max_log_ratio_is_nonnegative_with_a_zero_diagonal(rows: list[list[float]]) -> None:
    table = np.array(rows) / np.array(rows).sum(axis=1, keepdims=True)
    ratios = max_log_ratio(table)
    assert (ratios >= 0).all() and (np.diag(ratios) == 0).all()


def test_quilt_to_dict_is_json_ready() -> None:
    quilt = Quilt("x1", ("x0",), ("x1", "x2"), 0.25, 3.0)
    assert quilt.to_dict() == {
        "node": "x1",
        "quilt": ["x0"],
        "nearby": ["x1", "x2"],
        "influence": 0.25,
        "scale": 3.0,
    }
