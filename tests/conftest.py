"""Shared fixtures, and hypothesis profiles: reproducible by default, exploratory on request.

The default run (the README's ``pytest``, and CI) is derandomized: every run draws the same
examples, so a result does not depend on luck. ``HYPOTHESIS_PROFILE=explore pytest`` draws new
random examples each run, to look for edge cases (a failure prints the example to reproduce).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

import numpy as np
import pandas as pd
import pytest
from hypothesis import settings
from threadpoolctl import threadpool_limits

from attrpriv import datasets

settings.register_profile("default", derandomize=True, print_blob=True)
settings.register_profile("explore", derandomize=False, print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

AdultXY = Callable[[int, int], tuple[pd.DataFrame, np.ndarray]]


@pytest.fixture(autouse=True, scope="session")
def one_thread() -> Iterator[None]:
    """Native thread pools (OpenMP in gradient boosting, BLAS) oversubscribe a shared 2-core
    machine badly: HGB runs up to 50x slower. Every test runs single-threaded."""
    with threadpool_limits(1):
        yield


@pytest.fixture(scope="session")
def adult_dataset() -> datasets.Dataset:
    """The bundled Adult frame and schema, loaded once per run (tests never modify it)."""
    return datasets.load("adult")


@pytest.fixture(scope="session")
def adult_xy(adult_dataset: datasets.Dataset) -> AdultXY:
    """``adult_xy(n, seed)``: n shuffled Adult rows as (features, income labels), without the
    ``split`` bookkeeping column and the ``fnlwgt`` sampling weight."""

    def sample(n: int, seed: int) -> tuple[pd.DataFrame, np.ndarray]:
        frame = adult_dataset.frame.sample(n, random_state=seed).reset_index(drop=True)
        y = frame.pop("income").astype(str).to_numpy()
        return frame.drop(columns=["split", "fnlwgt"]), y

    return sample
