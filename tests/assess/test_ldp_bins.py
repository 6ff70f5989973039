"""LocalDPNoise(numeric="bins"): randomized response over equal-width bins of public bounds."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

from attrpriv import datasets
from attrpriv.assess.mitigation import LocalDPNoise, parse_strategy
from attrpriv.assess.mitigation.ldp import BINNED, LocalDPDiagnostics, LocalFacts, bin_codes
from attrpriv.assess.mitigation.randomizers import keep_probability, replace_probability
from attrpriv.dp import BudgetLedger, SeededNumpyNoise
from attrpriv.errors import InputError

BOUNDS = {"x": (0.0, 100.0), "y": (-1.0, 1.0)}
DOMAIN = {"c": ["a", "b", "c"]}


def _binned(epsilon: float = 1.0, bins: int = 5, **params: object) -> LocalDPNoise:
    return LocalDPNoise(
        epsilon,
        numeric="bins",
        bins=bins,
        sampler=SeededNumpyNoise(0),
        allow_nonprivate=True,
        **params,
    )


def _frame(n: int = 400, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "x": rng.integers(10, 20, n),  # observed range [10, 19], inside public [0, 100]
            "y": rng.uniform(-0.5, 0.5, n),
            "c": rng.choice(["a", "b", "c"], n),
        }
    )


def _plan(epsilon: float, bins: int) -> dict[str, object]:
    facts = LocalFacts(("x",), bounds={"x": (0.0, 100.0)}, values={}, sources={"x": "bounds="})
    return dict(_binned(epsilon, bins).calibrate(facts).features["x"])


def channel(keep: float, k: int) -> np.ndarray:
    """P(report bin j | true bin i): ``keep`` on the diagonal, the rest spread evenly."""
    off = (1.0 - keep) / (k - 1)
    return np.where(np.eye(k, dtype=bool), keep, off)


def privacy_loss(matrix: np.ndarray) -> float:
    """The exact per-value privacy loss: the largest log ratio of two inputs' output odds."""
    return float(np.max(np.log(matrix.max(axis=0) / matrix.min(axis=0))))


def test_outputs_are_at_most_k_bin_midpoints() -> None:
    frame = _frame()
    out = _binned(1.0, 4, bounds=BOUNDS, domain=DOMAIN).apply(frame, ["x", "y", "c"])
    for feature, (lower, upper) in BOUNDS.items():
        width = (upper - lower) / 4
        midpoints = {lower + (i + 0.5) * width for i in range(4)}
        assert out[feature].dtype == float
        assert set(out[feature]) <= midpoints and out[feature].nunique() <= 4
    assert set(out["c"]) <= {"a", "b", "c"}  # categories keep plain randomized response
    pd.testing.assert_frame_equal(frame, _frame())  # the input is left as it is


def test_the_bins_come_from_the_public_bounds_not_the_data() -> None:
    frame = _frame()  # x in [10, 19], y in [-0.5, 0.5]
    out = _binned(300.0, 5, bounds=BOUNDS).apply(frame, ["x", "y"])  # kept almost surely
    assert set(out["x"]) == {10.0}  # the bin [0, 20) of [0, 100], not a bin of [10, 19]
    expected = np.array([-0.8, -0.4, 0.0, 0.4, 0.8])[bin_codes(frame["y"].to_numpy(), -1, 1, 5)]
    np.testing.assert_allclose(out["y"], expected)
    wider = _binned(300.0, 5, bounds={"x": (0.0, 1000.0)}).apply(frame, ["x"])
    assert set(wider["x"]) == {100.0}  # other bounds, other bins: the data did not move them


def test_bin_codes_are_equal_width_and_clip_outside_values() -> None:
    values = np.array([-5.0, 0.0, 19.999, 20.0, 99.0, 100.0, 250.0])
    assert bin_codes(values, 0.0, 100.0, 5).tolist() == [0, 0, 0, 1, 4, 4, 4]
    assert bin_codes(values, 3.0, 3.0, 5).tolist() == [0] * 7  # one point: one bin


