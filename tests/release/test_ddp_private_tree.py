"""The model tier's tree learned from the private rows, as a DP release.

The step's privacy rests on two sensitivities: how far one replaced row moves a pair's
dependence score (each link is chosen by report noisy max on them) and the links' tables (l2):
both checked exactly, by replacing one row of a small table with every possible row; a learner
that took the scores' sensitivity as 1 is caught. Its zCDP parameter is the sum of its
selections' and its tables', and converts to at most the stated epsilon. Then, end to end:
the step is charged to the ledger before the release that uses its tree, the record names it,
and the tree is a public model like any other; from enough rows it finds a strong chain.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from attrpriv import Column, Integer, Schema
from attrpriv.dp import BudgetLedger, SeededNumpyNoise
from attrpriv.dp.accounting import rho_for, zcdp_to_epsilon
from attrpriv.errors import InputError
from attrpriv.release.ddp import SurveyFacts, private_tree
from attrpriv.release.ddp.model import ModelDDP
from attrpriv.release.ddp.private_tree import (
    PrivateTree,
    TreeStepDiagnostics,
    dependence_scores,
    link_sensitivity,
    score_sensitivity,
)

CARDS = (2, 3, 2, 2)


def _schema(cards: tuple[int, ...] = CARDS, nullable: int | None = None) -> Schema:
    return Schema(tuple(
        Column(f"q{j}", "feature", Integer(0, k - 1), nullable=j == nullable)
        for j, k in enumerate(cards)
    ))  # fmt: skip


def _measured(frame: pd.DataFrame, schema: Schema) -> tuple[np.ndarray, list[np.ndarray]]:
    """What the learner itself counts (its ``_measure``): every pair's dependence score, and
    the tables of the links 0-1, 1-2, 1-3, flattened."""
    counts, facts = PrivateTree(1.0, 1e-6)._measure(frame, schema, None)
    joint, offsets = counts.joint, counts.offsets
    tables = [joint[offsets[j] : offsets[j + 1], offsets[k] : offsets[k + 1]].ravel()
              for j, k in ((0, 1), (1, 2), (1, 3))]  # fmt: skip
    return dependence_scores(joint, offsets, facts.n_rows), tables


def _worst_change(frame: pd.DataFrame, schema: Schema) -> tuple[float, float]:
    """The largest move of any pair's score, and the l2 move of the links' tables, when one row
    is replaced by any possible row (missing included for the nullable question)."""
    scores, tables = _measured(frame, schema)
    states = [list(range(k)) + ([None] if schema[f"q{j}"].nullable else [])
              for j, k in enumerate(CARDS)]  # fmt: skip
    worst_score = worst_tables = 0.0
    for index in (0, 7):
        for row in itertools.product(*states):
            other = frame.copy()
            other.iloc[index] = row
            moved_scores, moved = _measured(other, schema)
            worst_score = max(worst_score, float(np.abs(moved_scores - scores).max()))
            change = np.concatenate([x - y for x, y in zip(moved, tables, strict=True)])
            worst_tables = max(worst_tables, float(np.linalg.norm(change)))
    return worst_score, worst_tables


def _frame() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({f"q{j}": rng.integers(0, k, 30) for j, k in enumerate(CARDS)})
    frame["q2"] = frame["q2"].astype("Float64")
    frame.loc[[3, 11], "q2"] = None  # the nullable question's "missing" is a state of its own
    return frame


def test_one_replaced_row_moves_scores_and_tables_at_most_the_stated_sensitivity() -> None:
    worst_score, worst_tables = _worst_change(_frame(), _schema(nullable=2))
    assert worst_tables == pytest.approx(link_sensitivity(len(CARDS)))  # every answer changed
    assert 1.0 < worst_score <= score_sensitivity(30)


def _spent(step: TreeStepDiagnostics, worst_score: float, worst_tables: float) -> float:
    """The zCDP the step really spends, from the measured worst moves and the scales it drew
    with: m - 1 selections and one table measurement."""
    m = len(CARDS)
    return ((m - 1) * worst_score**2 / (2 * step.select_scale ** 2)
            + worst_tables**2 / (2 * step.link_scale ** 2))  # fmt: skip


def test_the_step_is_the_sum_of_its_selections_and_its_tables() -> None:
    frame = pd.DataFrame({f"q{j}": np.arange(40) % k for j, k in enumerate(CARDS)})
    learner = PrivateTree(1.0, 1e-6, sampler=SeededNumpyNoise(0), allow_nonprivate=True)
    step = learner.release(frame, _schema())
    model = step.diagnostics.model
    record, found, m = step.record, step.diagnostics, len(CARDS)
    rho = ((m - 1) * score_sensitivity(40) ** 2 / (2 * found.select_scale ** 2)
           + link_sensitivity(m) ** 2 / (2 * found.link_scale ** 2))  # fmt: skip
    assert record.rho == pytest.approx(rho) and rho == pytest.approx(rho_for(1.0, 1e-6))
    assert zcdp_to_epsilon(record.rho, 1e-6) <= 1.0 + 1e-9
    assert record.unit.key == "dp/substitute" and (record.epsilon, record.delta) == (1.0, 1e-6)
    assert len(step.values) == m - 1  # only the chosen links' tables are released
    assert "DP release of the private rows" in model.source
    assert all((k > 0).all() for k in model.kernels)


def test_the_step_spends_no_more_than_its_record_and_a_broken_one_is_caught(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    frame, schema = _frame(), _schema(nullable=2)
    worst_score, worst_tables = _worst_change(frame, schema)
    learner = PrivateTree(1.0, 1e-6, sampler=SeededNumpyNoise(0), allow_nonprivate=True)
    honest = learner.release(frame, schema)
    assert _spent(honest.diagnostics, worst_score, worst_tables) <= honest.record.rho * (1 + 1e-9)
    monkeypatch.setattr(private_tree, "score_sensitivity", lambda n: 1.0)  # a wrong bound
    broken = learner.release(frame, schema)
    assert _spent(broken.diagnostics, worst_score, worst_tables) > 2 * broken.record.rho


def test_a_strong_chain_is_found_from_enough_rows() -> None:
    rng = np.random.default_rng(2)
    first = rng.integers(0, 2, 20_000)
    columns = [first]
    for _ in range(4):
        columns.append(np.where(rng.random(20_000) < 0.9, columns[-1], 1 - columns[-1]))
    frame = pd.DataFrame({f"q{j}": c for j, c in enumerate(columns)})
    model = PrivateTree(1.0, 1e-6).release(frame, _schema((2,) * 5)).diagnostics.model
    assert {frozenset(link) for link in model.links()} == {
        frozenset((f"q{j}", f"q{j + 1}")) for j in range(4)
    }


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
    assert result.diagnostics.model_step == step
    assert "DP release of the private rows" in result.record.guarantees[0].laws
    with pytest.raises(InputError, match="give learn_epsilon and learn_delta"):
        ModelDDP(1.0, "private").release(frame, schema)
    with pytest.raises(InputError, match="call release"):
        ModelDDP(1.0, "private", learn_epsilon=1.0, learn_delta=1e-6).calibrate(SurveyFacts(schema))
