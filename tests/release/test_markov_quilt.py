"""Markov quilt mechanism: chain quilts (exact, approx), attribute version, audits, records, CLI."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import attrpriv.cli.release_quilt  # noqa: F401 - registers `attrpriv release quilt`
from attrpriv import Categorical, Column, InputError, Schema
from attrpriv.cli import main
from attrpriv.data import datasets
from attrpriv.dp import BudgetLedger, NoiseSampler, OpenDPNoise, SeededNumpyNoise, audit
from attrpriv.errors import BudgetExceededError
from attrpriv.release.graph.network import DiscreteNetwork
from attrpriv.release.graph.quilts import Quilt, max_influence
from attrpriv.release.markov_quilt import AttributeMarkovQuilt, MarkovQuiltMechanism
from attrpriv.release.markov_quilt.attribute_mechanism import AttributePlan, QuiltFacts
from attrpriv.release.markov_quilt.chain_calibration import (
    ChainCalibration,
    ChainQuilt,
    calibrate_chain,
)
from attrpriv.release.markov_quilt.chain_mechanism import ChainLengths, ChainPlan
from attrpriv.release.markov_quilt.chain_model import (
    MarkovChainModel,
    approx_influence,
    mixing_constants,
    stationary_distribution,
)


def flip(p: float) -> np.ndarray:
    return np.array([[p, 1 - p], [1 - p, p]])


def random_chain(seed: int, k: int = 3, stationary: bool = False) -> MarkovChainModel:
    rng = np.random.default_rng(seed)
    transition = rng.dirichlet(np.ones(k) * 2, size=k)
    if stationary:
        return MarkovChainModel.stationary(transition)
    return MarkovChainModel(rng.dirichlet(np.ones(k)), transition)


def brute_force_scales(model: MarkovChainModel, length: int, eps: float, lip: float) -> list[float]:
    """Every chain quilt of every node, influence from the chain's Bayesian network."""
    network = model.to_network(length)
    scales = []
    for i in range(length):
        best = math.inf
        for a in [None, *range(1, i + 1)]:
            for b in [None, *range(1, length - i)]:
                quilt = ([f"X{i - a}"] if a else []) + ([f"X{i + b}"] if b else [])
                influence = max_influence(network, quilt, f"X{i}")
                size = (length if b is None else i + b) - (0 if a is None else i - a + 1)
                if influence < eps:
                    best = min(best, lip * size / (eps - influence))
        scales.append(best)
    return scales


# --- chain quilts: exact search against brute force, approx against exact ----------------------