def test_schema_bounds_on_adult_give_the_schema_bins(adult_dataset: datasets.Dataset) -> None:
    frame = adult_dataset.frame.sample(2000, random_state=0)
    strategy = _binned(1.0, 5, schema=adult_dataset.schema)
    out = strategy.apply(frame, ["age", "hours_per_week"])
    age, hours = adult_dataset.schema.domain("age"), adult_dataset.schema.domain("hours_per_week")
    for feature, domain in [("age", age), ("hours_per_week", hours)]:
        width = (domain.upper - domain.lower) / 5
        midpoints = {domain.lower + (i + 0.5) * width for i in range(5)}
        assert set(out[feature]) <= midpoints
    plan = strategy.applied_.params["features"]["age"]
    assert (plan["lower"], plan["upper"], plan["domain_source"]) == (17.0, 90.0, "schema")


@pytest.mark.parametrize("epsilon", [0.1, 0.5, 1.0, 2.0, 5.0])
@pytest.mark.parametrize("bins", [2, 3, 5, 10, 37])
def test_the_exact_privacy_loss_of_a_value_is_epsilon(epsilon: float, bins: int) -> None:
    plan = _plan(epsilon, bins)
    assert plan["distribution"] == BINNED and plan["k"] == bins
    r = float(plan["replace_probability"])
    matrix = (1.0 - r) * np.eye(bins) + r / bins  # what _randomized_response draws
    np.testing.assert_allclose(np.diag(matrix), plan["keep_probability"], rtol=0, atol=1e-15)
    assert math.isclose(plan["keep_probability"], keep_probability(epsilon, bins), abs_tol=1e-12)
    # a value reaches the output through its bin: every bin is some value's, so the loss over
    # values is the loss over bins
    inputs = np.linspace(0.0, 100.0, 4 * bins + 1)
    per_value = matrix[bin_codes(inputs, 0.0, 100.0, bins)]
    assert set(bin_codes(inputs, 0.0, 100.0, bins)) == set(range(bins))
    assert abs(privacy_loss(per_value) - epsilon) <= 1e-9
    assert abs(privacy_loss(matrix) - epsilon) <= 1e-9
    assert abs(float(plan["epsilon"]) - epsilon) <= 1e-9


@pytest.mark.parametrize("bins", [2, 5, 10])
def test_the_privacy_loss_check_catches_a_broken_calibration(bins: int) -> None:
    epsilon = 1.0
    right = channel(keep_probability(epsilon, bins), bins)
    assert abs(privacy_loss(right) - epsilon) <= 1e-9
    one_more = channel(keep_probability(epsilon, bins + 1), bins)  # keep calibrated for K + 1
    assert abs(privacy_loss(one_more) - epsilon) > 1e-3
    doubled = channel(keep_probability(2 * epsilon, bins), bins)  # epsilon doubled
    assert privacy_loss(doubled) - epsilon > 0.5
    r = replace_probability(epsilon, bins + 1)  # replacement calibrated for K + 1, used over K
    assert abs(privacy_loss((1 - r) * np.eye(bins) + r / bins) - epsilon) > 1e-3


def test_the_draws_follow_the_channel() -> None:
    n, bins, epsilon = 20_000, 5, 1.0
    frame = pd.DataFrame({"x": np.full(n, 55.0)})  # bin 2 of [0, 100]
    out = _binned(epsilon, bins, bounds={"x": (0.0, 100.0)}).apply(frame, ["x"])
    counts = out["x"].value_counts().reindex([10.0, 30.0, 50.0, 70.0, 90.0], fill_value=0)
    expected = channel(keep_probability(epsilon, bins), bins)[2]
    sigma = np.sqrt(n * expected * (1 - expected))
    assert np.all(np.abs(counts.to_numpy() - n * expected) < 5 * sigma)


