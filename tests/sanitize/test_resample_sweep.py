"""Proxy resampling in the sweep: each side released by the resampler not fitted on it."""

from __future__ import annotations

import pandas as pd
import pytest

from attrpriv import datasets
from attrpriv.sanitize.resample.evaluation import ResamplingSanitizer


@pytest.fixture(scope="module")
def parts() -> tuple[pd.DataFrame, pd.DataFrame]:
    frame = datasets.load("adult").frame.drop(columns=["split", "fnlwgt"])
    frame = frame.sample(1600, random_state=2).reset_index(drop=True)
    return frame.iloc[:800].reset_index(drop=True), frame.iloc[800:].reset_index(drop=True)


def test_each_side_is_released_by_the_other_sides_resampler(
    parts: tuple[pd.DataFrame, pd.DataFrame],
) -> None:
    aux, private = parts
    pair = ResamplingSanitizer.fitted(aux, private, "sex", target="income", epsilon=1.0)
    assert pair.for_private.repeats_training_rows(aux)
    assert not pair.for_private.repeats_training_rows(private)
    released = pair.sanitize(private)
    assert released.record is not None and released.record.epsilon == 1.0
    assert list(released.data.columns) == list(private.columns)
    assert released.data["income"].equals(private["income"])  # the task's target untouched
    assert "income" not in released.diagnostics.proxies
    pair.sanitize(aux)  # released by the resampler fitted on the private rows: not refused
    stronger = pair.at(2.0)
    assert stronger.sanitize(private).record.epsilon == 2.0
    assert pair.for_private.epsilon == 1.0  # the original pair is left as it is
