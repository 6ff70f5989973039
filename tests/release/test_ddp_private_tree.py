"""The model tier's tree learned from the private rows, as a DP release.

The step's privacy rests on the l2 sensitivity of the tables it measures: checked exactly, by
replacing one row of a small table with every possible row and measuring how far every pair's
table (and the links' tables) moves; a learner that took one table's sensitivity for all of
them is caught. Its zCDP parameter is the sum of its two measurements', and converts to at most
the stated epsilon. Then, end to end: the step is charged to the ledger before the release that
uses its tree, the record names it, and the tree is a public model like any other.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from attrpriv import Column, Integer, Schema
from attrpriv.dp import BudgetLedger, SeededNumpyNoise
from attrpriv.dp.accounting import zcdp_to_epsilon
from attrpriv.errors import InputError
from attrpriv.release.ddp import private_tree
from attrpriv.release.ddp.model import ModelDDP
from attrpriv.release.ddp.private_tree import (
    PrivateTree,
    link_sensitivity,
    pair_sensitivity,
    rho_for,
)

CARDS = (2, 3, 2, 2)


def _schema(cards: tuple[int, ...] = CARDS) -> Schema:
    return Schema(tuple(Column(f"q{j}", "feature", Integer(0, k - 1)) for j, k in enumerate(cards)))


def _tables(frame: pd.DataFrame, links: list[tuple[int, int]] | None = None) -> np.ndarray:
    """Every pair's table (or only ``links``), stacked into one vector of counts."""
    m = frame.shape[1]
    pairs = links or list(itertools.combinations(range(m), 2))
    parts = []
    for j, k in pairs:
        flat = frame.iloc[:, j].to_numpy() * CARDS[k] + frame.iloc[:, k].to_numpy()
        parts.append(np.bincount(flat, minlength=CARDS[j] * CARDS[k]))
    return np.concatenate(parts).astype(np.float64)


def test_one_replaced_row_moves_the_tables_by_exactly_the_stated_sensitivity() -> None:
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({f"q{j}": rng.integers(0, k, 30) for j, k in enumerate(CARDS)})
    links = [(0, 1), (1, 2), (1, 3)]
    base, base_links = _tables(frame), _tables(frame, links)
    worst = worst_links = 0.0
    for row in itertools.product(*(range(k) for k in CARDS)):
        other = frame.copy()
        other.iloc[0] = row
        worst = max(worst, float(np.linalg.norm(_tables(other) - base)))
        worst_links = max(worst_links, float(np.linalg.norm(_tables(other, links) - base_links)))
    m = len(CARDS)
    assert worst == pytest.approx(pair_sensitivity(m))  # reached: every answer changed
    assert worst_links == pytest.approx(link_sensitivity(m))
    assert worst > math.sqrt(2) * 1.5  # one table's sensitivity would be far too small


def test_the_step_is_the_sum_of_its_two_measurements_and_meets_its_epsilon() -> None:
    frame = pd.DataFrame({f"q{j}": np.arange(40) % k for j, k in enumerate(CARDS)})
    learner = PrivateTree(1.0, 1e-6, noise=SeededNumpyNoise(0), allow_nonprivate=True)
    model, step = learner.learn(frame, _schema())
    record, parts, m = step.record, step.parts, len(CARDS)
    rho = (pair_sensitivity(m) ** 2 / (2 * parts["pair_scale"] ** 2)
           + link_sensitivity(m) ** 2 / (2 * parts["link_scale"] ** 2))  # fmt: skip
    assert record.rho == pytest.approx(rho) and rho == pytest.approx(rho_for(1.0, 1e-6))
    assert zcdp_to_epsilon(record.rho, 1e-6) <= 1.0 + 1e-9
    assert record.unit.key == "dp/substitute" and (record.epsilon, record.delta) == (1.0, 1e-6)
    assert len(step.values) == math.comb(m, 2) + (m - 1)  # every pair, then every link
    assert "DP release of the private rows" in model.source
    assert all((k > 0).all() for k in model.kernels)


def test_a_learner_with_one_tables_sensitivity_draws_too_little_noise(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    frame = pd.DataFrame({f"q{j}": np.arange(40) % k for j, k in enumerate(CARDS)})
    honest = PrivateTree(1.0, 1e-6, noise=SeededNumpyNoise(0), allow_nonprivate=True)
    scale = honest.learn(frame, _schema())[1].parts["pair_scale"]
    monkeypatch.setattr(private_tree, "pair_sensitivity", lambda m: math.sqrt(2))
    broken = honest.learn(frame, _schema())[1]
    # the l2 change a row can make, over the noise the broken step draws: rho far above its claim
    actual = pair_sensitivity(len(CARDS)) ** 2 / (2 * broken.parts["pair_scale"] ** 2)
    assert broken.parts["pair_scale"] < scale / 2 and actual > 2 * broken.record.rho


def test_the_model_tier_charges_the_learning_step_first(tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    first = rng.integers(0, 2, 4000)
    frame = pd.DataFrame({
        "q0": first,
        "q1": np.where(rng.random(4000) < 0.8, first, 1 - first),
        "q2": rng.integers(0, 2, 4000),
        "q3": rng.integers(0, 2, 4000),
    })  # fmt: skip
    ledger = BudgetLedger(tmp_path / "ddp.ledger")
    ledger.set_budget(3.0, 1e-5, unit="dp/substitute")
    ledger.set_budget(5.0, 1e-5, unit="dependent-dp/answer")
    tier = ModelDDP(1.0, "private", learn_epsilon=1.0, learn_delta=1e-6)
    schema = _schema((2, 2, 2, 2))
    result = tier.release(frame, schema, ledger=ledger, label="survey")
    step, release = (entry.record for entry in ledger.entries())
    assert step.mechanism == "tabular-ddp-private-tree" and step.unit.key == "dp/substitute"
    assert release.mechanism == "tabular-ddp-model"
    assert result.parts["model_step"] == step.to_dict()
    assert "DP release of the private rows" in result.record.guarantees[0].laws
    with pytest.raises(InputError, match="give learn_epsilon and learn_delta"):
        ModelDDP(1.0, "private").release(frame, schema)
    with pytest.raises(InputError, match="call release"):
        ModelDDP(1.0, "private", learn_epsilon=1.0, learn_delta=1e-6).calibrate(schema)
