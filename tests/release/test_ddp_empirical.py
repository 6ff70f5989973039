"""The loss under the data's own empirical law: the corner search against enumeration, and the
audit it gives of the default and of the paper's pairwise variant on anes96."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from attrpriv import InputError
from attrpriv.data import datasets
from attrpriv.release.ddp.empirical import empirical_loss, histogram_codes
from attrpriv.release.ddp.mechanism import TabularDDP


def enumerated_loss(frame: pd.DataFrame, scales: dict[str, float], min_rows: int = 1) -> float:
    """The exact worst case under the empirical law: every corner of every other histogram."""
    codes = {c: pd.factorize(frame[c])[0] for c in frame.columns}
    sizes = {c: int(code.max()) + 1 for c, code in codes.items()}
    best = -math.inf
    for i in frame.columns:
        others = [c for c in frame.columns if c != i]
        corners = [list(itertools.product((-1.0, 1.0), repeat=sizes[c])) for c in others]
        counts = np.bincount(codes[i][codes[i] >= 0], minlength=sizes[i])
        for a, b in itertools.permutations(np.flatnonzero(counts >= min_rows), 2):
            in_a, in_b = codes[i] == a, codes[i] == b
            for signs in itertools.product(*corners):
                log = np.zeros(len(frame))
                for c, sign in zip(others, signs, strict=True):
                    code = codes[c]
                    log += np.where(code >= 0, np.array(sign)[np.maximum(code, 0)], 0.0) / scales[c]
                ratio = np.log(np.mean(np.exp(log[in_a]))) - np.log(np.mean(np.exp(log[in_b])))
                best = max(best, 2.0 / scales[i] + ratio)
    return best


@pytest.mark.parametrize("seed", range(12))
def test_the_corner_search_finds_the_exact_worst_case(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(15, 60))
    x = rng.integers(0, 3, n)
    frame = pd.DataFrame(
        {
            "x": x,
            "copy": np.where(rng.random(n) < 0.8, x % 2, rng.integers(0, 2, n)),
            "noise": rng.integers(0, 2, n).astype(float),
        }
    )
    frame.loc[rng.random(n) < 0.1, "noise"] = np.nan  # a missing answer adds no count
    scales = {c: float(rng.uniform(0.5, 6.0)) for c in frame.columns}
    found = empirical_loss(frame, scales)
    assert found.value == pytest.approx(enumerated_loss(frame, scales), abs=1e-9)
    assert found.column in frame.columns and found.rows[0] >= 1 and found.rows[1] >= 1


def test_an_exact_copy_costs_the_group_loss_and_independence_only_its_own() -> None:
    bits = np.tile([0, 1], 50)
    copies = pd.DataFrame({"a": bits, "b": bits, "c": bits})
    assert empirical_loss(copies, dict.fromkeys("abc", 4.0)).value == pytest.approx(6 / 4)
    independent = pd.DataFrame({"a": np.repeat([0, 1], 50), "b": np.tile([0, 1], 50)})
    assert empirical_loss(independent, dict.fromkeys("ab", 4.0)).value == pytest.approx(2 / 4)


def test_bad_input_is_refused() -> None:
    frame = pd.DataFrame({"a": [0, 1, 0, 1], "b": [1, 1, 0, 0]})
    with pytest.raises(InputError, match="lacks the released column"):
        empirical_loss(frame, {"a": 1.0, "z": 1.0})
    with pytest.raises(InputError, match="scale of 'b' must be a positive number"):
        empirical_loss(frame, {"a": 1.0, "b": 0.0})
    with pytest.raises(InputError, match="min_rows"):
        empirical_loss(frame, {"a": 1.0, "b": 1.0}, min_rows=0)
    with pytest.raises(InputError, match="held by at least 3 rows"):
        empirical_loss(frame, {"a": 1.0, "b": 1.0}, min_rows=3)


def test_the_default_holds_and_the_pairwise_variant_breaks_under_the_empirical_law() -> None:
    """anes96 at epsilon 1: for secrets held by at least 30 rows the paper's pairwise variant
    loses more than epsilon under the rows' own law, the default does not."""
    frame, schema = datasets.load("anes96")
    default = TabularDDP(1.0, 10).fit(frame, schema)
    codes = histogram_codes(default, frame)
    held = empirical_loss(codes, default.calibrate().scales(), min_rows=30)
    assert held.value <= 1.0
    pairwise = TabularDDP(1.0, 10, method="pairwise", grouping="order").fit(frame, schema)
    broken = empirical_loss(codes, pairwise.calibrate().scales(), min_rows=30)
    assert broken.value > 1.3