@pytest.mark.parametrize("stationary", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_exact_search_matches_brute_force_over_the_chain_network(
    seed: int, stationary: bool
) -> None:
    model = random_chain(seed, stationary=stationary)
    calibration = calibrate_chain([model], 7, 1.5, 2.0)
    expected = brute_force_scales(model, 7, 1.5, 2.0)
    np.testing.assert_allclose([q.scale for q in calibration.quilts], expected, rtol=1e-9)
    network = model.to_network(7)
    for q in calibration.quilts:  # the reported influence is the network's max-influence
        names = [f"X{j}" for j in (q.left, q.right) if j is not None]
        assert q.influence == pytest.approx(max_influence(network, names, f"X{q.node}"), abs=1e-9)


@pytest.mark.parametrize("length", [1, 5, 40, 300])
@pytest.mark.parametrize("seed", range(4))
def test_approx_noise_is_never_below_exact(seed: int, length: int) -> None:
    model = random_chain(seed, stationary=seed % 2 == 0)
    exact = calibrate_chain([model], length, 1.0, 2.0, method="exact")
    approx = calibrate_chain([model], length, 1.0, 2.0, method="approx")
    for e, a in zip(exact.quilts, approx.quilts, strict=True):
        assert a.scale >= e.scale * (1 - 1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_approx_bound_dominates_the_exact_forward_and_backward_influence(seed: int) -> None:
    model = random_chain(seed, k=4)
    pi_min, s = mixing_constants([model])
    network = model.to_network(30)
    for t in (1, 3, 6, 10):
        bound = float(approx_influence(np.array([t]), pi_min, s)[0])
        assert max_influence(network, [f"X{15 + t}"], "X15") <= bound + 1e-12
        assert max_influence(network, [f"X{15 - t}"], "X15") <= 2 * bound + 1e-12


def test_mixing_constants_of_a_two_state_chain() -> None:
    model = MarkovChainModel.stationary([[0.9, 0.1], [0.2, 0.8]])
    pi_min, s = mixing_constants([model])
    assert pi_min == pytest.approx(1 / 3)
    assert s == pytest.approx(0.7)  # reversible: s = |second eigenvalue| = 1 - 0.1 - 0.2
    np.testing.assert_allclose(stationary_distribution(model.transition), [2 / 3, 1 / 3])


# --- the invariants of the issue ---------------------------------------------------------------


@pytest.mark.parametrize("method", ["exact", "approx"])
def test_an_independent_chain_needs_only_the_dp_noise(method: str) -> None:
    model = MarkovChainModel.stationary([[0.3, 0.7], [0.3, 0.7]])  # rows equal: i.i.d. states
    calibration = calibrate_chain([model], 50, 0.5, 2.0, method=method)
    assert calibration.sigma_max == pytest.approx(2.0 / 0.5)
    assert all(q.nearby[1] - q.nearby[0] == 1 for q in calibration.quilts)


def test_the_trivial_quilt_gives_the_group_dp_noise() -> None:
    model = MarkovChainModel([0.5, 0.5], np.eye(2))  # a constant chain: one state tells all
    calibration = calibrate_chain([model], 12, 1.0, 2.0)
    assert calibration.sigma_max == pytest.approx(12 * 2.0 / 1.0)
    assert all(q.left is None and q.right is None for q in calibration.quilts)


@pytest.mark.parametrize("method", ["exact", "approx"])
def test_noise_grows_with_the_strength_of_correlation(method: str) -> None:
    ps = (0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99)
    scales = [
        calibrate_chain(
            [MarkovChainModel.stationary(flip(p))], 200, 1.0, 2.0, method=method
        ).sigma_max
        for p in ps
    ]
    assert scales == sorted(scales) and scales[-1] > 5 * scales[0]


def test_infeasible_quilts_are_skipped() -> None:
    model = MarkovChainModel.stationary(flip(0.99))
    calibration = calibrate_chain([model], 30, 0.2, 2.0)
    # the neighbours' influence is log(99) >> 0.2; every chosen quilt is below epsilon
    assert all(q.influence < 0.2 for q in calibration.quilts)
    assert calibration.sigma_max == pytest.approx(30 * 2.0 / 0.2)  # nothing else is feasible


def test_a_class_of_chains_takes_the_worst_case() -> None:
    weak, strong = MarkovChainModel.stationary(flip(0.6)), MarkovChainModel.stationary(flip(0.9))
    both = calibrate_chain([weak, strong], 100, 1.0, 2.0)
    assert both.sigma_max == pytest.approx(calibrate_chain([strong], 100, 1.0, 2.0).sigma_max)
    assert both.worst.model == 1


def test_long_chains_are_calibrated_quickly_and_identically_in_the_middle() -> None:
    model = MarkovChainModel.stationary(flip(0.9))
    short, long = (calibrate_chain([model], n, 1.0, 2.0) for n in (200, 20_000))
    assert long.sigma_max == pytest.approx(short.sigma_max)
    start, stop = short.quilts[100].nearby
    assert long.quilts[10_000].nearby == (start + 9_900, stop + 9_900)
    assert long.quilts[10_000].scale == short.quilts[100].scale


# --- audits ----------------------------------------------------------------------------------

CHAIN = MarkovChainModel.stationary(flip(0.8))
LENGTH, NODE, EPSILON = 10, 4, 2.0


class _InfluenceBlind(MarkovQuiltMechanism):
    """Broken on purpose: takes the neighbours as a quilt that tells nothing (influence 0)."""

    def _calibrate(self, public: ChainLengths, sampler: NoiseSampler) -> ChainPlan:
        (length,) = public.lengths
        lip = 2.0  # the histogram's Lipschitz constant
        scale = lip / self.epsilon
        quilts = tuple(
            ChainQuilt(
                i, i - 1 if i else None, i + 1 if i < length - 1 else None, 0.0, scale, length
            )
            for i in range(length)
        )
        found = (ChainCalibration("exact", length, self.epsilon, lip, quilts),)
        return ChainPlan(self.epsilon, 0.0, sampler, lip, scale, found, "broken")


def _chains_with(state: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """n chains of the model conditioned on X_NODE = state (rejection sampling)."""
    chains = CHAIN.sample(3 * n, LENGTH, rng)
    chosen = chains[chains[:, NODE] == state]
    assert chosen.shape[0] >= n
    return chosen[:n]


def _audit_chain(mechanism: MarkovQuiltMechanism) -> float:
    """Audit the mechanism's noise, as calibrated, on chains under X_i = 0 vs X_i = 1."""
    scale = mechanism.calibrate(ChainLengths(LENGTH)).sigma_max
    sampler, rng = OpenDPNoise(), np.random.default_rng(5)

    def sample_for(state: int):
        def draw(n: int) -> np.ndarray:
            chains = _chains_with(state, n, rng)
            counts = np.stack([(chains == s).sum(axis=1) for s in range(2)], axis=1)
            return sampler.discrete_laplace(counts, scale)

        return draw

    return audit(sample_for(0), sample_for(1), 50_000, confidence=0.999).epsilon_lower


def test_chain_audit_stays_under_epsilon() -> None:
    mechanism = MarkovQuiltMechanism(CHAIN, EPSILON)
    (calibration,) = mechanism.calibrate(ChainLengths(LENGTH)).calibrations
    assert calibration.quilts[NODE].left is not None  # a real quilt is used
    assert _audit_chain(mechanism) < EPSILON


def test_chain_audit_catches_the_influence_blind_variant() -> None:
    assert _audit_chain(_InfluenceBlind(CHAIN, EPSILON)) > EPSILON


def _path_network() -> DiscreteNetwork:
    """A -> B -> C -> D -> E, binary; A is protected, B..E are released."""
    names = ["A", "B", "C", "D", "E"]
    cpds = {"A": [0.5, 0.5], "B": flip(0.95), "C": flip(0.85), "D": flip(0.85), "E": flip(0.85)}
    parents = {names[k]: (names[k - 1],) for k in range(1, 5)}
    return DiscreteNetwork(dict.fromkeys(names, (0, 1)), parents, cpds)


class _InfluenceBlindAttribute(AttributeMarkovQuilt):
    """Broken on purpose: picks quilts by their nearby sensitivity alone (influence ignored)."""

    def _calibrate(self, public: QuiltFacts, sampler: NoiseSampler) -> AttributePlan:
        network = self.networks
        assert isinstance(network, DiscreteNetwork) and self.columns is not None
        sensitivity = {n: 2.0 if n in self.columns else 0.0 for n in network.nodes}
        quilt = Quilt("A", ("B",), network.separates(["B"], "A"), 0.0, 0.0)
        return AttributePlan(
            self.epsilon, 0.0, sampler, 0.0, sensitivity, {"A": quilt}, {"A": 0}, ("A",)
        )


def _audit_attribute(mechanism: AttributeMarkovQuilt) -> float:
    network = _path_network()
    scale = mechanism.calibrate().sigma_max
    sampler, rng = OpenDPNoise(), np.random.default_rng(11)

    def sample_for(value: int):
        def draw(n: int) -> np.ndarray:
            records = network.sample(3 * n, rng)
            records = records[records["A"] == value].iloc[:n]
            onehot = np.concatenate([np.eye(2)[records[c].to_numpy()] for c in "BCDE"], axis=1)
            return sampler.discrete_laplace(onehot.astype(np.int64), scale)

        return draw

    return audit(sample_for(0), sample_for(1), 20_000, confidence=0.999).epsilon_lower


def test_attribute_audit_stays_under_epsilon() -> None:
    mechanism = AttributeMarkovQuilt(_path_network(), 2.0, "A", list("BCDE"))
    chosen = mechanism.calibrate().quilts["A"]
    assert chosen.quilt == ("D",) and chosen.nearby == ("A", "B", "C")  # a real quilt is used
    assert _audit_attribute(mechanism) < 2.0


def test_attribute_audit_catches_the_influence_blind_variant() -> None:
    assert _audit_attribute(_InfluenceBlindAttribute(_path_network(), 2.0, "A", list("BCDE"))) > 2.0


# --- releases, records, ledger ---------------------------------------------------------------


def test_chain_release_is_histogram_plus_noise_of_the_recorded_scale() -> None:
    sequence = [0, 1, 1, 0, 0, 0, 1, 1, 1, 1]
    mechanism = MarkovQuiltMechanism(
        CHAIN, 2.0, states=("rest", "walk"), sampler=SeededNumpyNoise(3), allow_nonprivate=True
    )
    labelled = ["rest" if s == 0 else "walk" for s in sequence]
    result = mechanism.release(labelled)
    scale = mechanism.calibrate(ChainLengths(10)).sigma_max
    expected = SeededNumpyNoise(3).discrete_laplace(np.array([4, 6]), scale)
    np.testing.assert_array_equal(result.values.to_numpy(), expected)
    assert list(result.values.index) == ["rest", "walk"]
    record = result.record
    assert record.definition == "pufferfish" and record.mechanism == "markov-quilt-exact"
    assert record.sensitivity == 2.0 and record.noise["scale"] == pytest.approx(scale)
    assert (
        "X_i=a vs X_i=b" in record.protects and "noise sampler is not private" in record.assumptions
    )
    assert result.diagnostics.sigma_max == pytest.approx(scale)
    assert len(result.diagnostics.calibrations[0].quilts) == 10
    diagnostics = json.loads(json.dumps(result.to_dict()))["diagnostics"]
    assert diagnostics["lengths"] == [10] and len(diagnostics["calibrations"][0]["quilts"]) == 10
    (line,) = result.diagnostics.summary_lines()
    assert line.startswith(f"Laplace scale {scale:.4g} (quilt [") and "nearby nodes" in line


def test_sum_query_and_chains_of_several_lengths() -> None:
    mechanism = MarkovQuiltMechanism(
        CHAIN,
        1.0,
        states=(0.0, 3.0),
        query="sum",
        sampler=SeededNumpyNoise(1),
        allow_nonprivate=True,
    )
    chains = [np.array([0.0, 3.0, 3.0]), np.array([3.0] * 40)]
    result = mechanism.release(chains)
    assert result.record.sensitivity == 3.0
    scales = [calibrate_chain([CHAIN], n, 1.0, 3.0).sigma_max for n in (3, 40)]
    assert result.diagnostics.sigma_max == pytest.approx(max(scales))
    assert result.diagnostics.lengths == [3, 40]
    expected = SeededNumpyNoise(1).laplace(np.array([126.0]), max(scales))[0]
    assert result.values == pytest.approx(expected)


def test_ledger_is_charged_before_noise_and_refuses_overspend(tmp_path) -> None:
    ledger = BudgetLedger(tmp_path / "quilt.ledger")
    chain = MarkovQuiltMechanism(CHAIN, 1.0)
    unit = chain.record(chain.calibrate(ChainLengths(3))).unit
    assert unit.key.startswith("pufferfish/chain-state@")  # one unit per class Theta
    ledger.set_budget(1.5, unit=unit)
    MarkovQuiltMechanism(CHAIN, 1.0).release([0, 1, 1], ledger=ledger, label="first")
    other = MarkovChainModel.stationary(flip(0.6))  # another Theta is another unit
    with pytest.raises(BudgetExceededError, match="has no budget"):
        MarkovQuiltMechanism(other, 0.1).release([0, 1, 1], ledger=ledger)
    with pytest.raises(BudgetExceededError, match="would exceed the budget"):
        MarkovQuiltMechanism(CHAIN, 1.0).release([0, 1, 1], ledger=ledger)
    with pytest.raises(BudgetExceededError):
        AttributeMarkovQuilt(_path_network(), 1.0, "A").release(
            pd.DataFrame({n: [0, 1] for n in "ABCDE"}), _path_schema(), ledger=ledger
        )
    assert [e.label for e in ledger.entries()] == ["first"]


def _path_schema() -> Schema:
    return Schema(tuple(Column(n, "feature", Categorical((0, 1))) for n in "ABCDE"))


def test_attribute_release_counts_plus_noise_with_a_full_record() -> None:
    frame = pd.DataFrame(
        {"A": [0, 1, 1], "B": [0, 1, 1], "C": [1, 1, 1], "D": [0, 0, 1], "E": [1, 0, 0]}
    )
    mechanism = AttributeMarkovQuilt(
        _path_network(), 2.0, "A", list("BCDE"), sampler=SeededNumpyNoise(2), allow_nonprivate=True
    )
    result = mechanism.release(frame, _path_schema())
    scale = mechanism.calibrate().sigma_max
    expected = SeededNumpyNoise(2).discrete_laplace(np.array([1, 2, 0, 3, 2, 1, 2, 1]), scale)
    got = np.concatenate([result.values[c].to_numpy() for c in "BCDE"])
    np.testing.assert_array_equal(got, expected)
    assert result.record.sensitivity == {"A": 0.0, "B": 2.0, "C": 2.0, "D": 2.0, "E": 2.0}
    assert result.record.mechanism == "attribute-markov-quilt"
    assert result.diagnostics.quilts["A"].quilt == ("D",)
    assert result.to_dict()["diagnostics"]["quilts"]["A"]["quilt"] == ["D"]
    assert result.diagnostics.summary_lines()[1].startswith("A: quilt ['D'] (3 nearby nodes")


def test_attribute_version_on_adult_with_a_network_fitted_on_the_public_split(
    adult_dataset: datasets.Dataset,
) -> None:
    from pgmpy.models import DiscreteBayesianNetwork
    from pgmpy.parameter_estimator import DiscreteBayesianEstimator

    adult = adult_dataset
    columns = ["sex", "marital_status", "relationship", "income"]
    public = adult.frame.loc[adult.frame["split"] == "test", columns]
    model = DiscreteBayesianNetwork(
        [("sex", "relationship"), ("marital_status", "relationship"), ("relationship", "income")]
    )
    domains = {c: list(adult.schema.domain(c).categories) for c in columns}
    model.add_cpds(*DiscreteBayesianEstimator(state_names=domains).fit(model, public).parameters_)
    network = DiscreteNetwork.from_pgmpy(model)
    private = adult.frame[adult.frame["split"] == "train"]
    released = ["income", "marital_status"]
    free = AttributeMarkovQuilt(network, 1.0, "sex", released).release(private, adult.schema)
    # {marital_status, income} tells ~0.25 nats about sex and N = {sex, relationship} is not
    # released: the exact histograms are 1-Pufferfish private for sex ("privacy for free").
    chosen = free.diagnostics.quilts["sex"]
    assert chosen.quilt == ("marital_status", "income") and chosen.scale == 0.0
    assert 0.2 < chosen.influence < 0.3
    truth = private["income"].value_counts()
    assert free.values["income"].to_dict() == {k: int(v) for k, v in truth.items()}
    # at epsilon = 0.2 that quilt is infeasible; N = {sex, relationship, income} costs 2 / 0.2
    strict = AttributeMarkovQuilt(network, 0.2, "sex", released).release(private, adult.schema)
    assert strict.record.noise["scale"] == pytest.approx(10.0)
    assert strict.diagnostics.quilts["sex"].quilt != ("marital_status", "income")
    assert list(strict.values["income"].index) == ["<=50K", ">50K"]


def test_independent_attributes_need_no_more_than_their_own_noise() -> None:
    network = DiscreteNetwork({"A": (0, 1), "B": (0, 1)}, {}, {"A": [0.4, 0.6], "B": [0.5, 0.5]})
    assert AttributeMarkovQuilt(network, 1.0, "A", ["B"]).calibrate().sigma_max == 0.0
    assert AttributeMarkovQuilt(network, 0.5, "A", ["A", "B"]).calibrate().sigma_max == 4.0


# --- bad input -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "sequences", "message"),
    [
        ({}, [0, 2, 1], r"a value \(value hidden.*\) at position 1, outside the model's states"),
        ({"states": ("a", "b", "c")}, [0], "states must be 2 distinct labels"),
        ({"states": ("a", "b"), "query": "sum"}, ["a"], "query='sum' needs numeric states"),
        ({"method": "fast"}, [0], "method must be one of"),
        ({"query": "mean"}, [0], "query must be one of"),
        ({}, [], "sequence 0 is empty"),
        ({}, "01", "sequences must be a non-empty sequence"),
        ({}, [[0, 1], []], "sequence 1 is empty"),
    ],
)
def test_bad_chain_inputs(kwargs: dict, sequences, message: str) -> None:
    mechanism = MarkovQuiltMechanism(CHAIN, 1.0, **kwargs)
    with pytest.raises(InputError, match=message):
        mechanism.release(sequences)


def test_chain_lengths_are_the_public_facts_of_a_chain_release() -> None:
    assert ChainLengths([40, 3, 40]).lengths == (3, 40) and ChainLengths(5).lengths == (5,)
    for bad in (0, [], [3, 2.5], True):
        with pytest.raises(InputError, match="chain lengths must be integers >= 1"):
            ChainLengths(bad)
    with pytest.raises(InputError, match=r"pass ChainLengths\(lengths\)"):
        MarkovQuiltMechanism(CHAIN, 1.0).calibrate()


@pytest.mark.parametrize(
    ("initial", "transition", "message"),
    [
        ([0.5, 0.5], [[0.9, 0.2], [0.5, 0.5]], "transition row 0 must sum to 1"),
        ([0.5, 0.5], [[0.9, 0.1]], "transition must be a square matrix"),
        ([1.0], [[0.9, 0.1], [0.5, 0.5]], "initial has 1 states but transition has 2"),
        ([0.5, 0.5], [[1.1, -0.1], [0.5, 0.5]], "transition must hold finite probabilities"),
    ],
)
def test_bad_chain_models(initial, transition, message: str) -> None:
    with pytest.raises(InputError, match=message):
        MarkovChainModel(initial, transition)


def test_approx_refuses_reducible_chains_and_stationary_needs_irreducible() -> None:
    with pytest.raises(InputError, match="method='approx' needs irreducible chains"):
        calibrate_chain([MarkovChainModel([0.5, 0.5], np.eye(2))], 5, 1.0, 2.0, method="approx")
    with pytest.raises(InputError, match="not irreducible"):
        MarkovChainModel.stationary(np.eye(2))


def test_bad_attribute_inputs() -> None:
    network, schema = _path_network(), _path_schema()
    frame = pd.DataFrame({n: [0, 1] for n in "ABCDE"})
    with pytest.raises(InputError, match="protected 'Z' is not a node of the network"):
        AttributeMarkovQuilt(network, 1.0, "Z").calibrate()
    other = Schema((*schema.columns[:4], Column("E", "feature", Categorical((0, 1, 2)))))
    with pytest.raises(InputError, match="column 'E': the network's states"):
        AttributeMarkovQuilt(network, 1.0, "A").release(frame.assign(E=[0, 2]), other)
    nullable = Schema(
        (*schema.columns[:4], Column("E", "feature", Categorical((0, 1)), nullable=True))
    )
    with pytest.raises(InputError, match="column 'E' has missing values"):
        AttributeMarkovQuilt(network, 1.0, "A").release(frame.assign(E=[0, None]), nullable)


@settings(max_examples=30, deadline=None)
@given(epsilon=st.one_of(st.floats(max_value=0.0), st.just(math.inf), st.just(math.nan)))
def test_bad_epsilon_is_refused_everywhere(epsilon: float) -> None:
    with pytest.raises(InputError, match="epsilon must be"):
        MarkovQuiltMechanism(CHAIN, epsilon).release([0, 1])
    with pytest.raises(InputError, match="epsilon must be"):
        AttributeMarkovQuilt(_path_network(), epsilon, "A").calibrate()


@settings(max_examples=40, deadline=None)
@given(p=st.floats(min_value=0.05, max_value=0.95), eps=st.floats(min_value=0.1, max_value=5.0))
def test_scale_lies_between_dp_and_group_dp(p: float, eps: float) -> None:
    calibration = calibrate_chain([MarkovChainModel.stationary(flip(p))], 25, eps, 2.0)
    assert 2.0 / eps * (1 - 1e-12) <= calibration.sigma_max <= 25 * 2.0 / eps * (1 + 1e-12)


# --- CLI -------------------------------------------------------------------------------------


def test_cli_releases_a_sequence_and_writes_json(tmp_path, capsys) -> None:
    data = tmp_path / "activity.csv"
    pd.DataFrame({"person": [1] * 6 + [2] * 4, "state": list("rrwwrwwwrr")}).to_csv(
        data, index=False
    )
    out = tmp_path / "q.json"
    code = main(
        [
            "release", "quilt", "--transition", "0.8,0.2;0.2,0.8", "--states", "r,w",
            "--sequence", str(data), "--column", "state", "--by", "person",
            "--epsilon", "2", "--out", str(out),
        ]
    )  # fmt: skip
    assert code == 0
    payload = json.loads(out.read_text())
    assert payload["record"]["definition"] == "pufferfish"
    assert set(payload["values"]) == {"r", "w"} and payload["diagnostics"]["lengths"] == [4, 6]
    assert "Laplace scale" in capsys.readouterr().out


def test_cli_bad_input_is_one_line_exit_2(tmp_path, capsys) -> None:
    data = tmp_path / "s.csv"
    pd.DataFrame({"state": [0, 1, 5]}).to_csv(data, index=False)
    base = ["release", "quilt", "--sequence", str(data), "--epsilon", "1"]
    assert main([*base, "--transition", "0.9,0.1;0.2,x"]) == 2
    assert "transition must be numbers" in capsys.readouterr().err
    assert main([*base, "--transition", "0.9,0.1;0.2,0.8"]) == 2
    err = capsys.readouterr().err
    assert "a value (value hidden: --debug shows it) at position 2" in err
    assert "'5'" not in err and err.strip().count("\n") == 0
    assert main(["--debug", *base, "--transition", "0.9,0.1;0.2,0.8"]) == 2
    assert "value '5' at position 2" in capsys.readouterr().err  # shown when asked for
    assert main(["release", "quilt", "--help"]) == 0
    assert "$ attrpriv release quilt" in capsys.readouterr().out


@pytest.mark.parametrize(("p", "method"), [(0.9, "exact"), (0.97, "exact"), (0.95, "approx")])
def test_the_edge_table_agrees_with_a_direct_search_of_every_node(p: float, method: str) -> None:
    from attrpriv.release.markov_quilt import chain_calibration as chain_quilt
    from attrpriv.release.markov_quilt.chain_model import (
        ApproxInfluences,
        ExactInfluences,
        Influences,
    )

    model = MarkovChainModel.stationary(flip(p))
    if method == "exact":
        sides: Influences = ExactInfluences(model, 150)
    else:
        sides = ApproxInfluences(*mixing_constants([model]))
    fast = chain_quilt._all_nodes(sides, 150, 1.0, 2.0)
    assert any(c.left and c.right for c in fast) and any(not c.left for c in fast)
    direct = [chain_quilt._node_choice(sides, i, 150, 1.0, 2.0) for i in range(150)]
    np.testing.assert_allclose([c.scale for c in fast], [c.scale for c in direct], rtol=1e-12)
