"""Tabular-DDP's model tier: the tree bound holds exactly for every law in its class.

Every claim is checked by enumeration (``exact_loss``: every output corner of every histogram,
the worst secret pair): on random trees, on trees as hostile as the class allows (rare values
that nearly fix a neighbour, many weak links that add up at a hub, long strong chains), and on
laws on the same tree that reveal less than the model. Laws outside the class (parities, rows
that copy one answer) are held to the record's second guarantee. A bound that linearises the
contraction, or that reuses one direction's limits for the other, is caught.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_ddp_exact import exact_loss, parity
from test_ddp_guarantees import all_copy, rare_fixes

from attrpriv import Column, Integer, Schema
from attrpriv.dp import ANY_LAW, BudgetLedger
from attrpriv.errors import InputError
from attrpriv.release.ddp import SurveyFacts, tree_bound
from attrpriv.release.ddp.answers import any_law_epsilon
from attrpriv.release.ddp.model import ModelDDP, read_model
from attrpriv.release.ddp.tree import TreeModel, learn_tree
from attrpriv.release.ddp.tree_bound import loss_bounds, tree_scales

EPSILON = 1.0


def tree(
    parents: list[int], kernels: list[np.ndarray], names: list[str] | None = None
) -> TreeModel:
    columns = tuple(names or [f"x{v}" for v in range(len(parents))])
    cards = tuple(k.shape[1] for k in kernels)
    return TreeModel(columns, cards, tuple(parents), tuple(kernels), "test")


def same(k: int, keep: float) -> np.ndarray:
    table = np.full((k, k), (1 - keep) / (k - 1))
    np.fill_diagonal(table, keep)
    return table


def uniform(k: int) -> np.ndarray:
    return np.full((1, k), 1.0 / k)


def random_tree(seed: int, m: int = 5) -> TreeModel:
    rng = np.random.default_rng(seed)
    cards = [int(rng.integers(2, 4)) for _ in range(m)]
    parents = [-1] + [int(rng.integers(0, v)) for v in range(1, m)]
    strength = float(rng.choice([0.2, 1.0, 5.0]))
    kernels = [rng.dirichlet(np.full(cards[0], strength))[None, :]]
    kernels += [
        rng.dirichlet(np.full(cards[v], strength), size=cards[parents[v]]) for v in range(1, m)
    ]
    kernels = [
        np.maximum(k, 1e-3) / np.maximum(k, 1e-3).sum(axis=1, keepdims=True) for k in kernels
    ]
    return tree(parents, kernels)


def hostile() -> dict[str, TreeModel]:
    rare = np.array([[0.5, 0.5], [0.002, 0.998]])  # a rare parent value nearly fixes the child
    return {
        "rare value fixes its neighbours": tree(
            [-1, 0, 0, 0, 0], [np.array([[0.995, 0.005]]), rare, rare, rare, rare]
        ),
        "hub of weak links": tree([-1, 0, 0, 0, 0, 0, 0], [uniform(2)] + [same(2, 0.6)] * 6),
        "strong chain": tree([-1, 0, 1, 2, 3, 4], [uniform(2)] + [same(2, 0.95)] * 5),
        "copy chain": tree([-1, 0, 1, 2], [uniform(2)] + [same(2, 0.9999)] * 3),
        "three-level chain": tree([-1, 0, 1, 2], [uniform(3)] + [same(3, 0.7)] * 3),
    }


def _worst(model: TreeModel, scales: Mapping[str, float]) -> float:
    network = model.to_network()
    return max(exact_loss(network, c, scales) for c in model.columns)


@pytest.mark.parametrize("calibration", ["per-question", "uniform"])
@pytest.mark.parametrize("seed", range(12))
def test_random_trees_lose_at_most_epsilon_exactly(seed: int, calibration: str) -> None:
    model = random_tree(seed)
    scales, bounds = tree_scales(model, EPSILON, calibration=calibration)
    network = model.to_network()
    for bound in bounds:
        exact = exact_loss(network, bound.column, scales)
        assert exact <= bound.loss + 1e-9 <= EPSILON + 1e-8
    assert max(scales.values()) <= 2 * len(model.columns) / EPSILON * (1 + 1e-9)
    if calibration == "uniform":
        assert len(set(scales.values())) == 1


@pytest.mark.parametrize("name", list(hostile()))
def test_hostile_laws_inside_the_class_lose_at_most_epsilon(name: str) -> None:
    model = hostile()[name]
    scales, _ = tree_scales(model, EPSILON)
    assert _worst(model, scales) <= EPSILON + 1e-9


def test_the_bound_is_tight_where_a_link_copies() -> None:
    """Answers that copy pass everything: the scale is the row-level one, and it is needed."""
    model = hostile()["copy chain"]
    scales, _ = tree_scales(model, EPSILON, calibration="uniform")
    assert all(v == pytest.approx(2 * 4 / EPSILON, rel=1e-3) for v in scales.values())
    assert _worst(model, scales) > 0.99 * EPSILON


def test_the_model_gains_inside_one_dependent_component() -> None:
    """A chain of 40 and a hub of 30: one component each, where modules gain nothing."""
    chain = tree(list(range(-1, 39)), [uniform(3)] + [same(3, 0.7)] * 39)
    hub = tree([-1] + [0] * 29, [uniform(3)] + [same(3, 0.5)] * 29)
    for model, least in ((chain, 8.0), (hub, 2.0)):
        scales, _ = tree_scales(model, EPSILON)
        mean = sum(scales.values()) / len(scales)
        assert 2 * len(model.columns) / EPSILON / mean >= least


def _weaker(model: TreeModel, keep: float) -> TreeModel:
    """The same tree, every kernel mixed with the uniform one (weight ``1 - keep``)."""
    kernels = [keep * k + (1 - keep) / k.shape[1] for k in model.kernels]
    return TreeModel(model.columns, model.cards, model.parents, tuple(kernels), "weaker")


@pytest.mark.parametrize("seed", [0, 1, 2, 4, 5, 6])
def test_laws_on_the_tree_that_reveal_less_are_covered(seed: int) -> None:
    model = random_tree(seed)
    scales, _ = tree_scales(model, EPSILON)
    law = _weaker(model, 0.7)
    limits, own = law.edge_limits(), model.edge_limits()
    assert all(  # inside the class: no link of the law reveals more than the model's
        limits[e].level <= own[e].level + 1e-12
        and limits[e].contraction <= own[e].contraction + 1e-12
        for e in own
    )
    assert _worst(law, scales) <= EPSILON + 1e-9


def test_a_law_with_the_models_forward_kernels_but_another_marginal_is_outside_the_class() -> None:
    """The reverse kernel depends on the marginals: the class bounds both directions, and a law
    that keeps only the forward ones within can lose more than epsilon."""
    kernel = np.array([[0.999, 0.001], [0.5, 0.5]])
    model = tree([-1, 0], [np.array([[0.5, 0.5]]), kernel])
    law = tree([-1, 0], [np.array([[0.95, 0.05]]), kernel])
    scales, _ = tree_scales(model, EPSILON, calibration="uniform")
    own, other = model.edge_limits(), law.edge_limits()
    assert other[(0, 1)] == own[(0, 1)]  # forward: the same kernel
    assert other[(1, 0)].contraction > own[(1, 0)].contraction  # reverse: more telling
    assert exact_loss(law.to_network(), "x1", scales) > 1.1 * EPSILON
    assert _worst(model, scales) <= EPSILON + 1e-9


@pytest.mark.parametrize("law", ["parity", "all copy", "rare fixes"])
def test_laws_outside_the_class_are_held_to_the_any_law_guarantee(law: str) -> None:
    network = {"parity": parity(), "all copy": all_copy(4), "rare fixes": rare_fixes(4)}[law]
    model = tree([-1, 0, 1, 2], [uniform(2)] + [same(2, 0.55)] * 3)  # a weak chain belief
    scales, _ = tree_scales(model, EPSILON)
    unconditional = any_law_epsilon(scales)
    worst = max(exact_loss(network, c, scales) for c in network.nodes)
    assert worst <= unconditional + 1e-9
    if law == "all copy":
        assert worst > EPSILON  # the conditional claim is not for this law: only the other one


def _linear(level: float, tau: float, inner: np.ndarray) -> np.ndarray:
    return np.minimum(level, tau * inner)  # Jensen's wrong way: below log(1 - tau + tau e^L)


def test_a_bound_that_linearises_the_contraction_is_caught(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    model = hostile()["rare value fixes its neighbours"]
    monkeypatch.setattr(tree_bound, "_through", _linear)
    scales, _ = tree_scales(model, EPSILON, calibration="uniform")
    assert _worst(model, scales) > EPSILON * 1.03


def test_a_bound_that_reuses_the_downward_limits_upward_is_caught(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    model = random_tree(34)
    links = tree_bound.TreeLinks.of(model)
    forged = tree_bound.TreeLinks(
        links.parents, links.order, links.level_down, links.tau_down,
        links.level_down, links.tau_down,
    )  # fmt: skip
    monkeypatch.setattr(tree_bound.TreeLinks, "of", classmethod(lambda cls, _: forged))
    scales, _ = tree_scales(model, EPSILON, calibration="uniform")
    assert _worst(model, scales) > EPSILON * 1.2


def test_loss_bounds_at_other_scales_dominate_the_exact_loss() -> None:
    model = random_tree(3)
    scales = {c: 3.0 + i for i, c in enumerate(model.columns)}
    network = model.to_network()
    for column, bound in loss_bounds(model, scales).items():
        assert exact_loss(network, column, scales) <= bound + 1e-9
    assert max(loss_bounds(model, scales).values()) <= any_law_epsilon(scales) + 1e-9


# -- the mechanism -------------------------------------------------------------------------------


def _survey(n: int, seed: int) -> tuple[pd.DataFrame, Schema]:
    model = tree(list(range(-1, 7)), [uniform(3)] + [same(3, 0.8)] * 7)
    rows = model.to_network().sample(n, np.random.default_rng(seed)).astype(np.int64)
    schema = Schema(tuple(Column(c, "feature", Integer(0, 2)) for c in model.columns))
    return pd.DataFrame(rows), schema


def test_a_release_states_both_guarantees_and_gains_over_laplace(tmp_path: Path) -> None:
    data, schema = _survey(3000, 1)
    aux, _ = _survey(2000, 2)
    ledger = BudgetLedger(tmp_path / "ddp.ledger")
    ledger.set_budget(2.0, unit="dependent-dp/answer")
    result = ModelDDP(EPSILON, "aux", aux=aux).release(data, schema, ledger=ledger)
    record = result.record
    conditional, unconditional = record.guarantees
    assert conditional.epsilon == record.epsilon == EPSILON
    assert record.unit.model in conditional.laws and "Markov on the tree" in conditional.laws
    assert unconditional.laws == ANY_LAW
    assert unconditional.epsilon == pytest.approx(any_law_epsilon(record.noise["scale"]))
    assert result.diagnostics.gain > 1.5
    assert result.diagnostics.model_from == "auxiliary rows (2,000)"
    assert set(result.values) == set(schema.names)
    assert max(b.loss for b in result.diagnostics.bounds) <= EPSILON + 1e-9
    (entry,) = ledger.entries()
    assert entry.record.guarantees == record.guarantees


def test_the_scales_never_depend_on_the_private_rows() -> None:
    data, schema = _survey(500, 1)
    aux, _ = _survey(2000, 2)
    changed = data.copy()
    changed.iloc[0] = (changed.iloc[0] + 1) % 3
    mechanism = ModelDDP(EPSILON, "aux", aux=aux)
    first = mechanism.release(data, schema).record.noise["scale"]
    second = mechanism.release(changed, schema).record.noise["scale"]
    assert first == second == mechanism.calibrate(SurveyFacts(schema)).scales()


def test_a_model_file_round_trips_and_gives_the_same_release_scale(tmp_path: Path) -> None:
    aux, schema = _survey(2000, 2)
    plan = ModelDDP(EPSILON, "aux", aux=aux).calibrate(SurveyFacts(schema))
    path = tmp_path / "model.json"
    path.write_text(json.dumps(plan.model.to_dict()))
    loaded = read_model(path)
    assert loaded.fingerprint == plan.model.fingerprint
    again = ModelDDP(EPSILON, path).calibrate(SurveyFacts(schema))
    assert again.scales() == plan.scales() and again.model.source == "model file model.json"


def test_bad_models_and_parameters_get_one_line_errors(tmp_path: Path) -> None:
    aux, schema = _survey(200, 2)
    with pytest.raises(InputError, match="model='aux' learns the model from aux="):
        ModelDDP(EPSILON, "aux").calibrate(SurveyFacts(schema))
    other = tree([-1, 0], [uniform(3), same(3, 0.8)], names=["x0", "zz"])
    with pytest.raises(InputError, match="expected the released columns"):
        ModelDDP(EPSILON, other).calibrate(SurveyFacts(schema))
    path = tmp_path / "bad.json"
    path.write_text("{")
    with pytest.raises(InputError, match="is not JSON"):
        ModelDDP(EPSILON, path).calibrate(SurveyFacts(schema))
    path.write_text(json.dumps({"format": "other"}))
    with pytest.raises(InputError, match="needs format"):
        read_model(path)
    with pytest.raises(InputError, match="prior"):
        ModelDDP(EPSILON, "aux", aux=aux, prior=0).calibrate(SurveyFacts(schema))
    with pytest.raises(InputError, match="epsilon"):
        ModelDDP(math.inf, "aux", aux=aux).calibrate(SurveyFacts(schema))


def test_tree_models_refuse_what_is_not_a_tree() -> None:
    with pytest.raises(InputError, match="exactly one root"):
        tree([-1, -1], [uniform(2), uniform(2)])
    with pytest.raises(InputError, match="one tree"):
        tree([-1, 2, 1], [uniform(2), same(2, 0.6), same(2, 0.6)])
    with pytest.raises(InputError, match="entries > 0"):
        tree([-1, 0], [uniform(2), np.array([[1.0, 0.0], [0.5, 0.5]])])
    with pytest.raises(InputError, match="shape"):
        tree([-1, 0], [uniform(2), same(3, 0.6)])


def test_learning_keeps_every_kernel_positive_and_the_strongest_links() -> None:
    data, _ = _survey(2000, 5)
    model = learn_tree(data, dict.fromkeys(data.columns, 3), prior=1.0, source="aux")
    assert all((k > 0).all() for k in model.kernels)
    found = {frozenset(link) for link in model.links()}
    chain = {frozenset((f"x{v - 1}", f"x{v}")) for v in range(1, 8)}
    assert found == chain  # the true chain is the maximum-information tree
