"""Non-negative rounded counts: exact post-processing, never further from a true count than the
noisy one (but for rounding, by at most 0.5), the clipped amount stated, and shown on the page
beside the raw counts, with intervals clipped at 0."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from attrpriv import Categorical, Column, InputError, Integer, Schema
from attrpriv.dp import SeededNumpyNoise
from attrpriv.release.laplace import LaplaceHistograms
from attrpriv.release.nonnegative import non_negative, non_negative_counts, non_negative_to_dict
from attrpriv.report import render_release_html

SCHEMA = Schema(
    (
        Column("colour", "feature", Categorical(("red", "green", "blue"))),
        Column("age", "feature", Integer(18, 40)),
    )
)


@pytest.fixture(scope="module")
def release():
    """Few rows, many levels and a small epsilon: many noisy counts below 0."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"colour": rng.choice(["red", "green", "blue"], 30),
                          "age": rng.integers(18, 41, 30)})  # fmt: skip
    mechanism = LaplaceHistograms(0.3, sampler=SeededNumpyNoise(4), allow_nonprivate=True)
    return mechanism.release(frame, SCHEMA)


def test_each_count_is_round_of_max_0() -> None:
    noisy = [-3.2, -0.4, 0.0, 0.4, 0.5, 1.5, 2.6, 7.0]
    np.testing.assert_array_equal(non_negative(noisy), [0, 0, 0, 0, 0, 2, 3, 7])


def test_never_further_from_any_true_count_on_a_grid() -> None:
    """Every noisy value of a fine grid against every true count 0..30: clipping never moves
    a count away from the truth, rounding moves it by at most 0.5, whole counts not at all."""
    noisy = np.round(np.arange(-40.0, 40.0, 0.05), 2)[:, None]
    true = np.arange(0, 31)[None, :]
    raw_error = np.abs(noisy - true)
    assert (np.abs(np.maximum(noisy, 0.0) - true) <= raw_error).all()
    assert (np.abs(non_negative(noisy) - true) <= raw_error + 0.5).all()
    whole = noisy == np.round(noisy)
    assert whole.sum() == 80
    assert (np.abs(non_negative(noisy) - true)[whole[:, 0]] <= raw_error[whole[:, 0]]).all()


def test_the_frame_clips_counts_and_intervals_and_states_the_clipped_amount(release) -> None:
    frame = non_negative_counts(release)
    raw = np.concatenate([release.values[c].to_numpy(dtype=float) for c in ("colour", "age")])
    np.testing.assert_array_equal(frame["value"], raw)
    assert (raw < 0).sum() > 5  # the case this is for
    np.testing.assert_array_equal(frame["non_negative"], np.rint(np.maximum(raw, 0)))
    np.testing.assert_array_equal(frame["non_negative_lower"], np.maximum(frame["lower"], 0))
    np.testing.assert_array_equal(frame["non_negative_upper"], np.maximum(frame["upper"], 0))
    np.testing.assert_array_equal(frame["clipped"], np.maximum(-raw, 0))
    assert list(frame["histogram"].unique()) == ["colour", "age"]


def test_the_json_holds_the_counts_their_intervals_and_each_histograms_clipped_total(
    release,
) -> None:
    found = non_negative_to_dict(release)
    for name, raw in release.values.items():
        assert found["values"][name] == {str(k): max(0, round(v)) for k, v in raw.items()}
        assert found["clipped"][name] == pytest.approx(float(np.maximum(-raw, 0).sum()))
        change = sum(found["values"][name].values()) - float(raw.sum())
        assert found["total_change"][name] == pytest.approx(change)
        assert all(0 <= low <= high for low, high in found["intervals"][name].values())
    assert found["clipped"]["age"] > 0


def test_the_page_shows_both_and_says_what_the_clipping_costs(release) -> None:
    shown = render_release_html(release, counts="non-negative")
    clipped = float(np.maximum(-release.values["age"], 0).sum())
    assert "Counts shown non-negative and rounded." in shown
    assert "added by clipping at 0" in shown and f"<td>{clipped:.6g}</td>" in shown
    assert "interval (clipped at 0)" in shown and "raw noisy count" in shown
    raw = render_release_html(release, counts="raw")
    below = int((release.to_frame()["value"] < 0).sum())
    assert f"{below} noisy counts are below 0" in raw and "--counts non-negative" in raw
    assert "noisy counts are below 0" not in render_release_html(release)  # not counts
    with pytest.raises(InputError, match="counts must be one of non-negative, raw"):
        render_release_html(release, counts="clipped")