def test_the_record_diagnostics_and_accuracy_say_what_was_done(tmp_path: Path) -> None:
    ledger = BudgetLedger(tmp_path / "budget.ledger")
    ledger.set_budget(1.5, unit="dp/substitute:x,c")
    strategy = _binned(0.5, 4, bounds=BOUNDS, domain=DOMAIN)
    release = strategy.release(_frame(), ["x", "c"], ledger=ledger, label="bins")
    assert release.record.epsilon == 1.0  # two features at 0.5 each
    assert [e.label for e in ledger.entries()] == ["bins"]
    assert any("4 equal-width bins of 'x' over [0, 100]" in a for a in release.record.assumptions)
    noise = release.record.noise["per_feature"]["x"]
    assert noise["distribution"] == BINNED and noise["midpoints"] == [12.5, 37.5, 62.5, 87.5]
    assert isinstance(release.diagnostics, LocalDPDiagnostics)
    line = release.diagnostics.summary_lines()[0]
    assert "midpoints of 4 equal-width bins of [0, 100] (bounds=)" in line
    assert "epsilon 0.5" in line
    assert release.accuracy is not None and release.accuracy.scale == {}  # no Laplace value
    assert "binned numeric ones included" in release.accuracy.of
    json.dumps(release.record.to_dict())


def test_the_laplace_path_is_the_default() -> None:
    out = LocalDPNoise(
        1.0, bounds=BOUNDS, sampler=SeededNumpyNoise(0), allow_nonprivate=True
    ).apply(_frame(), ["x"])
    assert out["x"].nunique() > 100  # a noisy float per row, as before


def test_bins_need_public_bounds_and_numbers_like_laplace() -> None:
    frame = _frame()
    with pytest.raises(InputError, match=r"bounds: numeric feature 'x' needs public bounds"):
        _binned().apply(frame, ["x"])
    frame.loc[0, "y"] = np.nan
    with pytest.raises(InputError, match=r"missing values; numeric='bins' needs a number"):
        _binned(bounds=BOUNDS).apply(frame, ["y"])


@pytest.mark.parametrize("bins", [1, 0, -3, 2.5, True, "5"])
def test_a_bad_bin_count_is_refused_naming_bins(bins: object) -> None:
    with pytest.raises(InputError, match=r"^bins must be an integer >= 2"):
        _binned(bins=bins, bounds=BOUNDS).apply(_frame(), ["x"])


def test_a_bad_numeric_randomizer_is_refused_naming_it() -> None:
    strategy = LocalDPNoise(1.0, bounds=BOUNDS, numeric="gaussian")
    with pytest.raises(InputError, match=r"^numeric must be one of \['laplace', 'bins'\]"):
        strategy.apply(_frame(), ["x"])


def test_the_new_parameters_clone() -> None:
    strategy = LocalDPNoise(1.0, numeric="bins", bins=7)
    copy = clone(strategy)
    assert (copy.numeric, copy.bins) == ("bins", 7)
    assert repr(copy) == "LocalDPNoise(epsilon=1.0, numeric='bins', bins=7)"


def test_parse_ldp_bins() -> None:
    strategy = parse_strategy("ldp:1:bins:5")
    assert isinstance(strategy, LocalDPNoise)
    assert (strategy.epsilon, strategy.numeric, strategy.bins) == (1.0, "bins", 5)
    assert parse_strategy(" LDP:0.5:BINS:12 ").bins == 12
    assert parse_strategy("ldp:1").numeric == "laplace"
    for bad, message in [
        ("ldp:1:bins:1", r"K must be a whole number >= 2, got '1'"),
        ("ldp:1:bins:x", r"K must be a whole number >= 2, got 'x'"),
        ("ldp:1:bins:2.5", r"K must be a whole number >= 2"),
        ("ldp:1:bins", r"expected 'ldp:EPSILON' or 'ldp:EPSILON:bins:K'"),
        ("ldp:1:laplace:5", r"expected 'ldp:EPSILON' or 'ldp:EPSILON:bins:K'"),
        ("ldp:0:bins:5", r"EPSILON must be a number > 0"),
    ]:
        with pytest.raises(InputError, match=message):
            parse_strategy(bad)


def test_neighbouring_frames_get_the_same_plan_and_record() -> None:
    frame = _frame()
    other = frame.copy()
    other.loc[0, ["x", "y", "c"]] = [99, 0.99, "a"]
    strategy = _binned(1.0, 5, bounds=BOUNDS, domain=DOMAIN)
    first, second = (strategy.release(f, ["x", "y", "c"]) for f in (frame, other))
    assert first.record.to_dict() == second.record.to_dict()
    assert first.diagnostics.to_dict() == second.diagnostics.to_dict()
