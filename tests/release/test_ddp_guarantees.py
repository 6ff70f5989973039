"""Tabular-DDP's records state two guarantees: the model's, and one for every law.

The second is checked exactly: for laws the release's model does not describe (a respondent
whose answers all copy one, rare values that fix many answers, parities), the worst-case loss
of one answer, by enumeration of every output corner (``exact_loss``), never exceeds
``sum_j 2 / scale_j``; the copy law reaches it, so a bound that forgot the factor 2 is caught.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from test_ddp_exact import bits, exact_loss, parity

from attrpriv import Column, Integer, Schema
from attrpriv.dp import ANY_LAW, BudgetLedger, Guarantee, PrivacyRecord
from attrpriv.errors import InputError
from attrpriv.release.ddp.answers import any_law_epsilon
from attrpriv.release.ddp.mechanism import TabularDDP
from attrpriv.release.graph.network import DiscreteNetwork

FAIR = np.array([0.5, 0.5])


def all_copy(n: int = 4, keep: float = 0.9999) -> DiscreteNetwork:
    """Every answer copies x0: one answer moves the whole row."""
    same = np.array([[keep, 1 - keep], [1 - keep, keep]])
    return bits(
        n,
        {f"x{k}": ("x0",) for k in range(1, n)},
        {"x0": FAIR, **{f"x{k}": same for k in range(1, n)}},
    )


def rare_fixes(n: int = 4) -> DiscreteNetwork:
    """x0 = 1 in 0.5% of rows, and then every other answer is 1; otherwise fair coins."""
    fixed = np.array([[0.5, 0.5], [0.0, 1.0]])
    return bits(
        n,
        {f"x{k}": ("x0",) for k in range(1, n)},
        {"x0": np.array([0.995, 0.005]), **{f"x{k}": fixed for k in range(1, n)}},
    )


def _release(n_rows: int = 3000) -> tuple[TabularDDP, object]:
    network = all_copy(4, keep=0.6)  # weak links: the model gains over Laplace
    rows = network.sample(n_rows, np.random.default_rng(3))
    schema = Schema(tuple(Column(c, "feature", Integer(0, 1)) for c in network.nodes))
    mechanism = TabularDDP(1.0)
    return mechanism, mechanism.release(pd.DataFrame(rows), schema)


def test_every_release_states_the_model_guarantee_and_one_for_any_law() -> None:
    _, result = _release()
    record = result.record
    conditional, unconditional = record.guarantees
    assert conditional.epsilon == record.epsilon == 1.0 and conditional.laws != ANY_LAW
    assert record.unit.model in conditional.laws
    assert unconditional.laws == ANY_LAW and unconditional.delta == 0.0
    scales = record.noise["scale"]
    assert unconditional.epsilon == pytest.approx(sum(2.0 / s for s in scales.values()))
    assert unconditional.epsilon >= record.epsilon  # no law-free claim below the model's
    assert unconditional.describe().endswith("for any law of the data")
    again = PrivacyRecord.from_dict(json.loads(json.dumps(record.to_dict())))
    assert again.guarantees == record.guarantees


@pytest.mark.parametrize(
    "network", [all_copy(), rare_fixes(), parity(), all_copy(3, keep=0.7)], ids=str
)
@pytest.mark.parametrize("scale", [1.5, 4.0, 9.0])
def test_the_any_law_bound_holds_exactly_for_laws_outside_the_model(
    network: DiscreteNetwork, scale: float
) -> None:
    rng = np.random.default_rng(int(scale * 10))
    scales = {n: scale * float(rng.uniform(0.7, 1.3)) for n in network.nodes}
    bound = any_law_epsilon(scales)
    for node in network.nodes:
        assert exact_loss(network, node, scales) <= bound + 1e-9


def test_the_copy_law_reaches_the_bound_and_a_halved_bound_is_caught() -> None:
    network = all_copy(4, keep=1.0 - 1e-12)
    scales = dict.fromkeys(network.nodes, 3.0)
    loss = exact_loss(network, "x0", scales)
    assert loss == pytest.approx(any_law_epsilon(scales), rel=1e-6)  # tight
    broken = sum(1.0 / s for s in scales.values())  # sensitivity 1 per histogram: too small
    assert loss > broken + 0.1


def test_a_guarantee_is_checked_and_stored_in_the_ledger(tmp_path) -> None:
    with pytest.raises(InputError, match="which laws"):
        Guarantee(1.0, 0.0, " ")
    with pytest.raises(InputError, match="guarantee epsilon must be > 0"):
        Guarantee(0.0, 0.0, ANY_LAW)
    _, result = _release(1500)
    ledger = BudgetLedger(tmp_path / "ddp.ledger")
    ledger.set_budget(2.0, unit="dependent-dp/answer")
    ledger.charge(result.record)
    (entry,) = ledger.entries()
    assert entry.record.guarantees == result.record.guarantees
