"""LaplaceHistograms: calibration, ledger, audit, broken variant, bad input."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from attrpriv import Categorical, Column, InputError, Integer, Schema
from attrpriv.data.aggregate import aggregator_for
from attrpriv.dp import BudgetLedger, NoiseSampler, OpenDPNoise, SeededNumpyNoise, audit
from attrpriv.errors import BudgetExceededError
from attrpriv.release import LaplaceHistograms
from attrpriv.release.laplace import HistogramFacts, LaplaceDiagnostics, LaplacePlan

SCHEMA = Schema(
    (
        Column("colour", "feature", Categorical(("red", "green", "blue"))),
        Column("group", "sensitive", Integer(0, 2)),
    )
)


@pytest.fixture
def frame() -> pd.DataFrame:
    return pd.DataFrame({"colour": ["red", "red", "green", "red"], "group": [0, 1, 1, 0]})


def test_release_is_counts_plus_noise_of_the_recorded_scale(frame: pd.DataFrame) -> None:
    mechanism = LaplaceHistograms(0.5, sampler=SeededNumpyNoise(7), allow_nonprivate=True)
    result = mechanism.release(frame, SCHEMA)
    assert result.record.sensitivity == 2.0  # two histograms, add/remove neighbours
    assert result.record.noise["scale"] == pytest.approx(4.0)
    expected = SeededNumpyNoise(7).discrete_laplace(np.array([3, 1, 0, 2, 2, 0]), 4.0)
    got = np.concatenate([result.values["colour"].to_numpy(), result.values["group"].to_numpy()])
    np.testing.assert_array_equal(got, expected)
    assert list(result.values["colour"].index) == ["red", "green", "blue"]
    assert "noise sampler is not private" in result.record.assumptions
    assert result.diagnostics == LaplaceDiagnostics(2, 6, 2.0, 4.0)
    assert result.to_dict()["diagnostics"] == {
        "n_histograms": 2,
        "n_bins": 6,
        "sensitivity": 2.0,
        "scale": 4.0,
    }
    assert result.diagnostics.summary_lines() == [
        "sensitivity=2, discrete Laplace scale=4 (2 histograms, 6 bins)"
    ]


def test_calibrate_counts_the_columns_it_is_given() -> None:
    sampler = SeededNumpyNoise(0)
    named = LaplaceHistograms(1.0, ["colour", "group"], sampler=sampler, allow_nonprivate=True)
    assert named.calibrate().scale == 2.0
    assert named.calibrate(HistogramFacts(3)).scale == 3.0
    with pytest.raises(InputError, match=r"HistogramFacts\(n_histograms\)"):
        LaplaceHistograms(1.0).calibrate()


def test_substitution_doubles_the_sensitivity(frame: pd.DataFrame) -> None:
    result = LaplaceHistograms(1.0, ["colour"], neighbours="substitute").release(frame, SCHEMA)
    assert result.record.sensitivity == 2.0
    assert set(result.values) == {"colour"}


def test_refuses_nonprivate_noise_unless_asked(frame: pd.DataFrame) -> None:
    with pytest.raises(InputError, match="not private"):
        LaplaceHistograms(1.0, sampler=SeededNumpyNoise(0)).release(frame, SCHEMA)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"epsilon": 0.0}, "epsilon must be > 0"),
        ({"epsilon": float("inf")}, "epsilon must be a finite number"),
        ({"epsilon": 1.0, "neighbours": "bounded"}, "neighbours must be one of"),
        ({"epsilon": 1.0, "columns": ["height"]}, "'height'"),
    ],
)
def test_bad_parameters(frame: pd.DataFrame, kwargs: dict, message: str) -> None:
    with pytest.raises(InputError, match=message):
        LaplaceHistograms(**kwargs).release(frame, SCHEMA)


def test_ledger_is_charged_before_noise_and_refuses_overspend(
    frame: pd.DataFrame, tmp_path
) -> None:
    ledger = BudgetLedger(tmp_path / "budget.ledger")
    ledger.set_budget(1.0)
    LaplaceHistograms(0.75).release(frame, SCHEMA, ledger=ledger, label="first")
    with pytest.raises(BudgetExceededError, match="would exceed the budget"):
        LaplaceHistograms(0.5).release(frame, SCHEMA, ledger=ledger)
    assert [e.label for e in ledger.entries()] == ["first"]


def test_duckdb_file_input_gives_the_same_counts(frame: pd.DataFrame, tmp_path) -> None:
    path = tmp_path / "survey.parquet"
    frame.to_parquet(path)
    noise = SeededNumpyNoise(3)
    from_file = LaplaceHistograms(1.0, sampler=noise, allow_nonprivate=True).release(path, SCHEMA)
    from_frame = LaplaceHistograms(1.0, sampler=SeededNumpyNoise(3), allow_nonprivate=True).release(
        frame, SCHEMA
    )
    for name in ("colour", "group"):
        pd.testing.assert_series_equal(from_file.values[name], from_frame.values[name])


class _HalfNoiseHistograms(LaplaceHistograms):
    """Broken on purpose: calibrates to one histogram whatever their number."""

    def _calibrate(self, public: HistogramFacts, sampler: NoiseSampler) -> LaplacePlan:
        return super()._calibrate(HistogramFacts(1, public.inferred), sampler)


def _audit_mechanism(mechanism: LaplaceHistograms, frame: pd.DataFrame) -> float:
    """Audit the mechanism's noise on the counts of a dataset and of its neighbour."""
    neighbour = frame.iloc[:-1]
    sampler = OpenDPNoise()
    scale = mechanism.calibrate(HistogramFacts(2), sampler=sampler).scale

    def counts(data: pd.DataFrame) -> np.ndarray:
        tables = aggregator_for(data, SCHEMA).all_counts(["colour", "group"])
        return np.concatenate([t.to_numpy() for t in tables.values()])

    def sampler_for(data: pd.DataFrame):
        true = counts(data)
        return lambda n: sampler.discrete_laplace(np.tile(true, (n, 1)), scale)

    result = audit(sampler_for(frame), sampler_for(neighbour), 60_000, confidence=0.999)
    return result.epsilon_lower


def test_audit_stays_under_the_claimed_epsilon(frame: pd.DataFrame) -> None:
    assert _audit_mechanism(LaplaceHistograms(1.0), frame) < 1.0


def test_audit_catches_the_broken_calibration(frame: pd.DataFrame) -> None:
    assert _audit_mechanism(_HalfNoiseHistograms(1.0), frame) > 1.0
