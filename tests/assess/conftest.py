"""Fixtures of the assess tests."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd
import pytest

from attrpriv.assess import _grid
from attrpriv.assess.models import make_model

GridFactory = Callable[..., _grid.GridData]


@pytest.fixture
def grid_data() -> GridFactory:
    """``grid_data(X, y, **settings)``: the grid of an assessment with a logistic regression,
    the loss attack and small settings, any of them overridden."""

    def build(X: pd.DataFrame, y: pd.Series, **settings: Any) -> _grid.GridData:
        defaults: dict[str, Any] = {
            "estimator": make_model("logreg"),
            "classification": True,
            "test_size": 0.5,
            "membership": True,
            "membership_attack": "loss",
            "n_shadows": 2,
            "n_references": 2,
            "attack_model": "logreg",
            "max_attack_rows": 4,
            "confidence": 0.95,
            "seed": 0,
        }
        return _grid.GridData(X=X, y=y, **(defaults | settings))

    return build
