"""Natural duplicates are not training rows: the overlap verdict and the fingerprint's chance."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from attrpriv.sanitize._store import RowFingerprint
from attrpriv.sanitize.overlap import overlap_verdict, standard_error


def test_the_verdict_reads_the_share_against_chance() -> None:
    assert overlap_verdict(0.0, 0.0, 100) == "disjoint"
    assert overlap_verdict(0.01, 0.0, 100) == "more than chance"  # chance 0: any repeat
    assert overlap_verdict(0.51, 0.0, 100) == "training rows"
    chance, n = 0.3, 400
    edge = chance + 3 * standard_error(chance, n)
    assert overlap_verdict(edge - 1e-9, chance, n) == "disjoint"
    assert overlap_verdict(edge + 1e-9, chance, n) == "more than chance"
    assert overlap_verdict(0.65, chance, n) == "more than chance"  # the limit is 0.65
    assert overlap_verdict(0.66, chance, n) == "training rows"
    assert overlap_verdict(1.0, 0.99, 50) == "cannot tell"  # columns with few values
    assert standard_error(0.5, 100) == pytest.approx(0.05)


def _coarse(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {"a": rng.integers(0, 3, n), "b": rng.choice(["x", "y"], n), "c": rng.integers(0, 4, n)}
    )


def test_a_disjoint_sample_of_a_coarse_table_is_judged_disjoint() -> None:
    """24 possible rows: most rows of two disjoint samples equal a row of the other. Equality
    would refuse them all; against the fingerprint's chance they are disjoint, while the
    training rows themselves are refused."""
    train, other = _coarse(300, 0), _coarse(300, 1)
    fingerprint = RowFingerprint.of_table(train, ("a", "b", "c"), ("a", "b"))
    assert fingerprint.repeated > 0.9 and fingerprint.repeated_core > 0.9
    matched, columns = fingerprint.match_table(other)
    assert matched.mean() > 0.9  # equal values, different people
    chance = fingerprint.chance(columns)
    assert overlap_verdict(float(matched.mean()), chance, len(other)) == "cannot tell"
    fine = pd.DataFrame({"a": np.arange(300), "b": "x", "c": np.arange(300) % 7})
    rows = RowFingerprint.of_table(fine.iloc[:200], ("a", "b", "c"), ("a",))
    assert rows.repeated == 0.0
    fresh, _ = rows.match_table(fine.iloc[200:])
    assert overlap_verdict(float(fresh.mean()), rows.repeated, 100) == "disjoint"
    again, _ = rows.match_table(fine.iloc[:200])
    assert overlap_verdict(float(again.mean()), rows.repeated, 200) == "training rows"


def test_the_chance_is_stored_with_the_fingerprint() -> None:
    fingerprint = RowFingerprint.of_table(_coarse(100, 2), ("a", "b", "c"), ("a",))
    config = fingerprint.to_config()
    assert config["repeated"] == fingerprint.repeated
    assert config["repeated_core"] == fingerprint.repeated_core
    assert fingerprint.chance(("a",)) == fingerprint.repeated_core
    assert fingerprint.chance(("a", "b", "c")) == fingerprint.repeated
